"""The rules a projected slide must meet (issues 29 and 44), measured in the browser on every slide of a deck at
1280x720: for the back row of a hall of 120.

- at most 90 visible words a slide, 40 on average (in prose a Chinese character counts as 1 / CJK_CHARS_PER_WORD of
  a word, as in tools/slide_text.py; code and output are counted by spaces, as tools/deck.py counts them); nothing
  past the slide's edges, nothing below its bottom, nothing drawn under its foot (the running head, the link to
  the book chapter) nor within FOOT_GAP px of it;
- code and printed output at 22 px or more, and every table (of output or of the prose), and never wrapped: every line
  of a code or output block is drawn as one line;
- no sentence cut short: no paragraph, list item, table cell or quote ends with an ellipsis;
- figure text at 16 px or more: the height of a figure's smallest text in its own pixels (``data-text-px``, from
  tools/slide_figures.py) times the scale the slide draws it at; formula text too: the font size of a formula's
  smallest script as drawn (a script of a script is half its formula's size; a formula too wide for its slide is
  drawn smaller, book/_static/course-slides.js), not counting the hidden MathML MathJax adds for screen readers;
- no prompts or test markers; Chinese text in the course's font subset;
- a slide without a heading of its own names its section at its foot (the running head, 16 px): the heading of the
  nearest slide before it that has one, as its Markdown wrote it, each formula once and drawn (MathJax's text of a
  typeset heading has each three times: the drawing, the MathML for screen readers and the TeX);
- speaker notes whose formulas are MathML (what the speaker view and the handouts draw; MathJax's own markup shows
  σ_q² as "σ2q" there), each drawn with a width and in a math font (every subscript below its base's line), no TeX
  left over, and whose links (``notesLinks``, checked by the test against the built book) point at the book's pages.

``measure(page)`` visits each slide (all its fragments shown, its formulas laid out) and returns one row per slide;
``problems(rows)`` says which rules a deck breaks. tests/e2e/test_book_in_browser.py runs them on every deck.
"""

from __future__ import annotations

import re
import statistics

from tools.slide_text import CJK_CHARS_PER_WORD

SCREEN = {"width": 1280, "height": 720}
MIN_CODE_PX = 22
MIN_FIGURE_TEXT_PX = 16
MEAN_WORDS, MAX_WORDS = 40, 90
# A figure without data-text-px is measured as if its smallest text were 8 pt at 100 dpi (and reported: every
# figure of a deck must carry its own).
FIGURE_TEXT_NATURAL_PX = 8 / 72 * 100
# A subscript in the notes is drawn at least this many em below its base's bottom. With a font that has an OpenType
# MATH table (book/_static/course-slides.js names some) Chromium lowers it 0.24-0.37 em; without, 0.02-0.06 em: d_k's
# k on the d's line, the "flat" subscripts a lecturer found in the handouts.
MIN_SUBSCRIPT_DROP = 0.15
FOOT_GAP = 4  # px at least between what a slide draws and its foot (the running head, the link to the book)
PROMPTS = r"In \[\s*\d*\]:|Out\[\s*\d*\]:"  # anywhere on a slide
MARKERS = r"NBVAL_|BEGIN SOLUTION|END SOLUTION|HIDDEN TESTS|MARK SCHEME|nbgrader"  # in code (prose may name them)

