"""The text of a Markdown slide: what of a cell's prose a projected slide keeps (tools.deck uses it).

A slide carries whole sentences, never a sentence cut short: the cell's full text is the slide's speaker notes.

- A cell of at most ``KEEP`` words is shown whole.
- A longer one keeps its headings, formulas, tables and HTML whole. Of each paragraph (or quote) it keeps the first
  sentence (a bold lead such as "**Step 1.**" belongs to the sentence after it) while the slide's prose stays within
  ``BUDGET`` words; the first paragraph's first sentence is kept up to ``MAX_SENTENCE`` words even past the budget.
  A sentence that does not fit is left to the notes, whole.
- A common claim ("**Common claim:**", "**常见说法：**") keeps the sentence that corrects it with it, or goes to the
  notes whole.
- Of a list it keeps the first sentence of every item (an item whose first sentence is longer than ``MAX_SENTENCE``
  words is left to the notes). When the items need more than ``PAGE`` words, the list goes on over as many slides
  as it needs, each headed "<heading> (continued)".
- A table keeps every cell's first sentence when it is wordy; one of more than ``PAGE`` words goes on over slides,
  its header row on each.

Formulas and code spans count as one word and are never split. Chinese text has no spaces between words: there
each Chinese character counts as ``1 / CJK_CHARS_PER_WORD`` of a word, and a sentence ends at 。, ！ or ？ too.
"""

from __future__ import annotations

import re

BUDGET = 40  # words of prose a slide aims at (headings, formulas, tables and code are kept whole)
PAGE = 60  # words of prose at most on one slide: a longer list continues on the next slide
MAX_SENTENCE = 45  # a lone first sentence up to this long is shown past BUDGET; a longer one stays in the notes
KEEP = 38  # a slide of at most this many words is shown whole
CONTINUED = " (continued)"
CLAIM = re.compile(r"\*\*(Common claim|常见说法)[:：]")  # a misconception box's lead: its claim is false
CONTINUED_ZH = "（续）"  # after a Chinese heading
SLIDE_MAX = 85  # words a slide's heading, prose and tables may hold together before a table goes on the next slide
# (the browser test allows 90: tests/e2e/slide_metrics.py; a Chinese translation can be denser than its English)
BADGE_LINE = re.compile(r'^\s*<span class="section-badge[^"]*">.*?</span>\s*$', re.M)
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\([^)\s]+\)")
# An atom: a run of non-space characters, where a formula or a code span (spaces and all) counts as one.
ATOM = re.compile(r"(?:\$\$.+?\$\$|\$[^$]+\$|`[^`]+`|[^\s$`])+", re.S)
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")
SENTENCE_END = re.compile(r"[.?!。！？][*_)\]\"'”’」）]*$")
# Chinese: a word count by spaces is meaningless (a paragraph has none). A Chinese character counts as a fraction of
# a word, from the course's own translations: over every catalogue of locale/zh_CN (2026-12-02), the English of the
# translated units has 83,933 words, of which 14,722 stay in Latin letters in the Chinese (names, code, numbers); the
# other 69,211 became 131,733 Chinese characters: 1.90 characters a word (median of the units 1.84, quartiles 1.69
# and 2.00). tests/test_chinese_edition.py measures it again. Punctuation counts as nothing, as in English.
CJK_CHARS_PER_WORD = 1.9
CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # ideographs: what is counted
CJK_RUN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")  # and punctuation
CJK_STOP = re.compile(r"(?<=[。！？])([”’」）]*)(?=[^\s”’」）])")  # where a Chinese sentence ends inside a run of text
PROTECTED = re.compile(r"\$\$.+?\$\$|\$[^$]+\$|`[^`]+`", re.S)


def words(markdown: str) -> int:
    """Visible words of a piece of Markdown: a formula or a code span counts as one, HTML tags as none, a Chinese
    character as 1 / CJK_CHARS_PER_WORD (the total rounded)."""
    text = re.sub(r"<[^>]+>", " ", LINK.sub(r"\1", markdown))
    if not CJK_RUN.search(text):
        return sum(1 for atom in ATOM.findall(text) if re.search(r"[\w$`]", atom))
    chinese = len(CJK_CHAR.findall(PROTECTED.sub(" ", text)))
    latin = PROTECTED.sub(lambda m: CJK_RUN.sub("", m[0]), text)  # Chinese in a formula: the formula is one word
    latin = sum(1 for atom in ATOM.findall(CJK_RUN.sub(" ", latin)) if re.search(r"[\w$`]", atom))
    return latin + round(chinese / CJK_CHARS_PER_WORD)


