"""Link each glossary term at its first use in every notebook's markdown (idempotent), and check the links.

The glossary ``docs/glossary.md`` is the single source: every entry is a list item of the form

    - <a id="attention-weights"></a>**attention weights** · 注意力权重 — definition ... *First used in* [00](...);
      *explained in* [03](...). <!-- match: attention weight -->

(one line in the file). "First used in" is the first notebook whose markdown uses the term (set by
``--write-first-use``); "explained in", written by hand, is the notebook that teaches it, when that is a later one.
The bold English term and the optional ``match:`` alternatives (separated by ``;``) are what is looked for in the
notebooks, case-insensitively, as whole words (a final "s"/"es" is allowed for plurals); ``match-only:`` leaves the
bare term out, and ``keys and [values]`` matches the whole phrase but links only "values". In each notebook the first
use of a term in the markdown cells gets a link ``[word](../docs/glossary.md#attention-weights)``. What does not
count as a use: headings, code spans and code blocks, math (``$...$``), existing links and HTML, the phrases of
``NOT_A_USE`` (where the word has its everyday sense), and everything from the "Further reading" heading on. A
notebook where a term's word has another sense throughout (notebook 14 scores outputs, not queries against keys) says
so in any markdown cell with ``<!-- glossary: another sense here: attention-score -->``; that term is then not looked
for in it.
Where two terms overlap ("multi-head attention" and "attention") the longer one wins. Code cells and outputs are
never touched.

    python -m tools.glossary_links                       # link every notebooks/NN_*.ipynb
    python -m tools.glossary_links notebooks/04_*.ipynb  # some of them
    python -m tools.glossary_links --check               # exit 1 if a term's first use is not linked
    python -m tools.glossary_links --first-use           # where each term is first used, vs what the glossary says
    python -m tools.glossary_links --write-first-use     # set the glossary's "First used in" from the notebooks
    python -m tools.glossary_links --remove              # take every glossary link out again

Adding a link changes only markdown, so a notebook's outputs and execution counts stay valid (strict nbval compares
code outputs only); still re-run the notebook's nbval check after linking.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.md"
NOTEBOOKS_DIR = ROOT / "notebooks"
LINK_PREFIX = "../docs/glossary.md#"  # from notebooks/ to docs/

ENTRY_RE = re.compile(
    r'^- <a id="(?P<slug>[a-z0-9-]+)"></a>\*\*(?P<term>[^*]+)\*\* · (?P<zh>[^—]+?) — (?P<definition>.+?)'
    r"\s*(?P<trailer>\*First used in\* (?P<first>\S+?)(?:; \*explained in\* (?P<explained>\S+?))?\.)"
    r"(?:\s*<!-- (?P<kind>match|match-only): (?P<match>.*?) -->)?\s*$"
)
# Text that is not prose: code blocks, code spans, display and inline math, links/images (whole), HTML tags, URLs.
PROTECTED_RE = re.compile(
    r"```.*?```"
    r"|`[^`\n]*`"
    r"|\$\$.*?\$\$"
    r"|(?<!\\)\$(?!\s)[^$\n]*?(?<![\s\\])\$"
    r"|!?\[[^\]]*\]\([^)\n]*\)"
    r"|<[^>\n]+>"
    r"|https?://\S+",
    re.DOTALL,
)
# Phrases in which a glossary word is ordinary English (or another sense), so that it is not the term's use.
NOT_A_USE = [
    "Self-Attention from the Ground Up",  # the course's title
    "sequence of numbered",  # "the course is a sequence of numbered notebooks"
    "pixel values",
    "singular value",
]
NOT_A_USE_RE = re.compile("|".join(re.escape(p) for p in NOT_A_USE), re.IGNORECASE)
OTHER_SENSE_RE = re.compile(r"<!-- glossary: another sense here: ([a-z0-9 -]+?) -->")
GLOSSARY_LINK_RE = re.compile(r"\[[^\]]*\]\(" + re.escape(LINK_PREFIX) + r"([a-z0-9-]+)\)")
HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
STOP_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+.*further reading", re.IGNORECASE)


@dataclass
class Entry:
    slug: str
    term: str
    zh: str
    definition: str
    first: str  # "03": the first notebook whose markdown uses the term
    patterns: list[str] = field(default_factory=list)
    line: int = 0

    only: bool = False  # match only the alternatives, not the bare term
    explained: str = ""  # the notebook that explains the term, when it is not the first that uses it

    @functools.cached_property
    def regexes(self) -> list[re.Pattern]:
        """One pattern per way of writing the term, each with a group ``w``: the words that become the link."""
        alternatives = sorted(set(self.patterns) | ({self.term} if not self.only else set()), key=len, reverse=True)
        return [_alternative_regex(alt) for alt in alternatives]


def _words(text: str) -> str:
    """Regex for literal text, any whitespace between words, a hyphen also matching a space or nothing."""
    words = [re.escape(w) for w in text.split()]
    return r"\s+".join(w.replace(r"\-", r"[-\s]?") for w in words)


def _alternative_regex(alt: str) -> re.Pattern:
    """``keys and [values]`` matches "keys and values" and links "values"; a bare ``value`` also allows plurals."""
    m = re.fullmatch(r"(.*?)\[(.+?)\](.*)", alt.strip())
    before, word, after = (m[1], m[2], m[3]) if m else ("", alt.strip(), "")
    body = _words(word)
    if word[-1].isalpha() and word[-1].lower() != "s":
        body += "(?:s|es)?"
    before = _words(before) + r"\s*" if before.strip() else ""
    after = r"\s*" + _words(after) + ("(?:s|es)?" if after.strip()[-1].isalpha() else "") if after.strip() else ""
    return re.compile(rf"(?<![\w-]){before}(?P<w>{body}){after}(?![\w-])", re.IGNORECASE)


def read_glossary(path: Path = GLOSSARY) -> list[Entry]:
    """The entries of the glossary, in file order. Raises ValueError for a malformed or duplicate entry."""
    entries, slugs = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.startswith("- <a id="):
            continue
        m = ENTRY_RE.match(line)
        if not m:
            raise ValueError(f"{path.name}:{n}: malformed glossary entry: {line[:80]}")
        first = re.sub(r"^\[(\w+)\].*", r"\1", m["first"])
        explained = re.sub(r"^\[(\w+)\].*", r"\1", m["explained"] or first)
        patterns = [p.strip() for p in (m["match"] or "").split(";") if p.strip()]
        if m["slug"] in slugs:
            raise ValueError(f"{path.name}:{n}: duplicate anchor {m['slug']!r}")
        slugs.add(m["slug"])
        only = m["kind"] == "match-only"
        entry = Entry(m["slug"], m["term"], m["zh"].strip(), m["definition"], first, patterns, n, only, explained)
        entries.append(entry)
    return entries


def _prose_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the parts of a markdown cell that count as prose (see the module docstring)."""
    spans, pos = [], 0
    offset = 0
    lines = text.split("\n")
    stop = len(text)
    blocked = []  # heading lines
    for line in lines:
        if STOP_HEADING_RE.match(line):
            stop = offset
            break
        if HEADING_RE.match(line):
            blocked.append((offset, offset + len(line)))
        offset += len(line) + 1
    for m in PROTECTED_RE.finditer(text):
        blocked.append(m.span())
    for m in NOT_A_USE_RE.finditer(text):
        blocked.append(m.span())
    for start, end in sorted(blocked):
        if start > pos:
            spans.append((pos, min(start, stop)))
        pos = max(pos, end)
    spans.append((pos, stop))
    return [(a, b) for a, b in spans if a < b]


