"""The Colab cell of every notebook (tools.colab_cell) and the book builder's pure helpers (tools.build_book).

These run in `make test` with the dev extra only: no Sphinx, no browser. The build itself and the pages in a real
browser are tested by `make e2e` (tests/e2e/).
"""

import ast
import importlib.util
import io
import re
import subprocess
import sys
import types
from contextlib import redirect_stdout
from unittest import mock

import nbformat
import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT
from tools import build_book, colab_cell, sections
from tools.colab_cell import BRANCH, GITHUB_REPOSITORY

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


# ------------------------------------------------------------------------------------------ the Colab cell


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.name for nb in NOTEBOOKS])
def test_every_notebook_starts_with_the_colab_cell(nb):
    problems = colab_cell.check(nbformat.read(nb, as_version=4))
    assert not problems, f"{nb.name}: {'; '.join(problems)} -> python -m tools.colab_cell {nb.relative_to(ROOT)}"


def toy_notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def md(text):
    return nbformat.v4.new_markdown_cell(text)


def code(text):
    return nbformat.v4.new_code_cell(text)


def test_apply_inserts_before_the_first_code_cell_and_is_idempotent():
    nb = toy_notebook(md("# Title"), md("## Objectives"), code("import torch"), code("x = 1"))
    assert colab_cell.check(nb) == ["has no Colab cell"]
    once, what = colab_cell.apply(nb)
    assert what == "inserted"
    assert [c.cell_type for c in once.cells] == ["markdown", "markdown", "code", "code", "code"]
    assert once.cells[2].source == colab_cell.cell_source() and once.cells[2].id == colab_cell.CELL_ID
    assert "remove-cell" in once.cells[2].metadata.tags
    assert colab_cell.check(once) == []
    twice, what = colab_cell.apply(once)
    assert what == "unchanged" and twice == once
    assert len(nb.cells) == 4, "apply must not modify its input"


def test_apply_moves_updates_and_deduplicates():
    cell = colab_cell.make_cell()
    misplaced = toy_notebook(md("# T"), code("import torch"), cell)
    assert colab_cell.check(misplaced) == ["its Colab cell is not the first code cell"]
    moved, what = colab_cell.apply(misplaced)
    assert what == "moved" and colab_cell.check(moved) == [] and len(moved.cells) == 3

    stale = colab_cell.make_cell(colab_cell.cell_source("someone/else", "dev"))
    stale.metadata["execution"] = {"iopub.status.idle": "2026-01-01"}  # nbconvert's timings may stay
    stale.execution_count = 1
    nb = toy_notebook(md("# T"), stale, code("import torch"))
    assert colab_cell.check(nb) == ["its Colab cell's source differs from what tools.colab_cell writes (run it)"]
    updated, what = colab_cell.apply(nb)
    assert what == "updated" and colab_cell.check(updated) == []
    assert updated.cells[1].execution_count == 1, "an update keeps the cell's place and execution count"

    doubled = toy_notebook(colab_cell.make_cell(), code("x = 1"), colab_cell.make_cell())
    assert colab_cell.check(doubled) == ["has 2 Colab cells"]
    fixed, _ = colab_cell.apply(doubled)
    assert colab_cell.check(fixed) == [] and len(fixed.cells) == 2


def test_check_rejects_outputs_and_missing_tags():
    cell = colab_cell.make_cell()
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    assert "outside Colab it must print nothing" in colab_cell.check(toy_notebook(cell))[0]
    cell = colab_cell.make_cell()
    cell.metadata["tags"] = []
    assert "tags" in colab_cell.check(toy_notebook(cell))[0]


def test_the_cell_uses_the_configured_repository_and_branch():
    source = colab_cell.cell_source()
    ast.parse(source)
    assert f'"https://github.com/{GITHUB_REPOSITORY}"' in source
    assert f'"--branch={BRANCH}"' in source
    assert all(len(line) <= 120 for line in source.splitlines())


