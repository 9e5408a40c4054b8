"""The Chinese exam bank (docs/zh/exam_bank.md) against the English one (docs/exam_bank.md), question for question.

The English bank is the source: tests/test_exam_bank.py recomputes every number of its worked answers. The Chinese
bank is a translation written by hand, not generated, so these tests make it fail as soon as it drifts:

- the same question ids, in the same order and in the same notebooks' sections; each heading with the same points
  and minutes, and the kind and level the English gives, through the fixed word table ``KINDS`` and ``LEVELS``;
- each question with its three parts (``ZH_PARTS``, in that order), a marking part that splits the points into the same
  bullets as the English (``- 2 分：...``) and names the common wrong answers (``常见错误``);
- in each part of each question (question, worked answer, marking), the same set of numbers as the English part: a
  number corrected in English and not in Chinese, or the reverse, fails. The English numbers are the ones
  tests/test_exam_bank.py recomputes, so equality makes the Chinese numbers recomputed too. The numbers of ordered
  list markers are left out (``1.`` at the start of a line: a step number), and ``SAME_NUMBER`` lists the few numbers
  written differently in Chinese (15 million is 1500 万);
- in each question, the same formulas ($...$ and $$...$$, as a set: a Chinese sentence may name $i$ once more;
  runs of white space made one space, since a Chinese paragraph is one line where the English wraps), the same code
  spans, and the same code blocks (compared without their comments, which are prose and translated);
- the page's preamble (the notes on use and the rule for building a paper) has the English numbers, and its example
  papers list the same questions as the English ones, for the same minutes and notebooks;
- the page says it is for lecturers only, and each heading carries the anchor of its English heading
  (``<a id="..."></a>``, MyST's anchor, as the other pages of docs/zh/ do).

Like the English bank, the Chinese one stays out of the book (tests/test_book.py) and out of the student release
(tests/test_release.py).
"""

from __future__ import annotations

import re

import pytest
from test_exam_bank import HEADING, NUMBER, PAPER, QUESTIONS, TEXT, parts, questions

from course_lib.paths import ROOT
from tools.i18n import heading_anchor

ZH_BANK = ROOT / "docs" / "zh" / "exam_bank.md"
ZH = ZH_BANK.read_text(encoding="utf-8")

KINDS = {"derive": "推导", "compute": "计算", "spot": "找错"}
LEVELS = {"recall": "记忆", "apply": "应用", "analyse": "分析"}
ZH_HEADING = re.compile(
    rf"^### (?P<id>Q(?P<nb>\d\d)\.(?P<n>\d+)) · (?P<kind>{'|'.join(KINDS.values())}) · "
    rf"(?P<level>{'|'.join(LEVELS.values())}) · (?P<points>\d+) 分 · (?P<minutes>\d+) 分钟 · (?P<title>.+?)"
    r'(?: <a id="(?P<anchor>[^"]+)"></a>)?$',
    re.M,
)
ZH_PARTS = ("**题目**：", "**参考解答**：", "**评分说明**：")
ZH_SECTION = re.compile(r"^## 笔记本 (\d\d) · ", re.M)
EN_SECTION = re.compile(r"^## Notebook (\d\d) · ", re.M)
# Numbers the Chinese writes another way, per question: {id: (English numbers, their Chinese form)}.
SAME_NUMBER = {"Q01.3": ({"15"}, {"1500"})}  # (c) "about 15 million weights": 约 1500 万个权重
LIST_MARKER = re.compile(r"^[ \t]*\d+\.[ \t]", re.M)
MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$]+?\$", re.S)
CODE_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


ZH_QUESTIONS = questions(ZH, ZH_HEADING)


def zh_parts(body: str) -> dict[str, str]:
    return parts(body, ZH_PARTS)


def without_code_blocks(text: str) -> str:
    return CODE_BLOCK.sub("", text)


def number_set(text: str) -> set[str]:
    """The numbers of a text as tests/test_exam_bank.py reads them, list markers left out."""
    return set(NUMBER.findall(LIST_MARKER.sub(" ", text).replace("{,}", ",")))


def formulas(text: str) -> set[str]:
    return {re.sub(r"\s+", " ", m).strip() for m in MATH.findall(without_code_blocks(text))}


def code_blocks(text: str) -> list[str]:
    """Each code block without its comments (prose, translated) and trailing white space."""
    blocks = []
    for block in CODE_BLOCK.findall(text):
        lines = [re.sub(r"[ \t]*#.*$", "", line).rstrip() for line in block.splitlines()]
        blocks.append("\n".join(line for line in lines if line))
    return blocks


