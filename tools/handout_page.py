"""The page of a handout (tools/handouts.py) as Chromium lays it out and prints it: its HTML and style, and the
scripts that fit its notes to the page's width, pack its slides onto pages and measure what is printed."""

from __future__ import annotations

import base64
import html

IMAGE_MM = 186  # a slide image's width on the page: code at 22 px x 186/1280 mm = 9.1 pt (8 pt needs 164 mm)
CODE_PX, SLIDE_PX = 22, 1280  # code and output on the slide (book/_static/course-slides.css), the slide's width
LABELS = {
    "en": {"slide": "slide {n} of {of}", "page": " (the book's page {page})"},
    "zh": {"slide": "第 {n} 张，共 {of} 张", "page": "（本书的页面 {page}）"},
}

# Pack the slides onto sheets of one A4 page: in order, at most PER_PAGE a sheet, while they fit its height. A slide
# whose notes are longer than a page runs onto the next page wherever it starts: it may start below other slides when
# its image and the first lines of its notes (HEAD_MM) fit there, and only then is its block allowed to break (English
# 00: its exercise slide's notes print the checks' long messages; it took a page and a line of its own, after a page
# with one short slide).
HEAD_MM = 15
PACK = """perPage => {
  const room = document.querySelector('.measure').getBoundingClientRect().height;
  const page = document.querySelector('.page').getBoundingClientRect().height;
  const blocks = [...document.querySelectorAll('.slide-block')];
  const book = document.querySelector('.book');
  const title = book.querySelector('h1').getBoundingClientRect().height;
  const head = HEAD_MM * 96 / 25.4;
  const sheets = [];
  let sheet = null, used = title, count = 0;
  for (const block of blocks) {
    const height = block.getBoundingClientRect().height;
    const top = block.getBoundingClientRect().top;
    const long = height > room;  // its notes run onto another page wherever it starts
    const needed = long ? block.querySelector('.slide-image').getBoundingClientRect().bottom - top + head : height;
    if (long) block.classList.add('long');
    if (!sheet || count >= perPage || used + needed > room) {
      if (sheet) used = 0;
      sheet = document.createElement('div');
      sheet.className = 'sheet';
      book.appendChild(sheet);
      sheets.push({slides: 0, height: 0});
      count = 0;
    }
    sheet.appendChild(block);
    used += height; count += 1;
    sheets[sheets.length - 1] = {slides: count, height: used};
  }
  const glossary = document.querySelector('.glossary');  // the appendix, on pages of its own
  if (glossary) book.appendChild(glossary);
  document.querySelector('.staging').remove();
  // A sheet holds one page, or more when the notes of its last slide are longer than what is left of the page.
  return [sheets.map(s => ({slides: s.slides, pages: Math.max(1, Math.ceil((s.height - 1) / page))})),
          glossary ? Math.ceil((glossary.getBoundingClientRect().height - 1) / page) : 0];
}"""
PACK = PACK.replace("HEAD_MM", str(HEAD_MM))

# What is still wider than the page's column (a long formula, a wide table, a line of code longer than 109 columns) is
# zoomed to fit it: wider content would make Chromium shrink every page of the PDF. Printed output (an error message
# of 341 characters in 00's notes) wraps instead, at 8 pt: zoomed to one line it was printed at 2.8 pt. Returns the
# widest right edge of any note's part (px), after, and how many code blocks of the notes draw a line of theirs on
# two lines.
FIT = """() => {
  const column = document.querySelector('.staging').getBoundingClientRect().right;
  for (const el of document.querySelectorAll('.notes > *, .notes math[display="block"], .notes table')) {
    const box = el.getBoundingClientRect();
    const wide = Math.max(box.right, box.left + el.scrollWidth);
    if (wide > column + 0.5) el.style.zoom = (column - box.left) / (wide - box.left);
  }
  const widest = Math.max(0, ...[...document.querySelectorAll('.notes *')].map(el => el.getBoundingClientRect().right));
  const wrapped = [...document.querySelectorAll('.notes .highlight pre')].filter(pre => {  // lines drawn for written
    const range = document.createRange();
    range.selectNodeContents(pre);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    return tops.size > pre.textContent.replace(/\\n+$/, '').split('\\n').filter(l => l.trim()).length;
  }).length;
  return [widest, wrapped];
}"""

# The Chinese subset (book/_static/course-cjk.css) loaded before the pages are laid out and printed.
FONTS = """() => document.fonts.load('16px "Noto Sans SC Course Subset"', '猫')
    .then(() => document.fonts.ready).then(() => true)"""

