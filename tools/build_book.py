"""Build the course book (a static HTML site) and reveal.js slides from the executed notebooks.

    python -m tools.build_book                 # -> build/html/index.html, build/html/slides/NN_name.slides.html
                                               #    and the Chinese edition in build/html/zh/ (tools/book_zh.py)

It works offline and never re-executes a notebook: the book shows the outputs stored in the notebooks, which CI
re-computes and compares with strict nbval. Steps:

1. Stage a source tree in ``build/book_src`` that mirrors the repository's paths (so that the Colab and Binder
   buttons point at the right files): copies of ``notebooks/NN_*.ipynb``, ``docs/glossary.md`` when it exists, and a
   landing page ``index.md`` whose course map is the README's table (the one source of the map).
2. ``sphinx-build`` with MyST-NB and the Sphinx Book Theme (the Jupyter Book 1 stack), configured in ``book/conf.py``.
3. One slide deck per notebook with nbconvert's reveal.js exporter (template ``book/templates/course-reveal``).
4. Copy the JavaScript the pages need into ``build/html/_static`` (and ``build/html/zh/_static``): MathJax 2.7 (from
   the PyPI package ``jupyter-server-mathjax``) and reveal.js (from the PyPI package ``sphinx-revealjs``), so math and
   slides render without any CDN, from ``build/html`` served by any web server or opened as files.

Steps 1 to 4 are done for the Chinese twins too (``notebooks/zh/``, ``docs/zh/``: ``tools.book_zh``), into
``build/html/zh``, with ``language = "zh_CN"``; the two Sphinx builds run side by side (two processes). Every page of
both has a switch to the same page in the other language.

The helpers below are pure functions of text or notebooks; tests/test_book.py tests them without Sphinx.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt
from nbconvert.preprocessors import TagRemovePreprocessor

from course_lib.paths import ROOT
from tools import deck, sections, slide_tasks
from tools.book_pages import (  # noqa: F401 (re-exported: tests/test_book.py and tools/handouts.py use them here)
    REMOVE_TAG,
    WIDGET_STATE,
    WIDGET_VIEW,
    binder_url,
    book_notebook,
    colab_url,
    links_cell,
    myst_targets,
    notebook_title,
    remove_tagged_cells,
    slides_name,
    static_widgets,
)
from tools.colab_cell import REPOSITORY_URL

BOOK_DIR = ROOT / "book"  # conf.py, _static/, templates/
GLOSSARY = Path("docs") / "glossary.md"  # included in the book when it exists
# Pages of the book besides the notebooks, in the order of its sidebar (each included when it exists).
PAGES = [Path("docs") / name for name in ("lecturers_guide.md", "misconceptions.md", "running_and_testing.md")]
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
OUTPUT_ONLY_TAG = "slide-output-only"  # code cells whose slide shows the output (a figure, a table) without the code
CJK_FONT = ROOT / "data" / "fonts" / "NotoSansSC-CourseSubset.otf"  # book/conf.py copies it into _static/
# The README's status marks, in characters that common text fonts have (a machine without an emoji font, like
# CI's headless Chromium, draws ✅ as an empty box).
EMOJI_TEXT = {"✅": "✓", "❌": "✗"}
# MathJax 2.7 as the PyPI package jupyter-server-mathjax ships it: TeX input, HTML-CSS output with the STIX-Web
# fonts (the package has no TeX web fonts). One configuration for the book and the slides.
MATHJAX_SCRIPT = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"  # relative to _static/
# Its MathML output, bundled in that configuration and never chosen, still adds its styles to every page: six
# @font-face rules, numbered, for TeX fonts in fonts/HTML-CSS/TeX/otf, which the package lacks. The MathML MathJax
# keeps for screen readers and the notes' MathML use them (mathvariant double-struck, script, ...): every deck with
# an ℝ or a script letter asked for MathJax_AMS-Regular.otf or MathJax_Script-Regular.otf and got a 404 (a lecturer's
# trial). Each is pointed at the font of its name installed on the reader's machine, if any, and nothing is fetched.
TEX_FACES = {1: "Caligraphic", 2: "Caligraphic Bold", 3: "AMS", 4: "Script", 5: "Fraktur", 6: "Fraktur Bold"}
TEX_FACE_STYLES = {f"@font-face /*{n}*/": {"src": f"local('MathJax_{name}')"} for n, name in TEX_FACES.items()}
MATHJAX_CONFIG = {
    "tex2jax": {
        "inlineMath": [["$", "$"], ["\\(", "\\)"]],
        "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
        "processEscapes": True,
        "processEnvironments": True,
    },
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "NativeMML": {"styles": TEX_FACE_STYLES},
    "TeX": {"equationNumbers": {"autoNumber": "none"}},
    "messageStyle": "none",
    "menuSettings": {"zoom": "None"},
}


# --------------------------------------------------------------------------------------------- links


# ----------------------------------------------------------------------------------------- course map


def course_map_rows(readme: str, heading: str = "Course map") -> list[list[str]]:
    """The first table after the README heading ``## {heading}``: its header row, then its body rows.

    Parsed by markdown-it-py with GitHub's table rules (what a reader of the README sees on GitHub): each cell is
    its Markdown source, a short row is padded with empty cells, and a pipe that is part of a cell's text is
    written ``\\|`` again so the cell can go back into a table.
    """
    tokens = MarkdownIt("commonmark").enable("table").parse(readme)
    found = None
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2" and tokens[i + 1].content.strip() == heading:
            found = i
            break
    if found is None:
        raise ValueError(f"README has no '## {heading}' section")
    rows, row = [], None
    for token in tokens[found + 3 :]:
        if token.type == "heading_open" or (token.type == "table_close" and rows):
            break
        if token.type == "tr_open":
            row = []
            rows.append(row)
        elif token.type == "inline" and row is not None:
            row.append(token.content.replace("|", "\\|").strip())
    if len(rows) < 2:
        raise ValueError(f"README's '## {heading}' section has no Markdown table")
    return rows


def notebook_links(cell: str) -> list[str]:
    """Targets of the Markdown links to notebooks in a table cell: '[x](notebooks/00_a.ipynb)' -> the path."""
    return re.findall(r"\]\(([^)\s]+\.ipynb)\)", cell)


def landing_course_map(readme: str, existing: dict[str, str]) -> str:
    """The README's course map, with a last column of links (slides, Colab) for every notebook that exists.

    `existing` maps each notebook's path ('notebooks/04_x.ipynb') to its title. A row that does not link its
    notebook yet (the README marks it "planned") but whose number matches an existing notebook gets the link; an
    existing notebook without any row gets a row of its own at the end.
    """
    header, *body = course_map_rows(readme)
    name_col = next((i for i, h in enumerate(header) if h.strip().lower() == "notebook"), min(1, len(header) - 1))
    by_number = {Path(nb).name[:2]: nb for nb in existing}
    out = ["| " + " | ".join([*header, "open"]) + " |", "|" + "---|" * (len(header) + 1)]
    covered = set()

    def open_links(nb: str) -> str:
        slides = f'<a href="slides/{slides_name(nb)}">slides</a>'
        return f'{slides}&nbsp;·&nbsp;<a href="{html.escape(colab_url(nb))}">Colab</a>'

    for row in body:
        row = [EMOJI_TEXT.get(cell.strip(), cell) for cell in row] + [""] * (len(header) - len(row))
        links = [t for cell in row for t in notebook_links(cell) if t in existing]
        nb = links[0] if links else by_number.get(row[0].strip())
        if nb and not links and row[name_col].strip():
            row[name_col] = f"[{row[name_col].strip()}]({nb})"
        if nb:
            covered.add(nb)
        out.append("| " + " | ".join([*row, open_links(nb) if nb else ""]) + " |")
    for nb, title in existing.items():
        if nb not in covered:
            row = [""] * len(header)
            row[0], row[name_col] = Path(nb).name[:2], f"[{title or Path(nb).stem}]({nb})"
            out.append("| " + " | ".join([*row, open_links(nb)]) + " |")
    return "\n".join(out)


def readme_intro(readme: str) -> str:
    """The README's text between its title and its first second-level heading."""
    body = readme.split("\n", 1)[1] if readme.startswith("# ") else readme
    return body.split("\n## ", 1)[0].strip()


