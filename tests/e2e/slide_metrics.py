"""The rules a projected slide must meet (issue 29), measured in the browser on every slide of a deck at 1280x720.

``measure(page)`` visits each slide (all its fragments shown, its formulas laid out) and returns one row per slide;
``problems(rows)`` says which rules a deck breaks. tests/e2e/test_book_in_browser.py runs them on every deck.
"""

from __future__ import annotations

import statistics

SCREEN = {"width": 1280, "height": 720}
MIN_CODE_PX = 18
MIN_FIGURE_TEXT_PX = 14
MEAN_WORDS, MAX_WORDS = 40, 90
# The smallest text the course's figures draw is 8 pt (course_lib/figures: diagram labels, heatmap numbers), and
# every stored figure is a PNG at 100 dpi: 8 / 72 * 100 pixels at the figure's natural size.
FIGURE_TEXT_NATURAL_PX = 8 / 72 * 100
PROMPTS = r"In \[\s*\d*\]:|Out\[\s*\d*\]:"  # anywhere on a slide
MARKERS = r"NBVAL_|BEGIN SOLUTION|END SOLUTION|HIDDEN TESTS|MARK SCHEME|nbgrader"  # in code (prose may name them)

MEASURE = r"""async ([prompts, markers, naturalPx]) => {
  const CJK = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]/;
  const prompt = new RegExp(prompts, 'g'), marker = new RegExp(markers, 'g');
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  const slides = [...document.querySelectorAll('.reveal .slides section')].filter(s => !s.classList.contains('stack'));
  const skip = el => el.closest('aside.notes, script, style, .MathJax_Preview');
  const out = [];
  for (const [i, s] of slides.entries()) {
    const at = Reveal.getIndices(s);
    Reveal.slide(at.h, at.v, 1000);
    await new Promise(done => MathJax.Hub.Queue(() => done(true)));
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const box = s.getBoundingClientRect();
    let words = 0, text = '';
    const walker = document.createTreeWalker(s, NodeFilter.SHOW_TEXT);
    const cjkFonts = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || skip(el) || el.closest('.MathJax, .MathJax_Display, .MathJax_SVG')) continue;
      text += n.textContent + ' ';
      words += n.textContent.split(/\s+/).filter(w => /[\p{L}\p{N}]/u.test(w)).length;
      if (CJK.test(n.textContent)) cjkFonts.add(getComputedStyle(el).fontFamily);
    }
    words += [...s.querySelectorAll('.MathJax')].filter(m => !skip(m)).length;
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
    const code = [...s.querySelectorAll('pre, code, .jp-InputArea-editor')]
      .filter(c => !skip(c) && c.textContent.trim());
    const blocks = code.filter(c => c.tagName === 'PRE').map(c => c.textContent).join(' ');
    const codePx = code.map(c => parseFloat(getComputedStyle(c).fontSize) * Reveal.getScale());
    const cjkCode = code.filter(c => CJK.test(c.textContent)).map(c => getComputedStyle(c).fontFamily);
    const figures = [...s.querySelectorAll('img')].filter(img => !skip(img)).map(img => {
      const r = img.getBoundingClientRect();
      return naturalPx * Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
    });
    const heading = s.querySelector('h1, h2, h3');
    out.push({
      i, h: at.h, v: at.v, title: heading ? heading.textContent.replace('¶', '').trim() : '', words,
      content: s.scrollHeight, room: s.clientHeight, widest: Math.round(widest), slideWidth: Math.round(box.width),
      overflow: overflow.slice(0, 4), overflowCount: overflow.length,
      codePx: codePx.length ? Math.min(...codePx) : null,
      figurePx: figures.length ? Math.min(...figures) : null,
      markers: [...(text.match(prompt) || []), ...(blocks.match(marker) || [])].slice(0, 3),
      cjkFonts: [...cjkFonts], cjkCode,
    });
  }
  return out;
}"""


def measure(page) -> list[dict]:
    return page.evaluate(MEASURE, [PROMPTS, MARKERS, FIGURE_TEXT_NATURAL_PX])


def summary(rows: list[dict]) -> dict:
    code = [r["codePx"] for r in rows if r["codePx"] is not None]
    figures = [r["figurePx"] for r in rows if r["figurePx"] is not None]
    return {
        "slides": len(rows),
        "mean_words": round(statistics.mean(r["words"] for r in rows), 1),
        "max_words": max(r["words"] for r in rows),
        "overflowing": sum(1 for r in rows if r["overflowCount"]),
        "too_tall": sum(1 for r in rows if r["content"] > r["room"]),
        "min_code_px": round(min(code), 1) if code else None,
        "min_figure_text_px": round(min(figures), 1) if figures else None,
    }


def small_figure(row: dict) -> bool:
    return row["figurePx"] is not None and row["figurePx"] < MIN_FIGURE_TEXT_PX - 0.05


def problems(rows: list[dict]) -> list[str]:
    """Every rule a deck breaks, one line per slide and rule."""
    found = []
    mean = statistics.mean(r["words"] for r in rows)
    if mean > MEAN_WORDS:
        found.append(f"{mean:.1f} visible words a slide on average > {MEAN_WORDS}")
    for r in rows:
        where = f"slide {r['h']}/{r['v']} {r['title'][:40]!r}"
        checks = [
            (r["words"] > MAX_WORDS, f"{r['words']} words > {MAX_WORDS}"),
            (r["overflowCount"] > 0, f"{r['overflowCount']} element(s) past the right edge: {r['overflow']}"),
            (r["content"] > r["room"], f"content {r['content']} px tall > {r['room']}"),
            (r["codePx"] is not None and r["codePx"] < MIN_CODE_PX - 0.01, f"code at {r['codePx'] or 0:.1f} px"),
            (small_figure(r), f"figure text at {r['figurePx'] or 0:.1f} px < {MIN_FIGURE_TEXT_PX}"),
            (bool(r["markers"]), f"prompts or test markers shown: {r['markers']}"),
            (
                any("Course Subset" not in family for family in r["cjkFonts"] + r["cjkCode"]),
                f"Chinese text in a font without the course's CJK subset: {r['cjkFonts'] + r['cjkCode']}",
            ),
        ]
        found += [f"{where}: {message}" for failed, message in checks if failed]
    return found
