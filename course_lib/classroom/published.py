"""Answers that are the course's published solution: a section of the class report, not a flag.

The course's repository is public, and the notebooks in it hold every exercise's solution (the student release has
none, but the repository is a search away). Lecturers' trials handed in reference answers copied as they stand, and
with their local names changed: full marks, nothing refused, nothing flagged, since the code is right and calls
nothing it may not. No reading can tell a copy from the same answer written independently, so
:func:`published_copies` only lists, for the class report, each answer that is the published solution:

- a code answer whose syntax tree is the solution's once the names the cell binds (its variables, arguments and
  functions) are numbered in the order they appear: comments, layout and renamed locals aside. Where the solution
  holds fewer than :data:`AT_LEAST` statements (49 of the course's 68 code answers), many honest students write it
  the same way, so such an answer is listed only where it also keeps one of the solution's own comments of
  :data:`COMMENT_WORDS` words or more, word for word (a twenty-second trial's short copies, renamed, went unlisted);
  a short copy stripped of its comments cannot be told from an honest answer;
- a written answer that contains the model answer word for word (spacing aside), where that has at least
  :data:`AT_LEAST_CHARACTERS` characters.

The solutions are read from ``source/``, or where the guide has moved that off the grading machine, from the copy
``make assignment`` keeps in ``published/`` (:func:`keep_solutions`). The lecturer opens the
ones listed, as for a flag, and decides.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import nbformat

__all__ = [
    "AT_LEAST",
    "AT_LEAST_CHARACTERS",
    "COMMENT_WORDS",
    "keep_solutions",
    "published_copies",
    "report_sections",
    "same_code",
    "shared_answers",
]

AT_LEAST = 6  # statements in a solution cell (nested ones included) before an identical answer is listed
AT_LEAST_CHARACTERS = 80  # of a written answer's model answer
COMMENT_WORDS = 4  # words (of two letters or more) in a comment that a shorter copy keeping it is listed by
_MODEL = re.compile(r"#+ BEGIN SOLUTION\s*\n(.*?)\n\s*#+ END SOLUTION", re.S)
_MARKING = re.compile(r"\*\*(?:Marking|评分)")  # where the model answer ends and how it is marked begins


def _canonical(source: str) -> str | None:
    """The syntax tree of a cell's code as text, each name the cell binds replaced by its number of appearance; or
    ``None`` if it does not parse (IPython's ``%`` lines included)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    bound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    numbers: dict[str, str] = {}
    for node in ast.walk(tree):
        for field in ("id", "arg", "name"):
            name = getattr(node, field, None)
            if isinstance(name, str) and name in bound and not isinstance(node, ast.alias):
                setattr(node, field, numbers.setdefault(name, f"_{len(numbers)}"))
    return ast.dump(tree)


def same_code(answer: str, solution: str) -> bool:
    """Whether ``answer`` is ``solution`` but for comments, layout and the names it binds."""
    return (canonical := _canonical(solution)) is not None and _canonical(answer) == canonical


def _comments(source: str) -> list[str]:
    """The comments of some code that have :data:`COMMENT_WORDS` words or more, each as its words (:func:`_tokens`)
    joined by spaces; read by Python's tokenizer, line by line where the code does not tokenize."""
    try:
        texts = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        texts = re.findall(r"#(.*)$", source, re.M)
    words = [" ".join(_tokens(text)) for text in texts]
    return [w for w in words if w.count(" ") + 1 >= COMMENT_WORDS]


def _keeps_a_comment(answer: str, solution: str) -> bool:
    """Whether a comment of ``answer`` holds one the solution wrote between its markers, word for word."""
    written = [f" {c} " for c in _comments(answer)]
    return any(f" {c} " in w for region in _MODEL.findall(solution) for c in _comments(region) for w in written)


def _statements(source: str) -> int:
    try:
        return sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(source)))
    except (SyntaxError, ValueError):
        return 0


def _words(text: str) -> str:
    return " ".join(text.split())


def _tokens(text: str) -> list[str]:
    """A text's words as a reader copies them from the page or the source alike: links' text only, no formula
    commands or single letters (``$D \\times D$`` and "D × D" both give none), lower case; Chinese by character."""
    text = re.sub(r"\\[A-Za-z]+", " ", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text))
    return re.findall(r"[a-z]{2,}|[\u4e00-\u9fff]", text.lower())


def _shingles(tokens: list[str], n: int = 8) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(max(len(tokens) - n + 1, 0))}


def _copied(answer: dict, solution: dict) -> bool:
    """Code: the solution but for comments, layout and names. A written answer: 80 % or more of the model answer's
    runs of eight words (its marking left out) in the answer (a twenty-first trial's copy, as the page reads)."""
    if solution["cell_type"] == "code":
        long = _statements(solution["source"]) >= AT_LEAST
        return same_code(answer["source"], solution["source"]) and (
            long or _keeps_a_comment(answer["source"], solution["source"])
        )
    model = _MODEL.search(solution["source"])
    model = _MARKING.split(model[1])[0] if model else ""
    runs = _shingles(_tokens(model))
    return len(_words(model)) >= AT_LEAST_CHARACTERS and len(runs & _shingles(_tokens(answer["source"]))) >= 0.8 * len(
        runs
    )


