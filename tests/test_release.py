"""What students receive holds no solution (issue 44): nbgrader's release carries the student version's named stubs
(course_lib.classroom.release), the student release (tools/release.py, ``make release``) holds neither a solution nor
a hidden test nor a model answer and opens itself in Colab, and nbgrader runs on a machine where the virtual
environment is not activated (``make assignment``)."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.classroom.nbgrader_source import nbgrader_notebook
from course_lib.classroom.release import NamedStubs, StashStubs, configure, generate_preprocessors
from course_lib.classroom.student import student_notebook
from course_lib.paths import NOTEBOOKS_DIR, ROOT
from tools import colab_cell, release

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
needs_nbgrader = pytest.mark.skipif(
    importlib.util.find_spec("nbgrader") is None, reason="the grading extra: pip install -e '.[grading]'"
)


@needs_nbgrader
@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_release_answer_cells_are_the_student_versions_stubs(nb_path):
    from nbgrader.preprocessors import ClearSolutions

    nb = nbformat.read(nb_path, as_version=4)
    source, exercises = nbgrader_notebook(nb, nb_path.stem)
    resources = {"language": "python"}
    for step in (StashStubs(), ClearSolutions(), NamedStubs()):
        source, resources = step(source, resources)
    student, student_exercises = student_notebook(nb, banner=False)
    for ex, mine in zip(exercises, student_exercises, strict=True):
        released = source.cells[ex.solution_cell].source
        assert released == student.cells[mine.solution_cell].source, ex.label
        assert "NotImplementedError()" not in released and ex.label in released  # named, not bare


@needs_nbgrader
def test_the_steps_sit_around_clear_solutions_before_the_checksums():
    from nbgrader.preprocessors import ClearSolutions, ComputeChecksums

    steps = generate_preprocessors()
    at = steps.index(ClearSolutions)
    assert steps[at - 1] is StashStubs and steps[at + 1] is NamedStubs
    assert at + 1 < steps.index(ComputeChecksums)


def test_a_chinese_notebooks_assignment_has_a_name_of_its_own():
    """The twelfth trial: a Chinese notebook's assignment was also named a04 and would have overwritten the English."""
    assert release.assignment_name(NOTEBOOKS[4]) == "a04"
    assert release.assignment_name(NOTEBOOKS[4].parent / "zh" / NOTEBOOKS[4].name) == "a04zh"
    with pytest.raises(ValueError, match="NN_name.ipynb"):
        release.assignment_name(Path("homework.ipynb"))