def readme_title(readme: str) -> str:
    first = readme.splitlines()[0] if readme else ""
    return first[2:].strip() if first.startswith("# ") else "Self-Attention from the Ground Up"


def landing_page(readme: str, notebooks: dict[str, str], glossary: str | None, chinese: bool = False) -> str:
    """index.md of the book: title, the README's introduction, the course map, ways in, and the hidden toctree.

    `notebooks` maps each notebook's path ('notebooks/00_start_here.ipynb') to its title; `chinese`: the book has a
    Chinese edition (tools/book_zh.py), linked under the introduction."""
    first = next(iter(notebooks), None)
    toc = "\n".join(str(Path(nb).with_suffix("")) for nb in notebooks)
    parts = [
        f"# {readme_title(readme)}",
        readme_intro(readme),
        *(
            [
                '**中文版 · Chinese edition:** <a href="zh/index.html">the whole course in Chinese</a>, every notebook '
                "with its slides and its Colab and Binder links (the switch at the top of every page leads to the same "
                "page in the other language)."
            ]
            if chinese
            else []
        ),
        "## Course map",
        landing_course_map(readme, notebooks),
        "Each chapter of this book is a notebook, shown with the outputs that CI re-computed; badges mark its core "
        "path (one lecture plus lab) and its deep dives. The **slides** are each notebook's core path as a reveal.js "
        "deck for lecturers (arrow keys move, `Esc` shows an overview, `S` opens the speaker view with the notes).",
        "## Run the notebooks yourself",
        f"- On your machine: clone <{REPOSITORY_URL}>, then `make lab` (JupyterLab) or `make test` (every check).\n"
        f'- In Google Colab: the <a href="{html.escape(colab_url(first) if first else "")}">Colab</a> '
        "links above open a notebook; its first code cell installs `course_lib` (Colab only).\n"
        f'- On Binder: <a href="{html.escape(binder_url(first))}">launch JupyterLab</a> '
        "in the browser, with everything installed.",
    ]
    pages = [page.as_posix() for page in PAGES if (ROOT / page).is_file()]
    guide = next((page for page in pages if page.endswith("lecturers_guide.md")), None)
    if guide:
        parts.append(
            f"**Teaching from it?** The [lecturer's guide]({guide}) plans a 14-week semester from the "
            "notebooks' core paths: lectures, labs, assessment, grading and project ideas."
        )
    if glossary:
        parts.append(f"The [glossary]({glossary}) (English / 中文) lists every term the course uses.")
    parts.append(f"```{{toctree}}\n:hidden:\n:caption: Notebooks\n\n{toc}\n```")
    reference = [Path(page).with_suffix("").as_posix() for page in [*pages, *([glossary] if glossary else [])]]
    if reference:
        parts.append("```{toctree}\n:hidden:\n:caption: Reference\n\n" + "\n".join(reference) + "\n```")
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------------- notebook transforms


