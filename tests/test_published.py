"""The class report lists answers that are the course's published solution as it stands (a lecturer's trial handed
in 13's reference answers copied: full marks, nothing flagged), apart from the flags: an honest answer may be the
same code."""

import shutil

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from course_lib.classroom.autograde import GradedCell, format_report
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.published import (
    _MODEL,
    AT_LEAST,
    _comments,
    _copied,
    _statements,
    keep_solutions,
    published_copies,
    same_code,
    shared_answers,
)
from course_lib.paths import ROOT

NOTEBOOK = ROOT / "notebooks" / "13_text_to_tokens.ipynb"


def _cell(source: str, grade_id: str) -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                                 "solution": True, "task": False}  # fmt: skip
    return cell


def _course(tmp_path, source: list[str], handed_in: dict[str, list[str]]):
    """A course folder: the source version of a01/x.ipynb, and each student's submission of it."""

    def write(folder, sources):
        folder.mkdir(parents=True)
        cells = [_cell(text, f"x-exercise-{n + 1}-answer") for n, text in enumerate(sources)]
        nbformat.write(new_notebook(cells=cells), folder / "x.ipynb")

    write(tmp_path / "source" / "a01", source)
    for student, sources in handed_in.items():
        write(tmp_path / "submitted" / student / "a01", sources)


LONG = """def f(x):
    # BEGIN SOLUTION
    a = x + 1
    b = a * 2
    c = b - 3
    d = c / 4
    return d
    # END SOLUTION
"""
SHORT = "def g(x):\n    return 2 * x\n"


def test_a_verbatim_copy_is_listed_comments_and_layout_aside_and_a_short_answer_or_another_is_not(tmp_path):
    respaced = "def f(x):\n    a = x+1  # my own comment\n\n    b = a*2\n    c = b-3\n    d = c/4\n    return d\n"
    changed = LONG.replace("c / 4", "c / 5")
    _course(tmp_path, [LONG, SHORT], {"ann": [respaced, SHORT], "bob": [changed, SHORT], "cat": ["%time 1", SHORT]})
    assert published_copies(tmp_path, "a01", "ann") == ["x-exercise-1-answer"]  # SHORT: under AT_LEAST statements
    assert published_copies(tmp_path, "a01", "bob") == []
    assert published_copies(tmp_path, "a01", "cat") == []  # an answer that does not parse
    assert published_copies(tmp_path, "a01", "nobody") == []


def test_the_report_lists_copies_apart_from_the_flags():
    cells = [GradedCell("x-exercise-1-tests", 1.0, {"ann": 1.0, "bob": 1.0})]
    text = format_report("a01", cells, {}, {"ann": ["x-exercise-1-answer"], "bob": []})
    assert "## Flagged submissions: 0" in text
    section = text.split("## The published solution handed in, not flagged: 1")[1]
    assert "- ann: x-exercise-1-answer" in section and "bob" not in section
    assert "The published solution" not in format_report("a01", cells, {}, {"bob": []})


def test_renamed_locals_are_the_same_code_and_another_algorithm_or_library_name_is_not():
    """A twenty-first trial's x8renamed: the solution with its local names changed, listed nowhere before."""
    renamed = "def f(value):\n    p = value + 1\n    q = p * 2\n    r = q - 3\n    s = r / 4\n    return s\n"
    assert same_code(renamed, LONG)
    assert not same_code(renamed.replace("p * 2", "p * 3"), LONG)
    assert not same_code("import math\n" + LONG.replace("a * 2", "math.floor(a)"), "import math\n" + LONG)
    assert not same_code(LONG.replace("x + 1", "torch.add(x, 1)"), LONG.replace("x + 1", "numpy.add(x, 1)"))


def _written(question: str, answer: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(f"{question}\n\n### BEGIN SOLUTION\n{answer}\n### END SOLUTION")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "x-exercise-3-written", "locked": False, "points": 1,
                                 "schema_version": 3, "solution": True, "task": False}  # fmt: skip
    return cell


MODEL = ("Each head sees the same keys but through its own projection, so two heads can attend to different "
         "positions for one query; a single wide head averages them into one distribution.")  # fmt: skip