MEASURE = r"""async ([prompts, markers, naturalPx, cjkPerWord, minDrop, gap]) => {
  await new Promise(done => {
    const ready = () => document.documentElement.classList.contains('course-notes-ready');
    if (ready()) return done(true);
    const timer = setInterval(() => { if (ready()) { clearInterval(timer); done(true); } }, 50);
    setTimeout(() => { clearInterval(timer); done(false); }, 30000);
  });
  const probe = document.createElement('div');  // the notes drawn as the speaker view draws them: outside Reveal
  probe.style.cssText = 'position: fixed; left: 0; top: 0; width: 600px; font-size: 16px; visibility: hidden;';
  document.body.appendChild(probe);
  const CJK = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]/;
  const CJK_RUN = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+/g;
  const CJK_CHAR = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/g;
  const prompt = new RegExp(prompts, 'g'), marker = new RegExp(markers, 'g');
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  const slides = [...document.querySelectorAll('.reveal .slides section')].filter(s => !s.classList.contains('stack'));
  const skip = el => el.closest('aside.notes, script, style, .MathJax_Preview');
  // A heading's text as its Markdown wrote it: each formula typeset as $TeX$ (from MathJax's script; raw TeX as it
  // stands), not MathJax's drawing, its MathML for screen readers or its preview, nor the ¶ link.
  const source = el => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('script[type^="math/tex"]').forEach(tex => tex.replaceWith(`$${tex.textContent}$`));
    copy.querySelectorAll('.MathJax_Preview, .MathJax, .MathJax_Display, .MJX_Assistive_MathML')
      .forEach(m => m.remove());
    return copy.textContent.replace('¶', '').replace(/\s+/g, ' ').trim();
  };
  const out = [];
  for (const [i, s] of slides.entries()) {
    const at = Reveal.getIndices(s);
    Reveal.slide(at.h, at.v, 1000);
    await new Promise(done => MathJax.Hub.Queue(() => done(true)));
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const box = s.getBoundingClientRect();
    let words = 0, chinese = 0, text = '';
    const walker = document.createTreeWalker(s, NodeFilter.SHOW_TEXT);
    const cjkFonts = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || skip(el) || el.closest('.MathJax, .MathJax_Display, .MathJax_SVG')) continue;
      text += n.textContent + ' ';
      // Prose: a Chinese character is a fraction of a word (tools/slide_text.py). Code and printed output are counted
      // by spaces, as tools/deck.py shapes them: a line of Chinese data (12's generated poems) is one word a run.
      const prose = !el.closest('pre, code');
      if (prose) chinese += (n.textContent.match(CJK_CHAR) || []).length;
      const spaced = prose ? n.textContent.replace(CJK_RUN, ' ') : n.textContent;
      words += spaced.split(/\s+/).filter(w => /[\p{L}\p{N}]/u.test(w)).length;
      if (CJK.test(n.textContent)) cjkFonts.add(getComputedStyle(el).fontFamily);
    }
    words += Math.round(chinese / cjkPerWord) + [...s.querySelectorAll('.MathJax')].filter(m => !skip(m)).length;
    const overflow = [];
    let widest = 0;
    for (const el of s.querySelectorAll('*')) {
      if (skip(el) || el.parentElement.closest('.MathJax')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      widest = Math.max(widest, r.right - box.left);
      const style = getComputedStyle(el);
      const clips = !['visible'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
      if (r.right > box.right + 1 || r.left < box.left - 1 || clips) {
        const name = `${el.tagName.toLowerCase()}.${el.className || ''}`.slice(0, 60);
        const span = `${Math.round(r.left - box.left)}..${Math.round(r.right - box.left)} px`;
        overflow.push(`${name} ${span}` + (clips ? ' clipped' : ''));
      }
    }
    const code = [...s.querySelectorAll('pre, code, .jp-InputArea-editor, .jp-OutputArea-output td')]
      .filter(c => !skip(c) && c.textContent.trim());
    const wrapped = [];
    for (const pre of s.querySelectorAll('pre')) {
      if (skip(pre) || !pre.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(pre);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      const lines = pre.textContent.replace(/\n+$/, '').split('\n').filter(l => l.trim()).length;
      if (tops.size > lines) wrapped.push(`${tops.size} lines drawn for ${lines}: ` +
        pre.textContent.trim().split('\n')[0].slice(0, 50));
    }
    const cut = [...s.querySelectorAll('p, li, td, th, blockquote')]
      .filter(el => !skip(el) && !el.closest('pre, .jp-OutputArea'))
      .map(el => el.innerText.trim()).filter(t => /(…|\.\.\.)$/.test(t)).map(t => t.slice(-60));
    const blocks = code.filter(c => c.tagName === 'PRE').map(c => c.textContent).join(' ');
    const codePx = code.map(c => parseFloat(getComputedStyle(c).fontSize) * Reveal.getScale());
    const tablePx = [...s.querySelectorAll('td, th')].filter(c => !skip(c) && c.textContent.trim())
      .map(c => parseFloat(getComputedStyle(c).fontSize) * Reveal.getScale());
    const cjkCode = code.filter(c => CJK.test(c.textContent)).map(c => getComputedStyle(c).fontFamily);
    const images = [...s.querySelectorAll('img')].filter(img => !skip(img));
    const figures = images.map(img => {
      const r = img.getBoundingClientRect();
      const px = parseFloat(img.dataset.textPx || naturalPx);
      return px * Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
    });
    const unmarked = images.filter(img => !img.dataset.textPx).length;
    const mathPx = [...s.querySelectorAll('.MathJax span, .MathJax_Display span')]
      .filter(el => !skip(el) && !el.closest('.MJX_Assistive_MathML') && el.getBoundingClientRect().width > 0
        && [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
      .map(el => parseFloat(getComputedStyle(el).fontSize) * Reveal.getScale());
    const notes = [...s.querySelectorAll(':scope > aside.notes, :scope > * aside.notes')];
    probe.innerHTML = notes.map(n => n.innerHTML).join('\n');
    const notesMath = probe.querySelectorAll('math').length;
    const flatMath = [...probe.querySelectorAll('math')].filter(m => m.getBoundingClientRect().width === 0).length;
    const levelScripts = [...probe.querySelectorAll('msub, msubsup')].filter(s => {  // a subscript on its base's line
      if (!/^[a-eh-ik-orsuvwxzA-IK-Z]$/.test(s.children[0].textContent.trim())) return false;  // no descender (q, J, ‖)
      if (!/^[A-Za-z0-9]+$/.test(s.children[1].textContent.trim())) return false;  // a letter or digit ("⋅" sits high)
      const [base, script] = [...s.children].map(c => c.getBoundingClientRect());
      const em = parseFloat(getComputedStyle(s).fontSize);
      return base.height > 0 && (script.bottom - base.bottom) / em < minDrop;
    }).map(s => s.textContent.replace(/\s+/g, '')).slice(0, 3);
    const leftTeX = probe.querySelectorAll('.MathJax, .MathJax_Display, script[type^="math/tex"]').length
      + [...probe.querySelectorAll('p, li, td')].filter(el => /\$[^$]+\$|\\[a-zA-Z]+/.test(
          [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join(' '))).length;
    const notesLinks = [...probe.querySelectorAll('a[href]')].map(a => a.getAttribute('href'));
    const heading = [...s.querySelectorAll('h1, h2, h3')].find(h => !h.closest('aside'));
    const head = document.querySelector('.course-running-head');
    const shown = head && getComputedStyle(head).display !== 'none' && getComputedStyle(head).visibility !== 'hidden';
    const running = shown ? source(head) : '';
    // What the slide draws under its foot (the running head, the link to the book chapter) or within FOOT_GAP px of
    // it: the text of its leaves, and what of each figure is drawn (object-fit: contain, at the top of its box). A
    // figure's caption drawn flush on the running head read as one line with it (a lecturer's trial, 12's deck).
    const feet = [running ? head : null, document.querySelector('.course-book-link')]
      .filter(el => el && getComputedStyle(el).display !== 'none' && el.textContent.trim())
      .map(el => [el.className, el.getBoundingClientRect()]);
    const drawn = images.map(img => {
      const r = img.getBoundingClientRect();
      const scale = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
      const w = img.naturalWidth * scale, h = img.naturalHeight * scale;
      return ['a figure', {left: r.left + (r.width - w) / 2, right: r.left + (r.width + w) / 2, top: r.top,
                           bottom: r.top + h, width: w, height: h}];
    });
    const texts = document.createTreeWalker(s, NodeFilter.SHOW_TEXT);
    for (let n = texts.nextNode(); n; n = texts.nextNode()) {
      if (!n.textContent.trim() || !n.parentElement || skip(n.parentElement)) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) drawn.push([JSON.stringify(n.textContent.trim().slice(0, 30)), r]);
    }
    const under = (a, f) => a.left < f.right + gap && f.left - gap < a.right && a.top < f.bottom
      && f.top - gap < a.bottom;
    const covered = [];
    for (const [what, r] of drawn) {
      for (const [foot, f] of feet) {
        if (r.width > 0 && r.height > 0 && under(r, f)) covered.push(`${what} under .${foot} by ` +
          `${Math.round(Math.min(r.bottom, f.bottom) - (f.top - gap))} px`);
      }
    }
    const runningPx = head ? parseFloat(getComputedStyle(head).fontSize) : 0;
    out.push({
      i, h: at.h, v: at.v, title: heading ? source(heading) : '', running, runningPx, words,
      content: s.scrollHeight, room: s.clientHeight, widest: Math.round(widest), slideWidth: Math.round(box.width),
      overflow: overflow.slice(0, 4), overflowCount: overflow.length,
      codePx: codePx.length ? Math.min(...codePx) : null, tablePx: tablePx.length ? Math.min(...tablePx) : null,
      figurePx: figures.length ? Math.min(...figures) : null, unmarked,
      mathPx: mathPx.length ? Math.min(...mathPx) : null,
      wrapped: wrapped.slice(0, 3), wrappedCount: wrapped.length, cut: cut.slice(0, 3), cutCount: cut.length,
      notesMath, flatMath, levelScripts, leftTeX, notesLinks,
      covered: covered.slice(0, 3), coveredCount: covered.length,
      markers: [...(text.match(prompt) || []), ...(blocks.match(marker) || [])].slice(0, 3),
      cjkFonts: [...cjkFonts], cjkCode,
    });
  }
  probe.remove();
  return out;
}"""


