"""The built book and slides (build/html, from `make book`) in headless Chromium: pages load with no request to
another host, math is typeset by the local MathJax, every figure of every notebook is decoded, and every slide of
every deck can be projected as it is (tests/e2e/slide_metrics.py)."""

import json
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.e2e import slide_metrics
from tools import build_book, sections

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "build" / "html"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
IDS = [nb.stem for nb in NOTEBOOKS]
GLOSSARY = ROOT / "docs" / "glossary.md"

# Any failed request but about:blank is a broken page: MathJax's TeX fonts, which jupyter-server-mathjax does not
# ship, are no longer asked for (tools/build_book.TEX_FACES).
EXPECTED_MISSES = re.compile(r"^about:blank$")
FONT = "Noto Sans SC Course Subset"  # the course's CJK font subset (data/fonts), as the book's CSS names it
# Chinese characters drawn twice on a canvas, with the subset first and with the fallback alone: without the subset
# (on CI: no CJK font at all) the two drawings are the same empty boxes. Returns [ink, ink-weighted x] of each.
INK = """text => [`"${FONT}", monospace`, 'monospace'].map(family => {
    const canvas = document.createElement('canvas');
    canvas.width = 600; canvas.height = 60;
    const c = canvas.getContext('2d');
    c.font = '40px ' + family;
    c.fillText(text, 5, 45);
    const alpha = c.getImageData(0, 0, 600, 60).data.filter((_, i) => i % 4 === 3);
    return [alpha.reduce((a, b) => a + b, 0), alpha.reduce((a, b, i) => a + b * (i % 600), 0)];
})""".replace("${FONT}", FONT)


def figures_in(nb: Path) -> int:
    """Image outputs stored in a notebook, leaving out the cells the book removes (tag remove-cell)."""
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return sum(
        1
        for c in cells
        if c["cell_type"] == "code" and "remove-cell" not in c.get("metadata", {}).get("tags", [])
        for o in c.get("outputs", [])
        if any(m.startswith("image/") for m in o.get("data", {}))
    )


def figures_in_deck(nb: Path) -> int:
    """Image outputs of the cells a notebook's deck shows (tools/sections.py: the core cells marked as slides)."""
    deck = sections.slides(json.loads(nb.read_text(encoding="utf-8")))
    return sum(
        1
        for c in deck["cells"]
        if c["cell_type"] == "code" and c["metadata"]["slideshow"]["slide_type"] != "skip"
        for o in c.get("outputs", [])
        if any(m.startswith("image/") for m in o.get("data", {}))
    )


def open_page(guarded, url: str):
    page = guarded.page
    bad = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response.status if response else 'no response'}"
    page.evaluate("() => document.fonts.ready.then(() => true)")  # web fonts (the CJK subset) in place
    return page, bad


# How many formulas MathJax has typeset once it has been idle for a second (its queue may run more than one pass).
SETTLED_JAX = """async () => {
    const idle = () => new Promise(done => MathJax.Hub.Queue(() => done(MathJax.Hub.getAllJax().length)));
    let count = await idle(), stable = 0;
    for (let i = 0; i < 80 && stable < 4; i++) {
        await new Promise(ok => setTimeout(ok, 250));
        const now = await idle();
        stable = now === count ? stable + 1 : 0;
        count = now;
    }
    return count;
}"""


# The formulas Sphinx wrote, by the class it gives them. Not "main .math": MathJax 2's HTML-CSS output puts a
# span.math inside every formula it has drawn, so that count grew by each formula typeset before it was taken
# (CI: chapter 12, "145 formulas in the page, MathJax typeset 144"; once here, 146 and 144).
MATH_SOURCES = "main .math.notranslate"


def check_math(page, url: str) -> int:
    """Wait until MathJax has typeset the page; return how many formulas it typeset. Fail on any TeX error."""
    n_sources = page.evaluate("document.querySelectorAll('.math, .jp-RenderedMarkdown').length")
    if n_sources == 0:
        return 0
    page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.isReady", timeout=30_000)
    typeset = page.evaluate(SETTLED_JAX)
    errors = page.evaluate(
        "[...document.querySelectorAll('.MathJax_Error, .merror, .mjx-merror')].map(e => e.textContent).slice(0, 5)"
    )
    assert not errors, f"{url}: MathJax could not typeset {errors}"
    return typeset


