"""The Chinese edition of the book (build/html/zh, tools/book_zh.py) in headless Chromium: its glyphs are drawn from
the course's font subset (no empty boxes on a machine without a CJK font, like CI's), the language switch leads from
a page to its twin and back, and every Chinese deck passes the checks of a projected slide that the English decks
pass (tests/e2e/slide_metrics.py), one deck a test."""

import json
from pathlib import Path

import pytest

from tests.e2e import slide_metrics
from tests.e2e.test_book_in_browser import (
    FONT,
    INK,
    MATH_SOURCES,
    assert_offline,
    broken_links,
    check_handout,
    check_images,
    check_math,
    figures_in,
    open_page,
)
from tools import book_zh, build_book, sections

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "build" / "html"
TWINS = book_zh.twins()
needs_twins = pytest.mark.skipif(not TWINS, reason="no Chinese twin in notebooks/zh")


def glyphs_drawn(page, where: str) -> str:
    """Assert that the page's Chinese text is drawn with the course's font; return the sample checked."""
    sample = page.evaluate(
        """() => (document.querySelector('main, .reveal .slides').innerText.match(/[\\u4e00-\\u9fff]/g) || [])
            .filter((c, i, all) => all.indexOf(c) === i).slice(0, 12).join('')"""
    )
    assert len(sample) >= 6, f"{where}: hardly any Chinese text ({sample!r})"
    status = page.evaluate(
        "() => [...document.fonts].filter(f => f.family.includes('Course Subset')).map(f => f.status)"
    )
    assert "loaded" in status, f"{where}: the course's CJK font was not loaded ({status})"
    assert page.evaluate(f"text => document.fonts.check('16px \"{FONT}\"', text)", sample), where
    ink = page.evaluate(INK, sample)
    assert ink[0][0] > 0 and ink[0] != ink[1], f"{where}: {sample} drawn like the fallback's boxes: {ink}"
    return sample


@needs_twins
def test_chinese_pages_draw_their_glyphs_and_switch_both_ways(book_url, guarded, screenshots):
    page, bad = open_page(guarded, book_url + "zh/index.html")
    assert book_zh.TITLE in page.title() and page.evaluate("document.documentElement.lang") == "zh-CN"
    glyphs_drawn(page, "zh/index.html")
    for twin in TWINS.values():
        assert page.locator(f'main a[href="notebooks/{Path(twin).stem}.html"]').count() >= 1, f"no link to {twin}"
    page.screenshot(path=str(screenshots / "book-zh-index.png"), full_page=True)
    page.locator("a.course-language").first.click()  # Chinese landing page -> English landing page
    page.wait_for_load_state("load")
    assert page.url == book_url + "index.html", page.url
    assert page.locator('main a[href="zh/index.html"]').count() >= 2, "the English landing page does not link zh/"

    english = next(nb for nb in TWINS if nb[10:12] == "03") if any(nb[10:12] == "03" for nb in TWINS) else min(TWINS)
    stem = Path(english).stem
    # networkidle: MathJax fetches its fonts after "load"; a click before then aborts those requests (ERR_ABORTED)
    page.goto(f"{book_url}notebooks/{stem}.html", wait_until="networkidle")
    page.locator("a.course-language").first.click()  # English chapter -> its Chinese twin
    page.wait_for_load_state("load")
    assert page.url == f"{book_url}zh/notebooks/{stem}.html", page.url
    page.evaluate("() => document.fonts.ready.then(() => true)")
    glyphs_drawn(page, page.url)
    n_math = page.locator(MATH_SOURCES).count()
    assert check_math(page, page.url) >= n_math
    assert check_images(page, page.url) >= figures_in(ROOT / TWINS[english])
    page.screenshot(path=str(screenshots / f"book-zh-{stem}.png"))
    page.wait_for_load_state("networkidle")
    page.locator("a.course-language").first.click()  # and back
    page.wait_for_load_state("networkidle")
    page.wait_for_load_state("load")
    assert page.url == f"{book_url}notebooks/{stem}.html", page.url
    assert_offline(guarded, bad, "zh/index.html and a chapter in both languages")


