"""The Chinese edition (tools/i18n.py): units, what a translation must keep, catalogues that follow the English, twins
that are the English notebooks with Chinese prose, and the repository's edition in step with the English."""

from __future__ import annotations

import json

import pytest

from tools import i18n
from tools.i18n_code import same_code

GLOSSARY = """# Glossary

- <a id="self-attention"></a>**self-attention** · 自注意力 — Attention of a sequence to itself. *First used in* [00](a).
- <a id="token"></a>**token** · 词元 — One item of a text sequence. *First used in* [00](a).
- <a id="attention-score"></a>**attention score** · 注意力分数 — q · k. *First used in* [00](a). <!-- match: score -->
- <a id="accuracy"></a>**accuracy** · 准确率 — The fraction of right answers. *First used in* [00](a).
"""

MARKDOWN = """## 1. Padding masks
<span class="badge">● core · 9 min</span>

A [token](../docs/glossary.md#token) of width $d_k = 64$ is padded with `<pad>`; 3 sentences.

- first item
  continued
- second item, see [notebook 01](01_b.ipynb)

| word | meaning |
|---|---|
| one | two |

```python
x = 1
```

$$
A = \\operatorname{softmax}(QK^\\top)
$$"""


def notebook(*markdowns: str) -> dict:
    cells = [{"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": [m]} for i, m in enumerate(markdowns)]
    code = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "c0",
        "metadata": {"tags": ["core"]},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["3 sentences\n"]}],
        "source": ["print('3 sentences')"],
    }
    return {"cells": [*cells, code], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
            "nbformat_minor": 5}  # fmt: skip


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "glossary.md").write_text(GLOSSARY, encoding="utf-8")
    (tmp_path / "notebooks" / "00_a.ipynb").write_text(json.dumps(notebook(MARKDOWN)), encoding="utf-8")
    return tmp_path


def test_units_are_headings_paragraphs_list_items_and_table_rows_and_nothing_else():
    texts = i18n.unit_texts(MARKDOWN)
    assert texts == [
        "## 1. Padding masks",
        '<span class="badge">● core · 9 min</span>',
        "A [token](../docs/glossary.md#token) of width $d_k = 64$ is padded with `<pad>`; 3 sentences.",
        "- first item\n  continued",
        "- second item, see [notebook 01](01_b.ipynb)",
        "| word | meaning |",
        "| one | two |",
    ]  # the code fence and the display maths are copied, not translated


def test_translate_markdown_replaces_units_and_keeps_the_rest_to_the_byte():
    identity = {t: t for t in i18n.unit_texts(MARKDOWN)}
    assert i18n.translate_markdown(MARKDOWN, identity) == MARKDOWN
    upper = {t: t.upper() for t in i18n.unit_texts(MARKDOWN)}
    out = i18n.translate_markdown(MARKDOWN, upper)
    assert "- FIRST ITEM\n  CONTINUED" in out and "```python\nx = 1\n```" in out and "QK^\\top" in out
    with pytest.raises(KeyError):
        i18n.translate_markdown(MARKDOWN, {})


GOOD = "一个宽为 $d_k = 64$ 的[词元](../docs/glossary.md#token)用 `<pad>` 填充；3 个句子。"


@pytest.mark.parametrize(
    "msgstr, complaint",
    [
        (GOOD.replace("$d_k = 64$", "$d = 64$"), "lost inline"),
        (GOOD.replace("`<pad>`", "<pad>"), "lost codebody"),
        (GOOD.replace("#token", "#tokens"), "lost target"),
        (GOOD.replace("3 个", "三个"), "lost the number 3"),
        (GOOD.replace("[词元]", "[标记]"), "not the glossary's term '词元'"),
        (GOOD + " $x$", "added inline"),
    ],
)
def test_problems_name_what_a_translation_lost(msgstr, complaint):
    msgid = i18n.unit_texts(MARKDOWN)[2]
    assert i18n.problems(msgid, GOOD, {"token": "词元"}) == []
    found = i18n.problems(msgid, msgstr, {"token": "词元"})
    assert any(complaint in line for line in found), found


def test_heading_anchor_is_mysts():
    assert (
        i18n.heading_anchor("5.1 Which way round are the weight matrices?")
        == "51-which-way-round-are-the-weight-matrices"
    )
    assert i18n.heading_anchor("Mistake 5: $O(n^2)$ memory") == "mistake-5--memory"


def test_glossary_terms_are_read_from_the_glossary(repo):
    assert i18n.glossary_terms(repo) == {"self-attention": "自注意力", "token": "词元", "attention-score": "注意力分数",
                                         "accuracy": "准确率"}  # fmt: skip
    assert i18n.glossary_terms()["self-attention"] == "自注意力"  # the course's own glossary


