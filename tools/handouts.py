"""Handouts: one PDF per slide deck, printed by reveal.js's print mode (``?print-pdf``) in headless Chromium.

    python -m tools.handouts            # after `make book`: build/html/slides/*.html -> build/handouts/*.pdf

The decks are served from ``build/html`` on 127.0.0.1 and printed by the same Chromium the browser tests drive
(Debian's, found on PATH or through $CHROMIUM; Playwright never downloads one). Any request to another host is
aborted: the handouts are made offline. One 1280x720 page per slide, its fragments shown, without speaker notes.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from course_lib.paths import ROOT

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
READY = """() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady
    && document.querySelector('html.reveal-print, html.print-pdf') !== null"""


def chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise SystemExit("no Chromium: install Debian's (apt-get install chromium) or set CHROMIUM=/path/to/chromium")
    return path


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _local_only(route) -> None:
    url = route.request.url
    if urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:")):
        route.continue_()
    else:
        route.abort()


def print_deck(browser, url: str, out: Path) -> int:
    """Print one deck to ``out``; return its number of pages (slides)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.route("**/*", _local_only)
        page.goto(url + "?print-pdf", wait_until="load")
        page.wait_for_function(READY, timeout=60_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.evaluate("() => new Promise(done => MathJax.Hub.Queue(() => done(true)))")
        page.evaluate("() => window.courseFitAll && courseFitAll()")
        page.wait_for_timeout(500)
        page.pdf(path=str(out), width="1280px", height="720px", print_background=True, prefer_css_page_size=True)
        return page.evaluate("document.querySelectorAll('.reveal .pdf-page').length")
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.handouts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "build" / "html", help="the built book (make book)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handouts")
    args = parser.parse_args(argv)
    decks = sorted((args.html / "slides").glob("*.slides.html"))
    if not decks:
        print(f"no decks in {args.html / 'slides'}: run `make book` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    server = serve(args.html)
    base = f"http://127.0.0.1:{server.server_port}/slides/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            for deck in decks:
                t0 = time.perf_counter()
                pdf = args.out / deck.name.replace(".slides.html", ".pdf")
                pages = print_deck(browser, base + deck.name, pdf)
                print(
                    f"{pdf.relative_to(ROOT) if pdf.is_relative_to(ROOT) else pdf}: {pages} pages, "
                    f"{time.perf_counter() - t0:.0f} s"
                )
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
