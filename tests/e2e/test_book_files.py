"""Checks of the built book (build/html, from `make book`) that need no browser: no Sphinx warning, no CDN.

`make book-check` runs them after `make book` on any machine; `make e2e` runs them with the browser tests. Like every
test in tests/e2e they are collected only when COURSE_E2E=1 (the make targets set it).
"""

import html
import re
from pathlib import Path

from tools import build_book

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "build" / "html"


def test_the_book_was_built():
    assert (HTML / "index.html").is_file(), f"no book in {HTML}: run `make book` first"


def test_book_has_no_cdn_urls():
    """No page of the book or the slides refers to a script or a style sheet on another host."""
    remote = re.compile(r"""<(?:script|link)\b[^>]*(?:src|href)=["'](?:https?:)?//""", re.IGNORECASE)
    offenders = []
    for page in sorted(HTML.rglob("*.html")):
        for match in remote.finditer(page.read_text(encoding="utf-8", errors="replace")):
            offenders.append(f"{page.relative_to(HTML)}: {match.group(0)[:120]}")
    assert not offenders, "\n".join(offenders[:20])


def test_sphinx_reported_no_warnings():
    """A Sphinx warning is a reader's problem: a broken link or anchor, a bad formula, a lost figure
    (tools/build_book.py writes them to build/book-warnings.txt). One kind is tolerated: a link to a notebook that
    does not exist yet (a course published before its last chapters), which the book shows as plain text."""
    log = HTML.parent / "book-warnings.txt"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    warnings = [line for line in lines if "WARNING" in line]
    unwritten = re.compile(r"(?:target not found|Unknown source document):? '(?:\.\./)?(notebooks/[^']+?)(?:\.ipynb)?'")
    tolerated = [w for w in warnings if (m := unwritten.search(w)) and not (ROOT / f"{m[1]}.ipynb").exists()]
    errors = [w for w in warnings if w not in tolerated]
    if tolerated:
        print(f"{len(tolerated)} link(s) to notebooks not written yet, e.g. {tolerated[0]}")
    assert not errors, f"{len(errors)} Sphinx warning(s), e.g.:\n" + "\n".join(errors[:15])


def test_every_chapter_launches_itself_in_colab_and_binder():
    """The theme's launch buttons (book/conf.py) open the chapter's own notebook in this repository and branch:
    the same URLs as the README's links (tools/colab_cell.py's settings, through tools.build_book)."""
    chapters = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert chapters
    for nb in chapters:
        page = (HTML / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        path = f"notebooks/{nb.name}"
        for url in (build_book.colab_url(path), build_book.binder_url(path)):
            assert html.escape(url) in page or url in page, f"{nb.stem}.html has no launch button to {url}"
        assert f"../slides/{build_book.slides_name(path)}" in page, f"{nb.stem}.html does not link its slides"