@dataclass
class Use:
    cell: int
    start: int
    end: int
    entry: Entry
    linked: bool  # already a glossary link to this entry


def find_uses(nb, entries: list[Entry]) -> dict[str, Use]:
    """The first use of each glossary term in the notebook's markdown (slug -> Use), longest match first."""
    other_sense = {
        slug
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for m in OTHER_SENSE_RE.finditer(cell.source)
        for slug in m[1].split()
    }
    entries = [e for e in entries if e.slug not in other_sense]
    first: dict[str, Use] = {}
    stopped = False
    for c, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown" or stopped:
            continue
        text = cell.source
        if any(STOP_HEADING_RE.match(line) for line in text.split("\n")):
            stopped = True
        candidates: list[Use] = []
        for m in GLOSSARY_LINK_RE.finditer(text):  # existing glossary links count as linked uses
            entry = next((e for e in entries if e.slug == m[1]), None)
            if entry is not None:
                candidates.append(Use(c, m.start(), m.end(), entry, True))
        spans = _prose_spans(text)
        starts = [a for a, _ in spans]
        for entry in entries:
            for regex in entry.regexes:
                for m in regex.finditer(text):
                    k = bisect.bisect_right(starts, m.start()) - 1  # the prose span the match starts in
                    if k >= 0 and m.end() <= spans[k][1]:
                        candidates.append(Use(c, m.start("w"), m.end("w"), entry, False))
        candidates.sort(key=lambda u: (u.start, -(u.end - u.start)))
        taken_until = -1
        for use in candidates:  # keep the longest of overlapping matches, left to right
            if use.start < taken_until:
                continue
            taken_until = use.end
            first.setdefault(use.entry.slug, use)
    return first