def code_spans(text: str) -> set[str]:
    return set(CODE_SPAN.findall(without_code_blocks(text)))


def preamble(text: str, first_section: re.Pattern) -> str:
    return text[: first_section.search(text).start()]


# ------------------------------------------------------------------------------------------------ tests


def test_the_chinese_page_says_it_is_for_lecturers_only_and_points_at_the_english():
    top = ZH[:1500]
    assert "仅供讲师" in top and "请勿发给学生" in top
    assert "不属于书" in top and "讲义" in top
    assert "`docs/exam_bank.md`" in top and "`tests/test_exam_bank_zh.py`" in top


def test_the_same_questions_in_the_same_order_and_sections():
    en_ids = [m["id"] for m in HEADING.finditer(TEXT)]
    zh_ids = [m["id"] for m in ZH_HEADING.finditer(ZH)]
    assert zh_ids == en_ids, f"missing in Chinese: {sorted(set(en_ids) - set(zh_ids))}; extra: " + str(
        sorted(set(zh_ids) - set(en_ids))
    )
    assert ZH_SECTION.findall(ZH) == EN_SECTION.findall(TEXT)
    for match in ZH_HEADING.finditer(ZH):
        section = ZH_SECTION.findall(ZH[: match.start()])
        assert section and section[-1] == match["nb"], f"{match['id']} sits in the section of notebook {section[-1:]}"
    heads = re.findall(r"^#{1,3} .*$", ZH, re.M)
    assert len(heads) == len(re.findall(r"^#{1,3} .*$", TEXT, re.M)), "not one Chinese heading per English heading"


def test_every_heading_keeps_the_anchor_of_its_english_heading():
    english = [re.sub(r"^#+ ", "", h) for h in re.findall(r"^#{1,3} .*$", TEXT, re.M)]
    chinese = re.findall(r"^#{1,3} .*$", ZH, re.M)
    for en, zh in zip(english, chinese):
        assert zh.endswith(f'<a id="{heading_anchor(en)}"></a>'), f"{zh!r}: the anchor of {en!r} is wanted"


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_each_heading_has_the_english_kind_level_points_and_minutes(qid):
    en, zh = QUESTIONS[qid], ZH_QUESTIONS.get(qid)
    assert zh, f"{qid} is not in docs/zh/exam_bank.md"
    assert (zh["kind"], zh["level"]) == (KINDS[en["kind"]], LEVELS[en["level"]]), qid
    assert (zh["points"], zh["minutes"]) == (en["points"], en["minutes"]), qid


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_each_question_has_the_english_parts_and_the_same_split_of_points(qid):
    if qid not in ZH_QUESTIONS:
        pytest.fail(f"{qid} is not in docs/zh/exam_bank.md")
    en, zh = parts(QUESTIONS[qid]["body"]), zh_parts(ZH_QUESTIONS[qid]["body"])
    en_split = [int(x) for x in re.findall(r"^- (\d+) points?:", en["marking"], re.M)]
    zh_split = [int(x) for x in re.findall(r"^- (\d+) 分：", zh["marking"], re.M)]
    assert zh_split == en_split, f"{qid}: the marking bullets split {zh_split}, the English {en_split}"
    assert "常见错误" in zh["marking"], f"{qid}: no common wrong answers (常见错误答案)"


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_each_part_shows_the_english_numbers(qid):
    if qid not in ZH_QUESTIONS:
        pytest.fail(f"{qid} is not in docs/zh/exam_bank.md")
    en, zh = parts(QUESTIONS[qid]["body"]), zh_parts(ZH_QUESTIONS[qid]["body"])
    en_only, zh_only = SAME_NUMBER.get(qid, (set(), set()))
    for part in ("question", "worked", "marking"):
        a, b = number_set(en[part]), number_set(zh[part])
        missing, extra = sorted(a - b - en_only), sorted(b - a - zh_only)
        assert not missing and not extra, f"{qid}, {part}: not in the Chinese {missing}, not in the English {extra}"


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_each_question_has_the_english_formulas_code_spans_and_code(qid):
    if qid not in ZH_QUESTIONS:
        pytest.fail(f"{qid} is not in docs/zh/exam_bank.md")
    en, zh = QUESTIONS[qid]["body"], ZH_QUESTIONS[qid]["body"]
    a, b = formulas(en), formulas(zh)
    assert a == b, f"{qid}: formulas only in the English {sorted(a - b)}, only in the Chinese {sorted(b - a)}"
    a, b = code_spans(en), code_spans(zh)
    assert a == b, f"{qid}: code only in the English {sorted(a - b)}, only in the Chinese {sorted(b - a)}"
    assert code_blocks(zh) == code_blocks(en), f"{qid}: a code block differs from the English (comments aside)"


