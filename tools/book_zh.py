"""The Chinese edition of the book (issue 46): the twins of ``notebooks/zh/`` and ``docs/zh/`` as a book beside the
English one, ``build/html/zh/``, with a language switch on every page of both.

    python -m tools.book_zh readme     # rewrite the README's section "中文版" from the twins (titles, Colab, Binder)
    python -m tools.book_zh check      # exit 1 when that section is not what the twins give

``tools.build_book`` calls :func:`stage` and builds the staged tree with Sphinx (``-t zh``, ``language = "zh_CN"``:
the theme's own words in Chinese). The Chinese book mirrors the English one page for page: the twin of
``notebooks/03_x.ipynb`` is staged as ``notebooks/03_x.ipynb`` of the Chinese tree, so its page is
``zh/notebooks/03_x.html`` beside ``notebooks/03_x.html``, and the switch is one folder up or down. A twin's links
point at other twins in the repository (``../../docs/zh/glossary.md``); staged, they point at the same page of the
Chinese tree (``../docs/glossary.md``). A page without a Chinese twin (``docs/running_and_testing.md``) is staged in
English, so that every link resolves. The Colab and Binder buttons of a Chinese page open the twin itself
(:func:`launch_paths`). The slides of a twin (``zh/slides/``) are shaped by ``tools.deck`` like the English ones.
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import posixpath
import re
import shutil
import sys
import textwrap
from pathlib import Path

from course_lib.paths import ROOT

ZH = "zh"  # the folder of the Chinese twins in the repository, and of the Chinese book in build/html
LANGUAGE = "zh_CN"  # Sphinx's language for the Chinese build: the theme's words in Simplified Chinese
TITLE = "从零开始理解自注意力"
README_HEADING = "中文版 · Chinese edition"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
LINK_TARGET = re.compile(r"(?<=\]\()([^)\s]+)(?=\))")


# ------------------------------------------------------------------------------------------------ paths


def twins(root: Path = ROOT) -> dict[str, str]:
    """English notebook -> its Chinese twin ('notebooks/03_x.ipynb' -> 'notebooks/zh/03_x.ipynb'), for each twin."""
    found = sorted((root / "notebooks" / ZH).glob(NOTEBOOK_GLOB))
    return {f"notebooks/{p.name}": f"notebooks/{ZH}/{p.name}" for p in found if (root / "notebooks" / p.name).is_file()}


def page_twins(pages: list[Path], root: Path = ROOT) -> dict[str, str]:
    """English page -> its Chinese twin ('docs/glossary.md' -> 'docs/zh/glossary.md'), for each twin."""
    out = {}
    for page in pages:
        twin = page.parent / ZH / page.name
        if (root / twin).is_file():
            out[page.as_posix()] = twin.as_posix()
    return out


def staged_path(path: str) -> str:
    """Where a repository file is in the Chinese book's tree: a twin where its English source is, anything else
    where it is ('notebooks/zh/03_x.ipynb' -> 'notebooks/03_x.ipynb', 'docs/zh/glossary.md' -> 'docs/glossary.md')."""
    return re.sub(rf"(^|/){ZH}/(?=[^/]+$)", r"\1", path)


def staged_links(markdown: str, twin: str) -> str:
    """The Markdown of ``twin`` (its repository path) with each relative link retargeted for the Chinese book's tree:
    the same file, seen from where the twin is staged. URLs and anchors in the page stay as they are."""
    here = posixpath.dirname(twin)
    there = posixpath.dirname(staged_path(twin))

    def retarget(m: re.Match) -> str:
        target = m[1]
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
            return target
        path, hash_, anchor = target.partition("#")
        resolved = staged_path(posixpath.normpath(posixpath.join(here, path)))
        return posixpath.relpath(resolved, there or ".") + hash_ + anchor

    return LINK_TARGET.sub(retarget, markdown)


def staged_twin(nb: dict, twin: str) -> dict:
    """A twin notebook with the links of its Markdown cells retargeted (``staged_links``)."""
    nb = json.loads(json.dumps(nb))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell["source"] = staged_links("".join(cell["source"]), twin)
    return nb


def launch_paths(root: Path = ROOT) -> dict[str, str]:
    """Page name in the Chinese book -> the twin that its Colab and Binder buttons open ('notebooks/03_x' ->
    'notebooks/zh/03_x.ipynb')."""
    return {str(Path(nb).with_suffix("")): twin for nb, twin in twins(root).items()}


# ---------------------------------------------------------------------------------------- anchors

_HEADING_ANCHOR = re.compile(r'^#{1,6}[ \t]+(?P<title>.*?)[ \t]*<a id="(?P<id>[^"]+)"></a>[ \t]*$', re.M)


def _title_key(title: str) -> str:
    """A heading's words only: what MyST's slug function sees of it (text and code, no maths, no HTML, no link
    targets), and this module's reading of the Markdown, agree on it."""
    title = re.sub(r"\$[^$]+\$|<[^>]+>|\]\([^)]*\)", "", title)
    return re.sub(r"[\W_]+", "", title).lower()