def test_outside_colab_the_cell_does_nothing_and_prints_nothing():
    assert "google.colab" not in sys.modules
    path_before = list(sys.path)
    out = io.StringIO()
    with mock.patch.object(subprocess, "run") as run, redirect_stdout(out):
        exec(colab_cell.cell_source(), {})
    assert run.call_count == 0 and out.getvalue() == "" and sys.path == path_before


@pytest.mark.parametrize("lacks", [(), ("sacrebleu",), ("tokenizers", "sacrebleu")], ids=lambda x: "lacks " + repr(x))
def test_in_colab_the_cell_clones_installs_and_puts_the_clone_on_the_path(lacks):
    fake = types.ModuleType("google.colab")
    path_before = list(sys.path)
    find_spec = importlib.util.find_spec
    with (
        mock.patch.dict(sys.modules, {"google.colab": fake}),
        mock.patch.object(subprocess, "run") as run,
        mock.patch("os.path.isdir", return_value=False),
        mock.patch("importlib.util.find_spec", lambda name, *a: None if name in lacks else find_spec(name, *a)),
    ):
        exec(colab_cell.cell_source("me/course", "dev"), {})
    try:
        clone, install, *extra = (call.args[0] for call in run.call_args_list)
        assert clone[:2] == ["git", "clone"] and "--branch=dev" in clone
        assert clone[-2:] == ["https://github.com/me/course", "/content/course"]
        assert install[1:] == ["-m", "pip", "install", "--quiet", "--no-deps", "-e", "/content/course"]
        # what Colab lacks of pyproject's dependencies, with its floor, and only that
        wanted = [spec for spec in colab_cell.COLAB_INSTALLS if spec.split(">")[0] in lacks]
        assert extra == ([[sys.executable, "-m", "pip", "install", "--quiet", *wanted]] if lacks else [])
        assert all(call.kwargs.get("check") for call in run.call_args_list), "a failed step must raise"
        assert sys.path[0] == "/content/course"
    finally:
        sys.path[:] = path_before


# ------------------------------------------------------------------------------------- the book's helpers


README = (ROOT / "README.md").read_text(encoding="utf-8")
EXISTING = {f"notebooks/{nb.name}": build_book.notebook_title(nbformat.read(nb, as_version=4)) for nb in NOTEBOOKS}


def test_course_map_cells_split_as_github_splits_them():
    rows = build_book.course_map_rows("## Course map\n\n| a | b | c |\n|---|---|---|\n| 1 | `x \\| y` | z |\n| 2 |\n")
    assert rows == [["a", "b", "c"], ["1", "`x \\| y`", "z"], ["2", "", ""]], "escaped pipes kept, short rows padded"
    # GitHub splits at a bare pipe even inside backticks; so do we (the README must escape it)
    assert build_book.course_map_rows("## Course map\n\n| a | b |\n|---|---|\n| `x | y` |\n")[1] == ["`x", "y`"]


def test_course_map_is_read_from_the_readme():
    header, *body = build_book.course_map_rows(README)
    assert "notebook" in [h.lower() for h in header]
    assert len(body) >= len(NOTEBOOKS), "the README's course map has fewer rows than there are notebooks"
    with pytest.raises(ValueError, match="Course map"):
        build_book.course_map_rows("# Title\n\nno map here\n")
    with pytest.raises(ValueError, match="no Markdown table"):
        build_book.course_map_rows("## Course map\n\njust text\n\n## Next\n\n| a |\n|---|\n| 1 |\n")


def test_landing_course_map_links_every_existing_notebook():
    readme = (
        "# T\n\n## Course map\n\n| # | notebook | what | status |\n|---|---|---|---|\n"
        "| 00 | [Start](notebooks/00_a.ipynb) | intro | ✅ |\n| 01 | Second | more | planned |\n"
        "| 02 | Third | later | planned |\n\nAfter.\n"
    )
    existing = {"notebooks/00_a.ipynb": "Start", "notebooks/01_b.ipynb": "Second", "notebooks/05_e.ipynb": "Extra"}
    lines = build_book.landing_course_map(readme, existing).splitlines()
    assert lines[0] == "| # | notebook | what | status | open |"
    assert 'href="slides/00_a.slides.html"' in lines[2] and "colab.research.google.com" in lines[2]
    assert "| ✓ |" in lines[2] and "✅" not in lines[2], "status emoji become text characters"
    assert "[Second](notebooks/01_b.ipynb)" in lines[3], "a planned row gets the link once its notebook exists"
    assert lines[4].endswith("|  |"), "no links for a notebook that does not exist"
    assert "[Extra](notebooks/05_e.ipynb)" in lines[5], "an existing notebook without a row gets one"
    assert len(lines) == 6


