"""The Chinese edition: the course's prose in gettext catalogues, and the Chinese notebooks and pages made from them.

    python -m tools.i18n status                 # per source: units, translated, fuzzy, untranslated
    python -m tools.i18n update [SOURCE...]     # after an English edit: catalogues follow, twins regenerate
    python -m tools.i18n start SOURCE...        # begin translating a source (a catalogue with empty entries)
    python -m tools.i18n check                  # what tests/test_i18n.py checks, as a list of problems
    python -m tools.i18n todo SOURCE            # JSON: the units still to translate (with old translations as hints)
    python -m tools.i18n fill SOURCE FILE.json  # put translations {msgid: msgstr} in; refuses any that lose something
                                                # ({msgid: {"msgstr": ..., "another_sense": ["accuracy"]}}: a glossary
                                                # word used in its everyday sense in that unit)

**Sources** are the notebooks' markdown cells and three pages of ``docs/`` (``SOURCES``). Each is cut into
paragraph-sized **units** (``units``): a heading, a paragraph, one list item, one table row, a quoted box; code
fences, rules and units with no words outside maths, code and tags are copied, not translated. A unit's exact
Markdown is its ``msgid``: the translator keeps its maths, inline code, link targets, HTML tags and numbers
(``problems`` checks each) and writes the rest in Chinese, with the glossary's Chinese term in the text of every
link to a glossary entry.

**Catalogues** live in ``locale/zh_CN/`` beside the source's path (``notebooks/03_query_key_value.po``), one entry
per distinct unit, read and written with polib. ``update`` marks a new unit for translation; a changed one gets the
old translation as a hint, marked fuzzy with the old English as ``#| msgid``; a removed one stays as an obsolete entry
(``#~``) for the next edit to reuse. ``status`` lists the sources not started yet.

**Twins**: ``notebooks/zh/NN_name.ipynb`` is the English notebook with each markdown unit replaced by its
translation; code cells are the English code, token for token, with their comments translated (tools/i18n_code.py:
a comment is a unit too; the twin keeps an untranslated one English, and check reports it); outputs and
metadata are the English ones byte for byte (the strict nbval run of the English notebooks vouches for every number
the Chinese edition shows). ``docs/zh/NAME.md`` likewise. A relative link in a
twin points where the English one points, at the twin of its target when that has one.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import functools
import json
import posixpath
import re
import sys
from collections import Counter
from pathlib import Path

import polib
from markdown_it import MarkdownIt

from course_lib.paths import ROOT
from tools import i18n_code

LANGUAGE = "zh_CN"
LOCALE = ROOT / "locale" / LANGUAGE
PAGES = ("docs/glossary.md", "docs/misconceptions.md", "docs/lecturers_guide.md")
HINT_SIMILARITY = 0.6  # a changed unit inherits the closest old translation at least this similar, marked fuzzy
_MD = MarkdownIt("commonmark").enable("table")


def sources(root: Path = ROOT) -> list[str]:
    """Every source of the Chinese edition, as a path relative to the repository root."""
    notebooks = sorted(p.relative_to(root).as_posix() for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return notebooks + [page for page in PAGES if (root / page).exists()]


def catalogue_path(source: str, root: Path = ROOT) -> Path:
    return root / "locale" / LANGUAGE / Path(source).with_suffix(".po")


def twin_path(source: str) -> str:
    """``notebooks/03_x.ipynb`` -> ``notebooks/zh/03_x.ipynb``; ``docs/glossary.md`` -> ``docs/zh/glossary.md``."""
    folder, name = posixpath.split(source)
    return posixpath.join(folder, "zh", name)


# --- units ------------------------------------------------------------------------------------------------------

_SPLIT = {"bullet_list_open": "list_item_open", "ordered_list_open": "list_item_open", "table_open": "tr_open"}
_COPIED = {"fence", "code_block", "hr"}
# What a translation must keep: display and inline maths, inline code, link targets, HTML tags (in this order, so
# that a `$` inside code or a link is not read as maths).
_PROTECTED = re.compile(
    r"(?P<code>`+)(?P<codebody>.+?)(?P=code)"
    r"|\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?P<inline>(?:[^$\n]|\n(?![ \t>]*\n))+?)\$"
    r"|\]\((?P<target>[^)\s]+)\)|(?P<tag><[A-Za-z/!][^<>]*>)",
    re.S,
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z]{2,}")


def units(markdown: str) -> list[tuple[int, int]]:
    """The line ranges [start, end) of ``markdown``'s translatable units, in order."""
    tokens = _MD.parse(markdown)
    lines = markdown.split("\n")
    found, split_into = [], None
    for token in tokens:
        if token.map is None or token.nesting == -1:
            continue
        if token.level == 0:
            split_into = _SPLIT.get(token.type)
            if split_into is None and token.type not in _COPIED:
                found.append(token.map)
        elif split_into and token.type == split_into and token.level in (1, 2):
            found.append(token.map)
    ranges = []
    for start, end in found:
        while end > start and not lines[end - 1].strip():
            end -= 1
        if translatable("\n".join(lines[start:end])):
            ranges.append((start, end))
    return ranges