def check_images(page, url: str) -> int:
    """Scroll every image into view and wait until each is decoded; return how many there are."""
    count = page.evaluate(
        """async () => {
            const imgs = [...document.querySelectorAll('main img, .reveal img')];
            for (const img of imgs) {
                img.loading = 'eager';
                if (!img.complete) await new Promise(ok => { img.onload = img.onerror = ok; });
            }
            const broken = imgs.filter(img => img.naturalWidth === 0).map(img => img.src);
            if (broken.length) throw new Error('images not decoded: ' + broken.join(', '));
            return imgs.length;
        }"""
    )
    return count


def served_but_aborted(failure: str) -> bool:
    """A request the browser gave up (net::ERR_ABORTED: a click navigated away while MathJax was still fetching a
    font, which a loaded machine makes likely) for a file the built book has: not a missing or external resource."""
    address, _, why = failure.partition(" (")
    path = HTML / unquote(urlparse(address).path).lstrip("/")
    return "ERR_ABORTED" in why and path.is_file()


def assert_offline(guarded, bad: list[str], url: str):
    assert not guarded.external, f"{url} requested other hosts (a CDN?): {guarded.external}"
    failed = [f for f in guarded.failed if not EXPECTED_MISSES.search(f.split(" (")[0]) and not served_but_aborted(f)]
    assert not failed, f"{url}: failed requests {failed}"
    missing = [b for b in bad if not EXPECTED_MISSES.search(b.split(" ", 1)[1])]
    assert not missing, f"{url}: HTTP errors {missing}"


def test_landing_page(book_url, guarded, screenshots):
    page, bad = open_page(guarded, book_url + "index.html")
    assert "Self-Attention" in page.title()
    table = page.locator("main table").first
    assert table.locator("tbody tr").count() >= len(NOTEBOOKS), "the course map lacks rows"
    nav = page.locator("nav.bd-docs-nav a, .bd-sidebar-primary a").all_inner_texts()
    for nb in NOTEBOOKS:
        assert page.locator(f'a[href="notebooks/{nb.stem}.html"]').count() >= 1, f"no link to {nb.stem}"
        assert page.locator(f'a[href="slides/{nb.stem}.slides.html"]').count() == 1, f"no slides link for {nb.stem}"
    assert any(text.startswith("00") for text in nav), f"the navigation does not list the notebooks: {nav}"
    if GLOSSARY.is_file():
        assert page.locator('a[href="docs/glossary.html"]').count() >= 1, "no link to the glossary"
    page.screenshot(path=str(screenshots / "book-index.png"), full_page=True)
    assert_offline(guarded, bad, "index.html")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_chapter_renders_math_and_figures(book_url, guarded, screenshots, nb):
    url = f"{book_url}notebooks/{nb.stem}.html"
    page, bad = open_page(guarded, url)
    assert page.locator("main h1").count() >= 1
    n_math = page.locator(MATH_SOURCES).count()
    typeset = check_math(page, url)
    assert n_math == 0 or typeset >= n_math, f"{url}: {n_math} formulas in the page, MathJax typeset {typeset}"
    n_figures = check_images(page, url)
    stored = figures_in(nb)
    assert page.locator("main .cell_output img").count() == stored, f"{url}: not every stored figure is shown"
    assert n_figures >= stored
    if stored:
        page.locator("main .cell_output img").first.scroll_into_view_if_needed()
    elif n_math:
        page.locator(MATH_SOURCES).first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / f"book-{nb.stem}.png"))
    assert_offline(guarded, bad, url)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_slides_render(book_url, guarded, screenshots, nb):
    url = f"{book_url}slides/{nb.stem}.slides.html"
    page, bad = open_page(guarded, url)
    page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=30_000)
    assert page.evaluate("Reveal.getTotalSlides()") >= 3, f"{url}: fewer than 3 slides"
    typeset = check_math(page, url)
    n_math = page.evaluate("document.querySelectorAll('.MathJax, .MathJax_Display').length")
    assert n_math > 0 or typeset == 0
    n_images = check_images(page, url)
    assert n_images >= figures_in_deck(nb), f"{url}: {n_images} images, the deck has {figures_in_deck(nb)} figures"
    page.screenshot(path=str(screenshots / f"slides-{nb.stem}.png"))
    assert_offline(guarded, bad, url)