@needs_nbgrader
def test_configure_sets_up_a_course(monkeypatch):
    from traitlets.config import Config

    monkeypatch.setenv("PATH", os.environ["PATH"])  # configure() puts this Python's bin first; undone after the test
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # a plain nbgrader command: threads not chosen
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # chosen by the lecturer: kept
    c = Config()
    configure(c)
    assert NamedStubs in c.GenerateAssignment.preprocessors and c.Execute.timeout == 600
    assert os.environ["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert (os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == ("1", "3")  # what the kernels inherit
    assert any(step.__name__ == "GuardSubmission" for step in c.Autograde.sanitize_preprocessors)
    assert any(step.__name__ == "KeepNotGraded" for step in c.Autograde.autograde_preprocessors)


@needs_nbgrader
def test_the_feedback_runs_none_of_a_submissions_html():
    """A twenty-first trial's written answer held ``<script>`` and ``<img onerror=...>``: opened, its feedback page
    ran them, retitled the page and replaced its body with "Score: 100 / 100"."""
    from nbconvert import HTMLExporter

    from course_lib.classroom.release import PlainHTML, feedback_preprocessors

    answer = ("My answer. <script>document.title='pwned'</script>\n\n"
              "<img src=\"x\" onerror=\"document.body.innerHTML='Score: 100'\"> *emphasis*, $a < b$ "
              "&lt;script&gt;alert(2)&lt;/script&gt;")  # fmt: skip
    prose = '### Exercise 3\n<span class="section-badge core">● core</span>\n\n| a | b |\n|---|---|\n| 1 | 2 |'
    shown = {"text/html": "<b>bold</b><script>alert(1)</script>", "text/plain": "<b>"}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(answer), nbformat.v4.new_markdown_cell(prose),
                                         nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output(
                                             "display_data", data=shown)])])  # fmt: skip
    unsafe, _ = HTMLExporter().from_notebook_node(nb)
    assert "<script>document.title" in unsafe and "onerror=" in unsafe  # what the page ran before
    assert PlainHTML in feedback_preprocessors()
    exporter = HTMLExporter()  # as nbgrader's converters register their steps (a 22nd trial: it never ran)
    exporter.register_preprocessor(PlainHTML)
    assert all(step.enabled for step in exporter._preprocessors if isinstance(step, PlainHTML))
    html, _ = exporter.from_notebook_node(nb)
    assert "<script>document.title" not in html and "onerror" not in html
    cleaned, _ = PlainHTML().preprocess(nb, {})
    assert "<script" not in cleaned.cells[0].source + cleaned.cells[2].outputs[0].data["text/html"]
    html, _ = HTMLExporter().from_notebook_node(cleaned)
    template, _ = HTMLExporter().from_notebook_node(nbformat.v4.new_notebook())
    assert html.count("<script") == template.count("<script") and "onerror" not in html  # the page's own scripts only
    assert "<em>emphasis</em>" in html and "My answer." in html and "$a &lt; b$" in html  # the answer still reads
    assert '<span class="section-badge core">' in html and "<td>2</td>" in html  # the course's prose as it was
    assert "<b>bold</b>" in html


@needs_nbgrader
def test_the_feedback_keeps_a_link_to_the_repositorys_files_as_its_text():
    """A feedback page is opened alone: the prose's glossary links (``../docs/glossary.md#key``) led to nothing."""
    from course_lib.classroom.release import PlainHTML

    prose = ("The [query](../docs/glossary.md#query) meets each [key](../docs/glossary.md#key \"the glossary\"); "
             "see [the paper](https://arxiv.org/abs/1706.03762), [above](#setup) and ![a map](map.png).")  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(prose)])
    cleaned, _ = PlainHTML().preprocess(nb, {})
    assert cleaned.cells[0].source == (
        "The query meets each key; see [the paper](https://arxiv.org/abs/1706.03762), [above](#setup) and "
        "![a map](map.png)."
    )
    released = nbformat.read(NOTEBOOKS[0], as_version=4)
    assert "glossary.md" in "".join(c.source for c in released.cells if c.cell_type == "markdown")
    cleaned, _ = PlainHTML().preprocess(released, {})
    assert "glossary.md" not in "".join(c.source for c in cleaned.cells if c.cell_type == "markdown")


@needs_nbgrader
def test_a_link_that_runs_code_shows_as_text_in_the_feedback():
    """A twenty-third trial's added cell ``[link](javascript:alert(1))`` stayed a live link in its feedback page:
    clicked, it ran (bleach cleans HTML, not Markdown). Every way of writing one, and a cell that holds one is shown
    as its text; an honest cell's links stay links."""
    from nbconvert import HTMLExporter

    from course_lib.classroom.release import PlainHTML

    tricks = ["[link](javascript:alert(1))", "[link](&#106;avascript:alert(1))", "<javascript:alert(1)>",
              "[link][r]\n\n[r]: javascript:alert(1)", "[link]( JaVaScript:alert(1))", "[d](data:text/html,x)",
              "[``](javascript:alert(1)) ```` fences ````"]  # fmt: skip
    honest = "See [the paper](https://arxiv.org/abs/1706.03762) and ![a plot](data:image/png;base64,iVBORw0KGgo=)."
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(t) for t in [*tricks, honest]])
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert html.count('href="javascript:') + html.count('href="JaVaScript:') >= 5  # what the page held before
    cleaned, _ = PlainHTML().preprocess(nb, {})
    html, _ = HTMLExporter().from_notebook_node(cleaned)
    assert not re.search(r'href="\s*(?:javascript|data):', html, re.I)
    assert "javascript:alert(1)" in html  # the student's text, shown as it was written
    assert cleaned.cells[-1].source == honest and 'href="https://arxiv.org/abs/1706.03762"' in html