def test_merge_marks_new_units_hints_changed_ones_and_keeps_removed_ones_obsolete():
    po = i18n.new_catalogue("x")
    po = i18n.merge(po, [("The softmax of a row of scores.", "a"), ("Masks hide keys.", "b")])
    po.find("The softmax of a row of scores.").msgstr = "一行分数的 softmax。"
    po.find("Masks hide keys.").msgstr = "掩码遮住键。"
    merged = i18n.merge(po, [("The softmax of one row of scores.", "a"), ("Something new entirely here.", "c")])
    changed = merged.find("The softmax of one row of scores.")
    assert "fuzzy" in changed.flags and changed.msgstr == "一行分数的 softmax。"
    assert changed.previous_msgid == "The softmax of a row of scores."
    assert merged.find("Something new entirely here.").msgstr == ""
    assert [e.msgid for e in merged if e.obsolete] == ["The softmax of a row of scores.", "Masks hide keys."]
    assert i18n.counts(merged) == {"units": 2, "translated": 0, "fuzzy": 1, "untranslated": 1}


def translate_all(repo, source, translate=lambda t: "译：" + t):
    po = i18n.load(source, repo)
    for entry in po:
        if not entry.obsolete:
            entry.msgstr, entry.flags = translate(entry.msgid), []
    po.save(str(i18n.catalogue_path(source, repo)))


def test_start_translate_update_gives_a_twin_with_english_code_and_relinked_prose(repo):
    i18n.update(repo, start=["notebooks/00_a.ipynb"])
    assert i18n.pending(repo) == ["docs/glossary.md"]
    problems = i18n.check(repo)
    assert problems and all("untranslated" in p for p in problems), problems
    translate_all(repo, "notebooks/00_a.ipynb", lambda t: t.replace("[token]", "[token 词元]"))
    written = i18n.update(repo)
    assert "notebooks/zh/00_a.ipynb" in written and i18n.check(repo) == []
    english = json.loads((repo / "notebooks" / "00_a.ipynb").read_text(encoding="utf-8"))
    twin = json.loads((repo / "notebooks" / "zh" / "00_a.ipynb").read_text(encoding="utf-8"))
    assert twin["cells"][1] == english["cells"][1] and twin["metadata"] == english["metadata"]
    prose = "".join(twin["cells"][0]["source"])
    assert prose.startswith('## 1. Padding masks <a id="1-padding-masks"></a>\n')  # the English anchor lands here
    assert "[token 词元](../../docs/zh/glossary.md#token)" in prose  # every source's link points at its twin
    assert "[notebook 01](../01_b.ipynb)" in prose  # a notebook with no twin: the English one


def test_an_english_edit_puts_the_edition_out_of_step_until_translated(repo):
    i18n.update(repo, start=["notebooks/00_a.ipynb", "docs/glossary.md"])
    translate_all(repo, "notebooks/00_a.ipynb", lambda t: t.replace("[token]", "[token 词元]"))
    translate_all(repo, "docs/glossary.md")
    i18n.update(repo)
    assert i18n.check(repo) == [] and i18n.pending(repo) == []
    path = repo / "notebooks" / "00_a.ipynb"
    path.write_text(path.read_text(encoding="utf-8").replace("first item", "first entry"), encoding="utf-8")
    assert any("a unit the catalogue lacks" in p for p in i18n.check(repo))
    i18n.update(repo)
    assert any("fuzzy" in p and "first entry" in p for p in i18n.check(repo))


def test_the_course_edition_is_in_step_with_the_english():
    """The repository's own catalogues and twins: every started source translated in full, nothing fuzzy, every
    twin what its catalogue generates (`python -m tools.i18n status` lists the sources not started yet)."""
    assert i18n.check() == []


def test_every_twin_has_the_english_code_outputs_and_metadata():
    for source in sorted(i18n.twinned()):
        if not source.endswith(".ipynb"):
            continue
        english = json.loads((i18n.ROOT / source).read_text(encoding="utf-8"))
        twin = json.loads((i18n.ROOT / i18n.twin_path(source)).read_text(encoding="utf-8"))
        assert twin["metadata"] == english["metadata"]
        code = [[dict(c, source="") for c in nb["cells"] if c["cell_type"] != "markdown"] for nb in (twin, english)]
        assert code[0] == code[1], "outputs, metadata, ids: the English's (the code itself: test_i18n_code)"
        sources = [["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"] for nb in (twin, english)]
        assert all(same_code(b, a) for a, b in zip(*sources, strict=True)), "the English code, token for token"


def test_todo_lists_what_is_left_and_fill_refuses_a_translation_that_loses_something(repo):
    i18n.update(repo, start=["notebooks/00_a.ipynb"])
    rows = i18n.todo("notebooks/00_a.ipynb", repo)
    assert [r["msgid"] for r in rows] == i18n.unit_texts(MARKDOWN) and rows[0]["where"] == "notebooks/00_a.ipynb:m0"
    paragraph = i18n.unit_texts(MARKDOWN)[2]
    refused = i18n.fill(
        "notebooks/00_a.ipynb", {paragraph: GOOD.replace("3 个", "三个"), "## 1. Padding masks": "## 1. 填充掩码"}, repo
    )
    assert len(refused) == 1 and "lost the number 3" in refused[0]
    left = [r["msgid"] for r in i18n.todo("notebooks/00_a.ipynb", repo)]
    assert paragraph in left and "## 1. Padding masks" not in left