def test_a_written_answer_holding_the_model_answer_is_listed(tmp_path):
    for folder, text in [("source", MODEL), ("submitted/ann", "My answer:  " + MODEL.replace(" ", "\n", 3)),
                         ("submitted/bob", "In my own words, heads attend to different positions.")]:  # fmt: skip
        (tmp_path / folder / "a06").mkdir(parents=True)
        cell = _written("### Exercise 3\nWhy several heads?", text)
        nbformat.write(new_notebook(cells=[cell]), tmp_path / folder / "a06" / "x.ipynb")
    assert published_copies(tmp_path, "a06", "ann") == ["x-exercise-3-written"]
    assert published_copies(tmp_path, "a06", "bob") == []


def test_the_solutions_kept_at_make_assignment_serve_where_source_was_moved_away(tmp_path):
    """The guide moves ``source/`` off the grading machine before grading; a twenty-first trial's verbatim copy then
    went unlisted. ``make assignment`` keeps the answer cells in ``published/`` (the gradebook holds the stubs)."""
    _course(tmp_path, [LONG, SHORT], {"ann": [LONG, SHORT]})
    kept = keep_solutions(tmp_path, "a01")
    shutil.rmtree(tmp_path / "source")
    assert kept == tmp_path / "published" / "a01.json"
    assert published_copies(tmp_path, "a01", "ann") == ["x-exercise-1-answer"]
    kept.unlink()
    assert published_copies(tmp_path, "a01", "ann") == []  # nothing to compare with: nothing listed


def _uncommented(source: str) -> str:
    return "\n".join(line.split("  #")[0] for line in source.splitlines() if not line.strip().startswith("#"))


def test_13s_reference_answers_handed_in_are_listed_where_long_or_keeping_a_comment(tmp_path):
    """The trial's case: the source version's own answers handed in, as a student copying the repository would; and
    the same with every comment removed, where only the long ones can be told from an honest answer."""
    source, exercises = nbgrader_notebook(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.stem)
    answers = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    long = {c.metadata.nbgrader.grade_id for c in answers if _statements(c.source) >= AT_LEAST}
    stripped = nbformat.from_dict(source)
    for cell in stripped.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            cell.source = _uncommented(cell.source)
    (tmp_path / "source" / "a13").mkdir(parents=True)
    nbformat.write(source, tmp_path / "source" / "a13" / NOTEBOOK.name)
    for student, notebook in (("ann", source), ("bob", stripped)):
        (tmp_path / "submitted" / student / "a13").mkdir(parents=True)
        nbformat.write(notebook, tmp_path / "submitted" / student / "a13" / NOTEBOOK.name)
    listed = published_copies(tmp_path, "a13", "ann")
    assert {c.metadata.nbgrader.grade_id for c in answers} <= set(listed)  # 13's short answers all keep a comment
    assert (
        long and set(published_copies(tmp_path, "a13", "bob")) & {c.metadata.nbgrader.grade_id for c in answers} == long
    )


SHORT_SOLUTION = """def h(x, lengths):
    # x: (B, L, D) -> (B, D)
    # BEGIN SOLUTION
    w = (x != 0).to(x.dtype)  # (B, L, D): one at real tokens, zero at padding
    return (x * w).sum(dim=1) / lengths[:, None]
    # END SOLUTION
"""


def test_a_short_copy_is_listed_where_it_keeps_one_of_the_solutions_comments():
    """A twenty-second trial's short answers (11's), copied with their names changed: listed nowhere before. A short
    answer is listed where it keeps a comment of the solution (four words or more) word for word; the comment the
    released cell holds (above the markers) and shapes alone (single letters) say nothing."""
    renamed = (
        "def h(h_in, n):\n    mask = (h_in != 0).to(h_in.dtype)  # (B, L, D): One at real tokens,  zero at padding\n"
        "    return (h_in * mask).sum(dim=1) / n[:, None]\n"
    )
    solution = {"cell_type": "code", "source": SHORT_SOLUTION}
    assert _copied({"source": renamed}, solution)
    assert not _copied({"source": _uncommented(renamed)}, solution)  # stripped: the same as an honest answer
    released = "def h(h_in, n):\n    # x: (B, L, D) -> (B, D)\n" + _uncommented(renamed).split("\n", 1)[1]
    assert not _copied({"source": released}, solution)
    assert not _copied({"source": renamed.replace("sum(dim=1)", "mean(dim=1)")}, solution)  # other code