def _split_chinese_sentences(text: str) -> str:
    """``text`` with a space after each Chinese sentence end that is followed by more text (outside formulas and
    code spans), so that a Chinese sentence is a run of atoms like an English one."""
    out, last = [], 0
    for m in PROTECTED.finditer(text):
        before = CJK_STOP.sub(r"\1 ", text[last : m.start()])
        out += [before + (" " if re.search(r"[。！？][”’」）]*$", before) else ""), m[0]]  # 06: "**…**。`Q.view`"
        last = m.end()
    return "".join(out) + CJK_STOP.sub(r"\1 ", text[last:])


def blocks(markdown: str) -> list[tuple[str, str]]:
    """The Markdown of one cell as (kind, text) blocks: heading, badge, math, table, list, quote, html, para."""
    out: list[tuple[str, str]] = []
    kind, lines, in_math = None, [], False

    def close():
        nonlocal kind, lines
        if lines:
            out.append((kind, "\n".join(lines)))
        kind, lines = None, []

    for line in markdown.splitlines():
        stripped = line.strip()
        if in_math:
            lines.append(line)
            in_math = not stripped.endswith("$$")
            if not in_math and kind == "math":
                close()
            continue
        if stripped.startswith("$$") and kind != "list":
            close()
            kind, lines = "math", [line]
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            if not in_math:
                close()
            continue
        if not stripped:
            close()
            continue
        new = _line_kind(line, stripped, kind)
        if new != kind or new in ("heading", "badge"):
            close()
            kind = new
        lines.append(line)
        in_math = stripped.count("$$") % 2 == 1
    close()
    return out


def _line_kind(line: str, stripped: str, current: str | None) -> str:
    if BADGE_LINE.match(line):
        return "badge"
    if stripped.startswith("#"):
        return "heading"
    if stripped.startswith("|"):
        return "table"
    if stripped.startswith(">"):
        return "quote"
    item = LIST_ITEM.match(line)
    if item and current == "para" and item[2][:-1].isdigit() and int(item[2][:-1]) != 1:
        return "para"  # "2022) assumes ...": only "1." or "1)" starts a list inside a paragraph (CommonMark)
    if item or (current == "list" and line[:1] in " \t"):
        return "list"
    if stripped.startswith("<") and current != "para":
        return "html"
    return current if current in ("para", "quote", "list") else "para"


def _abbreviation(atom: str) -> bool:
    bare = atom.lower().strip("*_")
    known = ("e.g.", "i.e.", "cf.", "vs.", "etc.", "etc.)", "(e.g.", "(i.e.", "(cf.", "al.", "fig.", "eq.")
    return bare in known or bool(re.fullmatch(r"\(?\d+\\?\.", bare))  # ("3\\." too: an escaped list number)


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph, each whole (links as their text; formulas and code spans never split). A bold
    lead that ends with a full stop ("**Step 1.**") belongs to the sentence after it."""
    atoms = ATOM.findall(_split_chinese_sentences(LINK.sub(r"\1", text)))
    out, current, bold = [], [], False
    for atom in atoms:
        current.append(atom)
        bold ^= atom.count("**") % 2 == 1
        ends = SENTENCE_END.search(re.sub(r"\$[^$]*\$|`[^`]*`", "", atom)) and not _abbreviation(atom)
        if ends and not bold and not _is_lead(current):
            out.append(_joined(current))
            current = []
    if current:
        out.append(_joined(current))
    return out


def _joined(atoms: list[str]) -> str:
    """Atoms back into text: a space between two, none after a Chinese sentence end (where sentences() split)."""
    return re.sub(r"(?<=[。！？”’」）]) (?=[\u3000-\u303f\u3400-\u9fff\uff00-\uffef`$])", "", " ".join(atoms))


def _is_lead(current: list[str]) -> bool:
    """True when ``current`` is a bold or italic lead on its own ("**Step 1.**", "**第 1 步**。", "*Scale.*"), which
    joins the sentence after it."""
    return current[0].startswith("*") and re.search(r"\*[。：]?$", current[-1]) is not None  # bold or italic


def first_sentence(text: str) -> str:
    """The first sentence of ``text``; a common claim's together with the sentence after it, which corrects it (a
    claim projected alone reads as the course's own: an eighteenth lecturer's trial found one on 13's slides)."""
    found = sentences(text)
    return _joined(found[: 2 if found and CLAIM.match(found[0]) else 1])


