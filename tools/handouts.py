"""Handouts a student can study from: one PDF per slide deck, each slide with its speaker notes, printed offline by
headless Chromium, for the English book and the Chinese one.

    python -m tools.handouts            # after `make book`: build/html/slides/*.html -> build/handouts/*.pdf,
                                        # build/html/zh/slides/*.html -> build/handouts/zh/*.pdf
    python -m tools.handouts --language en 04_   # one language (make handouts LANGUAGE=en), one deck

The decks are served from ``build/html`` on 127.0.0.1 and opened by the same Chromium the browser tests drive
(Debian's, found on PATH or through $CHROMIUM; Playwright never downloads one). Any request to another host is
aborted: the handouts are made offline. Each slide is drawn as the projector shows it (1280x720, its fragments
shown) less the empty bands above and below its content, and put on an A4 page (186 x 271 mm between margins).

Size. Code and printed output are 22 px on the 1280 px slide; on paper they are 22/1280 of the image's width. A
student reads code on paper from about 8 pt (2.82 mm), so a slide must be printed at least 2.82 x 1280/22 = 164 mm
wide, 92 mm tall. That rules out the old layout (112 mm, 5.5 pt, notes beside) and any notes column beside a slide:
portrait A4 leaves 22 mm beside it; landscape leaves 108 mm but only two 92 mm rows a page, and a slide without
notes (270 of the 741 English slides: a figure, an output) would stand beside an empty column. So a slide is
printed ``IMAGE_MM`` = 186 mm wide (tools/handout_page.py), the page's whole width (its code at 9.1 pt), with its
notes below it at the same width, as on a "notes page" (8.5 pt; their code 8 pt: the deck writes it at the 109 columns
that fit, ``tools.slide_code.for_notes``; a longer line would be zoomed to fit, as deck 14's were, down to 6.9 pt,
before 2026-12-05): no slide has a column beside it, and a slide without notes is
its image alone. A whole slide is then 105 mm tall, two to a page at most; but most slides do not fill their height
(a code cell and its output, a few bullets), so the empty bands above and below the content are cut off (``PAD`` px
kept): a short slide takes 25-60 mm. Slides are packed onto pages in order, at most ``PER_PAGE`` (3) a page, fewer
when they are tall or their notes long; a slide is never split from its notes unless its notes alone are longer than
a page, and such a slide may start below others where its image and its notes' first lines fit (``HEAD_MM``,
tools/handout_page.py). On the 16 decks (2026-12-04, sixteenth session): 752 slides on 302 pages in English (2.49 a
page, 2.0 to 2.85 a deck), 752 on 293 in Chinese (2.57, 2.21 to 2.85): two or more a page in every deck (English 00
had 1.85: its exercise slide, whose notes print the checks' long messages, took a page and a line of its own, after a
page with one short slide; the browser test now prints 00 as well as 04).

Text. A slide is printed as its screenshot, so a PDF reader could not search it: its text (``TEXT``: its words, its
code and each formula as the MathML text MathJax keeps for screen readers) is printed too, at 2 pt under the image,
which covers it; the test reads every slide's words back from the PDF. Printed output in the notes wraps a line
longer than the page at 8 pt (an error message of 341 characters in 00's notes was zoomed to 2.8 pt); code is zoomed.

Links. The notes' formulas are MathML (book/_static/course-slides.js). A printed or offline PDF cannot open the
book's relative links, so a link to the glossary becomes an internal link (``#glossary-TERM``) to the handout's
last pages, which define every term its notes link to (tools/handout_glossary.py); a link to another page of the
book is written out as its text and the page's name; links to other sites stay links.
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
from tools import handout_glossary
from tools.handout_page import CODE_PX, FIT, FONTS, LABELS, MEASURE, PACK, SLIDE_PX, handout_html

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
PER_PAGE = 3  # slides on one A4 page at most
PAD = 12  # px of a slide kept above and below its content when the empty bands are cropped
READY = """() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady
    && document.documentElement.classList.contains('course-notes-ready')"""

# The slides of a deck as (title, notes HTML, glossary terms) with each slide shown in turn (for its screenshot).
# Links of the notes: to the glossary, an internal link to the handout's appendix; to another page of the book, the
# link's text and the page's name; to another site, kept.
SLIDES = """page => Reveal.getSlides().map(s => {
  const heading = s.querySelector('h1, h2, h3');
  const root = new URL('../', location.href).pathname, terms = [];
  const notes = [...s.querySelectorAll('aside.notes')].map(n => {
    const copy = n.cloneNode(true);
    copy.querySelectorAll('a.anchor-link').forEach(a => a.remove());
    copy.querySelectorAll('a[href]').forEach(a => {
      const url = new URL(a.getAttribute('href'), location.href);
      if (url.origin !== location.origin) return;
      const term = decodeURIComponent(url.hash.slice(1));
      if (url.pathname === root + 'docs/glossary.html' && term) {
        a.replaceWith(Object.assign(document.createElement('a'),
          {className: 'glossary-link', href: '#glossary-' + term, innerHTML: a.innerHTML}));
        terms.push(term);
      } else if (url.pathname === location.pathname) a.replaceWith(...a.childNodes);
      else a.replaceWith(...a.childNodes, page.replace('{page}', url.pathname.slice(root.length) + url.hash));
    });
    return copy.innerHTML;
  }).join('\\n');
  const at = Reveal.getIndices(s);
  return {h: at.h, v: at.v || 0, title: heading ? heading.textContent.replace('¶', '').trim() : '', notes, terms};
})"""

# Show a slide; return the top and bottom (px) of what it draws, its notes left out.
SHOW = """async ([h, v]) => {
  Reveal.slide(h, v, 1000);
  await new Promise(done => MathJax.Hub.Queue(() => done(true)));
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const slide = Reveal.getCurrentSlide();
  if (window.courseFitMath) courseFitMath(slide);
  const drawn = el => !el.closest('aside.notes, script, style') && getComputedStyle(el).visibility !== 'hidden';
  const boxes = [...slide.querySelectorAll('img, svg, canvas, video, pre, table, .jp-InputArea-editor')]
    .filter(drawn).map(el => el.getBoundingClientRect());
  const text = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);  // glyphs, not MathJax's invisible struts
  while (text.nextNode()) {
    if (!text.currentNode.textContent.trim() || !drawn(text.currentNode.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(text.currentNode);
    boxes.push(...range.getClientRects());
  }
  const shown = boxes.filter(box => box.width > 0 && box.height > 0);
  const top = Math.min(...shown.map(box => box.top)), bottom = Math.max(...shown.map(box => box.bottom));
  return shown.length ? [Math.max(0, top), Math.min(720, bottom)] : [0, 720];
}"""


# The text the current slide shows, as lines, once its screenshot is taken: each formula as the text of the MathML
# that MathJax keeps for screen readers ("dk=512"), not its drawn glyphs, one line a paragraph. It is printed under
# the slide's image, where a PDF reader finds it (search, copy) and no one sees it. The slide is not shown again.
TEXT = """() => {
  const slide = Reveal.getCurrentSlide();
  slide.querySelectorAll('aside.notes, .MathJax_Preview, script, style').forEach(el => el.remove());
  slide.querySelectorAll('.MathJax_Display, .MathJax').forEach(math => {
    const said = math.querySelector('.MJX_Assistive_MathML');
    // no spaces, no invisible operators (U+2061 function application: no font draws it, so no PDF holds it)
    if (math.isConnected) math.replaceWith((said || math).textContent.replace(/[\\s\\u2061-\\u2064]+/g, ''));
  });
  return slide.innerText.split('\\n').map(line => line.replace(/\\s+/g, ' ').trim()).filter(line => line).join('\\n');
}"""


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


def slides_of(browser, url: str, lang: str) -> tuple[str, list[dict]]:
    """The deck's title and its slides: each a dict with its screenshot (PNG bytes, 1280 px wide, cropped to its
    content), title, notes (HTML) and the glossary terms its notes link to."""
    page = browser.new_page(viewport={"width": SLIDE_PX, "height": 720})
    try:
        page.route("**/*", _local_only)
        page.goto(url, wait_until="load")
        page.wait_for_function(READY, timeout=60_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.evaluate("() => Reveal.configure({controls: false, progress: false, transition: 'none'})")
        page.add_style_tag(content=".course-book-link, .course-running-head { display: none !important; }")
        slides = page.evaluate(SLIDES, LABELS[lang]["page"])
        for slide in slides:
            top, bottom = page.evaluate(SHOW, [slide["h"], slide["v"]])
            top, bottom = max(0, int(top) - PAD), min(720, int(bottom + 0.999) + PAD)
            clip = {"x": 0, "y": top, "width": SLIDE_PX, "height": bottom - top}
            slide["png"] = page.screenshot(type="png", clip=clip)
            slide["text"] = page.evaluate(TEXT)
        title = slides[0]["title"] if slides and slides[0]["title"] else Path(urlparse(url).path).name
        return title, slides
    finally:
        page.close()


def print_deck(browser, url: str, out: Path, glossary: handout_glossary.Glossary | None = None) -> dict:
    """Print the handout of one deck to ``out`` (a deck under zh/slides/ is Chinese); return its slides, its pages,
    the slides on each page and what MEASURE finds on the page printed."""
    lang = "zh" if "/zh/slides/" in url else "en"
    book = url.rsplit("/", 2)[0]  # the book's root: the handout is served from there, for its fonts to load
    title, slides = slides_of(browser, url, lang)
    glossary = glossary or handout_glossary.Glossary(browser, _local_only)
    defined = glossary.entries(book + "/docs/glossary.html", [t for s in slides for t in s["terms"]])
    for slide in slides:
        slide["notes"] = handout_glossary.link_terms(slide["notes"], defined)
    text = handout_html(title, slides, book + "/_static/", lang, handout_glossary.appendix(defined, lang))
    page = browser.new_page(viewport={"width": 703, "height": 1000})  # A4's 186 mm between margins, 96 px an inch
    try:
        page.route("**/*", _local_only)
        page.route(book + "/handout.html", lambda route: route.fulfill(body=text, content_type="text/html"))
        page.goto(book + "/handout.html", wait_until="load")
        page.emulate_media(media="print")
        page.evaluate(FONTS)
        widest, wrapped = page.evaluate(FIT)
        sheets, glossary_pages = page.evaluate(PACK, PER_PAGE)
        measured = page.evaluate(MEASURE, [CODE_PX, 15])
        html_text = page.content()
        page.pdf(path=str(out), format="A4", print_background=True, prefer_css_page_size=True)
    finally:
        page.close()
    return {
        "lang": lang,
        "slides": len(slides),
        "notes": sum(1 for s in slides if s["notes"].strip()),
        "sheets": [s["slides"] for s in sheets],
        "slide_pages": sum(s["pages"] for s in sheets),
        "pages": sum(s["pages"] for s in sheets) + glossary_pages,
        "terms": len(defined),
        "widest_px": widest,  # of the notes, within the page's 703 px: else Chromium shrinks every page
        "wrapped_code": wrapped,  # code blocks of the notes with a line drawn on two
        "html": html_text,  # the page as printed
        "texts": [slide["text"] for slide in slides],  # each slide's text, printed under its image
        **measured,
    }


LANGUAGES = {"en": "", "zh": "zh/"}  # a language's decks, under the built book


def decks_of(html_dir: Path, names: list[str], languages: tuple[str, ...] = tuple(LANGUAGES)) -> list[Path]:
    """The decks of the English book and of the Chinese one (zh/), or of ``languages`` only, those whose names start
    with one of ``names``."""
    folders = [LANGUAGES[lang] for lang in languages]
    decks = [d for lang in folders for d in sorted((html_dir / f"{lang}slides").glob("*.slides.html"))]
    return [d for d in decks if not names or any(d.name.startswith(name) for name in names)]


def pdf_of(deck: Path, html_dir: Path, out: Path) -> Path:
    """Where a deck's handout goes: slides/NN_name.slides.html -> NN_name.pdf, zh/slides/... -> zh/NN_name.pdf."""
    lang = deck.parent.parent.relative_to(html_dir)  # . or zh
    return out / lang / deck.name.replace(".slides.html", ".pdf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.handouts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "build" / "html", help="the built book (make book)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "handouts")
    parser.add_argument("--language", choices=sorted(LANGUAGES), help="only this language's decks (default: both)")
    parser.add_argument("decks", nargs="*", help="deck names to print (default: all), e.g. 04_scaling")
    args = parser.parse_args(argv)
    decks = decks_of(args.html, args.decks, (args.language,) if args.language else tuple(LANGUAGES))
    if not decks:
        print(f"no decks in {args.html / 'slides'}: run `make book` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    server = serve(args.html)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            glossary = handout_glossary.Glossary(browser, _local_only)
            for deck in decks:
                t0 = time.perf_counter()
                pdf = pdf_of(deck, args.html, args.out)
                pdf.parent.mkdir(parents=True, exist_ok=True)
                url = f"http://127.0.0.1:{server.server_port}/{deck.relative_to(args.html).as_posix()}"
                done = print_deck(browser, url, pdf, glossary)
                shown = pdf.relative_to(ROOT) if pdf.is_relative_to(ROOT) else pdf
                glossary_pages = done["pages"] - done["slide_pages"]
                print(
                    f"{shown}: {done['slides']} slides on {done['slide_pages']} pages ({done['notes']} with notes), "
                    f"code at {done['code_pt']:.1f} pt (the notes' {done['notes_code_pt']:.1f} pt or more), "
                    f"{done['terms']} terms on {glossary_pages} glossary pages, "
                    f"notes {done['widest_px']:.0f} px wide of 703, {time.perf_counter() - t0:.0f} s"
                )
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