def test_landing_page_from_the_real_readme():
    page = build_book.landing_page(README, EXISTING, "docs/glossary.md")
    assert page.startswith("# ") and "## Course map" in page
    for nb in EXISTING:
        assert f"slides/{build_book.slides_name(nb)}" in page
        assert nb.removesuffix(".ipynb") in page.split("{toctree}")[1], f"{nb} is not in the toctree"
    assert "docs/glossary" in page
    assert "docs/glossary" not in build_book.landing_page(README, EXISTING, None)


def test_notebook_title():
    assert build_book.notebook_title({"cells": [md("# 03 · Query, key, value\n\ntext")]}) == "Query, key, value"
    assert build_book.notebook_title({"cells": [code("# not a title")]}) == ""


def tqdm_notebook():
    """A notebook with one saved tqdm progress bar, as nbconvert stores it (view in the output, state in metadata)."""
    nb = toy_notebook(code("fit(...)"))
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/plain": "train:   0%|          | 0/5 [00:00<?, ?it/s]",
                build_book.WIDGET_VIEW: {"model_id": "box", "version_major": 2, "version_minor": 0},
            },
        )
    ]
    state = {
        "box": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_pre", "IPY_MODEL_bar", "IPY_MODEL_post"]}},
        "pre": {"model_name": "HTMLModel", "state": {"value": "train: 100%"}},
        "bar": {"model_name": "FloatProgressModel", "state": {"value": 5.0, "max": 5.0, "bar_style": "success"}},
        "post": {"model_name": "HTMLModel", "state": {"value": " 5/5 [00:01&lt;00:00, loss=0.1]"}},
    }
    nb.metadata["widgets"] = {build_book.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    return nb


def test_static_widgets_show_the_final_state_of_a_progress_bar():
    nb = tqdm_notebook()
    out = build_book.static_widgets(nb)
    data = out["cells"][0]["outputs"][0]["data"]
    assert build_book.WIDGET_VIEW not in data and "widgets" not in out["metadata"]
    assert "train: 100%" in data["text/html"] and 'value="5.0" max="5.0"' in data["text/html"]
    assert "loss=0.1" in data["text/html"]
    assert build_book.WIDGET_VIEW in nb.cells[0].outputs[0].data, "static_widgets must not modify its input"


def test_static_widgets_fall_back_to_text_for_unknown_widgets():
    nb = tqdm_notebook()
    nb.metadata["widgets"][build_book.WIDGET_STATE]["state"]["bar"]["model_name"] = "SliderModel"
    data = build_book.static_widgets(nb)["cells"][0]["outputs"][0]["data"]
    assert "text/html" not in data and data["text/plain"].startswith("train:")


def test_slides_drop_tagged_cells_and_show_the_marked_core_cells():
    marked, figure = md(f"## Part\n{sections.badge('core', 10)}"), code("plot()")
    marked.metadata["slideshow"] = {"slide_type": "slide"}
    figure.metadata["slideshow"] = {"slide_type": "fragment"}
    figure.metadata["tags"] = [build_book.OUTPUT_ONLY_TAG]
    figure.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "<figure>"})]
    deep = md(f"## Aside\n{sections.badge('deep-dive', 5)}")
    deep.metadata["slideshow"] = {"slide_type": "slide"}
    nb = toy_notebook(md("# Title"), colab_cell.make_cell(), marked, code("x"), md("text"), figure, deep)
    slides = build_book.slides_notebook(nb)
    kinds = [(c["cell_type"], c["metadata"]["slideshow"]["slide_type"]) for c in slides["cells"]]
    assert kinds == [
        ("markdown", "slide"),
        ("markdown", "slide"),
        ("code", "skip"),
        ("markdown", "notes"),
        ("code", "fragment"),
        ("markdown", "slide"),
    ]
    assert slides["cells"][4]["metadata"]["transient"] == {"remove_source": True}, "output-only: no code shown"
    assert slides["cells"][5]["source"].startswith("## Aside (◆ deep dive · 5 min)"), "a marked deep dive: shown"
    assert len(nb.cells) == 7 and nb.cells[5].source == "plot()", "slides_notebook must not modify its input"


