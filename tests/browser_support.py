"""What every browser test file shares: Debian's Chromium driven by Playwright, with an empty profile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.testing import CHROMIUM_FLAGS

CHROMIUM = Path(os.environ.get("REFINERY_CHROMIUM", "/usr/bin/chromium"))


@contextmanager
def chromium_page(profile: Path, width: int = 1500, height: int = 1200, downloads: bool = False,
                  init_script: str | None = None) -> Iterator:
    """A page of a headless Chromium (no browser download); `downloads` lets files come as downloads."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": width, "height": height}, accept_downloads=downloads)
        if init_script:
            context.add_init_script(init_script)
        yield context.pages[0] if context.pages else context.new_page()
        context.close()
