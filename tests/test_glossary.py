"""The bilingual glossary and its links: well-formed entries, every term linked at its first use in each notebook.

When a notebook is added or edited, `python -m tools.glossary_links` links new first uses and
`python -m tools.glossary_links --write-first-use` updates the glossary's "First used in".
"""

import copy
import re

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT
from tools import glossary_links

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [nb.name for nb in NOTEBOOKS]
ENTRIES = glossary_links.read_glossary()
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True, scope="module")
def _each_notebook_searched_once():
    """find_uses is a function of the notebook's cells and the entries alone, and the most expensive step here (a pass
    of every term's patterns over every markdown cell): the tests below ask it about each notebook twice (its links,
    then the table of first uses), so it runs once per content and answers the second time from memory."""
    find_uses, answers = glossary_links.find_uses, {}

    def remembered(nb, entries):
        if entries is not ENTRIES:
            return find_uses(nb, entries)
        key = tuple((cell.cell_type, cell.source) for cell in nb.cells)
        if key not in answers:
            answers[key] = find_uses(nb, entries)
        return dict(answers[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(glossary_links, "find_uses", remembered)
        yield


def test_entries_are_well_formed():
    assert len(ENTRIES) >= 100
    slugs = [e.slug for e in ENTRIES]
    assert len(set(slugs)) == len(slugs)
    for e in ENTRIES:
        assert e.slug == re.sub(r"[^a-z0-9]+", "-", e.term.lower()).strip("-"), f"anchor of {e.term!r} is {e.slug!r}"
        assert CJK.search(e.zh), f"{e.term!r} has no Chinese name: {e.zh!r}"
        assert len(e.definition) > 20, f"{e.term!r}: definition too short"
        assert re.fullmatch(r"(0\d|1[0-5])", e.first) and re.fullmatch(r"(0\d|1[0-5])", e.explained), e


def test_index_lists_every_entry():
    text = glossary_links.GLOSSARY.read_text(encoding="utf-8")
    index = next(line for line in text.splitlines() if line.startswith("**Index:**"))
    assert set(re.findall(r"\]\(#([a-z0-9-]+)\)", index)) == {e.slug for e in ENTRIES}
    names = re.findall(r"\[([^\]]+)\]\(#", index)
    in_order = sorted(names, key=lambda name: name.casefold().replace("–", "-"))  # a reader looks a term up by eye
    assert names == in_order, [(a, b) for a, b in zip(names, in_order, strict=True) if a != b][:3]


def test_matching_respects_words_plurals_context_and_prose():
    by_slug = {e.slug: e for e in ENTRIES}
    text = (
        "Self attention and a `softmax` in code; queries, $key$ in math, pixel values, the value vectors; "
        "multi-head attention; keys and values; plain attention."
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    uses = glossary_links.find_uses(nb, ENTRIES)
    words = {slug: text[u.start : u.end] for slug, u in uses.items()}
    assert words["self-attention"] == "Self attention"  # hyphen or space, any case
    assert words["query"] == "queries"
    assert words["value"] == "value"  # "value vectors": not "pixel values", which is ordinary English
    assert words["multi-head-attention"] == "multi-head attention" and words["attention"] == "attention"
    assert words["key"] == "keys"  # not the `$key$` of the math
    assert "softmax" not in words  # only in a code span
    # "attention" inside "Self attention" and "multi-head attention" belongs to the longer terms
    assert uses["attention"].start > uses["multi-head-attention"].start == text.index("multi-head")
    assert by_slug["attention"].term == "attention"


def test_linking_is_idempotent_only_touches_markdown_and_can_be_undone():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    glossary_links.remove_links(nb)
    plain = copy.deepcopy(nb)
    added = glossary_links.link_notebook(nb, ENTRIES)
    assert added >= 20
    assert glossary_links.unlinked_first_uses(nb, ENTRIES) == []
    once = copy.deepcopy(nb)
    assert glossary_links.link_notebook(nb, ENTRIES) == 0 and nb == once
    for before, after in zip(plain.cells, nb.cells):
        if before.cell_type == "code":
            assert before == after  # code cells, outputs and execution counts untouched
    assert glossary_links.remove_links(nb) == added and nb == plain


def test_a_notebook_can_declare_another_sense_of_a_term():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Beam search keeps the best score of each output.")]
    assert "attention-score" in glossary_links.find_uses(nb, ENTRIES)
    nb.cells[0].source += "\n<!-- glossary: another sense here: attention-score -->"
    assert "attention-score" not in glossary_links.find_uses(nb, ENTRIES)
    assert "beam-search" in glossary_links.find_uses(nb, ENTRIES)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_every_glossary_term_is_linked_at_its_first_use(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    problems = glossary_links.unlinked_first_uses(nb, ENTRIES)
    assert not problems, (
        f"{nb_path.name}: glossary terms not linked at their first use (run `python -m tools.glossary_links "
        f"{nb_path.relative_to(ROOT)}`):\n" + "\n".join(problems)
    )


def test_first_used_in_matches_the_notebooks():
    found = glossary_links.first_use_table(NOTEBOOKS, ENTRIES)
    wrong = [f"{e.term}: glossary says {e.first}, notebooks {found[e.slug]}" for e in ENTRIES
             if e.slug in found and found[e.slug] != e.first]  # fmt: skip
    assert not wrong, "run `python -m tools.glossary_links --write-first-use`:\n" + "\n".join(wrong)


def test_readme_links_the_glossary():
    assert "docs/glossary.md" in (ROOT / "README.md").read_text(encoding="utf-8")