def test_a_glossary_term_used_in_english_is_written_with_its_chinese_term(repo):
    msgid = "Self-attention gives every token a score; its accuracy is not the point."
    uses = i18n.term_uses(msgid, repo)
    assert sorted(e.slug for e in uses) == ["accuracy", "self-attention", "token"]  # "score" is a match: form only
    good = "自注意力给每个词元一个分数；它的准确率不是重点。"
    assert i18n.problems(msgid, good, {}, uses=uses) == []
    found = i18n.problems(msgid, good.replace("自注意力", "自我注意"), {}, uses=uses)
    assert found == ["uses the glossary term 'self-attention' but not its Chinese term '自注意力'"]
    assert i18n.term_uses("`self_attention(x)` and $token$ and [a](glossary.md#token)", repo) == []


def test_a_term_is_found_in_any_case_and_in_the_letters_ignorecase_matches_to_ascii(repo):
    """term_uses skips a pattern whose first letters the text lacks: a text in capitals, or with the four non-ASCII
    letters re.IGNORECASE matches to ASCII ones (K the Kelvin sign, long s), finds what the plain text finds."""
    plain = "Self-attention gives every token a score; its accuracy is not the point."
    for text in (plain, plain.upper(), plain.upper().replace("K", "\u212a"), plain.upper().replace("S", "\u017f")):
        assert sorted(e.slug for e in i18n.term_uses(text, repo)) == ["accuracy", "self-attention", "token"], text


def test_a_word_in_another_sense_is_marked_once_and_remembered(repo):
    (repo / "notebooks" / "00_a.ipynb").write_text(json.dumps(notebook("It trades a little accuracy for speed.")))
    i18n.update(repo, start=["notebooks/00_a.ipynb"])
    msgid = "It trades a little accuracy for speed."
    refused = i18n.fill("notebooks/00_a.ipynb", {msgid: "它用一点精度换取速度。"}, repo)
    assert refused and "准确率" in refused[0]
    assert (
        i18n.fill(
            "notebooks/00_a.ipynb", {msgid: {"msgstr": "它用一点精度换取速度。", "another_sense": ["accuracy"]}}, repo
        )
        == []
    )
    i18n.update(repo)
    assert [p for p in i18n.check(repo) if "00_a" in p] == []


def test_maths_may_run_onto_the_next_line_of_a_quoted_box():
    msgid = (
        '> **Common claim:** "$a = b$". It misses the sum, $\\sum_j \\dfrac{x}{y}\n> \\dfrac{z}{w}$. '
        "With the $g$ above, 3 terms"
    )
    kept = i18n.protected(msgid)
    assert kept[("inline", "\\sum_j \\dfrac{x}{y} \\dfrac{z}{w}")] == 1 and len(kept) == 3
    msgstr = "> **常见说法：**“$a = b$”。它漏掉了求和 $\\sum_j \\dfrac{x}{y} \\dfrac{z}{w}$。用上面的 $g$，3 项"
    assert i18n.problems(msgid, msgstr, {}) == []


def test_a_link_to_a_term_chinese_text_writes_in_latin_may_keep_its_english_name():
    assert (
        i18n.problems("[GPU](../docs/glossary.md#gpu)", "[GPU](../docs/glossary.md#gpu)", {"gpu": "图形处理器"}) == []
    )
    found = i18n.problems("[token](../docs/glossary.md#token)", "[token](../docs/glossary.md#token)", {"token": "词元"})
    assert found and "词元" in found[0]


def test_a_line_break_between_chinese_characters_is_refused():
    msgid = "A long paragraph\nwrapped in English."
    assert "line break" in i18n.problems(msgid, "一个很长的段落，\n按英文换行。", {})[0]
    assert i18n.problems(msgid, "一个很长的段落，按英文换行。", {}) == []
    assert i18n.problems(msgid, "用 `x`\n> 计算", {})  # inside a quoted box too


def test_strict_nbval_never_runs_the_twins():
    """The Chinese twins' code and outputs are the English ones, checked by the English notebooks' strict nbval run:
    running the twins too would double the course's time (issue 46). Every nbval command names the English notebooks,
    never the notebooks/ folder, which holds notebooks/zh/."""
    import re

    for path in ("Makefile", "tools/gpu_sweep.sh", ".ci/run"):
        text = (i18n.ROOT / path).read_text(encoding="utf-8")
        for line in text.splitlines():
            if "--nbval" in line:
                assert not re.search(r"\snotebooks/?(\s|$|\")", line), f"{path}: {line.strip()}"


def test_a_hint_never_confirmed_is_not_kept_when_its_unit_goes():
    po = i18n.merge(i18n.new_catalogue("x"), [("The softmax of a row of scores.", "a")])
    po.find("The softmax of a row of scores.").msgstr = "一行分数的 softmax。"
    po = i18n.merge(po, [("The softmax of one row of scores.", "a")])  # fuzzy, with the old translation as its hint
    po = i18n.merge(po, [("Something else entirely, and long enough.", "a")])
    assert [e.msgid for e in po if e.obsolete] == ["The softmax of a row of scores."]
    assert not any("fuzzy" in e.flags for e in po if e.obsolete)