def test_slides_need_a_sectioned_notebook():
    with pytest.raises(ValueError, match=r"notebooks/07_x.ipynb has no section badges: .*python -m tools.sections"):
        build_book.slides_notebook(toy_notebook(md("# Title"), md("## Part"), code("x")), "notebooks/07_x.ipynb")


def test_book_notebook_adds_the_slides_link_after_the_title():
    nb = toy_notebook(md("# Title"), code("x"))
    nb.nbformat_minor = 5
    out = build_book.book_notebook(nb, "notebooks/07_x.ipynb")
    links = out["cells"][1]
    assert links["id"] == "course-links" and "../slides/07_x.slides.html" in links["source"]
    assert "colab" not in links["source"], "Colab and Binder are the theme's launch buttons, not repeated here"
    assert len({c.get("id") for c in out["cells"]}) == 3, "cell ids stay unique"


def test_myst_targets_turn_html_anchors_into_targets():
    text = '- <a id="query"></a>**query** · 查询 — asks.\n  - <a id="k"></a>nested\nplain <a id="x"></a>\n'
    assert build_book.myst_targets(text) == (
        '- (query)=\n  **query** · 查询 — asks.\n  - (k)=\n    nested\nplain <a id="x"></a>\n'
    )


def test_links_use_the_configured_repository():
    assert build_book.colab_url("notebooks/00_a.ipynb") == (
        f"https://colab.research.google.com/github/{GITHUB_REPOSITORY}/blob/{BRANCH}/notebooks/00_a.ipynb"
    )
    assert build_book.binder_url("notebooks/00_a.ipynb") == (
        f"https://mybinder.org/v2/gh/{GITHUB_REPOSITORY}/{BRANCH}?urlpath=lab/tree/notebooks/00_a.ipynb"
    )


def test_readme_colab_and_binder_links_agree_with_the_configuration():
    """The repository URL lives in tools/colab_cell.py; README links to Colab or Binder must use the same one."""
    import re

    for url in re.findall(r"https://colab\.research\.google\.com/github/[^)\s\"']+", README):
        assert url.startswith(f"https://colab.research.google.com/github/{GITHUB_REPOSITORY}/blob/{BRANCH}/"), url
    for url in re.findall(r"https://mybinder\.org/v2/gh/[^)\s\"']+", README):
        assert url.startswith(f"https://mybinder.org/v2/gh/{GITHUB_REPOSITORY}/{BRANCH}"), url


def test_every_font_face_of_mathjax_is_shipped_or_local():
    """The combined configuration the book loads (tools/build_book.MATHJAX_SCRIPT) declares @font-face rules of its
    own (its MathML output's, for TeX fonts): each names a file the vendored MathJax ships, or is pointed by
    MATHJAX_CONFIG at a local font only. Otherwise a page that uses it asks the server for a file it does not have."""
    pytest.importorskip("jupyter_server_mathjax")
    mathjax = build_book.vendor_dirs()["mathjax"]
    script = (mathjax / "config" / (build_book.MATHJAX_SCRIPT.split("config=")[1] + ".js")).read_text("utf-8")
    dirs = dict(re.findall(r'var (\w+)=\w+\.fileURL\(MathJax\.OutputJax\.fontDir\+"([^"]+)"\)', script))
    faces = re.findall(r'"(@font-face /\*\d+\*/)":\{[^{}]*src:"url\(\'"\+(\w+)\+"/([^\']+)\'\)"', script)
    assert len(faces) >= 6, "the combined configuration no longer declares the TeX faces: update this test"
    styles = build_book.MATHJAX_CONFIG.get("NativeMML", {}).get("styles", {})
    for key, folder, name in faces:
        if (mathjax / "fonts" / dirs[folder].strip("/") / name).is_file():
            continue
        src = styles.get(key, {}).get("src", "")
        assert src.startswith("local(") and "url(" not in src, f"{key}: fonts{dirs[folder]}/{name} is not shipped"


