"""Headless Chromium (Debian's ``chromium``) driven through the DevTools protocol by
Playwright, for the tests that look at a page as a person would. Each launch gets a fresh
profile (Playwright makes one); no browser is downloaded."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import Browser, Page, async_playwright

ROOT = Path(__file__).resolve().parents[1]
#: screenshots go to artifacts/img/ (ignored by git); with UPDATE_DOCS_IMG=1, to docs/img/
IMAGES = ROOT / ("docs/img" if os.environ.get("UPDATE_DOCS_IMG") == "1" else "artifacts/img")
HOSTILE = "<img src=x onerror=window.__pwned=1>"
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def nothing_injected(page: Page, dialogs: list[str], where: str) -> None:
    """A hostile name stayed text: no script ran, no markup appeared under ``where``."""
    assert dialogs == [], dialogs
    assert await page.evaluate("() => window.__pwned") is None
    assert await page.locator(f"{where} img").count() == 0
    assert await page.locator(f"{where} :text('{HOSTILE}')").count() >= 1