def test_the_same_answer_in_several_submissions_is_listed_apart_from_the_flags(tmp_path):
    """A twenty-second trial handed in another student's notebook, its VARIANT changed: 5 of 5, nothing shown."""
    own = LONG.replace("c / 4", "c / 5")  # not the published solution: only the two friends share it
    renamed = own.replace("a", "first").replace("def f(x)", "def f(value)").replace("x +", "value +")
    _course(
        tmp_path,
        [LONG, SHORT],
        {"ann": [own, SHORT], "bob": [renamed, SHORT], "cat": [LONG.replace("b - 3", "b - 2"), SHORT]},
    )
    assert shared_answers(tmp_path, "a01") == [("x-exercise-1-answer", ["ann", "bob"])]  # SHORT: too short to tell
    for student in ("ann", "cat"):  # two short answers alike, with a comment of their own: listed
        path = tmp_path / "submitted" / student / "a01" / "x.ipynb"
        notebook = nbformat.read(path, as_version=4)
        notebook.cells[1].source = SHORT.replace("2 * x", "x + x  # doubling it the quick way")
        nbformat.write(notebook, path)
    assert ("x-exercise-2-answer", ["ann", "cat"]) in shared_answers(tmp_path, "a01")
    cells = [GradedCell("x-exercise-1-tests", 1.0, {"ann": 1.0, "bob": 1.0, "cat": 1.0})]
    text = format_report("a01", cells, {}, {}, shared_answers(tmp_path, "a01"))
    assert (
        "## The same answer in several submissions, not flagged: 2" in text
        and "- x-exercise-1-answer: ann, bob" in text
        and "- x-exercise-2-answer: ann, cat" in text
    )


def test_a_model_answer_copied_as_the_page_reads_is_listed_and_answers_left_as_released_are_not_shared(tmp_path):
    """A re-check of the twenty-first and twenty-second trials: a copied model answer went unlisted (the comparison
    wanted its marking too, and its links as written), and three blank written answers were listed as shared."""
    model = ("**Model answer.** Each head sees the same [keys](../docs/glossary.md#key) through its own projection, so "
             "two heads can attend to different positions for one query; $D \\times D$ stays one matrix.")  # fmt: skip
    marked = f"{model}\n\n**Marking (1 point).** The point for different positions per head."
    as_read = (
        "Each head sees the same keys through its own projection, so two heads can attend to different "
        "positions for one query; D × D stays one matrix."
    )
    released = "### Exercise 3\nWhy several heads?\n\nYOUR ANSWER HERE"
    for folder, cell in [("source", _written("### Exercise 3\nWhy several heads?", marked)),
                         ("release", nbformat.v4.new_markdown_cell(released)),
                         ("submitted/ann", nbformat.v4.new_markdown_cell(f"### Exercise 3\n\n{as_read}")),
                         ("submitted/bob", nbformat.v4.new_markdown_cell(released)),
                         ("submitted/cat", nbformat.v4.new_markdown_cell(released))]:  # fmt: skip
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": "x-exercise-3-written", "solution": True}
        (tmp_path / folder / "a06").mkdir(parents=True)
        nbformat.write(new_notebook(cells=[cell]), tmp_path / folder / "a06" / "x.ipynb")
    assert published_copies(tmp_path, "a06", "ann") == ["x-exercise-3-written"]
    assert published_copies(tmp_path, "a06", "bob") == []
    assert shared_answers(tmp_path, "a06") == []  # bob and cat left it as released


def test_every_solution_can_be_listed_when_copied_as_it_stands():
    """A verbatim copy of any code answer is listable: a solution of fewer than AT_LEAST statements carries a comment
    of its own (COMMENT_WORDS words or more) between its markers, which a copy keeps (before, 25 of the course's 49
    short solutions had none, and a copy of them could not be told from an honest answer)."""
    silent = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "# BEGIN SOLUTION" in cell.source and _statements(cell.source) < AT_LEAST:
                if not any(_comments(region) for region in _MODEL.findall(cell.source)):
                    silent.append(f"{path.stem}: {cell.source.splitlines()[0][:60]}")
    assert not silent, silent
