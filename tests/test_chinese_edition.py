"""Where readers meet the Chinese edition (issue 46, items 5 and 6), without Sphinx or a browser: the slides' word
budget for Chinese text, the Chinese book's paths, links, anchors and language switch (tools/book_zh.py), the
README's table of the twins, the CJK font's coverage, and the student and nbgrader versions of a twin."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.student import student_notebook
from tools import book_zh, build_book, colab_cell, sections
from tools.i18n_code import same_code
from tools.slide_text import CJK_CHARS_PER_WORD, first_sentence, sentences, words

ROOT = Path(__file__).resolve().parents[1]
TWINS = book_zh.twins()
needs_twins = pytest.mark.skipif(not TWINS, reason="no Chinese twin in notebooks/zh yet")


def test_a_chinese_character_counts_as_a_fraction_of_a_word():
    assert words("Self-attention lets every token see the whole sentence.") == 8
    chinese = "自注意力让每个词元看见整个句子。"  # 15 characters, the full stop counts as nothing
    assert words(chinese) == round(15 / CJK_CHARS_PER_WORD) == 8
    # Latin words, code spans and formulas count as one each, whatever Chinese surrounds them.
    assert words("用 `torch.softmax` 计算 3 个句子，$x_1$ 是向量。") == 3 + round(9 / CJK_CHARS_PER_WORD)


def test_the_fraction_is_what_the_catalogues_show():
    """CJK_CHARS_PER_WORD (tools/slide_text.py) is the Chinese characters per English word of the translated units,
    measured again on the notebooks' catalogues: within 10 %."""
    import polib

    ideograph = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    run = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
    english = chinese = latin = 0
    for po in sorted((ROOT / "locale" / "zh_CN" / "notebooks").glob("*.po")):
        for entry in polib.pofile(str(po)):
            if entry.msgstr and not entry.obsolete and ideograph.search(entry.msgstr):
                english += words(entry.msgid)
                chinese += len(ideograph.findall(entry.msgstr))
                latin += words(run.sub(" ", entry.msgstr))
    if not english:
        pytest.skip("no translated catalogue")
    assert chinese / (english - latin) == pytest.approx(CJK_CHARS_PER_WORD, rel=0.1)


def test_chinese_sentences_end_at_full_width_stops():
    text = "**第 1 步：分数**。先计算分数，再除以 $\\sqrt{d_k}$。然后做 softmax！还有问题吗？"
    assert sentences(text) == [
        "**第 1 步：分数**。先计算分数，再除以 $\\sqrt{d_k}$。",  # a bold lead joins the sentence after it
        "然后做 softmax！",
        "还有问题吗？",
    ]
    assert first_sentence("单独一句，没有句号") == "单独一句，没有句号"
    assert sentences("First one. Second $a.b$ one.") == ["First one.", "Second $a.b$ one."]


def test_staged_paths_and_links_mirror_the_english_book():
    assert book_zh.staged_path("notebooks/zh/03_x.ipynb") == "notebooks/03_x.ipynb"
    assert book_zh.staged_path("docs/zh/glossary.md") == "docs/glossary.md"
    assert book_zh.staged_path("docs/running_and_testing.md") == "docs/running_and_testing.md"
    twin = "notebooks/zh/03_x.ipynb"
    md = "见[自注意力](../../docs/zh/glossary.md#self-attention)、[第 4 章](../../notebooks/zh/04_y.ipynb)、[上文](#a)、[站点](https://x.org/a.md)"
    assert book_zh.staged_links(md, twin) == (
        "见[自注意力](../docs/glossary.md#self-attention)、[第 4 章](04_y.ipynb)、[上文](#a)、[站点](https://x.org/a.md)"
    )
    # A page without a twin stays English, where the English book has it.
    assert book_zh.staged_links("[运行](../running_and_testing.md)", "docs/zh/lecturers_guide.md") == (
        "[运行](running_and_testing.md)"
    )


def test_the_switch_leads_to_the_same_page_in_the_other_language():
    twinned = {"index", "notebooks/03_x", "docs/glossary"}
    assert book_zh.switch_url("index", False, twinned) == "zh/index.html"
    assert book_zh.switch_url("index", True, twinned) == "../index.html"
    assert book_zh.switch_url("notebooks/03_x", False, twinned) == "../zh/notebooks/03_x.html"
    assert book_zh.switch_url("notebooks/03_x", True, twinned) == "../../notebooks/03_x.html"
    assert "search" in book_zh.chinese_pages([]) and "genindex" in book_zh.chinese_pages([])  # both books have them
    # An English page without a Chinese twin leads to the Chinese landing page.
    assert book_zh.switch_url("docs/running_and_testing", False, twinned) == "../zh/index.html"


@needs_twins
def test_every_twin_heading_keeps_its_english_anchor():
    """The Chinese book gives a twin's heading the anchor of its English heading (book_zh.heading_slug), so that
    links like glossary.md#self-attention resolve in both books."""
    nb = json.loads((ROOT / next(iter(TWINS.values()))).read_text(encoding="utf-8"))
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    anchored = re.findall(r'^#+[ \t]+(.*?)[ \t]*<a id="([^"]+)"></a>', md, re.M)
    assert anchored
    for title, anchor in anchored:
        words_only = re.sub(r"\$[^$]+\$|<[^>]+>|\]\([^)]*\)|[*`\[]", "", title)
        assert book_zh.heading_slug(words_only) == anchor