def translatable(text: str) -> bool:
    """True when ``text`` has words outside its maths, code, link targets and tags."""
    return bool(_WORD.search(_PROTECTED.sub(" ", text)))


def unit_texts(markdown: str) -> list[str]:
    lines = markdown.split("\n")
    return ["\n".join(lines[a:b]) for a, b in units(markdown)]


def heading_anchor(title: str) -> str:
    """MyST's anchor of a heading (myst_heading_anchors): maths, code and emphasis marks dropped, lower case, spaces
    to hyphens, other punctuation dropped. Links into a notebook (``03_x.ipynb#51-which-way-round``) use it."""
    title = re.sub(r"[`*]", "", re.sub(r"\$[^$]*\$", "", title))
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.strip().lower().replace(" ", "-"))


def translate_markdown(markdown: str, translation: dict[str, str], anchors: bool = False) -> str:
    """``markdown`` with every unit replaced by ``translation[unit]`` (KeyError names a unit without one). With
    ``anchors``, a translated heading ends with ``<a id="..."></a>``, the English heading's anchor, so that links
    written for the English notebook still land on it."""
    lines = markdown.split("\n")
    for start, end in reversed(units(markdown)):
        english = "\n".join(lines[start:end])
        text = translation[english]
        heading = re.match(r"#{1,6}\s+(.+?)\s*$", english)
        if anchors and heading and "\n" not in english:
            text += f' <a id="{heading_anchor(heading.group(1))}"></a>'
        lines[start:end] = text.split("\n")
    return "\n".join(lines)


# --- what a translation must keep --------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """Maths or code as one line: a line break inside it, with the next line's indent or quote marker ``>``, is one
    space, so that a translation may break its lines elsewhere."""
    return re.sub(r"\s*\n[ \t]*(?:>[ \t]*)*", " ", text).strip()


def protected(text: str) -> Counter:
    """The maths, code, link targets, tags and numbers of ``text``, as a multiset of (kind, text)."""
    kept = Counter()
    for match in _PROTECTED.finditer(text):
        kind = next(k for k in ("codebody", "display", "inline", "target", "tag") if match.group(k) is not None)
        kept[(kind, _one_line(match.group(kind)))] += 1
    return kept


def numbers(text: str) -> Counter:
    return Counter(n.replace(",", "") for n in _NUMBER.findall(_PROTECTED.sub(" ", text)))


def glossary_terms(root: Path = ROOT) -> dict[str, str]:
    """Each glossary anchor's Chinese term, from ``<a id="anchor"></a>**term** · 中文 —`` in docs/glossary.md."""
    text = (root / "docs" / "glossary.md").read_text(encoding="utf-8")
    entries = re.findall(r'<a id="([^"]+)"></a>\*\*[^*]+\*\* · ([^—\n]+?) —', text)
    return {anchor: chinese.strip() for anchor, chinese in entries}


# Terms a Chinese technical text writes in Latin letters as often as in Chinese: either form counts as the term.
LATIN_TERMS = {"softmax", "transformer", "gpu", "flashattention", "nbval", "chrf", "utf-8", "lstm", "gru", "flops",
               "logits", "dtype", "autograd", "epoch", "dropout"}  # fmt: skip


@functools.cache
def _glossary_entries(path: Path) -> tuple:
    from tools.glossary_links import read_glossary

    return tuple(read_glossary(path))


# Under re.IGNORECASE an ASCII letter matches its other case and four non-ASCII letters (the re module's
# documentation: İ, ı, ſ and the Kelvin sign K); nothing else matches an ASCII letter or digit.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _fold(text: str) -> str:
    """``text`` with every letter an ASCII letter of a case-insensitive pattern may match written as that letter in
    lower case (other characters stay what they were, or become non-ASCII lower case)."""
    return text.translate(_ASCII_FOLD).lower()