def _list_items(text: str) -> list[tuple[str, str]]:
    """(marker, text) of each top-level item of a Markdown list."""
    items: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = LIST_ITEM.match(line)
        if match and not match[1]:
            items.append((match[2], line[match.end() :]))
        elif items:
            items[-1] = (items[-1][0], items[-1][1] + " " + line.strip())
    return items


def list_lines(text: str, max_items: int | None = None) -> list[str]:
    """Each top-level item of a Markdown list as one line: its marker and its first sentence, whole; an item whose
    first sentence is longer than MAX_SENTENCE words is left to the notes."""
    lines = [(marker, first_sentence(item)) for marker, item in _list_items(text)[:max_items]]
    return [f"{marker} {sentence}" for marker, sentence in lines if words(sentence) <= MAX_SENTENCE]


def short_table(table: str) -> str:
    """A Markdown table whose wordy cells keep their first sentence (a table of figures stays as it is)."""
    if words(table) <= KEEP:
        return table
    rows = []
    for row in table.splitlines():
        cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
        if all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells):
            rows.append(row)
            continue
        rows.append("| " + " | ".join(first_sentence(c.strip()) if c.strip() else "" for c in cells) + " |")
    return "\n".join(rows)


def table_pages(table: str, limit: int = PAGE) -> list[str]:
    """A Markdown table as tables of consecutive rows of at most ``limit`` words each, every one with the header."""
    rows = table.splitlines()
    if words(table) <= limit or len(rows) < 4:
        return [table]
    head, body = rows[:2], rows[2:]
    pages, page = [], []
    for row in body:
        if page and words("\n".join(head + page + [row])) > limit:
            pages.append(page)
            page = []
        page.append(row)
    pages.append(page)
    return ["\n".join(head + page) for page in pages]


def items_per_page(pages: list[str]) -> list[int]:
    """The list items each slide of ``pages`` shows (lines that open a top-level item)."""
    return [sum(1 for line in page.splitlines() if LIST_ITEM.match(line) and not line[:1].isspace()) for page in pages]


def _layout_items(parts: list[tuple[str, str]], sizes: list[int], heading: str | None) -> list[str] | None:
    """The parts laid out with ``sizes[k]`` list items on slide k (a translation: its English deck's items per slide),
    or None where that cannot be (another number of items, a table's break) or a slide would pass SLIDE_MAX words."""
    if any(k == "break" for k, _ in parts) or sum(1 for k, _ in parts if k == "item") != sum(sizes):
        return None
    pages: list[list[str]] = [[]]
    left, page = sizes[0], 0
    for kind, text in parts:
        if kind == "item" and left == 0:
            while left == 0:
                page += 1
                left = sizes[page]
            pages.append([_continued(heading)] if heading else [])
        if kind == "item" and pages[-1] and pages[-1][-1].startswith("\x00"):
            pages[-1][-1] += "\n" + text
        else:
            pages[-1].append("\x00" + text if kind == "item" else text)
        left -= kind == "item"
    out = ["\n\n".join(part.lstrip("\x00") for part in page) for page in pages if page]
    return out if len(out) == len(sizes) and all(words(p) <= SLIDE_MAX for p in out) else None