@needs_twins
def test_the_readme_lists_every_twin_with_colab_and_binder():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert book_zh.readme_section() in readme, "README's 中文版 section is stale: python -m tools.book_zh readme"
    for twin in TWINS.values():
        assert f"({build_book.colab_url(twin)})" in readme and f"({build_book.binder_url(twin)})" in readme
        assert colab_cell.GITHUB_REPOSITORY in build_book.colab_url(twin)


@needs_twins
def test_the_chinese_landing_page_links_every_twin():
    pages = book_zh.page_twins([*build_book.PAGES, build_book.GLOSSARY])
    titles = {twin: book_zh.title_of(json.loads((ROOT / twin).read_text(encoding="utf-8"))) for twin in TWINS.values()}
    page = book_zh.landing_page(titles, pages)
    for twin, title in titles.items():
        name = Path(twin).name
        assert f"[{title}](notebooks/{name})" in page and f'href="slides/{build_book.slides_name(name)}"' in page
        assert build_book.colab_url(twin) in page and build_book.binder_url(twin).replace("&", "&amp;") in page
    assert 'href="../index.html"' in page  # the English edition


@needs_twins
def test_the_cjk_font_covers_every_character_of_the_chinese_edition():
    """No tofu: every character of the twins, the Chinese pages and the Chinese book's own text (landing page,
    slide link, the theme's words are checked on the built pages by tests/e2e/test_book_files.py) is in the
    course's font subset, or in the fonts every browser has (ASCII)."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(build_book.CJK_FONT))["cmap"].getBestCmap()
    text = "".join((ROOT / twin).read_text(encoding="utf-8") for twin in TWINS.values())
    text += "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "zh").glob("*.md"))
    text += book_zh.landing_page({}, {"docs/glossary.md": "docs/zh/glossary.md"}) + "书中本章" + book_zh.TITLE
    cjk = set(
        re.findall(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9ffe\uf900-\ufaff\uff00-\uffef]", json.loads(json.dumps(text)))
    )
    missing = sorted(c for c in cjk if ord(c) not in cmap)
    assert not missing, f"characters without a glyph in {build_book.CJK_FONT.name}: {''.join(missing)}"


def _stubs_in_english(source: str) -> str:
    """A Chinese student version's code with what its stubs say written as the English's (classroom.stubs.SAYS)."""
    from course_lib.classroom.stubs import SAYS

    source = source.replace(SAYS["zh"]["answer"], SAYS["en"]["answer"])
    source = re.sub(r"练习 (\S+?)：写出 (\w+) 的函数体", r"Exercise \1: write the body of \2", source)
    return re.sub(r'"练习 ([^"：]+)(：)?', lambda m: f'"Exercise {m[1]}' + (": " if m[2] else ""), source)


@needs_twins
@pytest.mark.parametrize("english", sorted(TWINS)[:1] + [nb for nb in sorted(TWINS) if nb[10:12] == "04"])
def test_a_twin_gives_the_student_and_nbgrader_versions_of_its_english(english):
    """`make student` and the nbgrader source from a Chinese twin: the same exercises, labels, stubs and checks
    as from the English (the code is the English's), the written answers' model answers removed too."""
    zh = nbformat.read(ROOT / TWINS[english], as_version=4)
    en = nbformat.read(ROOT / english, as_version=4)
    student_zh, exercises_zh = student_notebook(zh, banner=False)
    student_en, exercises_en = student_notebook(en, banner=False)
    assert exercises_zh and [e.label for e in exercises_zh] == [e.label for e in exercises_en]
    code = [[c.source for c in nb.cells if c.cell_type == "code"] for nb in (student_zh, student_en)]
    stubs = [_stubs_in_english(source) for source in code[0]]  # the same code, its comments aside (tools.i18n_code)
    assert all(same_code(b, a) for a, b in zip(stubs, code[1], strict=True)), "the stubs say it in Chinese, no more"
    model = re.compile(r"(?m)^\*\*(参考答案|Model answer)")
    assert sum(bool(model.search(c.source)) for c in zh.cells) == sum(bool(model.search(c.source)) for c in en.cells)
    assert not any(model.search(c.source) for c in student_zh.cells if c.cell_type == "markdown")
    source_zh, graded_zh = nbgrader_notebook(zh, "a")
    _, graded_en = nbgrader_notebook(en, "a")
    assert [e.label for e in graded_zh] == [e.label for e in graded_en]


@needs_twins
def test_every_twin_has_its_englishs_sections_so_its_deck():
    for english, twin in TWINS.items():
        zh = json.loads((ROOT / twin).read_text(encoding="utf-8"))
        en = json.loads((ROOT / english).read_text(encoding="utf-8"))
        assert sections.is_sectioned(zh), twin
        badged = [[(s.kind, s.minutes, s.lecture) for s in sections.sections(nb)[0] if s.minutes] for nb in (zh, en)]
        assert badged[0] == badged[1], twin