def failed_requests(page) -> list[str]:
    """A list that fills, from now on, with every request of the page that the book's server answers with an error:
    a file the page asks for that the build lacks (MathJax's TeX fonts did, a lecturer's trial: 404s in every deck
    with an ℝ). ``measure`` then visits each slide, so whatever any slide or its notes draw has been asked for."""
    failed = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return failed


def measure(page) -> list[dict]:
    return page.evaluate(
        MEASURE, [PROMPTS, MARKERS, FIGURE_TEXT_NATURAL_PX, CJK_CHARS_PER_WORD, MIN_SUBSCRIPT_DROP, FOOT_GAP]
    )


def summary(rows: list[dict]) -> dict:
    code = [r["codePx"] for r in rows if r["codePx"] is not None]
    figures = [r["figurePx"] for r in rows if r["figurePx"] is not None]
    formulas = [r["mathPx"] for r in rows if r["mathPx"] is not None]
    return {
        "slides": len(rows),
        "mean_words": round(statistics.mean(r["words"] for r in rows), 1),
        "max_words": max(r["words"] for r in rows),
        "overflowing": sum(1 for r in rows if r["overflowCount"]),
        "too_tall": sum(1 for r in rows if r["content"] > r["room"]),
        "min_code_px": round(min(code), 1) if code else None,
        "min_figure_text_px": round(min(figures), 1) if figures else None,
        "min_formula_text_px": round(min(formulas), 1) if formulas else None,
        "slides_with_cut_sentences": sum(1 for r in rows if r["cutCount"]),
        "wrapped_blocks": sum(r["wrappedCount"] for r in rows),
        "notes_formulas": sum(r["notesMath"] for r in rows),
        "notes_links": sum(len(r["notesLinks"]) for r in rows),
    }


