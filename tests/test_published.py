"""The class report lists answers that are the course's published solution as it stands (a lecturer's trial handed
in 13's reference answers copied: full marks, nothing flagged), apart from the flags: an honest answer may be the
same code."""

import shutil

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from course_lib.classroom.autograde import GradedCell, format_report
from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.published import keep_solutions, published_copies, same_code, shared_answers
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


def test_13s_reference_answers_handed_in_are_listed_where_long_enough(tmp_path):
    """The trial's case: the source version's own answers handed in, as a student copying the repository would."""
    source, exercises = nbgrader_notebook(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.stem)
    (tmp_path / "source" / "a13").mkdir(parents=True)
    (tmp_path / "submitted" / "ann" / "a13").mkdir(parents=True)
    nbformat.write(source, tmp_path / "source" / "a13" / NOTEBOOK.name)
    nbformat.write(source, tmp_path / "submitted" / "ann" / "a13" / NOTEBOOK.name)
    listed = published_copies(tmp_path, "a13", "ann")
    assert listed and all(g.endswith("-answer") for g in listed)
    assert len(listed) < len(exercises)  # exercise 1 (by hand, one statement) is never listed


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
    cells = [GradedCell("x-exercise-1-tests", 1.0, {"ann": 1.0, "bob": 1.0, "cat": 1.0})]
    text = format_report("a01", cells, {}, {}, shared_answers(tmp_path, "a01"))
    assert (
        "## The same answer in several submissions, not flagged: 1" in text
        and "- x-exercise-1-answer: ann, bob" in text
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