def slides_notebook(nb: dict, name: str = "the notebook", follow: dict | None = None) -> dict:
    """The deck of a notebook shaped into core and deep dives (tools.sections): the cells its author marked with
    ``slideshow`` metadata, its other core prose as speaker notes, and code cells tagged ``slide-output-only``
    without their code. ``follow``: the English deck's ``slide_plan``, for a translation (tools.deck.shape)."""
    if not sections.is_sectioned(nb):
        raise ValueError(f"{name} has no section badges: shape it first (python -m tools.sections --write)")
    nb = remove_tagged_cells(static_widgets(nb))
    tasks = frozenset(i.removesuffix("-task") for i in (follow or {}).get("cells", {}) if i and i.endswith("-task"))
    shown = slide_tasks.with_tasks(sections.slides(nb), nb, tasks)  # each exercise's slide with the code it asks for
    node = nbformat.from_dict(deck.shape(shown, Path(name).name if name.endswith(".ipynb") else None, follow))
    TagRemovePreprocessor(remove_input_tags={OUTPUT_ONLY_TAG}).preprocess(node, {})
    return node


def twin_deck(rel: str, twin: str) -> dict:
    """The deck of the Chinese twin of notebook ``rel``, slide for slide its English deck (the same cells on the
    same slide numbers, tools.deck.shape's ``follow``), so that co-teachers in two languages share slide numbers. Its
    code is shaped on the English code, so that it is cut and laid out line for line as on the English slides, and
    its comments are then put in Chinese where they fit (tools.slide_comments)."""
    from tools import book_zh, slide_comments

    english = json.loads((ROOT / rel).read_text(encoding="utf-8"))
    plan = slides_notebook(english, rel).metadata.slide_plan
    chinese = json.loads((ROOT / twin).read_text(encoding="utf-8"))
    code = {c.get("id"): "".join(c["source"]) for c in english["cells"] if c["cell_type"] == "code"}
    twin_code = {c.get("id"): "".join(c["source"]) for c in chinese["cells"] if c["cell_type"] == "code"}
    for cell in chinese["cells"]:
        if cell["cell_type"] == "code" and cell.get("id") in code:
            cell["source"] = code[cell["id"]]
    shaped = slides_notebook(book_zh.staged_twin(chinese, twin), rel, plan)
    return nbformat.from_dict(slide_comments.translated(shaped, code, twin_code))