def test_book_sources_are_in_place():
    for path in ("book/conf.py", "book/_static/course.css", "book/templates/course-reveal/index.html.j2"):
        assert (ROOT / path).is_file(), path
    assert (ROOT / "postBuild").stat().st_mode & 0o111, "postBuild must be executable for Binder"


def test_readme_opens_every_notebook_in_colab_and_binder_with_the_configured_repository():
    """The README's "Open in Colab" / "Launch on Binder" links: one of each per notebook, and every Colab or
    Binder URL in the README built from tools.colab_cell's settings (so publishing the course changes one place)."""
    urls = re.findall(r"\((https://(?:colab\.research\.google\.com|mybinder\.org)/[^)\s]+)\)", README)
    expected = {build_book.binder_url()}
    twins = sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))  # the Chinese edition's (tools/book_zh.py)
    for nb in [*NOTEBOOKS, *twins]:
        path = nb.relative_to(ROOT).as_posix()
        expected |= {build_book.colab_url(path), build_book.binder_url(path)}
        assert build_book.colab_url(path) in urls, f"README has no Colab link for {path}"
        assert build_book.binder_url(path) in urls, f"README has no Binder link for {path}"
    stray = sorted(set(urls) - expected)
    assert not stray, f"README links that disagree with tools/colab_cell.py or name no notebook: {stray}"


def test_the_exam_bank_stays_out_of_the_book(tmp_path):
    """docs/exam_bank.md holds worked answers for lecturers (issue 32): it must not be one of the book's pages, nor be
    staged into the book's source tree, nor be linked from the landing page."""
    assert not any(page.name == "exam_bank.md" for page in build_book.PAGES)
    with redirect_stdout(io.StringIO()):
        staged = build_book.stage(tmp_path / "src")
    assert staged, "nothing staged"
    assert not list((tmp_path / "src").rglob("exam_bank*"))
    assert "exam_bank" not in (tmp_path / "src" / "index.md").read_text(encoding="utf-8")


def test_the_chinese_exam_bank_stays_out_of_the_chinese_book(tmp_path):
    """docs/zh/exam_bank.md, the Chinese exam bank, likewise: the Chinese book (tools/book_zh.py) stages the Chinese
    twin of each page of the English book only, so neither bank is staged into its tree nor linked from its landing
    page, and no staged page links to a bank."""
    from tools import book_zh

    assert (ROOT / "docs" / "zh" / "exam_bank.md").is_file()
    assert "docs/exam_bank.md" not in book_zh.page_twins([*build_book.PAGES, build_book.GLOSSARY])
    with redirect_stdout(io.StringIO()):
        book_zh.stage(tmp_path / "zh", build_book.PAGES, build_book.GLOSSARY)
    assert (tmp_path / "zh" / "index.md").is_file(), "nothing staged"
    assert not list((tmp_path / "zh").rglob("exam_bank*"))
    assert "exam_bank" not in (tmp_path / "zh" / "index.md").read_text(encoding="utf-8")
    link = re.compile(r"\]\([^)\s]*exam_bank|href=\"[^\"]*exam_bank")  # the guide names the banks' paths, links none
    linking = [p.name for p in (tmp_path / "zh").rglob("*.md") if link.search(p.read_text(encoding="utf-8"))]
    assert not linking, f"staged pages of the Chinese book that link to an exam bank: {linking}"