@functools.cache
def _anchors(root: Path = ROOT) -> dict[str, str]:
    """Words of a twin's heading -> the anchor its English heading has (a twin's heading keeps it as
    ``<a id="..."></a>``), over every twin."""
    texts = [(root / t).read_text(encoding="utf-8") for t in twins(root).values()]
    texts += [p.read_text(encoding="utf-8") for p in sorted((root / "docs" / ZH).glob("*.md"))]
    found = {}
    for text in texts:
        if text.lstrip().startswith("{"):
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown")
        for m in _HEADING_ANCHOR.finditer(text):
            found.setdefault(_title_key(m["title"]), m["id"])
    return found


def heading_slug(title: str) -> str:
    """MyST's ``myst_heading_slug_func`` for the Chinese book: a twin's heading gets its English heading's anchor,
    so that the links ``page.md#anchor`` that the twins keep from the English resolve; any other heading the slug
    GitHub gives it."""
    anchor = _anchors().get(_title_key(title))
    if anchor:
        return anchor
    from myst_parser.slugs import github_slugify  # the book extra; only headings that are not a twin's need it

    return github_slugify(title)


# ------------------------------------------------------------------------------------ language switch


def chinese_pages(pages: list[Path], root: Path = ROOT) -> set[str]:
    """Page names of the English book that have a Chinese page (the landing page, the twins)."""
    names = {"index", "search", "genindex"} | {str(Path(nb).with_suffix("")) for nb in twins(root)}  # Sphinx's own
    return names | {str(Path(page).with_suffix("")) for page in page_twins(pages, root)}


def switch_url(pagename: str, chinese: bool, twinned: set[str]) -> str:
    """The relative URL of the other language's page of ``pagename``: from an English page its Chinese twin (the
    Chinese landing page when it has none), from a Chinese page its English original."""
    up = "../" * pagename.count("/")
    if chinese:
        return f"{up}../{pagename}.html"
    return f"{up}{ZH}/{pagename if pagename in twinned else 'index'}.html"


def add_switch(chinese: bool, twinned: set[str]):
    """A Sphinx ``html-page-context`` handler that gives a page the switch's link (book/_templates/
    course-language.html draws it). Connect it before the theme drops the templates that draw nothing (priority
    500)."""

    def handler(app, pagename, templatename, context, doctree):
        context["course_language_url"] = switch_url(pagename, chinese, twinned)
        context["course_language_label"] = "English" if chinese else "中文"
        context["course_language_code"] = "en" if chinese else "zh-CN"

    return handler


def launch_twins():
    """A Sphinx ``html-page-context`` handler for the Chinese book: the Colab and Binder buttons of a page open its
    twin. Connect it after the theme makes the buttons (priority 501)."""
    launch = launch_paths()

    def handler(app, pagename, templatename, context, doctree):
        twin = launch.get(pagename)
        if twin:
            english = f"/{pagename}.ipynb"
            for button in _buttons(context.get("header_buttons", [])):
                if button.get("url", "").endswith(english) or f"{english}&" in button.get("url", ""):
                    button["url"] = button["url"].replace(english, f"/{twin}")

    return handler


