"""The hidden tests' seeds in an nbgrader source version come from a secret, not from the public repository.

A lecturer's trial (issue 44) handed in a table of literal answers: the hidden tests draw their random inputs from
seeds written in the notebooks the students clone, so the inputs, and the reference's answers to them, could be
computed before handing in. ``nbgrader_notebook(..., secret=...)`` derives every literal seed of a hidden region from
the secret (:func:`course_lib.classroom.nbgrader_source.salted_seed`); the command line draws a new secret each run.
"""

import hashlib
import math
import re

import nbformat
import pytest
import torch

import course_lib as cl
from course_lib.classroom.nbgrader_source import _SEED, nbgrader_notebook, salted_seed
from course_lib.classroom.notebook import HIDDEN_BEGIN, HIDDEN_END
from course_lib.classroom.student import main
from course_lib.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _regions(source: str) -> tuple[list[str], list[str]]:
    """(the lines inside hidden regions, every other line) of a cell's source."""
    hidden, visible, inside = [], [], False
    for line in source.split("\n"):
        if line.strip() in (HIDDEN_BEGIN, HIDDEN_END):
            inside = line.strip() == HIDDEN_BEGIN
        (hidden if inside and line.strip() != HIDDEN_BEGIN else visible).append(line)
    return hidden, visible


