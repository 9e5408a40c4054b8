"""Sphinx configuration of the course book (Sphinx + MyST-NB + Sphinx Book Theme: the Jupyter Book 1 stack).

Do not run sphinx-build on this directory yourself: `make book` (python -m tools.build_book) stages the source tree
in build/book_src and runs `python -m sphinx -c book build/book_src build/html` in the repository root, where
`tools` is importable. The Chinese edition is built with the same file and `-t zh` (tools/book_zh.py): Sphinx's
language zh_CN (the theme's words in Chinese), the Chinese title, and Colab and Binder buttons that open the twins.
"""

from course_lib import __version__

# tools.build_book stages the book and owns the settings both it and Sphinx need; tools.colab_cell says where the
# course is published.
from tools import book_zh
from tools.build_book import CJK_FONT, GLOSSARY, MATHJAX_CONFIG, MATHJAX_SCRIPT, PAGES
from tools.colab_cell import BRANCH, REPOSITORY_URL

CHINESE = tags.has("zh")  # noqa: F821 (Sphinx gives conf.py its -t tags)
project = book_zh.TITLE if CHINESE else "Self-Attention from the Ground Up"
language = book_zh.LANGUAGE if CHINESE else "en"
author = "the course authors"
copyright = "the course authors; code MIT, text and figures CC BY 4.0"
release = version = __version__

extensions = ["myst_nb"]
exclude_patterns = ["**.ipynb_checkpoints"]
root_doc = "index"

# The notebooks are shown with their stored outputs: CI re-executes them and compares (strict nbval).
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no widget JavaScript from a CDN: tools.build_book makes widget outputs static HTML
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_heading_anchors = 3
if CHINESE:
    myst_heading_slug_func = "tools.book_zh.heading_slug"  # a twin's heading keeps its English anchor
suppress_warnings = ["myst.header"]  # notebooks may jump heading levels (e.g. '#' title, then '###')

# Math: MathJax 2.7 from the PyPI package jupyter-server-mathjax, copied into _static/mathjax by the build.
mathjax_path = MATHJAX_SCRIPT
mathjax2_config = MATHJAX_CONFIG
mathjax3_config = None
mathjax4_config = None
myst_update_mathjax = False

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
templates_path = ["_templates"]  # course-language.html: the switch to the other language's page
html_css_files = ["course.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": REPOSITORY_URL,
    "repository_branch": BRANCH,
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {
        "colab_url": "https://colab.research.google.com",
        "binderhub_url": "https://mybinder.org",
        "notebook_interface": "jupyterlab",
    },
    "article_header_end": ["article-header-buttons.html", "course-language.html"],
    "show_toc_level": 2,
    "home_page_in_toc": True,
}

# The course's subset of Noto Sans SC, so that Chinese text shows as glyphs on machines without a CJK font.
if CJK_FONT.is_file():
    html_static_path.append(str(CJK_FONT.parent))  # the font and its license, OFL.txt
    html_css_files.append("course-cjk.css")
    html_js_files = ["course-cjk.js"]


def setup(app):
    """The language switch on every page (before the theme drops empty templates), and in the Chinese book launch
    buttons that open the twins (after the theme makes them, at priority 501): tools/book_zh.py."""
    app.connect("html-page-context", book_zh.add_switch(CHINESE, book_zh.chinese_pages([*PAGES, GLOSSARY])), 400)
    if CHINESE:
        app.connect("html-page-context", book_zh.launch_twins(), 502)