def _buttons(buttons: list[dict]):
    for button in buttons:
        yield button
        yield from _buttons(button.get("buttons", []))


# --------------------------------------------------------------------------------------- landing page


def title_of(nb: dict) -> str:
    """A notebook's title without its number and its anchor."""
    from tools.book_pages import notebook_title

    return re.sub(r"<[^>]+>", "", notebook_title(nb)).strip()


def course_table(titles: dict[str, str], book: bool) -> str:
    """The Chinese course map: number, title, and where to open each twin. ``titles`` maps each twin's repository
    path to its title. In the book (``book``) a title opens its chapter and the slides are linked; in the README a
    title opens the twin's file."""
    from tools.book_pages import binder_url, colab_url, slides_name

    head = "| 编号 | 笔记本 | 打开 |" if book else "| 编号 | 笔记本 | Colab | Binder |"
    rows = [head, "|---|---|---|" if book else "|---|---|---|---|"]
    for twin, title in titles.items():
        name = Path(twin).name
        colab, binder = html.escape(colab_url(twin)), html.escape(binder_url(twin))
        if book:
            links = f'<a href="slides/{slides_name(twin)}">幻灯片</a>&nbsp;·&nbsp;<a href="{colab}">Colab</a>'
            links += f'&nbsp;·&nbsp;<a href="{binder}">Binder</a>'
            rows.append(f"| {name[:2]} | [{title}](notebooks/{name}) | {links} |")
        else:
            rows.append(
                f"| {name[:2]} | [{title}]({twin}) | [在 Colab 中打开]({colab_url(twin)}) | "
                f"[在 Binder 中打开]({binder_url(twin)}) |"
            )
    return "\n".join(rows)


def landing_page(titles: dict[str, str], pages: dict[str, str]) -> str:
    """index.md of the Chinese book. ``titles``: twin path -> title; ``pages``: English page -> its Chinese twin."""
    from tools.book_pages import binder_url
    from tools.colab_cell import REPOSITORY_URL

    first = next(iter(titles), None)
    staged = [staged_path(t) for t in titles]
    parts = [
        f"# {TITLE}",
        "一门可以运行的自注意力课程：从独热向量和循环网络的局限讲起，一直讲到多头注意力、位置编码、高效注意力、"
        "与卷积和视觉 Transformer 的比较，以及会写字、会翻译的 Transformer。每个公式都有推导，每个说法都用代码检验，"
        "你读到的每个数字都是它上面的代码算出来的。",
        '这是中文版：笔记本的文字是中文，代码、输出和数字与<a href="../index.html">英文版</a>完全相同'
        "（CI 重新运行英文笔记本，"
        "逐个比较输出）。中文版由英文原文和翻译目录生成，英文一改，译文必须跟着改，否则测试不通过。"
        "每页右上角的 **English** 按钮切换到同一页的英文版。",
        "## 课程地图",
        course_table(titles, book=True),
        "书中每一章就是一个笔记本，带着 CI 重新计算过的输出；徽章标出核心路径（一次讲课加一次上机）和深入小节。"
        "**幻灯片**是每个笔记本核心路径的 reveal.js 讲稿，供讲师使用"
        "（方向键翻页，`Esc` 显示总览，`S` 打开带备注的演讲者视图）。",
        "## 自己运行这些笔记本",
        f"- 在自己的电脑上：克隆 <{REPOSITORY_URL}>，然后运行 `make lab`（JupyterLab）或 `make test`（全部检查）；"
        "中文笔记本在 `notebooks/zh/` 中。\n"
        "- 在 Google Colab 中：上表的 Colab 链接直接打开中文笔记本；"
        "它的第一个代码单元格安装 `course_lib`（只在 Colab 中生效）。\n"
        f'- 在 Binder 上：<a href="{html.escape(binder_url(first))}">在浏览器中启动 JupyterLab</a>，'
        "所需的一切都已安装。",
    ]
    guide = pages.get("docs/lecturers_guide.md")
    if guide:
        parts.append(
            f"**用它来教课？** [讲师指南]({staged_path(guide)})根据各笔记本的核心路径规划了一个 14 周的学期："
            "讲课、上机、考核、评分和课程项目。"
        )
    glossary = pages.get("docs/glossary.md")
    if glossary:
        parts.append(f"[术语表]({staged_path(glossary)})（英文 / 中文）列出课程用到的每个术语。")
    toc = "\n".join(str(Path(p).with_suffix("")) for p in staged)
    parts.append(f"```{{toctree}}\n:hidden:\n:caption: 笔记本\n\n{toc}\n```")
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------- stage