# ------------------------------------------------------------------------------------------------ build


def vendor_dirs() -> dict[str, Path]:
    """The JavaScript libraries copied into _static/, found inside their PyPI packages."""
    import jupyter_server_mathjax
    import sphinx_revealjs

    dirs = {
        "mathjax": Path(jupyter_server_mathjax.__file__).parent / "static",
        "revealjs": Path(sphinx_revealjs.__file__).parent / "_static" / "revealjs",
    }
    for name, path in dirs.items():
        if not path.is_dir():
            raise FileNotFoundError(f"{name}: expected its files in {path}")
    return dirs


def stage(src: Path) -> list[str]:
    """Write the Sphinx source tree into `src`; return the staged notebooks' paths (relative, 'notebooks/...')."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    notebooks = {}
    for path in sorted((ROOT / "notebooks").glob(NOTEBOOK_GLOB)):
        rel = f"notebooks/{path.name}"
        nb = json.loads(path.read_text(encoding="utf-8"))
        (src / rel).write_text(json.dumps(book_notebook(nb, rel), indent=1, ensure_ascii=False), encoding="utf-8")
        notebooks[rel] = notebook_title(nb)
    for page in PAGES:
        if (ROOT / page).is_file():
            (src / page).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / page, src / page)
    glossary = None
    if (ROOT / GLOSSARY).is_file():
        (src / GLOSSARY).parent.mkdir(parents=True, exist_ok=True)
        (src / GLOSSARY).write_text(myst_targets((ROOT / GLOSSARY).read_text(encoding="utf-8")), encoding="utf-8")
        glossary = GLOSSARY.as_posix()
    else:
        print(f"note: {GLOSSARY} not found; the book has no glossary page")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    from tools import book_zh

    chinese = bool(book_zh.twins())
    (src / "index.md").write_text(landing_page(readme, notebooks, glossary, chinese), encoding="utf-8")
    return list(notebooks)


def build_slides(notebooks: list[str], out: Path, twins: dict[str, str] | None = None) -> None:
    """One deck per notebook in ``out/slides``. ``twins`` (Chinese edition): staged path -> the twin it is made of."""
    import nbformat
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(
        language_code="zh-CN" if twins else "en",
        extra_template_basedirs=[str(BOOK_DIR / "templates")],
        template_name="course-reveal",
        reveal_url_prefix="../_static/revealjs",
        reveal_theme="white",  # "simple", the default, loads Google fonts; "white" has its fonts in reveal.js
        # "slide", the default, moved each slide in from below (a sub-slide) or the side, under the foot (the running
        # head, the link to the book) that stays put: 10's learning curves, 6 px above the running head at rest, ran
        # their axis label through it on their way in (a lecturer's trial). A fade draws each slide where it rests.
        reveal_transition="fade",
        reveal_width="1280",  # a 16:9 canvas, drawn 1:1 on a 1280x720 projector
        reveal_height="720",
        reveal_number="c/t",  # slide numbers
        exclude_input_prompt=True,  # no "In [31]:" on a slide
        exclude_output_prompt=True,
    )
    (out / "slides").mkdir(parents=True, exist_ok=True)
    for rel in notebooks:
        source = (twins or {}).get(rel, rel)
        nb = twin_deck(rel, source) if twins else slides_notebook(json.loads((ROOT / rel).read_text("utf-8")), rel)
        resources = {
            "course": {
                "mathjax_url": f"../_static/{MATHJAX_SCRIPT}",
                "mathjax_config": json.dumps(MATHJAX_CONFIG),
                "book_url": f"../{Path(rel).with_suffix('.html').as_posix()}",
                "static_url": "../_static/",
                "cjk_font_url": f"../_static/{CJK_FONT.name}" if CJK_FONT.is_file() else "",
                "book_link_text": "书中本章" if twins else "the book chapter",
            }
        }
        body, _ = exporter.from_notebook_node(nbformat.reads(json.dumps(nb), as_version=4), resources=resources)
        (out / "slides" / slides_name(rel)).write_text(body, encoding="utf-8")


def copy_vendor(out: Path) -> None:
    for name, path in vendor_dirs().items():
        shutil.copytree(path, out / "_static" / name, dirs_exist_ok=True)


def sphinx(src: Path, out: Path, warnings: Path, chinese: bool = False) -> subprocess.Popen:
    """Start ``sphinx-build`` of a staged tree (from the root: book/conf.py imports tools.build_book as we do). The
    Chinese build (``-t zh``) keeps its doctrees, and MyST-NB its jupyter_execute folder, beside ``out``'s parent,
    out of the English book."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(BOOK_DIR), str(src), str(out)]
    cmd += ["-w", str(warnings)] + (["-t", "zh", "-d", str(out.parent / "doctrees")] if chinese else [])
    return subprocess.Popen(cmd, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    from tools import book_zh

    parser = argparse.ArgumentParser(prog="python -m tools.build_book", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "book_src")
    parser.add_argument("--no-slides", action="store_true")
    parser.add_argument("--no-chinese", action="store_true", help="the English book only")
    args = parser.parse_args(argv)
    args.out, args.src = args.out.resolve(), args.src.resolve()  # Sphinx runs in the repository root
    t0 = time.perf_counter()
    vendor_dirs()  # fail early when the book extra is not installed
    notebooks = stage(args.src)
    if not notebooks:
        print("no notebooks to build", file=sys.stderr)
        return 1
    zh_src, zh_build = args.src.parent / f"{args.src.name}_{book_zh.ZH}", args.out.parent / f"book_{book_zh.ZH}"
    twins = [] if args.no_chinese else book_zh.stage(zh_src, PAGES, GLOSSARY)
    for folder in (args.out, zh_build):
        if folder.exists():
            shutil.rmtree(folder)
    warnings = args.out.parent / "book-warnings.txt"
    zh_warnings = args.out.parent / f"book-warnings-{book_zh.ZH}.txt"
    zh_warnings.unlink(missing_ok=True)
    builds = [sphinx(args.src, args.out, warnings)]
    if twins:
        builds.append(sphinx(zh_src, zh_build / "html", zh_warnings, chinese=True))
    for build in builds:
        if build.wait():
            raise subprocess.CalledProcessError(build.returncode, build.args)
    copy_vendor(args.out)
    if twins:
        shutil.move(zh_build / "html", args.out / book_zh.ZH)
        copy_vendor(args.out / book_zh.ZH)
    if not args.no_slides:
        build_slides(notebooks, args.out)
        if twins:
            build_slides([rel for _, rel in twins], args.out / book_zh.ZH, {rel: twin for twin, rel in twins})
    logs = [log for log in (warnings, zh_warnings) if log.exists()]
    n_warn = sum(len([line for line in log.read_text().splitlines() if "WARNING" in line]) for log in logs)
    print(
        f"book: {args.out / 'index.html'} ({len(notebooks)} notebooks"
        f"{', slides in ' + str(args.out / 'slides') if not args.no_slides else ''}"
        f"{f'; Chinese: {len(twins)} notebooks in ' + str(args.out / book_zh.ZH) if twins else ''}); "
        f"{n_warn} Sphinx warning(s){' in ' + ', '.join(map(str, logs)) if n_warn else ''}; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
