"""Render ``server/static/icon.svg`` to the PNG icons of the web app manifest (192 and 512 px).

Uses Debian's chromium through Playwright (as the browser tests do; no Pillow or SVG library needed):
``python -m tests.browser.make_icons``. The PNGs are committed; run this again after changing the SVG.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"
CHROMIUM = os.environ.get("FTR_CHROMIUM", "/usr/bin/chromium")
SIZES = (192, 512)


async def main() -> None:
    """Write ``icon-{size}.png`` beside the SVG for each of :data:`SIZES`."""
    from playwright.async_api import async_playwright

    svg = (STATIC / "icon.svg").read_text()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for size in SIZES:
            page = await browser.new_page(viewport={"width": size, "height": size})
            await page.set_content(f"<style>html,body{{margin:0}} svg{{display:block;width:{size}px;height:{size}px}}"
                                   f"</style>{svg}")
            await page.screenshot(path=str(STATIC / f"icon-{size}.png"), omit_background=True)
            await page.close()
            print(STATIC / f"icon-{size}.png")
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
