"""Handouts a student can study from: one PDF per slide deck, each slide with its speaker notes, up to three slides
to an A4 page, printed offline by headless Chromium.

    python -m tools.handouts            # after `make book`: build/html/slides/*.html -> build/handouts/*.pdf

The decks are served from ``build/html`` on 127.0.0.1 and opened by the same Chromium the browser tests drive
(Debian's, found on PATH or through $CHROMIUM; Playwright never downloads one). Any request to another host is
aborted: the handouts are made offline. Each slide is drawn as the projector shows it (1280x720, its fragments
shown) and put on the page as an image, its notes beside it and then below it at the page's whole width (a wide
formula or table starts below it, zoomed to that width if still wider). The notes' formulas are MathML
(book/_static/course-slides.js), their links written out as text (a printed page cannot open the book's relative
links). Slides are packed
onto pages in order, at most ``PER_PAGE`` a page, fewer when their notes are long; a slide is never split from its
notes unless its notes alone are longer than a page.
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
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
PER_PAGE = 3  # slides on one A4 page at most
READY = """() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady
    && document.documentElement.classList.contains('course-notes-ready')"""

# The slides of a deck as (title, notes HTML) with each slide shown in turn (for its screenshot).
SLIDES = """() => Reveal.getSlides().map(s => {
  const heading = s.querySelector('h1, h2, h3');
  const notes = [...s.querySelectorAll('aside.notes')].map(n => {
    const copy = n.cloneNode(true);
    copy.querySelectorAll('a.anchor-link').forEach(a => a.remove());
    copy.querySelectorAll('a[href]').forEach(a => {
      if (!/^https?:/.test(a.getAttribute('href'))) a.replaceWith(...a.childNodes);
    });
    return copy.innerHTML;
  }).join('\\n');
  const at = Reveal.getIndices(s);
  return {h: at.h, v: at.v || 0, title: heading ? heading.textContent.replace('¶', '').trim() : '', notes};
})"""

SHOW = """async ([h, v]) => {
  Reveal.slide(h, v, 1000);
  await new Promise(done => MathJax.Hub.Queue(() => done(true)));
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  if (window.courseFitMath) courseFitMath(Reveal.getCurrentSlide());
}"""

# Pack the slides onto sheets of one A4 page: in order, at most PER_PAGE a sheet, while they fit its height.
PACK = """perPage => {
  const room = document.querySelector('.measure').getBoundingClientRect().height;
  const page = document.querySelector('.page').getBoundingClientRect().height;
  const blocks = [...document.querySelectorAll('.slide-block')];
  const book = document.querySelector('.book');
  const title = book.querySelector('h1').getBoundingClientRect().height;
  const sheets = [];
  let sheet = null, used = title, count = 0;
  for (const block of blocks) {
    const height = block.getBoundingClientRect().height;
    if (!sheet || count >= perPage || used + height > room) {
      if (sheet) used = 0;
      sheet = document.createElement('div');
      sheet.className = 'sheet';
      book.appendChild(sheet);
      sheets.push({slides: 0, height: 0});
      count = 0;
    }
    sheet.appendChild(block);
    used += height; count += 1;
    sheets[sheets.length - 1] = {slides: count, height: used};
  }
  document.querySelector('.staging').remove();
  // A sheet holds one page, or more when the notes of its one slide are longer than a page.
  return sheets.map(s => ({slides: s.slides, pages: Math.max(1, Math.ceil((s.height - 1) / page))}));
}"""

# What is still wider than the page's column (a long formula, a wide table) is zoomed to fit it: wider content would
# make Chromium shrink every page of the PDF. Returns the widest right edge of any note's part (px), after, and how
# many code blocks of the notes draw a line of theirs on two lines.
FIT = """() => {
  const column = document.querySelector('.staging').getBoundingClientRect().right;
  for (const el of document.querySelectorAll('.notes > *, .notes math[display="block"], .notes table')) {
    const box = el.getBoundingClientRect();
    const wide = Math.max(box.right, box.left + el.scrollWidth);
    if (wide > column + 0.5) el.style.zoom = (column - box.left) / (wide - box.left);
  }
  const widest = Math.max(0, ...[...document.querySelectorAll('.notes *')].map(el => el.getBoundingClientRect().right));
  const wrapped = [...document.querySelectorAll('.notes pre')].filter(pre => {  // lines drawn for the lines written
    const range = document.createRange();
    range.selectNodeContents(pre);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return tops.size > pre.textContent.replace(/\\n+$/, '').split('\\n').filter(l => l.trim()).length;
  }).length;
  return [widest, wrapped];
}"""

# The Chinese subset (book/_static/course-cjk.css) loaded before the pages are laid out and printed.
FONTS = """() => document.fonts.load('16px "Noto Sans SC Course Subset"', '猫')
    .then(() => document.fonts.ready).then(() => true)"""

STYLE = """
@page { size: A4; margin: 12mm 12mm 14mm; }
html { font-family: "Noto Sans SC Course Subset", "DejaVu Sans", sans-serif; font-size: 8.5pt; color: #111; }
body { margin: 0; }
h1.deck { font-size: 13pt; margin: 0 0 3mm; }
.measure, .page { position: absolute; visibility: hidden; width: 1px; }
.measure { height: 250mm; }  /* the page's 271 mm, less a margin */
.page { height: 271mm; }
.sheet { break-after: page; }
.sheet:last-child { break-after: auto; }
.slide-block { display: flow-root; padding: 2.5mm 0; border-top: 0.3mm solid #bbb; break-inside: avoid; }
.slide-block img { float: left; width: 112mm; height: 63mm; margin: 0 4mm 1mm 0; border: 0.2mm solid #999; }
.notes { line-height: 1.3; overflow-wrap: anywhere; }  /* beside the slide, then the page's whole width below it */
.notes math[display="block"], .notes table { clear: left; }  /* wide by nature: below the slide, whole width */
/* code too (each line drawn as one: 120 columns of 7 pt fit the page's width; FIT zooms a longer one) */
.notes p, .notes ul, .notes ol { margin: 0 0 1.5mm; }
.notes ul, .notes ol { padding-left: 4mm; }
.notes h1, .notes h2, .notes h3, .notes h4 { font-size: 9pt; margin: 0 0 1mm; }
.notes pre { white-space: pre; clear: left; font-size: 7pt; background: #f4f4f4; padding: 1mm; margin: 0 0 1.5mm; }
.notes code, .notes pre { font-family: "Noto Sans SC Course Subset", "DejaVu Sans Mono", monospace; }
.notes code { font-size: 0.92em; }
.notes table { border-collapse: collapse; font-size: 7.5pt; margin-bottom: 1.5mm; }
.notes td, .notes th { border: 0.2mm solid #ccc; padding: 0.3mm 1mm; }
.number { font-size: 7pt; color: #555; margin-bottom: 1mm; }
"""


def chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise SystemExit("no Chromium: install Debian's (apt-get install chromium) or set CHROMIUM=/path/to/chromium")
    return path


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):  # a page closed while a file was on its way
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _local_only(route) -> None:
    url = route.request.url
    if urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:")):
        route.continue_()
    else:
        route.abort()


def slides_of(browser, url: str) -> tuple[str, list[dict]]:
    """The deck's title and its slides: each a dict with its screenshot (PNG bytes), title and notes (HTML)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.route("**/*", _local_only)
        page.goto(url, wait_until="load")
        page.wait_for_function(READY, timeout=60_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.evaluate("() => Reveal.configure({controls: false, progress: false, transition: 'none'})")
        page.add_style_tag(content=".course-book-link { display: none !important; }")
        slides = page.evaluate(SLIDES)
        for slide in slides:
            page.evaluate(SHOW, [slide["h"], slide["v"]])
            slide["png"] = page.screenshot(type="png")
        title = slides[0]["title"] if slides and slides[0]["title"] else Path(urlparse(url).path).name
        return title, slides
    finally:
        page.close()


def handout_html(title: str, slides: list[dict], static_url: str) -> str:
    """The handout of one deck as an HTML page: every slide as an image beside its notes."""
    blocks = []
    for number, slide in enumerate(slides, 1):
        image = base64.b64encode(slide["png"]).decode("ascii")
        notes = slide["notes"].strip()
        blocks.append(
            f'<div class="slide-block"><img alt="slide {number}" src="data:image/png;base64,{image}">'
            f'<div class="notes"><div class="number">slide {number} of {len(slides)}</div>{notes}</div></div>'
        )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}: handout</title>'
        f'<link rel="stylesheet" href="{static_url}course-cjk.css"><style>{STYLE}</style></head><body>'
        f'<div class="measure"></div><div class="page"></div>'
        f'<div class="book"><h1 class="deck">{html.escape(title)}</h1></div>'
        f'<div class="staging">{"".join(blocks)}</div></body></html>'
    )


def print_deck(browser, url: str, out: Path) -> dict:
    """Print the handout of one deck to ``out``; return its slides, its pages and the slides on each page."""
    title, slides = slides_of(browser, url)
    page = browser.new_page(viewport={"width": 703, "height": 1000})  # A4's 186 mm between margins, 96 px an inch
    try:
        page.route("**/*", _local_only)
        origin = url.rsplit("/", 2)[0]  # the handout is served from the book's origin, for its fonts to load
        text = handout_html(title, slides, origin + "/_static/")
        page.route(origin + "/handout.html", lambda route: route.fulfill(body=text, content_type="text/html"))
        page.goto(origin + "/handout.html", wait_until="load")
        page.emulate_media(media="print")
        page.evaluate(FONTS)
        widest, wrapped = page.evaluate(FIT)
        sheets = page.evaluate(PACK, PER_PAGE)
        page.pdf(path=str(out), format="A4", print_background=True, prefer_css_page_size=True)
        return {
            "slides": len(slides),
            "notes": sum(1 for s in slides if s["notes"].strip()),
            "sheets": [s["slides"] for s in sheets],
            "pages": sum(s["pages"] for s in sheets),
            "widest_px": widest,  # of the notes, within the page's 703 px: else Chromium shrinks every page
            "wrapped_code": wrapped,  # code blocks of the notes with a line drawn on two
        }
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.handouts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "build" / "html", help="the built book (make book)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handouts")
    parser.add_argument("decks", nargs="*", help="deck names to print (default: all), e.g. 04_scaling")
    args = parser.parse_args(argv)
    decks = sorted((args.html / "slides").glob("*.slides.html"))
    decks = [d for d in decks if not args.decks or any(d.name.startswith(name) for name in args.decks)]
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
                done = print_deck(browser, base + deck.name, pdf)
                where = pdf.relative_to(ROOT) if pdf.is_relative_to(ROOT) else pdf
                print(
                    f"{where}: {done['slides']} slides on {done['pages']} pages "
                    f"({done['notes']} with notes), notes {done['widest_px']:.0f} px wide of 703, "
                    f"{time.perf_counter() - t0:.0f} s"
                )
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