def stage(src: Path, pages: list[Path], glossary: Path, root: Path = ROOT) -> list[tuple[str, str]]:
    """Write the Chinese book's Sphinx source tree into ``src``; return (twin, staged path) of each notebook."""
    from tools.book_pages import book_notebook, myst_targets

    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    titles, notebooks = {}, []
    for twin in twins(root).values():
        nb = json.loads((root / twin).read_text(encoding="utf-8"))
        rel = staged_path(twin)
        (src / rel).write_text(
            json.dumps(book_notebook(staged_twin(nb, twin), rel), indent=1, ensure_ascii=False), encoding="utf-8"
        )
        titles[twin] = title_of(nb)
        notebooks.append((twin, rel))
    chinese = page_twins([*pages, glossary], root)
    reference = []
    for page in [*pages, glossary]:
        source = chinese.get(page.as_posix(), page.as_posix())
        if not (root / source).is_file():
            continue
        text = staged_links((root / source).read_text(encoding="utf-8"), source)
        (src / page).parent.mkdir(parents=True, exist_ok=True)
        (src / page).write_text(myst_targets(text) if page == glossary else text, encoding="utf-8")
        reference.append(page.with_suffix("").as_posix())
    index = landing_page(titles, chinese)
    if reference:
        index += "\n```{toctree}\n:hidden:\n:caption: 参考\n\n" + "\n".join(reference) + "\n```\n"
    (src / "index.md").write_text(index, encoding="utf-8")
    return notebooks


# ---------------------------------------------------------------------------------------------- README


def readme_section(root: Path = ROOT) -> str:
    """The README's section on the Chinese edition, from the twins: a table with Colab and Binder per notebook."""
    titles = {t: title_of(json.loads((root / t).read_text(encoding="utf-8"))) for t in twins(root).values()}
    intro = (
        "Every notebook has a Chinese twin in `notebooks/zh/` (每个笔记本都有中文版): Chinese prose and code comments, "
        "the English code token for token and its outputs byte for byte, generated from gettext catalogues that CI "
        "keeps in step with the English "
        "([how](locale/zh_CN/README.md)); the glossary, the misconceptions page and the lecturer's guide are in "
        "`docs/zh/`. `make book` builds the Chinese book beside the English one (`build/html/zh/`, a language switch "
        "on every page, one slide deck per notebook). This table is written by `python -m tools.book_zh readme`."
    )
    intro = textwrap.fill(intro, 120, break_long_words=False, break_on_hyphens=False)
    return f"## {README_HEADING}\n\n{intro}\n\n{course_table(titles, book=False)}\n"


def with_readme_section(readme: str, section: str) -> str:
    """The README with its section "## 中文版 · Chinese edition" replaced by ``section`` (added after the course
    map's section when it has none)."""
    heading = f"## {README_HEADING}\n"
    if heading in readme:
        before, rest = readme.split(heading, 1)
        after = rest[rest.find("\n## ") + 1 :] if "\n## " in rest else ""
        return before + section + ("\n" + after if after else "")
    at = readme.find("\n## ", readme.find("\n## Course map") + 1)
    return readme[: at + 1] + section + "\n" + readme[at + 1 :] if at > 0 else readme + "\n" + section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.book_zh", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("readme", "check"))
    args = parser.parse_args(argv)
    path = ROOT / "README.md"
    readme = path.read_text(encoding="utf-8")
    wanted = with_readme_section(readme, readme_section())
    if args.command == "readme":
        path.write_text(wanted, encoding="utf-8")
        print(f"README.md: section '{README_HEADING}' written")
        return 0
    if wanted != readme:
        print(f"README.md: section '{README_HEADING}' is stale: run python -m tools.book_zh readme", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
