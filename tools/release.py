"""What students receive, without solutions, and nbgrader run as the lecturer's guide says (issue 44).

``python -m tools.release student`` (``make release``) writes the **student release**: the repository the students
clone and the Colab links open. It is made of a commit (``--ref``, default HEAD), never of files being edited. It
holds ``course_lib``, ``data``, the student version of every notebook (:mod:`course_lib.classroom.student`: each
solution a stub, the hidden tests and the written answers' model answers gone, every output cleared) and of its
Chinese twin (``notebooks/zh/``, converted the same way), each with its Colab cell cloning the release itself, the
glossary, the misconceptions page and the running-and-testing page in English and the glossary and misconceptions
page in Chinese (the notebooks link to them), the packaging files, and a README with the release's Colab links in
both languages. It leaves out what a
student must not have or does not need: the full notebooks, the lecturer's guide (how the grading works and what it
cannot catch), the exam bank, the tests (their shortcut and attack sets included), the tools and the book; a link to
a page left out keeps its text and loses its target (:func:`unlink_absent`). ``course_lib`` goes whole, the checks'
code (``course_lib.classroom``) included: the notebooks import it, and the guard does not rely on its being
secret. Publish it as a repository (or a branch) of its own and keep the full repository private: ``--branch NAME``
also commits the tree to branch NAME of this repository (an orphan branch, or on top of the branch's last release),
without touching the working tree or the index; ``--archive FILE.zip`` zips it.

``python -m tools.release assignment notebooks/NN_x.ipynb --course DIR`` (``make assignment``) makes one nbgrader
assignment: an nbgrader course folder DIR (its ``nbgrader_config.py`` written the first time, as the guide gives it),
the notebook's nbgrader source version in ``DIR/source/aNN`` and ``nbgrader generate_assignment aNN``.
``python -m tools.release nbgrader --course DIR -- autograde aNN`` runs any other nbgrader command there.

nbgrader starts ``alembic`` by name when it creates its gradebook, so an nbgrader of a virtual environment that is
not activated fails with ``FileNotFoundError: 'alembic'``. Every nbgrader command this tool runs has the directory of
the Python running it (the virtual environment's ``bin``) first on ``PATH``: nothing needs activating.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

from course_lib.classroom.published import keep_solutions
from course_lib.classroom.release import nbgrader_environ
from course_lib.classroom.student import convert, exercise_numbers
from course_lib.paths import NOTEBOOKS_DIR, ROOT
from tools import colab_cell

# What the release holds, from the repository's tracked files: folders whole, single files by path.
KEEP_FOLDERS = ("course_lib", "data")
KEEP_FILES = ("LICENSE", "pyproject.toml", "environment.yml", "postBuild", ".gitignore", "docs/glossary.md",
              "docs/misconceptions.md", "docs/running_and_testing.md", "docs/zh/glossary.md",
              "docs/zh/misconceptions.md")  # fmt: skip
# The lecturer's, in both languages: never in a release, whatever is kept.
LEFT_OUT = ("docs/lecturers_guide.md", "docs/exam_bank.md", "docs/zh/lecturers_guide.md", "docs/zh/exam_bank.md")
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)#\s:]+)(?:#[^)\s]*)?\)")
NBGRADER_CONFIG = """from course_lib.classroom.release import configure

c = get_config()
configure(c)  # named stubs in the release, the guard in autograde, 600 s a cell
"""


def kept(name: str) -> bool:
    if name in LEFT_OUT:
        return False
    return name in KEEP_FILES or name.split("/", 1)[0] in KEEP_FOLDERS and "__pycache__" not in name


def unlink_absent(text: str, page: Path) -> str:
    """``text`` of the page ``page`` with every relative link to a file that does not exist (a page the release leaves
    out, such as the lecturer's guide) replaced by its link text."""
    return LINK.sub(lambda m: m[0] if (page.parent / m["target"]).exists() else m["text"], text)


def export(ref: str, into: Path, root: Path = ROOT) -> None:
    """The files of commit ``ref`` into the folder ``into``: a release is made of a commit, never of files that someone
    is editing in the working tree."""
    into.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "archive", "--format=tar", ref], cwd=root, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)


