"""The checks' messages in Chinese (course_lib.classroom.messages): every message a check or a hint writes, made by
the real checks on wrong answers, reads in Chinese with its numbers kept; English stays as it was; "Not graded" is
never translated; the language is COURSE_LANGUAGE, else a folder named zh."""

import math
import re

import numpy as np
import pytest
import torch

import course_lib as cl
from course_lib.classroom import messages
from course_lib.classroom.exercises import unanswered
from course_lib.classroom.integrity import NOT_GRADED
from course_lib.classroom.messages import say

ENGLISH_WORDS = re.compile(
    r"\b(differ|expected|shape|yours|your|trial|agrees|reference|raised|items|elements|mask|softmax over|scale factor|"
    r"transposed|zeros|NaN at|rows sum|correct|cannot|numbers)\b"
)


def _message(check) -> str:
    with pytest.raises((AssertionError, NotImplementedError)) as err:  # (an answer not given yet: not a wrong one)
        check()
    return str(err.value)


def _top_k(g):
    return torch.randn(3, 7, generator=g), 3


def _draw(g):
    return (torch.randn(3, generator=g),)


def _wrong_answers() -> dict[str, str]:
    e = torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    rows = torch.softmax(torch.tensor([[1.0, 2.0, 0.5], [0.3, 0.1, 2.0], [1.0, 1.0, 1.0]]), dim=-1)
    fixed = {
        "shape": lambda: cl.check_close(torch.zeros(3, 2), torch.zeros(2, 3)),
        "shape, arrangement": lambda: cl.check_close(torch.zeros(6), torch.zeros(2, 3)),
        "shape, size 1": lambda: cl.check_close(torch.zeros(1, 2, 3), torch.zeros(2, 3)),
        "dtype": lambda: cl.check_close(torch.zeros(2, dtype=torch.long), torch.zeros(2)),
        "not a tensor": lambda: cl.check_close([torch.zeros(2), torch.zeros(2)], torch.zeros(2)),
        "values": lambda: cl.check_close(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]), "attn"),
        "by hand": lambda: cl.check_answer([1.0, 3.0], torch.tensor([1.0, 2.0]), "J_ex1"),
        "by hand, unreadable": lambda: cl.check_answer("three", torch.tensor([1.0, 2.0]), "J_ex1"),
        "scale": lambda: cl.check_close(2 * rows, rows),
        "transposed": lambda: cl.check_close(rows.T.contiguous(), rows),
        "zeros": lambda: cl.check_close(torch.zeros(3, 3), rows),
        "NaN": lambda: cl.check_close(torch.full((3, 3), float("nan")), rows),
        "softmax axis": lambda: cl.check_close(torch.softmax(torch.log(rows), dim=0), rows),
        "rows": lambda: cl.check_close(rows * torch.tensor([[1.0], [1.0], [0.5]]), rows),
        "mask leaked": lambda: cl.check_close(torch.tensor([[0.4, 0.4, 0.2], [0.2, 0.3, 0.5]]), e),
        "mask blocked": lambda: cl.check_close(torch.tensor([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]), e),
        "function": lambda: cl.check_function(lambda x: x + 1, lambda x: x, _draw),
        "function raises": lambda: cl.check_function(lambda x: x[7], lambda x: x, _draw),
        "shortcut": lambda: cl.check_function(
            lambda x: torch.softmax(x, 0), torch.exp, _draw, without=["torch.softmax"]
        ),
        "the check's reference": lambda: cl.check_function(lambda l, k: cl.top_k_filter(l, k), cl.top_k_filter, _top_k),
        "ties broken, infinities": lambda: cl.check_close(
            torch.tensor([[2.0, 1.0, -math.inf, -math.inf], [0.5, -math.inf, 2.0, math.inf]]),
            torch.tensor([[2.0, 1.0, 1.0, -math.inf], [0.0, 3.0, -math.inf, 1.0]]),
            "top_k",
        ),
        "NumPy": lambda: cl.check_function(
            lambda x: torch.from_numpy(np.exp(x.numpy())), torch.exp, _draw, without=["torch.softmax"]
        ),  # fmt: skip
        "not answered": lambda: cl.check_answer(unanswered("Exercise 1: J_ex1"), torch.ones(1), "J_ex1"),
    }
    return {what: _message(check) for what, check in fixed.items()}