def _leading_literal(pattern: str) -> str:
    """The ASCII letters, digits and escaped punctuation a glossary regex (tools.glossary_links._alternative_regex)
    must match first, after its look-behind, lower case: every match's text, folded, contains it."""
    rest = pattern.removeprefix(r"(?<![\w-])").removeprefix("(?P<w>")
    literal, i = [], 0
    while i < len(rest):
        char = rest[i]
        if char == "\\" and i + 1 < len(rest) and not rest[i + 1].isalnum() and rest[i + 1].isascii():
            literal.append(rest[i + 1])  # re.escape's escaped punctuation: that character itself
            i += 2
        elif char.isascii() and char.isalnum():
            literal.append(char)
            i += 1
        else:
            break  # \s, a class, a group, a quantifier or a non-ASCII letter: the literal part ends
    return "".join(literal).lower()


@functools.cache
def _term_patterns(path: Path) -> tuple:
    """(entry, regex, itself, literal) of every way of writing every glossary term, in the order term_uses tries them:
    longest pattern first, a term itself before an alternative of the same length; ``literal``: _leading_literal."""
    from tools.glossary_links import _alternative_regex

    entries = _glossary_entries(path)
    pairs = [(e, r, False) for e in entries for r in e.regexes]
    pairs += [(e, _alternative_regex(e.term), True) for e in entries if not e.only]
    ordered = sorted(pairs, key=lambda p: (-len(p[1].pattern), not p[2]))
    return tuple((e, r, itself, _leading_literal(r.pattern)) for e, r, itself in ordered)


def term_uses(msgid: str, root: Path = ROOT, skip: frozenset[str] = frozenset()) -> list:
    """The glossary entries whose English term itself (a whole word, plurals allowed) ``msgid`` uses in its prose:
    not in maths, code, links, tags, or the phrases of ``NOT_A_USE`` (as tools.glossary_links reads a use). Every way
    of writing a term is matched, longest first, so that "multi-head attention" is one use and not also one of
    "attention"; only a use of the term itself asks for its Chinese term (a ``match:`` form such as "score" for
    "attention score" or "RNN" may be written as Chinese writes it)."""
    from tools.glossary_links import NOT_A_USE_RE, PROTECTED_RE

    text = msgid
    for pattern in (PROTECTED_RE, NOT_A_USE_RE):
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    folded = _fold(text)
    found, taken = {}, []
    for entry, regex, itself, literal in _term_patterns(root / "docs" / "glossary.md"):
        if entry.slug in skip or literal not in folded:
            continue  # (a pattern whose first letters the text lacks cannot match: skipping it changes nothing)
        for m in regex.finditer(text):
            if all(m.end() <= a or m.start() >= b for a, b in taken):
                taken.append(m.span())
                if itself:
                    found.setdefault(entry.slug, entry)
    return list(found.values())


SENSE_NOTE = "glossary: another sense here:"  # a translator's comment: these terms mean something else in this unit


def senses(entry: polib.POEntry) -> frozenset[str]:
    """The glossary entries a catalogue entry's translator comment marks as another sense (``#`` line)."""
    note = entry.tcomment or ""
    return frozenset(note.split(SENSE_NOTE, 1)[1].split()) if SENSE_NOTE in note else frozenset()


_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"  # CJK punctuation, ideographs, full-width forms
_CJK_BREAK = re.compile(f"[{_CJK}]\n[ \t>]*[{_CJK}]")
_DASHES = re.compile("[‐‑‒–—-]")


def other_senses(source: str, root: Path = ROOT) -> frozenset[str]:
    """The glossary entries a source marks as meaning something else throughout (``<!-- glossary: another sense
    here: attention-score -->``, see tools.glossary_links): not looked for in it."""
    from tools.glossary_links import OTHER_SENSE_RE

    text = (root / source).read_text(encoding="utf-8")
    return frozenset(slug.strip() for found in OTHER_SENSE_RE.findall(text) for slug in found.split())


def term_forms(term: str) -> list[str]:
    """The ways a glossary term may be written: ``特征映射 / 特征图`` as either; ``Transformer（变换器）`` without
    its gloss in brackets."""
    return [re.split(r"[（(]", form)[0].strip() for form in term.split(" / ")]


_GLOSSARY_LINK = re.compile(r"\[([^\]]+)\]\(((?:[./]*docs/)?glossary\.md)?#([\w-]+)\)")