@needs_nbgrader
def test_the_feedback_leaves_the_hidden_tests_out_after_reading_the_grades():
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    from course_lib.classroom.notebook import HIDDEN_BEGIN
    from course_lib.classroom.release import feedback_preprocessors

    steps = feedback_preprocessors()
    assert steps.index(GetGrades) < steps.index(ClearHiddenTests)  # the grades are read from the full notebook
    source, exercises = nbgrader_notebook(nbformat.read(NOTEBOOKS[0], as_version=4), NOTEBOOKS[0].stem)
    hidden = source.cells[exercises[0].hidden_cell]
    assert HIDDEN_BEGIN in hidden.source
    cleared, _ = ClearHiddenTests()(source, {})
    assert HIDDEN_BEGIN not in cleared.cells[exercises[0].hidden_cell].source


@needs_nbgrader
def test_the_feedback_shows_a_failed_checks_message_not_its_traceback():
    from course_lib.classroom.release import ShortTracebacks

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {"grade": True, "grade_id": "t"}})
    quoted = "\x1b[0;32m      7\x1b[0m ### BEGIN HIDDEN TESTS\n      8 check(hidden_inputs)"
    cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="f is wrong on trial 2",
                                           traceback=["Traceback ...", quoted])]  # fmt: skip
    nb.cells = [cell]
    nb, _ = ShortTracebacks()(nb, {})
    assert nb.cells[0].outputs[0]["traceback"] == ["AssertionError: f is wrong on trial 2"]


@needs_nbgrader
def test_the_feedback_shows_the_students_cells_without_the_graders_lines():
    """The eighteenth lecturer's trial: the feedback showed ``_course_integrity = __import__(...)`` and
    ``_course_integrity.ran('...')  # the grader's own line`` in the student's notebook. After the grades are read,
    every cell is as handed in (a locked cell as released, hidden tests aside), its outputs kept; the grader's own
    cell is gone; the VARIANT line the grader wrote stays (it says which numbers were graded), and so does a line a
    student wrote in a cell of their own, even one that looks like the grader's."""
    from nbformat.v4 import new_code_cell, new_output
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    from course_lib.classroom.guard import GuardSubmission
    from course_lib.classroom.release import WithoutGradersLines, feedback_preprocessors

    steps = feedback_preprocessors()
    assert steps.index(GetGrades) < steps.index(WithoutGradersLines) < steps.index(ClearHiddenTests)
    nb_path = next(p for p in NOTEBOOKS if p.name.startswith("12_"))
    source, exercises = nbgrader_notebook(nbformat.read(nb_path, as_version=4), nb_path.stem)
    own = "_course_integrity.ran('mine')  # the grader's own line: this cell's evidence that it ran"
    source.cells[exercises[0].solution_cell].source += f"\n{own}"  # a student's line (the guard reads it as tampering)
    handed_in = [c.source for c in source.cells]
    graded, _ = GuardSubmission().preprocess(nbformat.from_dict(source), {"nbgrader": {"student": "alice"}})
    test_cell = graded.cells[exercises[-1].check_cell]
    assert "_course_integrity.ran(" in test_cell.source and test_cell.source.startswith("raise AssertionError(")
    test_cell.outputs = [new_output("error", ename="AssertionError", evalue="Not graded: ...", traceback=[])]
    graded.cells.insert(0, new_code_cell("__import__('course_lib.classroom.witness')", metadata={"course_evidence": 1}))
    feedback, _ = WithoutGradersLines()(graded, {})
    assert len(feedback.cells) == len(handed_in)
    for cell, before in zip(feedback.cells, handed_in, strict=True):
        if cell.source.startswith("VARIANT = 'alice'  # written by the grader"):
            continue
        assert cell.source == before
    assert feedback.cells[exercises[-1].check_cell].outputs == test_cell.outputs
    assert feedback.cells[exercises[0].solution_cell].source.endswith(own)


