"""The context one message is applied in: who sent it, when, and what it has said so far
(docs/engine.md, "State"). The rules' types live here, and the ruleset is typed as the
protocol :class:`Rules`, so that this module imports no ruleset (README, "Developing").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..errors import Field, NotPermitted, UnknownCombatant, UnknownPrompt
from .events import Event
from .messages import Intent
from .model import Combat, Combatant, Describe, Notice, Prompt, SortKey, World

#: ``rule(ctx, combat, event) -> combat``, its ``event`` typed to the class it is listed under
#: (tests/engine/test_dispatch.py checks it: a Callable's argument cannot follow a mapping's key)
EventRule = Callable[["Ctx", Combat, Any], Combat]
#: ``rule(ctx, combat, intent) -> combat | None``, typed to its intent class (see EventRule)
IntentRule = Callable[["Ctx", Any, Any], "Combat | None"]
On = Mapping[type[Event], tuple[EventRule, ...]]
#: first contact: ``adopt(ctx, combat, combatant_id) -> combat`` for each combatant, once the
#: combat shows Foundry's round, pointer and stored values as scores; it may change the score
#: (docs/rules.md, "Meeting a combat already under way")
Adopt = Callable[["Ctx", Combat, str], Combat]
#: the dice formula a combatant's initiative roll must use, or None for the system's own roll
Formula = Callable[["Ctx", Combat, Combatant], "str | None"]


class Rules(Protocol):
    """A ruleset as the engine and the rules read it (:class:`.ruleset.Ruleset` meets it)."""

    @property
    def id(self) -> str: ...
    @property
    def on(self) -> On: ...
    @property
    def intents(self) -> Mapping[type[Intent], IntentRule]: ...
    @property
    def sort_key(self) -> SortKey: ...
    @property
    def describe(self) -> Describe: ...
    @property
    def view_inputs(self) -> Callable[[Combat], Any] | None: ...
    @property
    def late_scores(self) -> str: ...
    @property
    def keeps_null_turn(self) -> bool: ...
    @property
    def follows_skip_defeated(self) -> bool: ...
    @property
    def formula(self) -> Formula | None: ...
    @property
    def adopt(self) -> Adopt: ...
    @property
    def intent_kinds(self) -> frozenset[str]: ...


@dataclasses.dataclass(eq=False, repr=False)  # a repr would print the whole world
class Ctx:
    world: World
    _: dataclasses.KW_ONLY
    seq: int
    user: str
    world_time: float
    ruleset: Rules
    opened: list[Prompt] = dataclasses.field(init=False, default_factory=list)
    answered: set[str] = dataclasses.field(init=False, default_factory=set)
    notices: list[Notice] = dataclasses.field(init=False, default_factory=list)
    ext: dict[str, Any] = dataclasses.field(init=False)
    _ids: int = dataclasses.field(init=False, default=0)
    #: True while the engine previews the next round: rules must not open prompts
    preview: bool = dataclasses.field(init=False, default=False)
    #: other combats of the world a rule changed (see :meth:`change_combat`), by id
    changed: dict[str, Combat] = dataclasses.field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.ext = dict(self.world.ext)

    # ---------------------------------------------------------------- ids and settings

    def new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self.seq}.{self._ids}"

    def begin_preview(self) -> tuple[Any, ...]:
        """Rules run on a copy of the combat (the next round's preview): no prompt or notice
        they make goes out, and :meth:`end_preview`, given what this returns, undoes whatever
        they did to this context (prompts answered, ruleset state, ids taken). Not a context
        manager: entered on every message, one cost 3 to 4 us more per turn change."""
        saved = (self.preview, list(self.opened), set(self.answered), list(self.notices),
                 dict(self.ext), self._ids)
        self.preview = True
        return saved

    def end_preview(self, saved: tuple[Any, ...]) -> None:
        self.preview, self.opened, self.answered, self.notices, self.ext, self._ids = saved

    def change_combat(self, combat: Combat) -> None:
        """A rule changed another combat of the world (BI-3: a declaration outside combat shows
        in a combat not yet begun); the engine keeps it and sends its plan. Not while previewing."""
        if not self.preview:
            self.changed[combat.id] = combat

    def combat_now(self, combat_id: str) -> Combat | None:
        """A combat of the world as this message has changed it so far (:meth:`change_combat`)."""
        return self.changed.get(combat_id) or self.world.combats.get(combat_id)

    def setting(self, name: str, default: Any = None) -> Any:
        return self.world.settings.get(name, default)

    # ---------------------------------------------------------------- authority

    def is_gm(self) -> bool:
        return self.user in self.world.gm_users

    def require_gm(self, what: str) -> None:
        if not self.is_gm():
            raise NotPermitted(f"only a GM may {what}; user {self.user!r} is not a GM")

    def require_owner(self, combatant: Combatant, what: str) -> None:
        """The user must own the combatant (the owners the module reports) or be a GM."""
        if self.is_gm() or self.user in combatant.owners:
            return
        raise NotPermitted(
            f"user {self.user!r} may not {what} for {combatant.name or combatant.id}: "
            "only its owners or a GM may"
        )

    def owned(self, combat: Combat, combatant_id: str, what: str) -> Combatant:
        """The combatant an intent names, whose owner (or a GM) the user must be."""
        combatant = self.combatant(combat, combatant_id)
        self.require_owner(combatant, what)
        return combatant

    @staticmethod
    def combatant(combat: Combat, combatant_id: str, field: Field = "combatant_id") -> Combatant:
        """The combatant a message names in ``field``; refused when not in the combat."""
        if combatant_id not in combat.combatants:
            raise UnknownCombatant(
                f"combatant {combatant_id!r} is not in combat {combat.id!r}", field=field
            )
        return combat.combatants[combatant_id]

    # ---------------------------------------------------------------- prompts and notices

    def open_prompt(
        self,
        kind: str,
        *,
        rule: str,
        to: tuple[str, ...] | str,
        combat_id: str | None,
        combatant_id: str | None,
        data: Mapping[str, Any],
    ) -> Prompt:
        prompt = Prompt(
            prompt_id=self.new_id("prompt"),
            kind=kind,
            combat_id=combat_id,
            combatant_id=combatant_id,
            to=to,
            rule=rule,
            data=dict(data),
        )
        if not self.preview:
            self.opened.append(prompt)
        return prompt

    def pending(self, prompt_id: str) -> Prompt | None:
        if prompt_id in self.answered:
            return None
        for prompt in self.opened:
            if prompt.prompt_id == prompt_id:
                return prompt
        return self.world.prompts.get(prompt_id)

    def answer_prompt(
        self, prompt_id: str, kind: str, field: Field = "prompt_id", combat_id: str | None = None,
    ) -> Prompt:
        """Take a pending prompt of ``kind`` (of combat ``combat_id``, if given) off the list;
        refuse an unknown or answered one, or one of another combat."""
        prompt = self.pending(prompt_id)
        if prompt is None or prompt.kind != kind or combat_id not in (None, prompt.combat_id):
            raise UnknownPrompt(
                f"there is no pending {kind} prompt {prompt_id!r} (unknown or already answered)",
                field=field,
            )
        self.answered.add(prompt_id)
        return prompt

    def close_prompts(self, combat_id: str, combatant_id: str | None = None) -> None:
        """Forget the pending prompts of a combat (or of one of its combatants)."""
        for prompt in [*self.world.prompts.values(), *self.opened]:
            if prompt.combat_id == combat_id and combatant_id in (None, prompt.combatant_id):
                self.answered.add(prompt.prompt_id)

    def notice(self, kind: str, text: str, **data: Any) -> None:
        if not self.preview:
            self.notices.append(Notice(kind=kind, text=text, data=data))

    def prompts_after(self) -> dict[str, Prompt]:
        prompts = {pid: p for pid, p in self.world.prompts.items() if pid not in self.answered}
        prompts.update({p.prompt_id: p for p in self.opened if p.prompt_id not in self.answered})
        return prompts
