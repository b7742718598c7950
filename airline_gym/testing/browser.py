"""A headless system Chromium driven by Selenium: for the report's browser tests and benchmark.

Only an installed browser is used (Debian's ``chromium`` and ``chromium-driver``): the driver's
path is handed to Selenium, so Selenium Manager never downloads one.
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Any

__all__ = ["BROWSERS", "DRIVERS", "headless_chromium", "missing"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "/usr/lib/chromium/chromedriver")


def _first(names: tuple[str, ...]) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


def missing() -> str | None:
    """Why no browser can be driven here (``None`` when one can)."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (the 'report' extra)"
    if _first(BROWSERS) is None or _first(DRIVERS) is None:
        return "no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)"
    return None


def headless_chromium(width: int = 1400, height: int = 1000) -> Any:
    """A Selenium ``WebDriver`` on a new headless Chromium (call ``quit()`` when done)."""
    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _first(BROWSERS) or ""
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(_first(DRIVERS) or ""), options=options)
    driver.set_page_load_timeout(60)
    return driver