# ------------------------------------------------------------------------------------------ the student release

SOLUTION = ("# BEGIN SOLUTION", "# END SOLUTION")
# The release is made of a commit: the notebooks committed at HEAD (one still being written is not in it yet).
COMMITTED = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", "notebooks/"], cwd=ROOT, capture_output=True,
                           text=True).stdout.split()  # fmt: skip
RELEASED = [p for p in NOTEBOOKS if f"notebooks/{p.name}" in COMMITTED]
# Their Chinese twins (notebooks/zh/), released beside them: the same code, the prose in Chinese.
COMMITTED_ZH = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", "notebooks/zh/"], cwd=ROOT, capture_output=True,
                              text=True).stdout.split()  # fmt: skip
RELEASED_ZH = [NOTEBOOKS_DIR / "zh" / p.name for p in RELEASED if f"notebooks/zh/{p.name}" in COMMITTED_ZH]
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")


def split_regions(source: str, begin: str, end: str) -> tuple[list[str], list[str]]:
    """The stripped lines inside ``begin`` ... ``end`` regions, and the lines outside them."""
    inside, outside, within = [], [], False
    for line in source.splitlines():
        s = line.strip()
        if s.startswith(begin) or s.startswith(end):
            within = s.startswith(begin)
            continue
        (inside if within else outside).append(s)
    return inside, outside


