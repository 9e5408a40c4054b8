"""The glossary appendix of a handout (tools/handouts.py): the definitions of the terms a deck's notes link to,
taken from the built glossary page (build/html/docs/glossary.html, or zh/docs/glossary.html for a Chinese deck)
with their formulas as MathML, so that the notes' links can point inside the PDF (``#glossary-TERM``) instead of
to a page that a printed or offline PDF cannot open.
"""

from __future__ import annotations

import html
import re

# The terms the appendix is headed with, in each language of the book.
HEADING = {"en": "Glossary", "zh": "术语表"}
INTRO = {
    "en": "The terms these notes link to, as the course's glossary defines them (docs/glossary.md).",
    "zh": "本讲义的备注所链接的术语，释义取自课程的术语表（docs/zh/glossary.md）。",
}
PREFIX = "glossary-"  # the anchors of the appendix: #glossary-attention-score

# On the built glossary page, once MathJax has typeset it: the entries asked for, each as HTML whose formulas are
# MathML (as course-slides.js does for the notes) and whose links to the book's pages are plain text.
ENTRIES = """async ids => {
  await new Promise(done => MathJax.Hub.Queue(["Require", MathJax.Ajax, "[MathJax]/extensions/toMathML.js"],
                                               () => done(true)));
  const fonts = '"STIX Two Math", "Cambria Math", "Latin Modern Math", "DejaVu Math TeX Gyre", math';
  const found = {};
  for (const id of ids) {
    const entry = document.getElementById(id);
    if (!entry || entry.tagName !== 'P' || !entry.querySelector('strong')) continue;
    for (const jax of MathJax.Hub.getAllJax(entry)) {
      const script = jax.SourceElement(), math = document.createElement('span');
      math.innerHTML = jax.root.toMathML('');
      if (math.firstElementChild) math.firstElementChild.style.fontFamily = fonts;
      const holder = script.parentNode;
      if (holder !== entry && holder.classList.contains('math')) holder.replaceChildren(math);
      else {
        const frame = document.getElementById(script.id + '-Frame');
        if (frame) frame.replaceWith(math); else script.before(math);
        script.remove();
      }
    }
    entry.querySelectorAll('.MathJax_Preview, a.headerlink').forEach(el => el.remove());
    entry.querySelectorAll('a[href]').forEach(a => a.replaceWith(...a.childNodes));
    found[id] = entry.innerHTML;
  }
  return found;
}"""

READY = "() => window.MathJax && MathJax.isReady"  # its first typesetting is queued before ENTRIES


class Glossary:
    """The definitions of one built glossary page, read once in the browser and kept for every deck."""

    def __init__(self, browser, route):
        self.browser, self.route, self.pages = browser, route, {}

    def entries(self, url: str, ids: list[str]) -> dict[str, str]:
        """Definitions (HTML) of ``ids`` on the glossary page at ``url``; an id the page lacks is left out."""
        known = self.pages.setdefault(url, {})
        wanted = sorted(set(ids) - set(known))
        if wanted:
            page = self.browser.new_page()
            try:
                page.route("**/*", self.route)
                page.goto(url, wait_until="load")
                page.wait_for_function(READY, timeout=120_000)
                found = page.evaluate(ENTRIES, wanted)
            finally:
                page.close()
            known.update({i: re.sub(r"<!--.*?-->", "", found.get(i, ""), flags=re.S).strip() for i in wanted})
        return {i: known[i] for i in ids if known.get(i)}


def link_terms(notes: str, defined: dict[str, str]) -> str:
    """The notes with each glossary link that the appendix cannot resolve written out as its text."""

    def keep(match: re.Match) -> str:
        return match.group(0) if match.group(1) in defined else match.group(2)

    pattern = r'<a class="glossary-link" href="#' + PREFIX + r'([^"]+)">(.*?)</a>'
    return re.sub(pattern, keep, notes, flags=re.S)


def appendix(defined: dict[str, str], lang: str) -> str:
    """The appendix: every term the notes link to, in the order of their ids (the English terms' A to Z)."""
    if not defined:
        return ""
    items = "".join(f'<li id="{PREFIX}{html.escape(i)}">{defined[i]}</li>' for i in sorted(defined))
    return (
        f'<div class="glossary"><h2 id="{PREFIX}top">{HEADING[lang]}</h2>'
        f'<p class="intro">{INTRO[lang]}</p><ul>{items}</ul></div>'
    )