def deck_slides(english: str) -> int:
    """Slides of a Chinese deck as the build shapes it (tools.deck on the staged twin, following its English deck)."""
    cells = build_book.twin_deck(english, TWINS[english]).cells
    return sum(1 for c in cells if c.metadata.get("slideshow", {}).get("slide_type") in sections.SLIDE_KINDS)


@needs_twins
@pytest.mark.parametrize("english", list(TWINS), ids=[Path(nb).stem[:2] for nb in TWINS])
def test_every_chinese_slide_can_be_projected(book_url, browser, screenshots, english):
    """Each Chinese deck, measured like the English ones (test_book_in_browser.test_every_slide_can_be_projected:
    size, overflow, code size and wrapping, cut sentences, words with a Chinese character as a fraction of a word,
    figure text, Chinese text in the course's font, notes links) and its glyphs drawn; one deck a test, so that
    `make e2e`'s workers share the decks (build/e2e/slides-zh-NN.json: the deck's summary)."""
    stem = Path(english).stem
    url = f"{book_url}zh/slides/{stem}.slides.html"
    context = browser.new_context(viewport=slide_metrics.SCREEN)
    page = context.new_page()
    failed = slide_metrics.failed_requests(page)
    try:
        page.goto(url, wait_until="load")
        page.wait_for_function("() => window.Reveal && Reveal.isReady() && window.MathJax && MathJax.isReady")
        page.wait_for_function("() => document.documentElement.classList.contains('course-notes-ready')")
        page.evaluate("() => document.fonts.ready.then(() => true)")
        assert page.evaluate("Reveal.getTotalSlides()") == deck_slides(english), url
        glyphs_drawn(page, url)
        rows = slide_metrics.measure(page)
        summary = json.dumps(slide_metrics.summary(rows), indent=1, ensure_ascii=False)
        (screenshots / f"slides-zh-{stem[:2]}.json").write_text(summary)
        problems = slide_metrics.problems(rows)
        links = broken_links(
            [h for r in rows for h in r["notesLinks"]], HTML / "zh" / "slides" / f"{stem}.slides.html", {}
        )
        problems += [f"notes link that opens no page of the book: {href}" for href in links]
        problems += [f"a file the deck asks for and the book lacks: {f}" for f in failed]
        densest = max(rows, key=lambda r: r["words"])
        page.evaluate("([h, v]) => Reveal.slide(h, v, 1000)", [densest["h"], densest["v"]])
        page.screenshot(path=str(screenshots / f"deck-zh-{stem[:2]}-densest.png"))
    finally:
        context.close()
    assert not problems, f"zh/{stem}: slides a lecturer cannot project as they are:\n" + "\n".join(problems[:40])


@needs_twins
def test_a_chinese_handout_draws_its_glyphs_and_links_its_glossary(book_url, browser, tmp_path):
    """`make handouts` prints the Chinese decks too (build/handouts/zh/NN_name.pdf): the same promises as the English
    handout (test_book_in_browser.check_handout), its labels and glossary appendix in Chinese (术语表, the
    definitions of docs/zh/glossary.md) and its Chinese text in the course's font subset, not the fallback's boxes."""
    from tools import handouts

    english = next((nb for nb in TWINS if Path(nb).stem.startswith("04_")), min(TWINS))
    stem = Path(english).stem
    assert (
        handouts.pdf_of(HTML / "zh" / "slides" / f"{stem}.slides.html", HTML, tmp_path)
        == tmp_path / "zh" / f"{stem}.pdf"
    )
    pdf = tmp_path / f"{stem}.pdf"
    done = handouts.print_deck(browser, f"{book_url}zh/slides/{stem}.slides.html", pdf)
    assert done["lang"] == "zh" and '<html lang="zh">' in done["html"]
    check_handout(done, pdf, deck_slides(english))
    assert "术语表" in done["html"] and "第 1 张" in done["html"], "the labels and the glossary are not in Chinese"
    assert len(done["chinese"]) >= 6 and done["cjk_font"], f"Chinese text {done['chinese']!r}, font {done['cjk_font']}"