# What the test and the report check on the page that is printed: the printed size (pt) of the slides' 22 px code
# (the narrowest image) and of the notes' code (8 pt, less where FIT zoomed a long line), how many slides stand
# beside an empty column (room of 15 mm or more to an image's right with no notes in it), the internal links and
# those whose anchor is missing, and the Chinese characters of the page with whether the course's font has loaded.
MEASURE = """([codePx, minColumnMm]) => {
  const mm = 96 / 25.4, blocks = [...document.querySelectorAll('.slide-block')];
  const code = blocks.map(b => b.querySelector('img')).map(img =>
    codePx * img.getBoundingClientRect().width * 72 / 96 / img.naturalWidth);
  const zoom = el => el.closest('.notes') ? parseFloat(el.style.zoom || 1) * zoom(el.parentElement) : 1;
  const notesCode = [...document.querySelectorAll('.notes pre')].map(pre =>
    parseFloat(getComputedStyle(pre).fontSize) * 72 / 96 * zoom(pre));
  const empty = blocks.filter(b => {
    const img = b.querySelector('img').getBoundingClientRect();
    if (b.getBoundingClientRect().right - img.right < minColumnMm * mm) return false;
    return ![...b.querySelectorAll('.notes *')].some(el => {
      const box = el.getBoundingClientRect();
      return box.left >= img.right - 1 && box.top < img.bottom && box.width > 0 && el.textContent.trim();
    });
  }).length;
  const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1));
  const chinese = (document.body.innerText.match(/[\\u4e00-\\u9fff]/g) || [])
    .filter((c, i, all) => all.indexOf(c) === i);
  return {code_pt: Math.min(...code), notes_code_pt: Math.min(8, ...notesCode), empty_beside: empty,
          links: links.length, unresolved: links.filter(id => !document.getElementById(id)),
          chinese: chinese.slice(0, 12).join(''), cjk_font: [...document.fonts].some(f =>
            f.family.includes('Course Subset') && f.status === 'loaded')};
}"""

STYLE = """
@page { size: A4; margin: 12mm 12mm 14mm; }
html { font-family: "Noto Sans SC Course Subset", "DejaVu Sans", sans-serif; font-size: 8.5pt; color: #111;
  font-variant-ligatures: none; }  /* "ff" as two letters in the PDF's text, not "ﬀ": a search for "different" works */
body { margin: 0; }
h1.deck { font-size: 13pt; margin: 0 0 3mm; }
.measure, .page { position: absolute; visibility: hidden; width: 1px; }
.measure { height: 265mm; }  /* the page's 271 mm, less 6 mm for what print lays out taller than the screen */
.page { height: 271mm; }
.sheet { break-after: page; }
.sheet:last-child { break-after: auto; }
.slide-block { display: flow-root; padding: 2mm 0; border-top: 0.3mm solid #bbb; break-inside: avoid; }
.slide-block.long { break-inside: auto; }  /* its notes, longer than a page, continue on the next */
.slide-image { break-inside: avoid; break-after: avoid; }
.slide-image { position: relative; margin: 0 0 1.5mm; }
/* the slide's text under its image (the image is drawn after it, over it): a PDF reader's search finds it, no one
   sees it */
.slide-text { position: absolute; inset: 0.5mm; overflow: hidden; font-size: 2pt; line-height: 1.1;
  white-space: pre-wrap; color: #000; font-family: "DejaVu Sans", "Noto Sans SC Course Subset", sans-serif; }
.slide-block img { position: relative; display: block;
  width: IMAGE_MMmm; max-width: none; margin: 0; border: 0.2mm solid #999;
  box-sizing: border-box; }
.notes { line-height: 1.3; overflow-wrap: anywhere; }  /* below the slide, the page's whole width */
/* code too (each line drawn as one: 109 columns of 8 pt fit the page's width; FIT zooms a longer one); printed
   output wraps a longer line */
.notes p, .notes ul, .notes ol { margin: 0 0 1.5mm; }
.notes ul, .notes ol { padding-left: 4mm; }
.notes h1, .notes h2, .notes h3, .notes h4 { font-size: 9pt; margin: 0 0 1mm; }
.notes pre { white-space: pre; font-size: 8pt; background: #f4f4f4; padding: 1mm; margin: 0 0 1.5mm; }
.notes pre:not(.highlight pre) { white-space: pre-wrap; }
.notes code, .notes pre { font-family: "Noto Sans SC Course Subset", "DejaVu Sans Mono", monospace; }
.notes code { font-size: 0.92em; }
.notes table { border-collapse: collapse; font-size: 8pt; margin-bottom: 1.5mm; }
.notes td, .notes th { border: 0.2mm solid #ccc; padding: 0.3mm 1mm; }
a.glossary-link { color: inherit; text-decoration: underline dotted #666; }
.number { font-size: 7pt; color: #555; margin-bottom: 1mm; }
.glossary { break-before: page; line-height: 1.3; }
.glossary h2 { font-size: 11pt; margin: 0 0 2mm; }
.glossary ul { list-style: none; padding: 0; margin: 0; }
.glossary li p { margin: 0 0 1.5mm; }
""".replace("IMAGE_MM", str(IMAGE_MM))


def handout_html(title: str, slides: list[dict], static_url: str, lang: str = "en", glossary: str = "") -> str:
    """The handout of one deck as an HTML page: every slide as an image, its notes below it, then the glossary."""
    blocks = []
    for number, slide in enumerate(slides, 1):
        image = base64.b64encode(slide["png"]).decode("ascii")
        notes = slide["notes"].strip()
        label = LABELS[lang]["slide"].format(n=number, of=len(slides))
        blocks.append(
            f'<div class="slide-block"><div class="number">{label}</div>'
            f'<div class="slide-image"><div class="slide-text">{html.escape(slide.get("text", ""))}</div>'
            f'<img alt="slide {number}" src="data:image/png;base64,{image}"></div>'
            + (f'<div class="notes">{notes}</div>' if notes else "")
            + "</div>"
        )
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}: handout</title>'
        f'<link rel="stylesheet" href="{static_url}course-cjk.css"><style>{STYLE}</style></head><body>'
        f'<div class="measure"></div><div class="page"></div>'
        f'<div class="book"><h1 class="deck">{html.escape(title)}</h1></div>'
        f'<div class="staging">{"".join(blocks)}{glossary}</div></body></html>'
    )
