"""Headless Chromium for the page's tests and timings, and the server in a thread.

The browser is the system's Chromium (Debian's ``chromium`` + ``chromium-driver``) driven
through Selenium; ``chromedriver`` is taken from ``PATH`` only, so nothing is downloaded at
run time. :class:`ServerThread` runs a Starlette app under uvicorn on a free loopback port.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import ConfigError

#: Flags for a quiet, offline headless Chromium.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1200,1600")


def missing_browser() -> str | None:
    """Why no headless browser can be driven here, or None when one can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium, see requirements/lock.txt)"
    if chromium_binary() is None:
        return "no Chromium on PATH (apt-get install chromium chromium-driver)"
    if shutil.which("chromedriver") is None:
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return None


def chromium_binary() -> str | None:
    """The Chromium executable on PATH."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium(download_dir: Path | None = None, *, profile: Path | None = None) -> Any:
    """A headless Chromium WebDriver with a fresh profile; downloads go to ``download_dir``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    why = missing_browser()
    if why is not None:
        raise ConfigError(why)
    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium_binary())
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile or tempfile.mkdtemp(prefix='stoicheia-chromium-')}")
    if download_dir is not None:
        options.add_experimental_option("prefs", {"download.default_directory": str(download_dir),
                                                  "download.prompt_for_download": False})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
    if download_dir is not None:
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)})
    return driver


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on at the moment."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """``with ServerThread(app) as url:`` serves ``app`` on a free loopback port in a thread."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int | None = None) -> None:
        import uvicorn

        self.host, self.port = host, port or free_port(host)
        config = uvicorn.Config(app, host=self.host, port=self.port, log_level="warning", lifespan="off",
                                h11_max_incomplete_event_size=1 << 20)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise ConfigError(f"the server did not start on {self.url}")
            time.sleep(0.05)
        return self.url

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def submit_and_wait(browser: Any, button: Any, timeout: float = 600.0) -> None:
    """Click ``button`` and wait until the page it leads to has loaded.

    The old page is marked with a window property that the navigation clears (waiting for the
    old elements to go stale is racy: ChromeDriver may answer that their node left the document)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.wait import WebDriverWait

    browser.execute_script("window.__stoicheiaOldPage = true;")
    button.click()

    def loaded(driver: Any) -> bool:
        try:
            return bool(driver.execute_script(
                "return window.__stoicheiaOldPage === undefined && document.readyState === 'complete';"))
        except WebDriverException:  # mid-navigation
            return False

    WebDriverWait(browser, timeout, poll_frequency=0.1).until(loaded)


def wait_for_file(folder: Path, suffix: str, timeout: float = 20.0) -> Path:
    """The first complete file ending in ``suffix`` that appears in ``folder``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        if done and not any(p.name.endswith(".crdownload") for p in folder.iterdir()):
            return done[0]
        time.sleep(0.1)
    raise ConfigError(f"no {suffix} file arrived in {folder} within {timeout:.0f} s")
