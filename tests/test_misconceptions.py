"""The book's page of common misconceptions (docs/misconceptions.md): every claim the notebooks correct is listed there
with a link to the section that shows it, and no notebook argues with "source notes" a student never saw."""

import json
import re

import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT

PAGE = ROOT / "docs" / "misconceptions.md"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
LINK = re.compile(r"\]\(\.\./notebooks/(?P<name>[\w]+\.ipynb)#(?P<anchor>[^)\s]+)\)")


def markdown(path) -> list[str]:
    return [
        "".join(c["source"])
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    ]


def slug(title: str) -> str:
    """MyST's heading anchor (myst_heading_anchors): lower case, spaces to hyphens, other punctuation dropped."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.strip().lower().replace(" ", "-"))


def heading_slugs(path) -> set[str]:
    found = set()
    for source in markdown(path):
        for title in re.findall(r"^#{2,3}\s+(.+?)\s*$", source, re.M):
            found.add(slug(re.sub(r"[`*]", "", re.sub(r"\$[^$]*\$", "", title))))  # MyST drops math from slugs
    return found


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_no_notebook_argues_with_source_notes(nb):
    text = "\n".join(markdown(nb))
    hits = re.findall(
        r"[^.\n]*\b(?:source notes?|study notes?|the note's|the notes say|the note (?:writes|says|computes))\b[^.\n]*",
        text,
        re.I,
    )
    assert not hits, f"{nb.name}: write these as common claims (issue 18): {hits[:3]}"


def test_every_common_claim_is_on_the_misconceptions_page():
    page = PAGE.read_text(encoding="utf-8")
    links = {(m["name"], m["anchor"]) for m in LINK.finditer(page)}
    for nb in NOTEBOOKS:
        claims = sum(source.count("**Common claim:**") for source in markdown(nb))
        listed = sum(1 for name, _ in links if name == nb.name)
        assert listed >= min(claims, 1), f"{nb.name} corrects {claims} common claim(s); the page links none"
    assert links, "the page links no notebook section"


def test_the_pages_links_point_at_existing_sections():
    for m in LINK.finditer(PAGE.read_text(encoding="utf-8")):
        assert m["anchor"] in heading_slugs(NOTEBOOKS_DIR / m["name"]), f"no section #{m['anchor']} in {m['name']}"
