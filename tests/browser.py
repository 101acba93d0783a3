"""Debian's Chromium, headless, driven by Selenium: for the web view's test and benchmark."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM, CHROMEDRIVER = Path('/usr/bin/chromium'), Path('/usr/bin/chromedriver')
# Chromium's background connections are refused on a closed network, many at a time.
FLAGS = ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--window-size=1280,800')


def available() -> bool:
    return CHROMIUM.exists() and CHROMEDRIVER.exists()


@contextmanager
def headless_chromium(profile_dir: Path) -> Iterator[Any]:
    """A Selenium driver of a fresh headless Chromium with its profile in ``profile_dir``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f'--user-data-dir={profile_dir}'):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Any, script: str, timeout_s: float = 30.0) -> Any:
    """Evaluate ``script`` (a JavaScript expression) in the page until it is truthy; its value.
    TimeoutError names the expression and what the page's ``window.arsimView`` holds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = driver.execute_script(f'return {script};')
        if value:
            return value
        time.sleep(0.1)
    state = driver.execute_script('return JSON.stringify(window.arsimView)') or ''
    msg = f'{script} stayed false for {timeout_s} s; the page holds {state[:2000]}'
    raise TimeoutError(msg)
