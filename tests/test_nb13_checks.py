"""Notebook 13's exercise 3 check fails a classic wrong algorithm, which its random inputs alone almost never showed.

A lecturer's trial (issue 44) handed in a ``bpe_encode`` that merges the most frequent known pair first instead of
the pair learned first: it differs from the reference on about 34 of 2,000 of the check's random inputs and passed
every graded trial. The check now starts with fixed cases (one where the two orders disagree). The cells are taken
from the notebook itself and run as the notebook runs them, after exercise 2's reference ``merge`` and its check."""

import collections
import json

import pytest
import torch

import course_lib as cl
from course_lib.classroom.reach import ShortcutError
from course_lib.paths import ROOT
from tests.heldout.honest_twentieth import LIBRARY_13_EXERCISE_3, WRONG_13_EXERCISE_3

WRONG_ORDER = WRONG_13_EXERCISE_3["w1_most_frequent"]  # the most frequent known pair first: wrong
SITES = """
def merge(ids, pair, new_id):  # through the course's scan for the pair's sites: a shortcut
    sites, out, i = set(cl.bpe._sites(ids, tuple(pair))), [], 0
    while i < len(ids):
        out.append(new_id if i in sites else ids[i])
        i += 2 if i in sites else 1
    return out
"""


def _cell(marker: str) -> str:
    cells = json.loads((ROOT / "notebooks" / "13_text_to_tokens.ipynb").read_text())["cells"]
    (source,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and marker in "".join(c["source"])]
    return source


def _run(answer_2: str | None = None, answer_3: str | None = None, check_3: str | None = None) -> None:
    namespace = {"cl": cl, "torch": torch, "collections": collections}
    cells = [answer_2 or _cell("def merge(ids, pair, new_id):"), _cell("BPE_FUNCTIONS = "),  # exercise 2's check
             answer_3 or _cell("def bpe_encode(text, merges):"), check_3 or _cell("def encode_inputs(g):")]  # fmt: skip
    for i, source in enumerate(cells):  # each cell a file of its own, as in a kernel: the check tells its own apart
        exec(compile(source, f"<cell {i}>", "exec"), namespace)


def test_the_reference_solutions_pass_both_checks():
    _run()


def test_merging_the_most_frequent_pair_first_fails_exercise_3s_check_and_its_hidden_tests():
    with pytest.raises(AssertionError, match=r"bpe_encode\('abcbc'"):
        _run(answer_3=WRONG_ORDER)
    hidden_only = _cell("def encode_inputs(g):").split("### BEGIN HIDDEN TESTS")[1]  # (a re-check: they passed it)
    with pytest.raises(AssertionError, match=r"bpe_encode\('xyzyzyz'"):
        _run(answer_3=WRONG_ORDER, check_3=_cell("def encode_inputs(g):").split("# Fixed cases")[0] + hidden_only)


def test_the_scan_for_a_pairs_sites_is_a_shortcut_in_exercise_2():
    with pytest.raises(ShortcutError):
        _run(answer_2=SITES)


def test_hugging_faces_bpe_is_a_shortcut_in_exercise_3_here_and_in_the_answers_kernel():
    """The trial's c1 (full marks before): every function of ``tokenizers`` is blocked, its Rust methods included;
    the answers' kernel of a graded run (classroom.serve) blocks it too."""
    from course_lib.classroom import serve

    tokenizers = LIBRARY_13_EXERCISE_3["c1_tokenizers"]
    with pytest.raises(ShortcutError, match=r"tokenizers \(Tokenizer.encode\) is not available"):
        _run(answer_3=tokenizers)
    namespace = {}
    exec(compile(tokenizers, "<answer>", "exec"), namespace)
    with pytest.raises(ShortcutError, match="tokenizers"):  # (a refusal caught inside would be raised on leaving)
        with serve._blocked(
            ["course_lib.merge_pair", "tokenizers.*"], "bpe_encode", namespace, namespace["bpe_encode"]
        ):
            namespace["bpe_encode"]("abab", [(97, 98)])
    assert namespace["bpe_encode"]("abab", [(97, 98)]) == [256, 256]  # outside the block: the library as it was