def paginate(
    parts: list[tuple[str, str]], heading: str | None, count: int | None = None, sizes: list[int] | None = None
) -> list[str]:
    """Lay out (kind, markdown) parts on slides. A list ("item" parts) whose prose would take a slide past PAGE
    words goes on over as few slides as it needs, the items shared out evenly (the fullest slide as light as it
    can be); each slide after the first is headed ``heading (continued)``. With ``count``, over that many slides
    when a limit between the largest item and SLIDE_MAX words makes it (the lightest such), else as without."""
    total = sum(words(t) for k, t in parts if k in ("item", "para", "quote"))
    largest = max((words(t) for k, t in parts if k == "item"), default=0)
    needed = len(_layout(parts, PAGE, heading))
    if sizes and len(sizes) > 1 and 0 not in sizes and (laid := _layout_items(parts, sizes, heading)):
        return laid
    if count is not None and count != needed:
        fits = [limit for limit in range(largest, SLIDE_MAX + 1) if len(_layout(parts, limit, heading)) == count]
        if fits:
            return _layout(parts, fits[0], heading)
    if needed < 2:
        return _layout(parts, PAGE, heading)
    limit = PAGE
    for limit in range(max(largest, -(-total // needed)), PAGE + 1):  # the lightest limit with as few slides
        if len(_layout(parts, limit, heading)) <= needed:
            break
    return _layout(parts, limit, heading)


def _layout(parts: list[tuple[str, str]], limit: int, heading: str | None) -> list[str]:
    pages: list[list[str]] = [[]]
    prose = 0
    for kind, text in parts:
        n = words(text) if kind in ("item", "para", "quote") else 0
        if kind == "break" or (kind == "item" and prose and prose + n > limit):
            pages.append([_continued(heading)] if heading else [])
            prose = 0
        if kind == "break":
            continue
        if kind == "item" and pages[-1] and pages[-1][-1].startswith("\x00"):
            pages[-1][-1] += "\n" + text  # the next item of the same list
        else:
            pages[-1].append("\x00" + text if kind == "item" else text)
        prose += n
    return ["\n\n".join(part.lstrip("\x00") for part in page) for page in pages if page]


def _continued(heading: str) -> str:
    return heading.rstrip() + (CONTINUED_ZH if CJK_RUN.search(heading) else CONTINUED)


def slide_pages(markdown: str, budget: int = BUDGET, count: int | None = None, sizes=None) -> list[str]:
    """What the slides of a Markdown cell show, one string a slide (usually one): headings, formulas, tables and
    HTML whole, prose in whole sentences (see the module's docstring); ``count``: see :func:`paginate`."""
    parts = blocks(markdown)
    if words(markdown) - sum(words(t) for k, t in parts if k == "badge") <= KEEP:
        return ["\n\n".join(LINK.sub(r"\1", t) for k, t in parts if k != "badge")]
    heading = next((LINK.sub(r"\1", t) for k, t in parts if k == "heading"), None)
    chosen: list[tuple[str, str]] = []
    prose = 0
    for kind, text in parts:
        if kind == "badge":
            continue
        if kind == "table":
            tables = table_pages(short_table(LINK.sub(r"\1", text)))
            shown = sum(words(t) for k, t in chosen if k != "break")
            if chosen and shown + words(tables[0]) > SLIDE_MAX:
                chosen.append(("break", ""))
            chosen += [("table", tables[0])] + [part for t in tables[1:] for part in (("break", ""), ("table", t))]
        elif kind in ("heading", "math", "html"):
            chosen.append((kind, LINK.sub(r"\1", text)))
        elif kind == "list":
            items = list_lines(text)
            chosen += [("item", line) for line in items]
            prose += sum(words(line) for line in items)
        elif kind in ("para", "quote"):
            prefix = "> " if kind == "quote" else ""
            body = re.sub(r"^\s*>\s?", "", text, flags=re.M) if prefix else text
            sentence = first_sentence(body)
            n = words(sentence)
            if prose + n <= budget or (prose == 0 and n <= MAX_SENTENCE):
                chosen.append((kind, prefix + sentence))
                prose += n
    return paginate(chosen, heading, count, sizes) or [""]


def slide_text(markdown: str, budget: int = BUDGET) -> str:
    """What a Markdown slide shows, when it fits on one slide: all its pages, joined."""
    return "\n\n".join(slide_pages(markdown, budget))