def test_glossary_page(book_url, guarded):
    if not GLOSSARY.is_file():
        pytest.skip(f"{GLOSSARY.relative_to(ROOT)} does not exist yet")
    url = f"{book_url}docs/glossary.html"
    page, bad = open_page(guarded, url)
    assert page.locator("main h1").count() >= 1
    check_math(page, url)
    assert_offline(guarded, bad, url)


def test_chinese_text_renders_with_the_shipped_font(book_url, guarded):
    """Chapter 03 names its worked example in Chinese, also in the sidebar. On a machine without a CJK font (like
    CI's), the glyphs must come from the course's font subset (book/_static/course-cjk.css), not show as boxes."""
    nb = next((nb for nb in NOTEBOOKS if nb.stem.startswith("03_")), None)
    if nb is None:
        pytest.skip("notebook 03 does not exist")
    url = f"{book_url}notebooks/{nb.stem}.html"
    page, bad = open_page(guarded, url)
    text = "猫坐在垫子上"
    assert text[0] in page.locator("main").inner_text(), f"{url}: no Chinese text to check"
    status = page.evaluate(
        """text => [...document.fonts].filter(f => f.family.includes('Course Subset')).map(f => f.status)""", text
    )
    assert status and "loaded" in status, f"{url}: the course's CJK font was not loaded ({status})"
    assert page.evaluate(f"text => document.fonts.check('16px \"{FONT}\"', text)", text)
    ink = page.evaluate(INK, text)
    assert ink[0][0] > 0 and ink[0] != ink[1], f"{url}: Chinese glyphs draw like the fallback's boxes: {ink}"
    assert_offline(guarded, bad, url)


# Each slide of every deck is measured on a 1280x720 screen for the rules of a projected slide (issues 29 and 44,
# tests/e2e/slide_metrics.py): nothing past the edges, no slide taller than the screen, code and output at 22 px or
# more and never wrapped, no sentence cut short, figure text at 16 px or more, at most 90 visible words a slide and 40
# on average, no prompts or test markers, Chinese characters drawn from the course's font subset in every font, and
# speaker notes with MathML formulas and links that open the book's pages. The densest and the widest slide of each
# deck are saved as screenshots (build/e2e/deck-NN-densest.png, deck-NN-widest.png), the numbers in
# build/e2e/slides-NN.json.


# Figures whose smallest text stays below 16 px on a 1280x720 slide even alone on it, trimmed and cut into panels
# (tools/slide_figures.py), per deck: only a redrawing in the notebook can fix them, never the build. Entries may
# shrink, not grow; the test fails when one is no longer needed. None since 01's cosine-similarity matrices (cell 46)
# draw their 45 tick labels at 8 pt (they were 7 pt: 15.1 px).
SMALL_FIGURES: dict[str, int] = {}


def html_ids(path: Path, cache: dict) -> set[str]:
    """The id attributes of a built page."""
    if path not in cache:
        cache[path] = set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8"))) if path.is_file() else set()
    return cache[path]


def broken_links(hrefs: list[str], deck: Path, cache: dict) -> list[str]:
    """The links of a deck's notes that do not open a page of the built book (or an anchor that it lacks)."""
    broken = []
    for href in sorted(set(hrefs)):
        if re.match(r"[a-z][a-z0-9+.-]*:", href, re.I):
            continue  # https:, mailto: (other sites are not checked offline)
        path, _, anchor = href.partition("#")
        target = (deck.parent / path).resolve() if path else deck
        if not target.is_file() or (anchor and anchor not in html_ids(target, cache)):
            broken.append(href)
    return broken