def _seeds(nb) -> list[tuple[str, int]]:
    """(cell id, seed) of every literal seed in a hidden region of ``nb``, in order."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            found += [(cell.get("id"), int(m[2])) for line in _regions(cell.source)[0] for m in _SEED.finditer(line)]
    return found


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_hidden_seed_comes_from_the_secret_and_nothing_else_changes(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    public, _ = nbgrader_notebook(nb, nb_path.stem)
    salted, _ = nbgrader_notebook(nb, nb_path.stem, secret="lecturer's secret")
    again, _ = nbgrader_notebook(nb, nb_path.stem, secret="lecturer's secret")
    other, _ = nbgrader_notebook(nb, nb_path.stem, secret="another course")
    assert len(_seeds(public)) >= 1, "a notebook whose hidden tests draw nothing at random"
    assert [s for _, s in _seeds(salted)] == [s for _, s in _seeds(again)], "the same secret, the same seeds"
    pairs = list(zip(_seeds(public), _seeds(salted), _seeds(other), strict=True))
    for (where, seed), (_, mine), (_, theirs) in pairs:
        assert seed != mine != theirs != seed, f"{nb_path.name} {where}: seed {seed} -> {mine}, {theirs}"
    for cell, changed in zip(public.cells, salted.cells, strict=True):
        assert _regions(cell.source)[1] == _regions(changed.source)[1], f"{cell.get('id')}: a visible line changed"
        assert _SEED.sub("", cell.source) == _SEED.sub("", changed.source), f"{cell.get('id')}: not only seeds"
    # one seed written twice in a cell stays one seed (chapter 12 seeds a model and its prompt alike)
    for (where, seed), (_, mine) in zip(_seeds(public), _seeds(salted), strict=True):
        assert all(m == mine for (w, s), (_, m) in zip(_seeds(public), _seeds(salted)) if (w, s) == (where, seed))


def test_salted_seed_is_a_31_bit_integer_of_all_three():
    seeds = {salted_seed(s, w, n) for s in ("a", "b") for w in ("00-exercise-2-tests", "00-exercise-3-tests")
             for n in (1, 2)}  # fmt: skip
    assert len(seeds) == 8 and all(0 <= s < 2**31 for s in seeds)
    digest = hashlib.sha256(b"a/x/1").digest()  # the same on every machine and Python (SHA-256, not hash())
    assert salted_seed("a", "x", 1) == int.from_bytes(digest[:4], "little") // 2


def _check_cells(nb) -> list[str]:
    """Exercise 2's check in chapter 00: one cell in the repository, the check and its hidden tests in nbgrader's."""
    return [c.source for c in nb.cells if c.cell_type == "code" and re.search(r"def (integer|batched)_qk", c.source)]


def _table_answer() -> dict:
    """The attack: ``attention_scores`` as a table of the reference's answers to the inputs the repository's seeds
    draw (the visible check's seed 0, the hidden tests' seed 1), computed before handing in."""
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    namespace = {"cl": cl, "torch": torch, "math": math, "device": torch.device("cpu")}
    (cell,) = _check_cells(nb)
    definitions = cell.split("cl.check_function(attention_scores")[0]  # integer_qk, reference_scores
    hidden = cell.split(HIDDEN_BEGIN)[1].split("cl.check_function")[0]  # batched_qk
    exec(compile(definitions + hidden, "<inputs>", "exec"), namespace)
    table = {}
    for make, seed, trials in ((namespace["integer_qk"], 0, 5), (namespace["batched_qk"], 1, 10)):
        g = torch.Generator().manual_seed(seed)
        for _ in range(trials):
            q, k = make(g)
            table[(q.numpy().tobytes(), k.numpy().tobytes())] = namespace["reference_scores"](q, k)
    return table


def _grade(checks: list[str], table: dict) -> None:
    namespace = {"cl": cl, "torch": torch, "math": math, "device": torch.device("cpu"), "table": table}
    answer = "def attention_scores(q, k):\n    return table[(q.numpy().tobytes(), k.numpy().tobytes())].clone()\n"
    for i, source in enumerate([answer, *checks]):  # each cell a file of its own, as in a kernel
        exec(compile(source, f"<cell {i}>", "exec"), namespace)


def test_a_table_of_the_repositorys_hidden_inputs_passes_them_and_fails_salted_ones():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    table = _table_answer()
    _grade(_check_cells(nbgrader_notebook(nb, NOTEBOOKS[0].stem)[0]), table)  # the attack works on public seeds
    salted = _check_cells(nbgrader_notebook(nb, NOTEBOOKS[0].stem, secret="lecturer's secret")[0])
    assert len(salted) == 2 and re.search(r"seed=\d{3,}", salted[1])
    _grade(salted[:1], table)  # the visible check's inputs are the student's to see: the table answers them
    with pytest.raises(AssertionError, match="attention_scores, batched raised KeyError"):  # not in the table
        _grade(salted, table)


def test_the_command_line_draws_a_new_secret_each_run_or_takes_one(tmp_path, capsys):
    def seeds(out, *extra):
        main([str(NOTEBOOKS[0]), "--out", str(tmp_path / out), "--nbgrader", *extra])
        return _seeds(nbformat.read(tmp_path / out / NOTEBOOKS[0].name, as_version=4))

    public = _seeds(nbgrader_notebook(nbformat.read(NOTEBOOKS[0], as_version=4), NOTEBOOKS[0].stem)[0])
    first, second = seeds("a"), seeds("b")
    assert first != second and not set(first) & set(public)
    assert seeds("c", "--secret", "s") == seeds("d", "--secret", "s")
    with pytest.raises(SystemExit):
        main([str(NOTEBOOKS[0]), "--out", str(tmp_path / "e"), "--secret", "s"])  # a student version has none
    assert "a secret, or a choice of exercises, is for nbgrader" in capsys.readouterr().err


def test_a_weeks_share_of_a_notebook_is_graded_and_the_rest_left_to_do():
    """A twenty-first trial: the plan grades 10's exercises 1-3 in week 9 and 12's exercise 2 in week 11, but an
    assignment graded every exercise of its notebook. ``only`` grades the chosen ones; the others keep an editable
    answer cell and their visible check, without hidden tests, points or a model answer."""
    import warnings

    from course_lib.classroom.notebook import find_exercises

    nb = nbformat.read(ROOT / "notebooks" / "06_multi_head_attention.ipynb", as_version=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source, graded = nbgrader_notebook(nb, "06_x", only=[3])
    assert [ex.label for ex in graded] == ["Exercise 3"]
    assert any("split_heads" in str(w.message) and "Exercise 2" in str(w.message) for w in caught)
    grades = [c.metadata["nbgrader"]["grade_id"] for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert grades == ["06_x-exercise-3-tests", "06_x-exercise-3-hidden-tests"]
    answers = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(answers) == len(find_exercises(nb)) and all(not c.metadata["nbgrader"]["locked"] for c in answers)
    hidden = [c for c in source.cells if HIDDEN_BEGIN in c.source]
    assert len(hidden) == 1 and "multi_head_attention" in hidden[0].source  # the other checks lost theirs
    vit = nbformat.read(ROOT / "notebooks" / "10_vision_transformer.ipynb", as_version=4)
    written = [
        c for c in vit.cells if "BEGIN SOLUTION" not in c.source and "written-answer" in c.metadata.get("tags", [])
    ]
    assert written, "notebook 10 has a written answer"
    source, graded = nbgrader_notebook(vit, "10_x", only=[1, 2])
    assert [ex.label for ex in graded] == ["Exercise 1", "Exercise 2"]
    assert not any(c.cell_type == "markdown" and "BEGIN SOLUTION" in c.source for c in source.cells)  # no model
    with pytest.raises(ValueError, match=r"no exercise \[9\]"):
        nbgrader_notebook(nb, "06_x", only=[3, 9])