def test_the_preamble_has_the_english_numbers():
    en, zh = number_set(preamble(TEXT, EN_SECTION)), number_set(preamble(ZH, ZH_SECTION))
    assert en == zh, f"not in the Chinese {sorted(en - zh)}, not in the English {sorted(zh - en)}"


ZH_PAPER = re.compile(
    r"^- \*\*(?P<name>期中试卷样例|期末试卷样例[^*]*)\*\*（(?P<minutes>\d+) 分钟，笔记本 (?P<covers>[^）]+)）："
    r"(?P<ids>Q\d\d\.\d+(?:、Q\d\d\.\d+)*)。$",
    re.M,
)


def test_the_example_papers_are_the_english_ones():
    english = [
        (p["minutes"], re.findall(r"\d\d", p["covers"]), re.split(r",\s+", p["ids"])) for p in PAPER.finditer(TEXT)
    ]
    chinese = [(p["minutes"], re.findall(r"\d\d", p["covers"]), p["ids"].split("、")) for p in ZH_PAPER.finditer(ZH)]
    assert english and chinese == english


def test_the_checks_catch_a_number_a_formula_and_code_changed_on_one_side():
    """The comparisons above fail on the drifts they are for (on a copy of one question)."""
    qid = "Q03.1"
    en, zh = parts(QUESTIONS[qid]["body"]), zh_parts(ZH_QUESTIONS[qid]["body"])
    assert number_set(zh["worked"]) == number_set(en["worked"])
    assert number_set(zh["worked"].replace("0.4223", "0.4224")) != number_set(en["worked"])
    body = ZH_QUESTIONS[qid]["body"]
    assert formulas(body.replace("2e + 1", "2e + 2")) != formulas(QUESTIONS[qid]["body"])
    code = ZH_QUESTIONS["Q03.3"]["body"]
    assert code_blocks(code.replace("dim=0", "dim=-1")) != code_blocks(QUESTIONS["Q03.3"]["body"])
    assert code_blocks(code.replace("B = A @ V", "B = A @ V  # 注释")) == code_blocks(QUESTIONS["Q03.3"]["body"])
    assert LIST_MARKER.sub(" ", "1. 第一步\n   2. 第二步") == " 第一步\n 第二步"


def test_the_banks_headings_lend_no_anchor_to_the_chinese_book():
    """tools/book_zh.py reads the heading anchors of every page of docs/zh/ (this one included, although the book
    leaves it out) to give a twin's heading its English anchor; a heading of this page with the words of another
    page's heading would lend that heading its own anchor."""
    from tools import book_zh

    mine = {book_zh._title_key(m["title"]) for m in book_zh._HEADING_ANCHOR.finditer(ZH)}
    others = [p for p in (ROOT / "docs" / "zh").glob("*.md") if p != ZH_BANK]
    theirs = {
        book_zh._title_key(m["title"]): m["id"]
        for p in others
        for m in book_zh._HEADING_ANCHOR.finditer(p.read_text(encoding="utf-8"))
    }
    shared = sorted(mine & set(theirs))
    assert not shared, f"headings of docs/zh/exam_bank.md with the words of another page's heading: {shared}"


def test_both_guides_point_at_the_chinese_bank_and_its_rule():
    """The lecturer's guide, in both languages, names the Chinese bank and says that a question's numbers change in
    both banks and in tests/test_exam_bank.py (docs/zh/lecturers_guide.md is generated from its catalogue)."""
    english = (ROOT / "docs" / "lecturers_guide.md").read_text(encoding="utf-8")
    chinese = (ROOT / "docs" / "zh" / "lecturers_guide.md").read_text(encoding="utf-8")
    paragraph = next(p for p in english.split("\n\n") if p.startswith("**The exam bank.**"))
    assert "`docs/zh/exam_bank.md`" in paragraph and "both banks" in paragraph
    paragraph = next(p for p in chinese.split("\n\n") if p.startswith("**考试题库**"))
    assert "`docs/zh/exam_bank.md`" in paragraph and "两个题库中同时改" in paragraph
    assert "`tests/test_exam_bank.py`" in paragraph and "`tests/test_exam_bank_zh.py`" in paragraph