def text_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return "\n".join([c.source for c in nb.cells] + [str(o) for c in nb.cells for o in c.get("outputs", [])])
    return path.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def student_release(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "course"
    release.build(out, repository="teacher/course-student", branch="student")
    return out


def distinctive_solution_lines() -> set[str]:
    """Lines of the reference solutions that appear nowhere else in the full notebooks or the library: if one of them
    is in the release, a solution leaked."""
    solutions, elsewhere = set(), []
    for path in RELEASED:
        for cell in nbformat.read(path, as_version=4).cells:
            inside, outside = split_regions(cell.source, *SOLUTION)
            if cell.cell_type == "code":
                solutions |= {s for s in inside if len(s) >= 12 and not s.startswith("#")}
            elsewhere.append("\n".join(outside))
    elsewhere += [p.read_text(encoding="utf-8") for p in (ROOT / "course_lib").rglob("*.py")]
    others = "\n".join(elsewhere)
    return {s for s in solutions if s not in others}


def test_the_student_release_holds_no_solution_hidden_test_or_model_answer(student_release):
    files = [p for p in student_release.rglob("*") if p.is_file() and p.suffix in (".ipynb", ".py", ".md", ".txt")]
    texts = {p: text_of(p) for p in files}
    leaked = {p.name for p, text in texts.items() if p.suffix == ".ipynb" for marker in (*SOLUTION, *HIDDEN)
              if re.search(rf"^\s*{re.escape(marker)}", text, re.M)}  # fmt: skip
    assert not leaked, f"solution or hidden-test regions in {sorted(leaked)}"
    lines = distinctive_solution_lines()
    assert len(lines) > 100, "the scan found too few solution lines to mean anything"
    found = sorted({(p.name, s) for s in lines for p, text in texts.items() if s in text})
    assert not found, f"reference solutions in the release: {found[:5]}"
    for path in [*RELEASED, *RELEASED_ZH]:  # the written answers keep their question only
        full = nbformat.read(path, as_version=4)
        mine = nbformat.read(student_release / path.relative_to(ROOT), as_version=4)
        kept = "\n".join(c.source for c in mine.cells)
        for cell in full.cells:
            if "written-answer" in cell.metadata.get("tags", []):
                gone = [s for s in cell.source.splitlines() if len(s) > 40 and s not in kept]
                assert gone, f"{path.name}: a written answer's model answer is still there"
        assert not any(c.get("outputs") for c in mine.cells if c.cell_type == "code"), f"{path.name}: outputs kept"


def test_the_student_release_has_every_notebook_and_leaves_the_lecturers_files_out(student_release):
    assert sorted(p.name for p in (student_release / "notebooks").glob("*.ipynb")) == [p.name for p in RELEASED]
    zh = sorted(p.name for p in (student_release / "notebooks" / "zh").glob("*.ipynb"))
    assert len(RELEASED_ZH) == len(RELEASED) and zh == [p.name for p in RELEASED_ZH], "a Chinese twin is missing"
    assert (student_release / "docs" / "zh" / "glossary.md").is_file(), "the Chinese notebooks link to it"
    lecturers = ("docs/lecturers_guide.md", "docs/exam_bank.md", "docs/zh/lecturers_guide.md", "docs/zh/exam_bank.md")
    for absent in (*lecturers, "tests", "tools", "book", "Makefile", "locale"):
        assert not (student_release / absent).exists(), absent
    # nothing in it points at them either: a link to the guide keeps its text only (notebook 00 links to it)
    pages = [*(student_release / "notebooks").rglob("*.ipynb"), *student_release.rglob("*.md")]
    pointing = [p.name for p in pages for name in ("lecturers_guide.md", "exam_bank.md") if name in text_of(p)]
    assert not pointing, pointing
    assert (student_release / "course_lib" / "__init__.py").is_file() and (student_release / "pyproject.toml").is_file()


def test_the_student_release_opens_itself_in_colab_and_its_links_resolve(student_release):
    setup = colab_cell.cell_source("teacher/course-student", "student")
    readme = (student_release / "README.md").read_text(encoding="utf-8")
    for path in [*RELEASED, *RELEASED_ZH]:
        name = path.relative_to(ROOT).as_posix()  # notebooks/NN_x.ipynb, notebooks/zh/NN_x.ipynb
        cells = nbformat.read(student_release / name, as_version=4).cells
        assert [c.source for c in cells if c.get("id") == colab_cell.CELL_ID] == [setup], name
        link = f"https://colab.research.google.com/github/teacher/course-student/blob/student/{name}"
        assert f"]({name})" in readme and link in readme, name
    assert colab_cell.GITHUB_REPOSITORY not in readme
    broken = []
    for page in [*(student_release / "notebooks").rglob("*.ipynb"), *student_release.rglob("*.md")]:
        text = text_of(page) if page.suffix == ".md" else "\n".join(
            c.source for c in nbformat.read(page, as_version=4).cells if c.cell_type == "markdown")  # fmt: skip
        for target in re.findall(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)", text):
            if not (page.parent / target).exists():
                broken.append(f"{page.name} -> {target}")
    assert not broken, broken[:5]


def test_a_link_to_a_page_left_out_keeps_its_text(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "glossary.md").write_text("x", encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / "00.ipynb"
    text = "the [guide](../docs/lecturers_guide.md#grading), the [glossary](../docs/glossary.md#softmax), [web](https://x.org/a.md)"
    assert release.unlink_absent(text, page) == (
        "the guide, the [glossary](../docs/glossary.md#softmax), [web](https://x.org/a.md)"
    )
    assert not release.kept("docs/lecturers_guide.md") and not release.kept("docs/exam_bank.md")


def test_the_chinese_lecturers_pages_stay_out_of_the_release_even_if_docs_were_kept(monkeypatch):
    """The Chinese glossary and misconceptions page are in the release, the Chinese guide and exam bank are not, and
    stay out even if a later change kept the whole of docs/ or of docs/zh/."""
    assert release.kept("docs/zh/glossary.md") and release.kept("docs/zh/misconceptions.md")
    for name in ("docs/zh/exam_bank.md", "docs/zh/lecturers_guide.md"):
        assert not release.kept(name), name
    monkeypatch.setattr(release, "KEEP_FOLDERS", (*release.KEEP_FOLDERS, "docs"))
    assert release.kept("docs/zh/glossary.md"), "the monkeypatch keeps docs/"
    for name in ("docs/zh/exam_bank.md", "docs/zh/lecturers_guide.md", "docs/exam_bank.md"):
        assert not release.kept(name), name


def test_the_release_becomes_a_branch_without_touching_the_checkout(tmp_path, monkeypatch):
    repo, tree = tmp_path / "repo", tmp_path / "tree"
    (tree / "notebooks").mkdir(parents=True)
    (tree / "notebooks" / "01.ipynb").write_text("{}", encoding="utf-8")
    repo.mkdir()
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "t@example.org")

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q", "-b", "main")
    (repo / "full.txt").write_text("the solutions", encoding="utf-8")
    git("add", "full.txt")
    git("commit", "-q", "-m", "full")
    first = release.commit_branch(tree, "student", "release 1", root=repo)
    (tree / "README.md").write_text("hello", encoding="utf-8")
    second = release.commit_branch(tree, "student", "release 2", root=repo)
    assert git("ls-tree", "-r", "--name-only", "student").split() == ["README.md", "notebooks/01.ipynb"]
    assert git("rev-parse", "student^") == first != second
    assert git("rev-parse", "--abbrev-ref", "HEAD") == "main" and not git("status", "--porcelain")
    assert git("ls-files").split() == ["full.txt"]  # the checkout's index is untouched


def test_nbgrader_runs_with_the_environments_bin_first_on_path():
    env = release.nbgrader_environ({"PATH": os.pathsep.join(["/usr/bin", str(Path(sys.executable).parent)])})
    assert env["PATH"].split(os.pathsep) == [str(Path(sys.executable).parent), "/usr/bin"]


@needs_nbgrader
@pytest.mark.skipif(os.environ.get("COURSE_GRADING") != "1", reason="slow (about 10 s): COURSE_GRADING=1")
def test_an_assignment_is_made_where_the_environment_is_not_activated(tmp_path):
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # nbgrader's bin, and alembic's, are not on it
    course = tmp_path / "plain"
    release.assignment(NOTEBOOKS[4], course)  # the folder, its nbgrader_config.py, the source version, a gradebook
    config = course / "nbgrader_config.py"

    def plain_nbgrader() -> subprocess.CompletedProcess:  # a lecturer's own command in the course folder, no tool
        (course / "gradebook.db").unlink(missing_ok=True)
        return subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "a04", "--force"],
                              cwd=course, env=bare, capture_output=True, text=True)  # fmt: skip

    if shutil.which("alembic", path=bare["PATH"]) is None:  # without configure(), nbgrader alone fails there
        course_config = config.read_text(encoding="utf-8")
        config.write_text("c = get_config()  # noqa: F821\n", encoding="utf-8")
        done = plain_nbgrader()
        assert done.returncode != 0 and "alembic" in done.stdout + done.stderr
        config.write_text(course_config, encoding="utf-8")
    done = plain_nbgrader()  # the course's configure() puts this Python's bin first on nbgrader's PATH
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    released = release.assignment(NOTEBOOKS[4], tmp_path / "course", environ=bare)
    nb = nbformat.read(released / NOTEBOOKS[4].name, as_version=4)
    assert not any(m in c.source for c in nb.cells for m in (*SOLUTION, *HIDDEN))


