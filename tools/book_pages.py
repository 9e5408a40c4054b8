"""The book's page-level pieces that both languages use (tools/build_book.py builds the English book and the slides,
tools/book_zh.py stages the Chinese one): launch links (Colab, Binder), a notebook's title and slide file name, MyST
targets for anchored list items, widgets as static HTML, and a notebook as the book shows it. Pure functions of text
or notebooks; tests/test_book.py tests them through tools.build_book, which re-exports them."""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path

import nbformat
from nbconvert.preprocessors import TagRemovePreprocessor

from tools.colab_cell import BRANCH, GITHUB_REPOSITORY

REMOVE_TAG = "remove-cell"  # cells the book and the slides leave out (the Colab set-up cell)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def colab_url(notebook: str, repository: str = GITHUB_REPOSITORY, branch: str = BRANCH) -> str:
    """'notebooks/00_start_here.ipynb' -> the URL that opens it in Google Colab."""
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/{notebook}"


def binder_url(notebook: str | None = None, repository: str = GITHUB_REPOSITORY, branch: str = BRANCH) -> str:
    """The mybinder.org URL that builds the repository (environment.yml, postBuild) and opens JupyterLab."""
    url = f"https://mybinder.org/v2/gh/{repository}/{branch}"
    return url + (f"?urlpath=lab/tree/{notebook}" if notebook else "?urlpath=lab")


def slides_name(notebook: str | Path) -> str:
    return Path(notebook).stem + ".slides.html"


def notebook_title(nb: dict) -> str:
    """The text of a notebook's first Markdown heading, without a leading 'NN ·'."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            m = re.search(r"^#+\s+(.+)$", "".join(cell.get("source", "")), re.M)
            if m:
                return re.sub(r"^\d+\s*[·.:-]\s*", "", m.group(1)).strip()
    return ""


_ANCHORED_ITEM = re.compile(
    r'^(?P<indent>[ \t]*)(?P<bullet>[-*+]|\d+[.)])(?P<gap>[ \t]+)<a id="(?P<id>[^"]+)"></a>', re.M
)


def myst_targets(markdown: str) -> str:
    """Turn a list item that starts with an HTML anchor, `- <a id="x"></a>text` (what GitHub renders, e.g. in the
    glossary), into a MyST target `(x)=` followed by the text, so that Sphinx knows the anchor and links to
    `glossary.md#x` resolve without warnings. The page still has an element with id="x"."""

    def target(m: re.Match) -> str:
        pad = m["indent"] + " " * (len(m["bullet"]) + len(m["gap"]))
        return f"{m['indent']}{m['bullet']}{m['gap']}({m['id']})=\n{pad}"

    return _ANCHORED_ITEM.sub(target, markdown)


def _widget_html(model_id: str, state: dict, depth: int = 0) -> str | None:
    """Static HTML for a saved ipywidgets model (the boxes, labels and progress bars tqdm draws); None if unknown."""
    model = state.get(model_id)
    if model is None or depth > 8:
        return None
    name, s = model.get("model_name", ""), model.get("state", {})
    if name in ("HBoxModel", "VBoxModel", "BoxModel"):
        parts = [_widget_html(child.removeprefix("IPY_MODEL_"), state, depth + 1) for child in s.get("children", [])]
        if any(p is None for p in parts):
            return None
        kind = "hbox" if name == "HBoxModel" else "vbox"
        return f'<div class="course-widget course-widget-{kind}">{"".join(parts)}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f"<span>{s.get('value', '')}</span>"
    if name == "LabelModel":
        return f"<span>{html.escape(str(s.get('value', '')))}</span>"
    if name in ("FloatProgressModel", "IntProgressModel"):
        value, high = s.get("value", 0), s.get("max", 100)
        style = s.get("bar_style") or ""
        return f'<progress class="course-widget-progress {style}" value="{value}" max="{high}"></progress>'
    return None


def static_widgets(nb: dict) -> dict:
    """Replace each widget output by static HTML of its saved final state; drop the saved state.

    Rendering live widgets needs JavaScript from a CDN; the book and the slides must work offline. A progress bar
    of ``tqdm.auto`` thus shows its final state (e.g. "100% 5/5"), as it looked when the notebook was executed.
    Widgets of other kinds keep their text/plain fallback.
    """
    nb = copy.deepcopy(nb)
    saved = nb.get("metadata", {}).pop("widgets", {})
    state = saved.get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            view = data.pop(WIDGET_VIEW)
            rendered = _widget_html(view.get("model_id", ""), state)
            if rendered is not None:
                data["text/html"] = rendered
    return nb


def remove_tagged_cells(nb: dict, tag: str = REMOVE_TAG) -> dict:
    """A copy of ``nb`` without the cells tagged ``tag`` (nbconvert's TagRemovePreprocessor)."""
    node = nbformat.from_dict(copy.deepcopy(nb))
    TagRemovePreprocessor(remove_cell_tags={tag}).preprocess(node, {})
    return node


def links_cell(notebook: str) -> dict:
    """A Markdown cell placed after a chapter's first cell in the book: a link to its slides. (Colab and Binder are
    the book theme's launch buttons, configured in book/conf.py with the same repository and branch.)"""
    link = f'<a href="../slides/{slides_name(notebook)}">Slides of this notebook</a>'
    return {"cell_type": "markdown", "metadata": {}, "source": f'<p class="course-links">{link}</p>'}


def book_notebook(nb: dict, notebook: str) -> dict:
    nb = static_widgets(nb)
    cell = links_cell(notebook)
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) >= (4, 5):  # cell ids exist from nbformat 4.5 on
        cell["id"] = "course-links"
    nb["cells"].insert(1, cell)
    return nb