def test_every_message_of_a_wrong_answer_reads_in_chinese(monkeypatch):
    english = _wrong_answers()
    monkeypatch.setattr(messages, "LANGUAGE", "zh")
    chinese = _wrong_answers()
    for what, message in chinese.items():
        assert message != english[what] and re.search("[\u4e00-\u9fff]", message), (what, message)
        assert not ENGLISH_WORDS.search(message), (what, message)  # no phrase left in English
        kept = sorted(re.findall(r"-?\d+(?:\.\d+)?", english[what]))  # every number of the English message
        assert sorted(re.findall(r"-?\d+(?:\.\d+)?", message)) == kept, (what, message)
    assert "2.5" in chinese["values"] and "2" in chinese["values"] and "偏大" in chinese["by hand"]
    assert "top_k_filter（检查的参考实现）在这次检查中不可用" in chinese["the check's reference"]
    assert chinese["ties broken, infinities"].endswith(
        "（最大绝对误差 0.5；有 1 个元素你的是有限值、参考实现的是 -inf；有 1 个元素你的是 inf、参考实现的是有限值；"
        "有 2 个元素你的是 -inf、参考实现的是有限值）"
    )


def test_a_passed_check_says_so_in_chinese_and_english_is_unchanged(monkeypatch, capsys):
    cl.check_close(torch.ones(2), torch.ones(2), "weights_ex1")
    cl.check_function(lambda x: x * 2, lambda x: 2 * x, lambda g: (torch.randn(3, generator=g),), name="double")
    assert capsys.readouterr().out == (
        "✓ weights_ex1 is correct\n✓ double agrees with the reference on 5 random inputs\n"
    )
    monkeypatch.setattr(messages, "LANGUAGE", "zh")
    cl.check_close(torch.ones(2), torch.ones(2), "weights_ex1")
    cl.check_function(lambda x: x * 2, lambda x: 2 * x, lambda g: (torch.randn(3, generator=g),), name="double",
                      without=("torch.softmax", "torch.exp", "torch.sum", "torch.max"))  # fmt: skip
    out = capsys.readouterr().out
    assert out.startswith("✓ weights_ex1 正确\n✓ double 在 5 组随机输入上与参考实现一致，且没有调用 torch.softmax")
    assert "（另有 1 个）" in out


def test_not_graded_stays_english_and_the_language_is_chosen_as_documented(monkeypatch, tmp_path):
    line = f"{NOT_GRADED}: attn on trial 1: shape is (2,), expected (3,)"
    assert say(line, "zh") == line  # the report flags these words
    assert say("shape is (2,), expected (3,)", "en") == "shape is (2,), expected (3,)"
    assert say("shape is (2,), expected (3,)", "zh") == "形状是 (2,)，应为 (3,)"
    (tmp_path / "zh").mkdir()
    monkeypatch.delenv("COURSE_LANGUAGE", raising=False)
    monkeypatch.chdir(tmp_path / "zh")
    assert messages.language() == "zh"
    monkeypatch.setenv("COURSE_LANGUAGE", "en")
    assert messages.language() == "en"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COURSE_LANGUAGE", "zh")
    assert messages.language() == "zh"
    monkeypatch.setenv("COURSE_LANGUAGE", "fr")  # not one of the two: the folder decides
    assert messages.language() == "en"
    monkeypatch.delenv("COURSE_LANGUAGE")
    for folder, spoken in (("a04zh", "zh"), ("a04", "en"), ("zhou", "en")):  # nbgrader runs a04zh's submissions there
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        assert messages.language() == spoken, folder