def problems(msgid: str, msgstr: str, terms: dict[str, str], in_glossary: bool = False, uses: list = ()) -> list[str]:
    """What the translation ``msgstr`` of ``msgid`` lost or changed; empty when it keeps everything it must. ``uses``:
    the glossary entries ``msgid`` uses (:func:`term_uses`), each of whose Chinese term ``msgstr`` must write."""
    found = []
    lost, added = protected(msgid) - protected(msgstr), protected(msgstr) - protected(msgid)
    for (kind, text), count in sorted(lost.items()):
        found.append(f"lost {kind} {text!r}" + (f" ({count} times)" if count > 1 else ""))
    for (kind, text), _ in sorted(added.items()):
        found.append(f"added {kind} {text!r}")
    for number in sorted(numbers(msgid) - numbers(msgstr)):
        found.append(f"lost the number {number}")
    links = [(m.group(1), m.group(3)) for m in _GLOSSARY_LINK.finditer(msgstr) if m.group(2) or in_glossary]
    for text, anchor in links:
        forms = term_forms(terms.get(anchor, "")) + (
            [anchor, anchor.replace("-", " ")] if anchor in LATIN_TERMS else []
        )
        if anchor in terms and not any(form.lower() in text.lower() for form in forms):
            found.append(
                f"the link to glossary entry {anchor!r} reads {text!r}, not the glossary's term {terms[anchor]!r}"
            )
    plain = _DASHES.sub("-", msgstr).lower()
    for entry in uses:
        forms = term_forms(entry.zh) + ([entry.term] if entry.slug in LATIN_TERMS else [])
        if not any(_DASHES.sub("-", form).lower() in plain for form in forms):
            found.append(f"uses the glossary term {entry.term!r} but not its Chinese term {entry.zh!r}")
    if _CJK_BREAK.search(msgstr):
        found.append("a line break between two Chinese characters (a browser draws it as a space): one line")
    if msgstr.count("\n") != msgid.count("\n") and (msgid.lstrip().startswith("|") or msgid.startswith("#")):
        found.append("a table row or heading must stay on its lines")
    return found


# --- catalogues --------------------------------------------------------------------------------------------------


