"""The status page in headless Chromium against a real ``serve``: log in through the form,
send hooks, see the plan change live; hostile names stay text; English and Russian."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.browser import HOSTILE, IMAGES, chromium, nothing_injected
from tests.foundry import combat, combatant, current, d20_roll
from tests.server.serving import serve
from tests.support.sidecar import GM, TOKEN, auth, connect

COMBAT = "cmbtBrowser00001"
PEOPLE = [("aaaa000000000001", "Aria"), ("bbbb000000000002", HOSTILE), ("cccc000000000003", "Boss")]


def hook(seq: int, name: str, started: bool = False, **extra: object) -> dict[str, object]:
    people = [combatant(cid, n, owners=["player000000001"]) for cid, n in PEOPLE]
    fight = combat(COMBAT, people, round_=1, turn=0) if started else combat(COMBAT, people)
    now = current(1, "cccc000000000003", 0) if started else current()
    return {"seq": seq, "user": GM, "world_time": 0, "hook": name, "combat": fight, "current": now, **extra}


def rolled(seq: int, cid: str, natural: int) -> dict[str, object]:
    return hook(seq, "initiativeRoll", roll={"combatant_id": cid, "roll": d20_roll(natural, 1)})


async def test_the_gm_logs_in_and_watches_the_plan_change_live(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        client = await connect(served.url, auth(world=HOSTILE, ruleset="balanced-d20"))
        await asyncio.wait_for(client.welcome, 5)
        assert (await client.send("hook", hook(1, "createCombat")))["ok"]
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1000, "height": 640})
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            response = await page.goto(served.url + "/?lang=en")
            assert response is not None and response.status == 401
            assert "Aria" not in await page.content() and await page.locator("section.world").count() == 0

            await page.fill("input[name=token]", TOKEN)
            await page.click("button[type=submit]")
            await page.wait_for_selector("#live.on")
            assert "token" not in page.url and TOKEN not in page.url
            assert await page.locator("table.plan[data-revision='1']").count() == 1
            await nothing_injected(page, dialogs, "#worlds")

            assert (await client.send("hook", rolled(2, "cccc000000000003", 17)))["ok"]
            assert (await client.send("hook", rolled(3, "aaaa000000000001", 9)))["ok"]
            bad = rolled(4, "bbbb000000000002", 5)
            bad["world_time"] = "noon"
            assert not (await client.send("hook", bad))["ok"]
            assert (await client.send("hook", rolled(5, "bbbb000000000002", 12)))["ok"]
            assert (await client.send("hook", hook(6, "combatStart", started=True)))["ok"]
            await page.wait_for_selector("table.plan tr.current", timeout=10_000)
            await page.wait_for_selector("ul.refusals code:text('invalid_message')")
            names = await page.locator("table.plan td.name").all_inner_texts()
            assert names == ["Boss", HOSTILE, "Aria"], names
            assert await page.locator("tr.current td.name").inner_text() == "Boss"
            await nothing_injected(page, dialogs, "#worlds")
            IMAGES.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(IMAGES / "status-page.png"), full_page=True)

            await page.goto(served.url + "/?lang=ru")
            await page.wait_for_selector("#live.on")
            assert await page.locator("h3:text('Последние отказы')").count() == 1
            assert await page.locator("td.acts :text('полный ход')").count() >= 1
        await client.close()
    assert TOKEN not in served.log_text()
