"""Real-browser tests (`make e2e`): JupyterLab and the built book in headless Chromium, driven by Playwright.

They are collected only when COURSE_E2E=1 (`make e2e` sets it), so `pytest tests` (`make test`) never starts a
browser. The browser is Debian's Chromium (`apt-get install chromium`), found on PATH or through $CHROMIUM and
handed to Playwright as `executable_path`: Playwright never downloads a browser here (no `playwright install`).
Every server runs on 127.0.0.1; any request to another host is aborted and recorded, and the tests assert that
there was none (the book and the slides must work offline, with no CDN).
"""

from __future__ import annotations

import functools
import http.server
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
HTML = BUILD / "html"
SCREENSHOTS = BUILD / "e2e"

collect_ignore_glob = [] if os.environ.get("COURSE_E2E") == "1" else ["test_*.py"]

CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_executable() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no Chromium: install Debian's (apt-get install chromium) or set CHROMIUM=/path/to/chromium")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, timeout: float, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"no answer from {url} within {timeout:.0f} s")


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Guarded:
    """A page whose requests to anything but 127.0.0.1 are aborted and recorded in `external`."""

    def __init__(self, page):
        self.page = page
        self.external: list[str] = []
        self.failed: list[str] = []
        self.console_errors: list[str] = []
        page.route("**/*", self._route)
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)

    def _route(self, route):
        url = route.request.url
        if urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()


@pytest.fixture
def guarded(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = Guarded(context.new_page())
    yield page
    context.close()


@pytest.fixture(scope="session")
def book_url() -> str:
    """The built book (build/html, from `make book`) served on 127.0.0.1."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML / 'index.html'} is missing: run `make book` first (`make e2e` does)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """JupyterLab on 127.0.0.1 serving a scratch folder with a copy of notebook 00 (never the repository's file:
    running cells in the UI and autosave would rewrite it). Yields (base URL, token, folder)."""
    work = tmp_path_factory.mktemp("lab")
    root = work / "root"
    root.mkdir()
    shutil.copy2(ROOT / "notebooks" / "00_start_here.ipynb", root / "00_start_here.ipynb")
    token = secrets.token_hex(16)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # MPLBACKEND=Agg would hide inline figures
    env.update(
        COURSE_DEVICE="cpu",
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        JUPYTER_CONFIG_DIR=str(work / "config"),
        JUPYTER_RUNTIME_DIR=str(work / "runtime"),
        JUPYTER_DATA_DIR=str(work / "data"),
        JUPYTERLAB_SETTINGS_DIR=str(work / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(work / "workspaces"),
        IPYTHONDIR=str(work / "ipython"),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",  # CI may run as root
    ]
    (work / "config").mkdir()
    (work / "config" / "jupyter_lab_config.py").write_text(
        "c.LabApp.news_url = None  # no announcements fetched from the internet\n"
        'c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"\n'
    )
    # Attach every cell to the page (no windowing), so that the test sees all of them, as a reader scrolling would.
    tracker = work / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}\n')
    news = work / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false", "checkForUpdates": false}\n')  # no "get notified about news?" toast
    log = (work / "jupyterlab.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_for_http(f"{base}/api/status?token={token}", timeout=120, proc=proc)
        except (RuntimeError, TimeoutError) as error:
            log.flush()
            tail = (work / "jupyterlab.log").read_text(errors="replace")[-3000:]
            pytest.fail(f"JupyterLab did not start: {error}\n{tail}")
        yield base, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(work / "jupyterlab.log", SCREENSHOTS / "jupyterlab.log")