def small_figure(row: dict) -> bool:
    return row["figurePx"] is not None and row["figurePx"] < MIN_FIGURE_TEXT_PX - 0.05


def problems(rows: list[dict]) -> list[str]:
    """Every rule a deck breaks, one line per slide and rule."""
    found = []
    mean = statistics.mean(r["words"] for r in rows)
    if mean > MEAN_WORDS:
        found.append(f"{mean:.1f} visible words a slide on average > {MEAN_WORDS}")
    section = ""  # the heading of the nearest slide before that has one: what the running head must read
    for r in rows:
        section = r["title"] or section
        where = f"slide {r['h']}/{r['v']} {r['title'][:40]!r}"
        checks = [
            (r["words"] > MAX_WORDS, f"{r['words']} words > {MAX_WORDS}"),
            (r["overflowCount"] > 0, f"{r['overflowCount']} element(s) past the right edge: {r['overflow']}"),
            (r["content"] > r["room"], f"content {r['content']} px tall > {r['room']}"),
            (r["codePx"] is not None and r["codePx"] < MIN_CODE_PX - 0.01, f"code at {r['codePx'] or 0:.1f} px"),
            (r["tablePx"] is not None and r["tablePx"] < MIN_CODE_PX - 0.01, f"a table at {r['tablePx'] or 0:.1f} px"),
            (small_figure(r), f"figure text at {r['figurePx'] or 0:.1f} px < {MIN_FIGURE_TEXT_PX}"),
            (
                r["mathPx"] is not None and r["mathPx"] < MIN_FIGURE_TEXT_PX - 0.05,
                f"formula text at {r['mathPx'] or 0:.1f} px < {MIN_FIGURE_TEXT_PX}",
            ),
            (r["unmarked"] > 0, f"{r['unmarked']} figure(s) without data-text-px (tools/slide_figures.py)"),
            (r["wrappedCount"] > 0, f"code or output wrapped: {r['wrapped']}"),
            (r["cutCount"] > 0, f"sentences cut short: {r['cut']}"),
            (not r["title"] and not r["running"], "no heading, and no running head naming its section"),
            (bool(r["running"]) and r["runningPx"] < MIN_FIGURE_TEXT_PX, f"running head at {r['runningPx']} px"),
            (
                not r["title"] and r["running"] != section,
                f"running head {r['running']!r}, not its section's heading {section!r}",
            ),
            (r["coveredCount"] > 0, f"{r['coveredCount']} thing(s) drawn under the slide's foot: {r['covered']}"),
            (r["flatMath"] > 0, f"{r['flatMath']} formula(s) of the notes drawn with no width"),
            (bool(r["levelScripts"]), f"subscripts of the notes drawn on their base's line: {r['levelScripts']}"),
            (r["leftTeX"] > 0, f"{r['leftTeX']} formula(s) of the notes not MathML (MathJax markup or raw TeX)"),
            (
                any(re.search(r"\.(md|ipynb)(#|$)", href) for href in r["notesLinks"]),
                f"notes link to repository files, not the book's pages: "
                f"{[h for h in r['notesLinks'] if re.search(r'[.](md|ipynb)(#|$)', h)][:3]}",
            ),
            (bool(r["markers"]), f"prompts or test markers shown: {r['markers']}"),
            (
                any("Course Subset" not in family for family in r["cjkFonts"] + r["cjkCode"]),
                f"Chinese text in a font without the course's CJK subset: {r['cjkFonts'] + r['cjkCode']}",
            ),
        ]
        found += [f"{where}: {message}" for failed, message in checks if failed]
    return found