def readme(repository: str, branch: str, notebooks: list[str], chinese: list[str] = ()) -> str:
    """The release's README: how to open the notebooks (``notebooks``, and their Chinese twins ``chinese``, names in
    ``notebooks/zh/``), in Colab from the release's repository ``repository`` and ``branch``, or on one's machine."""

    def rows(folder: str, names: list[str], label: str) -> str:
        colab = f"https://colab.research.google.com/github/{repository}/blob/{branch}/{folder}"
        return "\n".join(f"| [{name[:2]}]({folder}/{name}) | [{label}]({colab}/{name}) |" for name in names)

    twins = "\nEvery notebook has a Chinese twin in `notebooks/zh/` (中文版见下文)." if chinese else ""
    zh = f"""
## 中文版

每个笔记本都有中文版，放在 `notebooks/zh/` 中：正文是中文，代码、练习和检查单元格与英文版一字不差，用哪种语言做练习，
检查的都是同样的答案。在 Colab 中打开：

| 笔记本 | Colab |
|---|---|
{rows("notebooks/zh", chinese, "在 Colab 中打开")}

在自己的电脑上（Python 3.10 或更新版本）：克隆本仓库，在仓库目录中运行

```
python -m venv .venv
.venv/bin/python -m pip install -e .
.venv/bin/jupyter lab notebooks/zh/00_start_here.ipynb
```

（也可以用 `conda env create -f environment.yml`）。从 00 号笔记本开始：它演示练习和检查是怎样工作的。
如果老师给了你一个 `VARIANT` 值（你的用户名），把它写进笔记本的 `VARIANT` 单元格，手算练习就会用你自己的一组数字。

[术语表](docs/zh/glossary.md) 收录了笔记本用到的每个术语及其英文原词。
"""
    zh = re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef])\n(?=[\u3000-\u9fff\uff00-\uffef])", "", zh)  # one line a paragraph
    return f"""# Self-attention from the ground up: the student edition

The course's notebooks with every exercise still to do. Each exercise is followed by a check cell: it fails until
your answer is right, and says what differs. The solutions are not in this repository.{twins}

**In Google Colab** (nothing to install): open a notebook below; its first cell installs the course's library.

| notebook | Colab |
|---|---|
{rows("notebooks", notebooks, "Open in Colab")}

**On your own machine** (Python 3.10 or newer): clone this repository, then in it

```
python -m venv .venv
.venv/bin/python -m pip install -e .
.venv/bin/jupyter lab notebooks/00_start_here.ipynb
```

(or `conda env create -f environment.yml`). Start with notebook 00: it shows how the exercises and their checks work.
If your lecturer gives you a `VARIANT` value (your user name), write it in the notebook's `VARIANT` cell: the by-hand
exercises then have numbers of your own. [The glossary](docs/glossary.md) defines every term the notebooks use.
{zh if chinese else ""}"""


def build(out: Path, *, repository: str = colab_cell.GITHUB_REPOSITORY, branch: str = "student", ref: str = "HEAD",
          root: Path = ROOT) -> list[Path]:  # fmt: skip
    """Write the student release of commit ``ref`` into ``out`` (emptied first); the paths written."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp)
        export(ref, full, root)
        for path in sorted(p for p in full.rglob("*") if p.is_file()):
            name = path.relative_to(full).as_posix()
            if kept(name):
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out / name)
                written.append(out / name)
        source = full / NOTEBOOKS_DIR.relative_to(ROOT)
        notebooks = convert(source, out / "notebooks")
        chinese = convert(source / "zh", out / "notebooks" / "zh") if (source / "zh").is_dir() else []
    for path in [*notebooks, *chinese]:  # the Colab cell clones the release, not the full course
        nb = point_colab(nbformat.read(path, as_version=4), repository, branch)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = unlink_absent(cell.source, path)
        nbformat.write(nb, path)
    for path in written:
        if path.suffix == ".md":
            path.write_text(unlink_absent(path.read_text(encoding="utf-8"), path), encoding="utf-8")
    names = [p.name for p in notebooks]
    (out / "README.md").write_text(readme(repository, branch, names, [p.name for p in chinese]), encoding="utf-8")
    return [*written, *notebooks, *chinese, out / "README.md"]


def archive(tree: Path, zip_path: Path) -> Path:
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            z.write(path, Path(tree.name) / path.relative_to(tree))
    return zip_path


def commit_branch(tree: Path, branch: str, message: str, root: Path = ROOT) -> str:
    """Commit ``tree`` as the next commit of ``branch`` (created if missing) through a private index: the working tree,
    the index and HEAD stay as they are. The new commit's id."""

    def git(*args: str, env: dict | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, check=True)
        return done.stdout.strip()

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": str(tree)}
        git("add", "-A", "--force", ".", env=env)
        tree_id = git("write-tree", env=env)
    parent = subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"], cwd=root,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    commit = git("commit-tree", tree_id, "-m", message, *(["-p", parent] if parent else []))
    git("update-ref", f"refs/heads/{branch}", commit)
    return commit


def run_nbgrader(course: Path, *args: str, environ: dict | None = None) -> subprocess.CompletedProcess:
    """``nbgrader ARGS`` in the course folder, with :func:`nbgrader_environ`."""
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=nbgrader_environ(environ),
                          capture_output=True, text=True)  # fmt: skip


def assignment_name(notebook: Path) -> str:
    """``a`` and the notebook's number, and ``zh`` for a notebook of the Chinese edition (``notebooks/zh/04_...``:
    ``a04zh``, beside the English ``a04``; its graded kernels then speak Chinese: classroom.messages)."""
    if not re.match(r"\d\d_", notebook.name):
        raise ValueError(f"{notebook}: an assignment is made of one of the course's notebooks, NN_name.ipynb")
    return f"a{notebook.name[:2]}" + ("zh" if notebook.parent.name == "zh" else "")