@needs_nbgrader
def test_an_assignments_colab_cell_clones_the_student_releases_repository(tmp_path):
    """The assignment notebook's Colab cell is locked (a student cannot fix it): made with the release's repository
    (``make assignment RELEASE_REPOSITORY=...``), it clones that repository, where Colab finds course_lib; made
    without, the course's own (an eighteenth lecturer's trial found its placeholder there: no course_lib in Colab)."""
    released = release.assignment(NOTEBOOKS[4], tmp_path / "course", repository="uni-x/attention-2027", branch="main")
    nb = nbformat.read(released / NOTEBOOKS[4].name, as_version=4)
    cells = [c for c in nb.cells if c.get("id") == colab_cell.CELL_ID]
    assert len(cells) == 1 and cells[0].source == colab_cell.cell_source("uni-x/attention-2027", "main")
    assert "uni-x/attention-2027" in cells[0].source and colab_cell.GITHUB_REPOSITORY not in cells[0].source


@needs_nbgrader
def test_an_assignments_hidden_tests_draw_their_inputs_from_its_secret(tmp_path):
    """The hidden tests' seeds are the repository's, which students clone: a table of their inputs' answers passed
    them (a twentieth trial). ``make assignment`` derives them from a new random secret, or from SECRET=..."""

    def hidden_seeds(nb) -> list[str]:
        hidden = [
            c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("-hidden-tests")
        ]
        return re.findall(r"(?:\bseed=|manual_seed\(|set_seed\()(\d+)", "\n".join(hidden))

    def made(course: Path, **secret) -> list[str]:
        release.assignment(NOTEBOOKS[4], course, **secret)
        return hidden_seeds(nbformat.read(course / "source" / "a04" / NOTEBOOKS[4].name, as_version=4))

    nb = nbformat.read(NOTEBOOKS[4], as_version=4)
    public = hidden_seeds(nbgrader_notebook(nb, NOTEBOOKS[4].stem)[0])
    assert made(tmp_path / "a", secret="s") == hidden_seeds(nbgrader_notebook(nb, NOTEBOOKS[4].stem, secret="s")[0])
    kept = json.loads((tmp_path / "a" / "published" / "a04.json").read_text())  # for the report, once source/ is gone
    assert set(kept) == {NOTEBOOKS[4].stem} and any(
        "BEGIN SOLUTION" in c["source"] for c in kept[NOTEBOOKS[4].stem].values()
    )
    fresh = made(tmp_path / "b")
    assert public and len(fresh) == len(public) and not set(fresh) & set(public), (public, fresh)


