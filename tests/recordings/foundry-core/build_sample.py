"""Builds FC-sample-v13.jsonl from ../shared/research/foundry-sample-payloads.json.

Run from the repository root: ``python tests/recordings/foundry-core/build_sample.py``.
The combat is the sample's v13 ``toObject()`` (hidden "Mysterious Figure", defeated
"Goblin Archer"), extended as the module extends it; the initiatives the sample shows
arrive as ``initiativeRoll`` hooks (the sidecar never reads them from snapshots), then the
sample's new goblin joins and rolls 17.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "fixtures" / "foundry-sample-payloads.json"  # copy of ../shared/research/
sys.path.insert(0, str(HERE.parents[2]))

from tests.foundry import Session, d20_roll

GM = "zQ8mN2vB7xL4pR1s"
EXTRA = {  # what the module adds to each combatant
    "p8HkD2sLq7Vt4XmN": {"name": "Aria Windrunner", "owners": ["pLy1Aria00000001"], "is_npc": False},
    "e5NbG7uK2pXa9RsD": {"name": "Brother Tolm", "owners": ["pLy2Tolm00000002"], "is_npc": False},
    "Wz3Lr9QyT6bJ1cVe": {"name": "Mysterious Figure", "owners": [], "is_npc": True},
    "Jq4Tm8vC1zYh6LwF": {"name": "Goblin Archer", "owners": [], "is_npc": True},
    "Rf6Nc2XwQ8kT3mHa": {"name": "Goblin", "owners": [], "is_npc": True},
}
ROLLS = {"p8HkD2sLq7Vt4XmN": (16, 3), "e5NbG7uK2pXa9RsD": (11, 1), "Wz3Lr9QyT6bJ1cVe": (15, 2),
         "Jq4Tm8vC1zYh6LwF": (7, 2), "Rf6Nc2XwQ8kT3mHa": (14, 3)}


def extend(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c.update(EXTRA[c["_id"]])
    c["is_defeated"] = c["defeated"]
    c["stats"] = {}
    c["initiative"] = None  # values only ever come from rolls
    return c


def main() -> None:
    sample = json.loads(SAMPLE.read_text())
    base = sample["combat_toObject_started"]["value"]
    newcomer = sample["createCombatant"]["args"][0]
    combat = copy.deepcopy(base)
    combat["combatants"] = [extend(c) for c in base["combatants"]]
    combat.update(round=0, turn=None)
    s = Session("sampleWorld00001", "foundry-core", gm=GM)
    none = {"round": 0, "turn": None, "combatantId": None, "tokenId": None}
    s.hook("createCombat", copy.deepcopy(combat), none)
    for c in combat["combatants"]:
        nat, mod = ROLLS[c["_id"]]
        s.hook("initiativeRoll", copy.deepcopy(combat), none,
               roll={"combatant_id": c["_id"], "roll": d20_roll(nat, mod)})
    turns = sample["combat_toObject_started"]["derived_not_in_toObject"]["turns"]
    combat.update(round=1, turn=0)
    s.hook("combatStart", copy.deepcopy(combat), {"round": 1, "turn": 0, "combatantId": turns[0], "tokenId": None},
           options={"direction": 1})
    for i in (1, 2):
        combat["turn"] = i
        s.hook("updateCombat", copy.deepcopy(combat), {"round": 1, "turn": i, "combatantId": turns[i], "tokenId": None},
               changed={"turn": i}, options={"direction": 1, "worldTime": {"delta": 0}})
    combat.update(round=2, turn=0)
    s.hook("combatRound", copy.deepcopy(combat), {"round": 2, "turn": 0, "combatantId": turns[0], "tokenId": None},
           options={"direction": 1, "worldTime": {"delta": 6}})
    for i in (1, 2):  # the sample's turn_change_hooks: Boss, then Tolm
        combat["turn"] = i
        s.hook("updateCombat", copy.deepcopy(combat), {"round": 2, "turn": i, "combatantId": turns[i], "tokenId": None},
               changed={"turn": i}, options={"direction": 1, "worldTime": {"delta": 0}})
    joined = extend(newcomer)
    combat["combatants"].append(joined)
    cur = {"round": 2, "turn": 2, "combatantId": turns[2], "tokenId": None}
    s.hook("createCombatant", copy.deepcopy(combat), cur, options={"combatTurn": 2, "turnEvents": False})
    nat, mod = ROLLS[joined["_id"]]
    s.hook("initiativeRoll", copy.deepcopy(combat), cur, roll={"combatant_id": joined["_id"], "roll": d20_roll(nat, mod)})
    (HERE / "FC-sample-v13.jsonl").write_text(s.jsonl(), encoding="utf-8")


if __name__ == "__main__":
    main()