def point_colab(nb: nbformat.NotebookNode, repository: str, branch: str) -> nbformat.NotebookNode:
    """``nb`` with its Colab set-up cell cloning ``repository`` at ``branch`` (the student release's)."""
    for cell in nb.cells:
        if cell.get("id") == colab_cell.CELL_ID:
            cell.source = colab_cell.cell_source(repository, branch)
    return nb


NO_REPOSITORY = (
    f"warning: no RELEASE_REPOSITORY (--repository): the assignment's Colab cell clones {colab_cell.GITHUB_REPOSITORY},"
    " the course's own setting, and in Colab `import course_lib` fails until it names the student release's repository"
    " (make assignment ... RELEASE_REPOSITORY=<owner>/<name>)"
)


def assignment(notebook: Path, course: Path, *, points: float = 1, environ: dict | None = None,
               repository: str | None = None, branch: str = "student", secret: str | None = None,
               only: list[int] | None = None, name: str | None = None) -> Path:  # fmt: skip
    """An nbgrader assignment of ``notebook`` in the course folder (:func:`assignment_name`); its Colab cell, a
    locked cell, clones ``repository`` at ``branch`` where one is given (the student release's: where Colab finds
    ``course_lib``), else :data:`tools.colab_cell.GITHUB_REPOSITORY`. Its hidden tests' seeds come from ``secret``,
    by default a new random one (:func:`course_lib.classroom.student.convert`); ``only``: the exercises graded (a
    week's share), under the assignment name ``name`` (default :func:`assignment_name`)."""
    course.mkdir(parents=True, exist_ok=True)
    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(NBGRADER_CONFIG, encoding="utf-8")
    name = name or assignment_name(notebook)
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ValueError(f"an assignment name of letters, digits, '-' and '_', such as a12-week11: not {name!r}")
    source = course / "source" / name
    if source.exists():
        shutil.rmtree(source)
    for path in convert(notebook, source, nbgrader=True, points=points, secret=secret, only=only):
        if repository and path.suffix == ".ipynb":
            nbformat.write(point_colab(nbformat.read(path, as_version=4), repository, branch), path)
    done = run_nbgrader(course, "generate_assignment", name, "--force", environ=environ)
    if done.returncode:
        raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    keep_solutions(course, name)  # the class report compares with them once source/ has left the grading machine
    return course / "release" / name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.release", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    student = sub.add_parser("student", help="the student release: the course without solutions")
    student.add_argument("--out", type=Path, default=ROOT / "build" / "release")
    student.add_argument("--repository", default=colab_cell.GITHUB_REPOSITORY,
                         help="owner/name of the repository the release is published to (its Colab links)")  # fmt: skip
    student.add_argument("--colab-branch", default="student", help="the branch the Colab links and cells open")
    student.add_argument("--ref", default="HEAD", help="the commit to release (default: HEAD)")
    student.add_argument("--archive", type=Path, help="also a zip of the release")
    student.add_argument("--branch", help="also commit the release to this branch of the repository")
    one = sub.add_parser("assignment", help="one nbgrader assignment: source version and generate_assignment")
    one.add_argument("notebook", type=Path)
    one.add_argument("--course", type=Path, required=True, help="the nbgrader course folder (created if needed)")
    one.add_argument("--points", type=float, default=1)
    one.add_argument("--repository", help="owner/name of the student release's repository, which its Colab cell clones")
    one.add_argument("--colab-branch", default="student", help="the branch the Colab cell clones")
    one.add_argument("--secret", help="derive the hidden tests' seeds from this text (default: a new random one)")
    one.add_argument("--exercises", type=exercise_numbers, help="grade only these, e.g. 2 or 1,3 (a week's share of "
                     "a notebook); the others stay for students to do, ungraded")  # fmt: skip
    one.add_argument("--name", help="the assignment's name (default aNN), e.g. a12-week11 for a second share")
    any_ = sub.add_parser("nbgrader", help="any nbgrader command in the course folder, the environment's bin on PATH")
    any_.add_argument("--course", type=Path, required=True)
    any_.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "student":
        written = build(args.out, repository=args.repository, branch=args.colab_branch, ref=args.ref)
        print(f"student release: {len(written)} files in {args.out}")
        if args.archive:
            print(f"archive: {archive(args.out, args.archive)}")
        if args.branch:
            commit = commit_branch(args.out, args.branch, "Student release: the course without solutions")
            print(f"branch {args.branch}: {commit} (push it, e.g. git push <remote> {args.branch})")
    elif args.command == "assignment":
        made = assignment(args.notebook, args.course, points=args.points, repository=args.repository,
                          branch=args.colab_branch, secret=args.secret, only=args.exercises,
                          name=args.name)  # fmt: skip
        print(f"release: {made}")
        if not args.repository:  # (a twentieth trial: the README's command made a Colab cell that clones a placeholder)
            print(NO_REPOSITORY, file=sys.stderr)
    else:
        done = run_nbgrader(args.course, *[a for a in args.args if a != "--"])
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