def source_units(source: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(unit, where) for every unit of a source, in order; ``where`` names the notebook cell."""
    path = root / source
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found = []
        for i, cell in enumerate(cells):
            where, text = f"{source}:{cell.get('id', i)}", "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                found += [(unit, where) for unit in unit_texts(text)]
            elif cell["cell_type"] == "code":  # its comments (tools.i18n_code)
                found += [(unit, where + i18n_code.CODE_WHERE) for unit in i18n_code.units(text)]
        return found
    return [(text, source) for text in unit_texts(path.read_text(encoding="utf-8"))]


def new_catalogue(source: str) -> polib.POFile:
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": "self-attention-course",
        "Language": LANGUAGE,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "X-Source": source,
    }
    return po


def merge(po: polib.POFile, current: list[tuple[str, str]]) -> polib.POFile:
    """``po`` following the units ``current``: kept, new (empty or a fuzzy hint), removed (obsolete)."""
    old = {entry.msgid: entry for entry in po}
    merged = new_catalogue(po.metadata.get("X-Source", ""))
    merged.metadata = dict(po.metadata)
    by_id: dict[str, polib.POEntry] = {}
    for text, where in current:
        if text in by_id:
            by_id[text].occurrences.append((where, ""))
            continue
        entry = old.pop(text, None)
        if entry is None:
            entry = polib.POEntry(msgid=text, msgstr="")
            hint = _closest(text, [e for e in old.values() if e.msgstr])
            if hint is not None:
                entry.msgstr, entry.previous_msgid = hint.msgstr, hint.msgid
                entry.flags.append("fuzzy")
        entry.obsolete, entry.occurrences = False, [(where, "")]
        by_id[text] = entry
        merged.append(entry)
    for entry in old.values():
        if entry.msgstr and "fuzzy" not in entry.flags:  # a confirmed translation, kept as a hint; a hint is not
            entry.obsolete, entry.occurrences = True, []
            merged.append(entry)
    return merged


def _closest(text: str, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    best, best_ratio = None, HINT_SIMILARITY
    for entry in candidates:
        ratio = difflib.SequenceMatcher(None, text, entry.msgid, autojunk=False).ratio()
        if ratio >= best_ratio:
            best, best_ratio = entry, ratio
    return best


def load(source: str, root: Path = ROOT) -> polib.POFile | None:
    path = catalogue_path(source, root)
    return polib.pofile(str(path), wrapwidth=0) if path.exists() else None


def translations(po: polib.POFile) -> dict[str, str]:
    """msgid -> msgstr of the entries a twin may use: translated, not fuzzy, not obsolete."""
    return {e.msgid: e.msgstr for e in po if e.msgstr and not e.obsolete and "fuzzy" not in e.flags}


# --- twins -------------------------------------------------------------------------------------------------------

_LINK = re.compile(r"(\]\(|(?:href|src)=\")([^)\"\s]+)")


def relink(markdown: str, source: str, root: Path = ROOT) -> str:
    """``markdown`` of ``source`` with its relative link targets rewritten for the twin's folder: a target that is a
    source of the edition points at its twin (every source gets one: a twin never depends on which others exist
    yet), any other at the same file as before."""
    here, there = posixpath.dirname(source), posixpath.dirname(twin_path(source))
    translated = set(sources(root))

    def rewrite(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"[a-z]+:|#|/", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(here, path))
        if resolved in translated:
            resolved = twin_path(resolved)
        new = posixpath.relpath(resolved, there) + (f"#{anchor}" if anchor else "")
        return match.group(1) + new

    return _LINK.sub(rewrite, markdown)


def render(source: str, po: polib.POFile, root: Path = ROOT) -> str:
    """The twin of ``source``: its text with every unit translated (KeyError names a unit without a translation)."""
    table = translations(po)
    text = (root / source).read_text(encoding="utf-8")
    if not source.endswith(".ipynb"):
        return relink(translate_markdown(text, table, anchors=True), source, root)
    nb = json.loads(text)
    twin = copy.deepcopy(nb)
    for cell in twin["cells"]:
        if cell["cell_type"] == "markdown":
            markdown = relink(translate_markdown("".join(cell["source"]), table, anchors=True), source, root)
            cell["source"] = markdown.splitlines(keepends=True)
        elif cell["cell_type"] == "code" and (code := "".join(cell["source"])) != (
            chinese := i18n_code.translate(code, table)
        ):
            lines = chinese.split("\n")
            cell["source"] = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return json.dumps(twin, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def twinned(root: Path = ROOT) -> set[str]:
    """The sources that have a catalogue, so a twin."""
    return {s for s in sources(root) if catalogue_path(s, root).exists()}


def pending(root: Path = ROOT) -> list[str]:
    """The sources with no catalogue yet (``python -m tools.i18n start SOURCE`` begins one)."""
    have = twinned(root)
    return [s for s in sources(root) if s not in have]


# --- the commands -------------------------------------------------------------------------------------------------


def counts(po: polib.POFile) -> dict[str, int]:
    active = [e for e in po if not e.obsolete]
    fuzzy = sum(1 for e in active if "fuzzy" in e.flags)
    untranslated = sum(1 for e in active if not e.msgstr)
    return {"units": len(active), "translated": len(active) - fuzzy - untranslated, "fuzzy": fuzzy,
            "untranslated": untranslated}  # fmt: skip


def update(root: Path = ROOT, start: list[str] = (), only: list[str] = ()) -> list[str]:
    """Every catalogue (or those of ``only``) follows its source, and the sources in ``start`` get one; their twins
    are written again. Returns the paths written. (Translators working at once each update their own sources: a
    catalogue read and written by two processes at once loses one's edits.)"""
    written = []
    for source in start:
        if source not in sources(root):
            raise SystemExit(f"tools.i18n: {source} is not a source of the Chinese edition (see tools.i18n.SOURCES)")
        if not catalogue_path(source, root).exists():
            po = new_catalogue(source)
            catalogue_path(source, root).parent.mkdir(parents=True, exist_ok=True)
            po.save(str(catalogue_path(source, root)))
    have = twinned(root)
    for source in sorted(only or have):
        if source not in have:
            continue
        po = merge(load(source, root), source_units(source, root))
        po.save(str(catalogue_path(source, root)))
        written.append(catalogue_path(source, root).relative_to(root).as_posix())
        try:
            text = render(source, po, root)
        except KeyError:
            continue  # not translated in full yet: `check` says which units, the old twin stays as it was
        out = root / twin_path(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        written.append(twin_path(source))
    return written


def check(root: Path = ROOT) -> list[str]:
    """Every way the Chinese edition is out of step with the English one; empty when it is not."""
    found = []
    have, terms = twinned(root), glossary_terms(root)
    for source in sorted(have):
        po, units_now, skip = load(source, root), source_units(source, root), other_senses(source, root)
        active = {e.msgid: e for e in po if not e.obsolete}
        for text, where in units_now:
            entry = active.get(text)
            if entry is None:
                found.append(f"{where}: a unit the catalogue lacks (python -m tools.i18n update): {text[:60]!r}")
            elif not entry.msgstr or "fuzzy" in entry.flags:
                state = "fuzzy" if entry.msgstr else "untranslated"
                found.append(f"{where}: {state}: {text[:60]!r}")
            else:
                uses = term_uses(text, root, skip | senses(entry))
                found += [f"{where}: {p}" for p in problems(text, entry.msgstr, terms, source == PAGES[0], uses)]
                if i18n_code.is_code(entry):
                    found += [f"{where}: {p}" for p in i18n_code.problems(text, entry.msgstr)]
        stale = sorted(set(active) - {text for text, _ in units_now})
        found += [f"{source}: an entry for a unit the source no longer has: {t[:60]!r}" for t in stale]
        twin = root / twin_path(source)
        try:
            expected = render(source, po, root)
        except KeyError:
            continue
        if not twin.exists() or twin.read_text(encoding="utf-8") != expected:
            found.append(
                f"{twin_path(source)} is not what its catalogue and the English generate: python -m tools.i18n update"
            )
    return found


def todo(source: str, root: Path = ROOT) -> list[dict]:
    """The units of ``source`` still to translate: untranslated or fuzzy (with the old translation as a hint)."""
    po = load(source, root)
    if po is None:
        raise SystemExit(f"tools.i18n: {source} has no catalogue yet: python -m tools.i18n start {source}")
    rows = []
    for entry in po:
        if not entry.obsolete and (not entry.msgstr or "fuzzy" in entry.flags):
            row = {"msgid": entry.msgid, "where": entry.occurrences[0][0] if entry.occurrences else source}
            if entry.msgstr:
                row.update(hint=entry.msgstr, previous_msgid=entry.previous_msgid or "")
            rows.append(row)
    return rows


def fill(source: str, table: dict[str, str], root: Path = ROOT) -> list[str]:
    """Put the translations ``table`` (msgid -> msgstr) into ``source``'s catalogue; a translation with problems is
    left out and named in the returned list, a msgid the catalogue lacks too."""
    po, terms, refused, skip = load(source, root), glossary_terms(root), [], other_senses(source, root)
    for msgid, value in table.items():
        msgstr, other = (value, []) if isinstance(value, str) else (value["msgstr"], value.get("another_sense", []))
        entry, uses = po.find(msgid), term_uses(msgid, root, skip | frozenset(other))
        found = ["no such unit"] if entry is None else problems(msgid, msgstr, terms, source == PAGES[0], uses)
        found += i18n_code.problems(msgid, msgstr) if entry is not None and i18n_code.is_code(entry) else []
        if found:
            refused += [f"{msgid[:60]!r}: {p}" for p in found]
            continue
        entry.msgstr = msgstr
        entry.tcomment = f"{SENSE_NOTE} {' '.join(other)}" if other else ""
        if "fuzzy" in entry.flags:
            entry.flags.remove("fuzzy")
        entry.previous_msgid = None
    po.save(str(catalogue_path(source, root)))
    return refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.i18n", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("status", "update", "start", "check", "todo", "fill"))
    parser.add_argument("sources", nargs="*", help="start: sources; todo: one source; fill: one source and a JSON file")
    args = parser.parse_args(argv)
    if args.command == "todo":
        print(json.dumps(todo(args.sources[0]), ensure_ascii=False, indent=1))
        return 0
    if args.command == "fill":
        table = json.loads(Path(args.sources[1]).read_text(encoding="utf-8"))
        refused = fill(args.sources[0], table)
        print("\n".join(refused) or f"tools.i18n: {len(table)} translations filled in")
        print(f"{len(todo(args.sources[0]))} units of {args.sources[0]} left to translate")
        return 1 if refused else 0
    if args.command in ("update", "start"):
        start = args.sources if args.command == "start" else []
        for path in update(start=start, only=args.sources):
            print(f"wrote {path}")
    if args.command == "check":
        found = check()
        print("\n".join(found) or "tools.i18n: the Chinese edition is complete and in step with the English")
        return 1 if found else 0
    if args.command in ("status", "start"):
        have = twinned()
        for source in sources():
            row = counts(load(source)) if source in have else None
            print(f"{source:52} " + (" ".join(f"{k} {v:4}" for k, v in row.items()) if row else "pending"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