@needs_nbgrader
def test_an_assignment_of_a_weeks_share_grades_only_its_exercises(tmp_path):
    """``make assignment EXERCISES=3 NAME=a06-week5``: nbgrader accepts the source version, the release has every
    exercise to do and no solution or hidden test, and only exercise 3 is graded (a twenty-first trial)."""
    nb_path = next(p for p in NOTEBOOKS if p.name.startswith("06_"))
    with pytest.warns(UserWarning, match="split_heads"):
        made = release.assignment(nb_path, tmp_path / "course", only=[3], name="a06-week5")
    assert made == tmp_path / "course" / "release" / "a06-week5"
    source = nbformat.read(tmp_path / "course" / "source" / "a06-week5" / nb_path.name, as_version=4)
    graded = [c.metadata["nbgrader"]["grade_id"] for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert graded == [f"{nb_path.stem}-exercise-3-tests", f"{nb_path.stem}-exercise-3-hidden-tests"]
    handed_out = nbformat.read(made / nb_path.name, as_version=4)
    assert not any(m in c.source for c in handed_out.cells for m in (*SOLUTION, *HIDDEN))
    to_do = [c for c in handed_out.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(to_do) == 4 and all("YOUR " in c.source for c in to_do)  # every exercise still to do
    with pytest.raises(ValueError, match="assignment name"):
        release.assignment(nb_path, tmp_path / "course", name="week 5!")


@needs_nbgrader
def test_an_assignment_made_without_the_release_repository_says_so(tmp_path, capsys):
    """A twentieth trial: ``make assignment`` as the README writes it (no RELEASE_REPOSITORY) made a Colab cell that
    clones the course's placeholder, silently; the command now warns, and says what to add."""
    assert release.main(["assignment", str(NOTEBOOKS[4]), "--course", str(tmp_path / "c1")]) == 0
    assert release.NO_REPOSITORY in capsys.readouterr().err and "RELEASE_REPOSITORY=" in release.NO_REPOSITORY
    assert release.main(["assignment", str(NOTEBOOKS[4]), "--course", str(tmp_path / "c2"), "--repository", "u/x"]) == 0
    assert release.NO_REPOSITORY not in capsys.readouterr().err
