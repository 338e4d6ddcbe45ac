"""``replay FILE --html OUT``: one self-contained page per recording, looked at in Chromium,
for a worked example of each ruleset (screenshots in docs/img/), and a hostile recording."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from adapter.cli import main
from tests.browser import HOSTILE, IMAGES, chromium, nothing_injected

pytestmark = pytest.mark.asyncio(loop_scope="module")

RECORDINGS = Path(__file__).parent / "recordings"

#: a worked example per ruleset, and what its timeline must show
EXAMPLES = {
    "balanced-d20": ("BI-E4-cleric-dashes-to-13", [
        ("intent", "Cleric dashes (+5)"), ("refusal", "refused rule_violation at /args/amount"),
        ("turn", "Cleric's turn at initiative 13: movement_or_action"), ("notice", "Cleric dashes +5"),
    ]),
    "dice-pool": ("DP-E2-hesitation", [
        ("lost", "Baker loses this round's turn (2 turn(s) lost)"), ("roll", "Abel rolls -1"),
        ("lost", "Abel may only defend this round (1 turn(s) lost) [hesitating]"),
        ("turn", "Charlie's turn"),
    ]),
    "storyteller": ("ST-E2-interrupt-before-larry", [
        ("intent", "Mitch holds"), ("intent", "Mitch interrupts: acts before Larry"),
        ("turn", "Mitch's turn at initiative 7: full [stepped_in]"),
    ]),
    "foundry-core": ("FC-sample-v13", [
        ("roll", "Aria Windrunner rolls 19"), ("turn", "Aria Windrunner's turn at initiative 19: full"),
    ]),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def write_html(recording: Path, out: Path) -> None:
    with pytest.raises(SystemExit) as done:
        main(["replay", str(recording), "--html", str(out)])
    assert done.value.code == 0


@pytest.mark.parametrize("ruleset", sorted(EXAMPLES))
async def test_a_worked_example_reads_round_by_round_in_chromium(ruleset: str, tmp_path: Path,
                                                                 browser: Browser) -> None:
    name, expected = EXAMPLES[ruleset]
    out = tmp_path / f"{name}.html"
    write_html(RECORDINGS / ruleset / f"{name}.jsonl", out)
    page = await browser.new_page(viewport={"width": 1000, "height": 900})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    await page.goto(out.as_uri())
    assert requests == [out.as_uri()], "the page loads nothing besides itself"
    assert await page.locator("section.combat").count() >= 1
    rounds = await page.locator("section.combat .round h3").all_inner_texts()
    assert rounds[0] == "Before the start" and "Round 1" in rounds
    for kind, text in expected:
        steps = await page.locator(f"li.step[data-kind='{kind}']").all_inner_texts()
        assert any(text in s for s in steps), (kind, text, steps)
    assert await page.locator("details[open] table.plan tr.current").count() >= 1
    IMAGES.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(IMAGES / f"replay-{ruleset}.png"), full_page=True)
    await page.close()


async def test_refusals_show_their_code_and_rule_id(tmp_path: Path, browser: Browser) -> None:
    out = tmp_path / "bi.html"
    write_html(RECORDINGS / "balanced-d20" / "BI-E1-wizard-reroll.jsonl", out)
    page = await browser.new_page()
    await page.goto(out.as_uri())
    refusal = page.locator("li.step.refusal", has_text="rerolled once only")
    assert await refusal.locator(".rule").all_inner_texts() == ["BI-2"]
    answers = await page.locator("li.step[data-kind='answer']").all_inner_texts()
    assert any("accepts reroll prompt-4.1 for Wizard" in a for a in answers)
    await page.close()


async def test_hostile_names_in_a_recording_stay_text(tmp_path: Path, browser: Browser) -> None:
    lines = (RECORDINGS / "foundry-core" / "FC-sample-v13.jsonl").read_text(encoding="utf-8").splitlines()
    hostile = []
    for line in lines:
        item = json.loads(line)
        if item["event"] == "session":
            item["data"]["world"] = HOSTILE
        for c in (item["data"].get("combat") or {}).get("combatants", []):
            if c.get("name") == "Aria Windrunner":
                c["name"] = HOSTILE
        hostile.append(json.dumps(item))
    recording = tmp_path / "hostile.jsonl"
    recording.write_text("\n".join(hostile) + "\n", encoding="utf-8")
    out = tmp_path / "hostile.html"
    write_html(recording, out)
    page = await browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    await page.goto(out.as_uri())
    await nothing_injected(page, dialogs, "body")
    assert await page.locator(f"li.step:text('{HOSTILE} rolls 19')").count() == 1
    await page.close()