def link_notebook(nb, entries: list[Entry]) -> int:
    """Link every unlinked first use in ``nb`` in place; return how many links were added."""
    uses = [u for u in find_uses(nb, entries).values() if not u.linked]
    for use in sorted(uses, key=lambda u: (u.cell, -u.start)):  # right to left, so offsets stay valid
        cell = nb.cells[use.cell]
        text = cell.source
        word = text[use.start : use.end]
        cell.source = f"{text[: use.start]}[{word}]({LINK_PREFIX}{use.entry.slug}){text[use.end :]}"
    return len(uses)


def remove_links(nb) -> int:
    """Turn every glossary link of ``nb``'s markdown back into plain text, in place; return how many were removed."""
    removed = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        while True:
            new, n = GLOSSARY_LINK_RE.subn(lambda m: m[0][1 : m[0].index("](")], cell.source)
            if not n:
                break
            cell.source, removed = new, removed + n
    return removed


def unlinked_first_uses(nb, entries: list[Entry]) -> list[str]:
    """Terms whose first use in ``nb`` is not a glossary link, with a little context."""
    problems = []
    for use in find_uses(nb, entries).values():
        if not use.linked:
            text = nb.cells[use.cell].source
            context = text[max(0, use.start - 30) : use.end + 30].replace("\n", " ")
            problems.append(f"{use.entry.term!r} in markdown cell {use.cell}: ...{context}...")
    return problems


def first_use_table(notebooks: list[Path], entries: list[Entry]) -> dict[str, str]:
    """slug -> the number ("03") of the first notebook whose markdown uses the term."""
    found: dict[str, str] = {}
    for path in sorted(notebooks):
        nb = nbformat.read(path, as_version=4)
        for slug in find_uses(nb, entries):
            found.setdefault(slug, path.name[:2])
    return found


def trailer(first: str, explained: str, notebooks: list[Path]) -> str:
    """'*First used in* [00](../notebooks/00_x.ipynb); *explained in* [04](...).' (links where the notebook exists)."""
    names = {p.name[:2]: p.name for p in notebooks}

    def ref(number: str) -> str:
        return f"[{number}](../notebooks/{names[number]})" if number in names else number

    text = f"*First used in* {ref(first)}"
    if explained and explained != first:
        text += f"; *explained in* {ref(explained)}"
    return text + "."


def write_first_use(found: dict[str, str], notebooks: list[Path], path: Path = GLOSSARY) -> int:
    """Set each entry's "First used in" from the notebooks (keeping "explained in"); return how many lines changed."""
    lines = path.read_text(encoding="utf-8").split("\n")
    changed = 0
    for entry in read_glossary(path):
        line = lines[entry.line - 1]
        m = ENTRY_RE.match(line)
        new_trailer = trailer(found.get(entry.slug, entry.first), entry.explained, notebooks)
        new = line[: m.start("trailer")] + new_trailer + line[m.end("trailer") :]
        if new != line:
            lines[entry.line - 1] = new
            changed += 1
    path.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.glossary_links", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="only report unlinked first uses (exit 1 if any)")
    group.add_argument("--first-use", action="store_true", help="print where each term is first used")
    group.add_argument("--write-first-use", action="store_true", help="update the glossary's 'First used in'")
    group.add_argument("--remove", action="store_true", help="remove every glossary link from the notebooks")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    entries = read_glossary()
    if args.first_use or args.write_first_use:
        found = first_use_table(notebooks, entries)
        for e in entries:
            actual = found.get(e.slug, "--")
            flag = "" if actual in ("--", e.first) else "   <- differs"
            print(f"{e.term:40s} glossary {e.first:>3}  notebooks {actual:>3}{flag}")
        if args.write_first_use:
            print(f"{write_first_use(found, notebooks)} entr(ies) updated in {GLOSSARY.relative_to(ROOT)}")
        return 0
    status = 0
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        if args.check:
            problems = unlinked_first_uses(nb, entries)
            for problem in problems:
                print(f"{path.name}: {problem}")
            status |= bool(problems)
            continue
        if args.remove:
            removed = remove_links(nb)
            if removed:
                nbformat.write(nb, path)
            print(f"{path.name}: {removed} link(s) removed")
            continue
        added = link_notebook(nb, entries)
        if added:
            nbformat.write(nb, path)
        print(f"{path.name}: {added} link(s) added")
    return status


if __name__ == "__main__":
    sys.exit(main())