def deck_slides(nb: Path) -> int:
    """Slides of a deck as the build shapes it (tools.deck): cells opening a slide or a sub-slide."""
    cells = build_book.slides_notebook(json.loads(nb.read_text(encoding="utf-8")), nb.name).cells
    return sum(1 for c in cells if c.metadata.get("slideshow", {}).get("slide_type") in sections.SLIDE_KINDS)


def screenshot_slide(page, row: dict, path: Path) -> None:
    page.evaluate("([h, v]) => Reveal.slide(h, v, 1000)", [row["h"], row["v"]])
    page.evaluate("() => new Promise(done => MathJax.Hub.Queue(() => done(true)))")
    page.screenshot(path=str(path))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=IDS)
def test_every_slide_can_be_projected(book_url, browser, screenshots, nb):
    notebook = json.loads(nb.read_text(encoding="utf-8"))
    assert sections.is_sectioned(notebook), f"{nb.name} has no section badges (python -m tools.sections)"
    per_lecture = sections.lectures(sections.sections(notebook)[0])
    for number, row in per_lecture.items():
        assert sections.MIN_SLIDES <= row["slides"] <= sections.MAX_SLIDES, f"lecture {number}: {row['slides']}"
    context = browser.new_context(viewport=slide_metrics.SCREEN)
    page = context.new_page()
    failed = slide_metrics.failed_requests(page)
    try:
        page.goto(f"{book_url}slides/{nb.stem}.slides.html", wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady")
        page.wait_for_function("() => document.documentElement.classList.contains('course-notes-ready')")
        page.evaluate("() => document.fonts.ready.then(() => true)")
        assert page.evaluate("Reveal.getTotalSlides()") == deck_slides(nb)
        assert page.evaluate("Reveal.getConfig().width") == 1280 and page.evaluate("Reveal.getConfig().height") == 720
        assert page.locator(".reveal .slide-number").count() == 1, "no slide numbers"
        assert not page.evaluate("Reveal.getConfig().controls"), "navigation arrows drawn over the corner of figures"
        rows = slide_metrics.measure(page)
        (screenshots / f"slides-{nb.stem[:2]}.json").write_text(
            json.dumps({"summary": slide_metrics.summary(rows), "slides": rows}, indent=1, ensure_ascii=False)
        )
        densest = max(rows, key=lambda r: r["words"])
        widest = max(rows, key=lambda r: (r["overflowCount"], r["widest"]))
        screenshot_slide(page, densest, screenshots / f"deck-{nb.stem[:2]}-densest.png")
        screenshot_slide(page, widest, screenshots / f"deck-{nb.stem[:2]}-widest.png")
        broken = [line for line in slide_metrics.problems(rows) if "figure text at" not in line]
        small = [f"slide {r['h']}/{r['v']}: {r['figurePx']:.1f} px" for r in rows if slide_metrics.small_figure(r)]
        known = SMALL_FIGURES.get(nb.stem[:2], 0)
        assert len(small) <= known, f"{nb.stem}: figure text below {slide_metrics.MIN_FIGURE_TEXT_PX} px: {small}"
        assert len(small) == known, f"{nb.stem}: {len(small)} figures too small, not {known}: update SMALL_FIGURES"
        links = broken_links([h for r in rows for h in r["notesLinks"]], HTML / "slides" / f"{nb.stem}.slides.html", {})
        broken += [f"notes link that opens no page of the book: {href}" for href in links]
        broken += [f"a file the deck asks for and the book lacks: {f}" for f in failed]
        assert not broken, f"{nb.stem}: slides a lecturer cannot project as they are:\n" + "\n".join(broken)
    finally:
        context.close()


# A slide on its way in, drawn with the deck's own transition: the figure that rests nearest the foot (the running
# head, the link to the book) is watched frame by frame from the moment its slide is asked for until it has arrived.
# Every overlap of the figure as drawn (object-fit: contain, at the top of its box) with a foot that is shown, within
# slide_metrics.FOOT_GAP px, is returned. The rules of slide_metrics measure slides at rest (no transition), where
# 10's learning curves end 6 px above the running head; sliding in from below they ran their axis label through it.
ARRIVING = """async ([gap, ms]) => {
  const feet = ['.course-running-head', '.course-book-link'].map(q => document.querySelector(q)).filter(Boolean);
  const drawn = img => {
    const r = img.getBoundingClientRect(), k = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
    const w = img.naturalWidth * k;
    return {left: r.left + (r.width - w) / 2, right: r.left + (r.width + w) / 2, top: r.top,
            bottom: r.top + img.naturalHeight * k};
  };
  const own = Reveal.getConfig().transition;
  Reveal.configure({transition: 'none'});
  let nearest = null, lowest = -Infinity;
  for (const slide of Reveal.getSlides()) {
    const img = slide.querySelector('img');
    if (!img || Reveal.getSlides().indexOf(slide) === 0) continue;
    Reveal.slide(Reveal.getIndices(slide).h, Reveal.getIndices(slide).v);
    if (drawn(img).bottom > lowest) [nearest, lowest] = [slide, drawn(img).bottom];
  }
  const before = Reveal.getSlides()[Reveal.getSlides().indexOf(nearest) - 1], at = Reveal.getIndices(nearest);
  Reveal.slide(Reveal.getIndices(before).h, Reveal.getIndices(before).v);
  Reveal.configure({transition: own});
  await new Promise(done => setTimeout(done, ms));
  Reveal.slide(at.h, at.v);
  const touched = [], start = performance.now();
  while (performance.now() - start < ms) {
    await new Promise(done => requestAnimationFrame(done));
    const f = drawn(nearest.querySelector('img'));
    for (const foot of feet.filter(el => el.textContent.trim() && el.checkVisibility({visibilityProperty: true}))) {
      const r = foot.getBoundingClientRect();
      if (f.left < r.right + gap && r.left - gap < f.right && f.top < r.bottom && r.top - gap < f.bottom)
        touched.push(`${Math.round(performance.now() - start)} ms: figure bottom ${Math.round(f.bottom)}, ` +
                     `.${foot.className} top ${Math.round(r.top)}`);
    }
  }
  return {slide: `${at.h}/${at.v}`, transition: own, rest: Math.round(lowest), touched};
}"""


def test_a_figure_on_its_way_in_keeps_clear_of_the_foot(book_url, browser):
    """Deck 10's figure that rests nearest the foot (a lecturer's trial: its learning curves, deck slide 35, drawn
    with the deck's transition, "slide", ran their axis label through the running head on their way in; at rest it
    keeps clear of it) never touches the foot while it arrives."""
    nb = next((nb for nb in NOTEBOOKS if nb.stem.startswith("10_")), NOTEBOOKS[0])
    context = browser.new_context(viewport=slide_metrics.SCREEN)
    page = context.new_page()
    try:
        page.goto(f"{book_url}slides/{nb.stem}.slides.html", wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady")
        seen = page.evaluate(ARRIVING, [slide_metrics.FOOT_GAP, 1500])
        assert not seen["touched"], f"{nb.stem}: slide {seen['slide']} on its way in ({seen}): {seen['touched'][:5]}"
    finally:
        context.close()


def small_png() -> str:
    """A blank 100x100 PNG, base64."""
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (100, 100), "white").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def test_the_metrics_see_what_they_measure(book_url, browser):
    """The measurements fail where they should: a slide made too wide, too wordy, with small code, a prompt,
    Chinese code in a font without the subset, a wrapped code block, a sentence ending in an ellipsis, a small
    figure without its text size, a small formula and a formula of the notes in a font without a MATH table (its
    subscript drawn on its base's line), text drawn on the link to the book at the slide's foot and a running head
    that repeats a formula is reported for each rule."""
    nb = NOTEBOOKS[0]
    context = browser.new_context(viewport=slide_metrics.SCREEN)
    page = context.new_page()
    try:
        page.goto(f"{book_url}slides/{nb.stem}.slides.html", wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady")
        page.evaluate(
            """png => {
                const s = document.querySelector('.reveal .slides section:not(.stack)');
                s.insertAdjacentHTML('beforeend',
                    '<div><pre style="font-size: 12px !important; width: 2000px !important; ' +
                    'font-family: monospace !important">In [31]: 猫 ' + 'x'.repeat(400) + '</pre></div><p>' +
                    'word '.repeat(120) + '</p><pre style="width: 300px !important; white-space: pre-wrap ' +
                    '!important">' + 'wrapped '.repeat(20) + '</pre><p>A sentence cut short …</p>' +
                    '<aside class="notes"><p>raw $x_q^2$, <a href="../docs/glossary.md#x">x</a>, <math ' +
                    'style="font-family: sans-serif"><msub><mi>d</mi><mi>k</mi></msub></math></p></aside>' +
                    '<span class="MathJax"><span style="font-size: 10px">k</span></span>' +
                    '<p style="position: absolute; left: 0; bottom: 0; margin: 0">flush on the foot</p>' +
                    '<img style="width: 50px !important; height: 50px !important; ' +
                    'flex: none !important" src="data:image/png;base64,' + png + '">');
            }""",
            small_png(),
        )
        page.evaluate(  # the running head as it was: the text of a typeset heading, each formula three times
            """() => Reveal.on('slidechanged', () => MathJax.Hub.Queue(() => {
                const head = document.querySelector('.course-running-head');
                if (head.textContent) head.textContent += ' O(n)O(n)O(n)';
            }))"""
        )
        found = " ".join(slide_metrics.problems(slide_metrics.measure(page)))
        rules = (
            "past the right edge",
            "words >",
            "code at 12.0 px",
            "prompts",
            "CJK subset",
            "figure text at 5.6",
            "formula text at 10.0",
            "without data-text-px",
            "code or output wrapped",
            "sentences cut short",
            "not MathML",
            "on their base's line",
            "not the book's pages",
            "under the slide's foot",
            "not its section's heading",
        )
        for rule in rules:
            assert rule in found, f"the metrics missed {rule!r}: {found}"
    finally:
        context.close()


def pdf_internal_links(data: bytes) -> tuple[set[str], dict[str, str]]:
    """The named destinations that a PDF's link annotations go to, and the PDF's named destinations, each with the
    object number of its page (Chromium's PDF: uncompressed dictionaries, ``/Dest /name`` and a ``/Dests`` dict)."""
    links = {n.decode() for n in re.findall(rb"/Subtype\s*/Link[^>]*?/Dest\s*/([^\s/<>\[\]()]+)", data)}
    table = re.search(rb"/Dests\s+(\d+)\s+0\s+R", data)
    body = re.search(rb"\n" + (table.group(1) if table else b"-") + rb"\s+0\s+obj\s*<<(.*?)>>\s*endobj", data, re.S)
    dests = {
        n.decode(): page.decode()
        for n, page in re.findall(rb"/([^\s/<>\[\]()]+)\s*\[\s*(\d+)\s+0\s+R", body.group(1) if body else b"")
    }
    return links, dests


def check_handout(done: dict, pdf: Path, slides: int) -> None:
    """What a handout (tools/handouts.py) promises a student, asserted on the page printed and on the PDF."""
    from tools import handout_page, handouts

    assert done["slides"] == slides == sum(done["sheets"]), done["sheets"]
    # at most three slides a page, two or more on average (a slide whose notes are longer than a page: pages of its own)
    assert max(done["sheets"]) <= handouts.PER_PAGE and done["slides"] / done["slide_pages"] >= 2, done["sheets"]
    assert done["notes"] >= done["slides"] // 2, f"only {done['notes']} of {done['slides']} slides have notes"
    assert done["widest_px"] <= 703.5, f"notes {done['widest_px']:.0f} px wide: Chromium would shrink every page"
    assert done["wrapped_code"] == 0, f"{done['wrapped_code']} code blocks of the notes wrap a line"
    # the notes' code written at the 109 columns that fit (tools.slide_code.for_notes), never zoomed; output wraps
    assert done["notes_code_pt"] >= 7.95, f"the notes' code or output printed at {done['notes_code_pt']:.1f} pt"
    # code and output, 22 px on the 1280 px slide, printed at 8 pt or more: 22 x image width (pt) / 1280 >= 8
    assert handout_page.CODE_PX * handout_page.IMAGE_MM / handout_page.SLIDE_PX / 25.4 * 72 >= 8
    assert done["code_pt"] >= 8, f"the slides' code printed at {done['code_pt']:.1f} pt"
    assert done["empty_beside"] == 0, f"{done['empty_beside']} slides beside an empty notes column"
    # the notes' links to the glossary: internal links to the appendix, each to an anchor the page holds
    page = done["html"]
    hrefs = re.findall(r'<a [^>]*href="#([^"]+)"', page)
    assert done["terms"] > 0 and len(hrefs) == done["links"] >= done["terms"] and not done["unresolved"], done["links"]
    assert all(f'id="{h}"' in page for h in hrefs), [h for h in hrefs if f'id="{h}"' not in page]
    assert not re.findall(r'href="(?!#|https?:|data:)[^"]*"', page), "a link a printed page cannot open"
    data = pdf.read_bytes()
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
    assert data.startswith(b"%PDF") and pages == done["pages"], f"{pages} pages for {done['pages']}"
    assert {tuple(round(float(x)) for x in box.split()) for box in re.findall(rb"/MediaBox \[([^\]]*)\]", data)} == {
        (0, 0, 595, 842)
    }, "A4 pages"
    links, dests = pdf_internal_links(data)
    assert links == {h for h in hrefs if h.startswith("glossary-")} and links <= set(dests), sorted(links - set(dests))
    glossary_pages = done["pages"] - done["slide_pages"]
    assert 1 <= len({dests[name] for name in links}) <= glossary_pages, "the links go to the glossary's pages"
    # each slide's words and numbers are in the PDF as text (under its image), in order, where a reader's search finds
    # them: read back by pypdf (which reads some punctuation of DejaVu Sans, ' and ′, as nothing)
    from pypdf import PdfReader

    def flat(text: str) -> str:  # math italics (𝑑) as letters; letters and digits only
        return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text))

    pdf_text = "".join(page.extract_text() for page in PdfReader(pdf).pages)
    ligatures = sorted(set(re.findall("[\ufb00-\ufb06]", pdf_text)))
    assert not ligatures, f"ligatures in the PDF's text, {ligatures}: a search for 'different' misses 'diﬀerent'"
    printed = flat(pdf_text)
    unfound = [text.split("\n")[0][:60] for text in done["texts"] if flat(text) not in printed]
    assert sum(map(bool, done["texts"])) >= done["slides"] // 2 and not unfound, f"slides not found as text: {unfound}"


@pytest.mark.parametrize("number", ["00", "04"])
def test_a_handout_holds_every_slide_with_its_notes_two_or_three_a_page(book_url, browser, tmp_path, number):
    """`make handouts` (tools/handouts.py): an A4 PDF with every slide of a deck, its speaker notes below it, at most
    three slides a page and two or more on average; code on the slides printed at 8 pt or more; no slide beside an
    empty column; the notes' glossary links are links inside the PDF to its glossary appendix. Deck 00 too: the
    notes of its exercise slide are longer than a page (the checks' messages), which it starts below another slide."""
    from tools import handouts

    nb = next((nb for nb in NOTEBOOKS if nb.stem.startswith(f"{number}_")), NOTEBOOKS[0])
    pdf = tmp_path / f"{nb.stem}.pdf"
    done = handouts.print_deck(browser, f"{book_url}slides/{nb.stem}.slides.html", pdf)
    assert done["lang"] == "en"
    check_handout(done, pdf, deck_slides(nb))