def _answers(path: Path) -> dict[str, dict]:
    """{grade id: cell} of a notebook's answer cells (nbgrader's ``solution`` cells, code or written)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError, nbformat.reader.NotJSONError):
        return {}
    return {cell.metadata["nbgrader"]["grade_id"]: cell for cell in nb.cells
            if cell.get("metadata", {}).get("nbgrader", {}).get("solution")
            and cell.metadata["nbgrader"].get("grade_id")}  # fmt: skip


def _read(folder: Path) -> dict[str, dict[str, dict]]:
    return {path.stem: {gid: {"cell_type": c.cell_type, "source": c.source} for gid, c in _answers(path).items()}
            for path in sorted(folder.glob("*.ipynb"))}  # fmt: skip


def keep_solutions(root: str | Path, assignment: str) -> Path:
    """Write ``published/ASSIGNMENT.json`` in the course folder ``root``: the answer cells of ``source/ASSIGNMENT``,
    the solutions the report compares with once ``source/`` has left the grading machine. ``make assignment`` calls
    it; the solutions are the public repository's, and a graded notebook reads nothing of the course folder."""
    root = Path(root)
    path = root / "published" / f"{assignment}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(_read(root / "source" / assignment), indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def _solutions(root: Path, assignment: str) -> dict[str, dict[str, dict]]:
    """{notebook name: {grade id: {"cell_type", "source"}}} of the published solutions: ``source/``'s, else those
    :func:`keep_solutions` kept."""
    if (root / "source" / assignment).is_dir():
        return _read(root / "source" / assignment)
    kept = root / "published" / f"{assignment}.json"
    return json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else {}


def published_copies(root: str | Path, assignment: str, student: str) -> list[str]:
    """The grade ids of ``student``'s answer cells in ``assignment`` that are the published solution: code that is
    the solution but for comments, layout and the names it binds (a solution of :data:`AT_LEAST` statements or more;
    a shorter one where the answer keeps one of its comments), or a written answer holding the model answer."""
    root = Path(root)
    copies = []
    for name, solutions in _solutions(root, assignment).items():
        handed_in = _answers(root / "submitted" / student / assignment / f"{name}.ipynb")
        for gid, solution in solutions.items():
            answer = handed_in.get(gid)
            if answer is not None and answer.cell_type == solution["cell_type"] and _copied(answer, solution):
                copies.append(gid)
    return copies


def _key(cell, released) -> tuple[str | None, bool]:
    """What two students' answer cells share when they are the same answer, and whether that says anything: code of
    :data:`AT_LEAST` statements or more, or shorter code with the same comments of :data:`COMMENT_WORDS` words (those
    the released cell holds aside); a written answer of :data:`AT_LEAST_CHARACTERS` characters."""
    if cell.cell_type != "code":
        return _words(cell.source), len(_words(cell.source)) >= AT_LEAST_CHARACTERS
    canonical = _canonical(cell.source)
    if _statements(cell.source) >= AT_LEAST or canonical is None:
        return canonical, True
    own = [c for c in _comments(cell.source) if c not in _comments(released.source if released else "")]
    return canonical + "\n# " + "\n# ".join(own), bool(own)


def shared_answers(root: str | Path, assignment: str) -> list[tuple[str, list[str]]]:
    """(grade id, the students) for each answer handed in alike by several students: code of :data:`AT_LEAST`
    statements or more that is the same but for comments, layout and the names it binds (shorter code: with the same
    comments of :data:`COMMENT_WORDS` words or more, those of the released cell aside), or a written answer of
    :data:`AT_LEAST_CHARACTERS` characters or more that is the same word for word (a twenty-second trial handed in
    another student's notebook with its VARIANT changed: full marks, nothing shown)."""
    root = Path(root)
    groups: dict[tuple[str, str], list[str]] = {}
    for folder in sorted(p for p in (root / "submitted").glob(f"*/{assignment}") if p.is_dir()):
        for path in sorted(folder.glob("*.ipynb")):
            handed_out = _answers(root / "release" / assignment / path.name)  # an answer left as released: none
            for gid, cell in _answers(path).items():
                if gid in handed_out and _words(handed_out[gid].source) == _words(cell.source):
                    continue
                key, long = _key(cell, handed_out.get(gid))
                if key is not None and long:
                    groups.setdefault((gid, key), []).append(folder.parent.name)
    return [(gid, students) for (gid, _), students in groups.items() if len(students) > 1]


def report_sections(copies: dict[str, list[str]], shared: list[tuple[str, list[str]]]) -> list[str]:
    """The class report's two sections (Markdown lines), where there is something to list: the published solution
    handed in (``copies``: per student, the answer cells), the same answer in several submissions (``shared``)."""
    lines = []
    copies = {s: where for s, where in copies.items() if where}
    if copies:
        lines += [
            "",
            f"## The published solution handed in, not flagged: {len(copies)}",
            "",
            f"Answer cells that are the course's solution (the course's public repository holds it): code of "
            f"{AT_LEAST} or more statements, comments, layout and the names it binds aside (shorter code where it "
            f"also keeps one of the solution's comments of {COMMENT_WORDS} words or more), or a written answer "
            "holding the model answer word for word. Copied, or written the same way? Open them and decide.",
            "",
        ]
        lines += [f"- {student}: " + ", ".join(where) for student, where in copies.items()]
    if shared:
        lines += [
            "",
            f"## The same answer in several submissions, not flagged: {len(shared)}",
            "",
            "Answer cells alike in these submissions but for comments, layout and names (code of "
            f"{AT_LEAST} or more statements; shorter code with the same comments of {COMMENT_WORDS} words or more; "
            "written answers word for word): worked together, or copied?",
            "",
        ]
        lines += [f"- {gid}: " + ", ".join(students) for gid, students in shared]
    return lines  # fmt: skip
