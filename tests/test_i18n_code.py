"""tools/i18n_code.py: the comments of the notebooks' code cells as units of the Chinese edition's catalogues; a twin's
code is the English code token for token, its comments translated where a translation exists, English where not."""

import json

import nbformat

from course_lib.paths import NOTEBOOKS_DIR
from tools import i18n, i18n_code

CELL = """import torch  # fmt: skip
# the scores of every query against every key,
# scaled by 1/sqrt(d_k)
scores = q @ k.transpose(-2, -1) / d_k**0.5  # (B, T, T)
# BEGIN SOLUTION
weights = scores.softmax(-1)  # each row sums to 1  # noqa: E501
# END SOLUTION
# ----
"""


def test_a_cells_comments_are_units_and_markers_directives_and_rules_are_not():
    found = i18n_code.comments(CELL)
    assert [c.text for c in found] == [
        "# the scores of every query against every key,\n# scaled by 1/sqrt(d_k)",
        "# (B, T, T)",
        "# each row sums to 1",
    ]
    assert [c.after_code for c in found] == [False, True, True] and found[-1].directive == "# noqa: E501"


def test_a_translation_replaces_comments_only_and_keeps_the_code_and_its_directives():
    block = "# the scores of every query against every key,\n# scaled by 1/sqrt(d_k)"
    table = {block: "# 每个查询与每个键的分数，\n# 再乘以 1/sqrt(d_k)", "# each row sums to 1": "# 每一行之和为 1"}
    chinese = i18n_code.translate(CELL, table)
    assert "# 每个查询与每个键的分数，\n# 再乘以 1/sqrt(d_k)\nscores" in chinese
    assert "weights = scores.softmax(-1)  # 每一行之和为 1  # noqa: E501" in chinese
    assert "# (B, T, T)" in chinese and "# BEGIN SOLUTION" in chinese  # not translated: English; a marker: kept
    assert i18n_code.same_code(CELL, chinese) and not i18n_code.same_code(CELL, chinese.replace("-1", "0"))
    assert i18n_code.problems("# (B, T, T)", "# 形状 (B, T, T)") == []
    assert i18n_code.problems("# a\n# b", "# 甲\n乙") != []


def test_every_twins_code_is_the_english_code_and_its_outputs_the_english_outputs():
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        english = nbformat.read(path, as_version=4)
        chinese = nbformat.read(NOTEBOOKS_DIR / "zh" / path.name, as_version=4)
        for a, b in zip(english.cells, chinese.cells, strict=True):
            if a.cell_type == "code":
                assert i18n_code.same_code(a.source, b.source), (path.name, a.source[:60])
                assert json.dumps(a.outputs, sort_keys=True) == json.dumps(b.outputs, sort_keys=True)
                assert a.metadata == b.metadata


def test_every_comment_is_a_unit_and_translated_in_every_twin():
    for source in i18n.sources():
        if not source.endswith(".ipynb"):
            continue
        code = [text for text, where in i18n.source_units(source) if where.endswith(i18n_code.CODE_WHERE)]
        assert code and all(text.startswith("#") for text in code), source
        table = i18n.translations(i18n.load(source))
        assert all(text in table for text in code), (source, [t for t in code if t not in table][:3])
