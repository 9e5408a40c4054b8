"""Cross-references computed from the notebooks, not typed: notebook 00's course map, the glossary's "explained in".

The map. Each notebook's "Prerequisites" section names the earlier notebooks it relies on ("**Notebook 05**",
"[01 · Sequences and embeddings](...)", "notebooks 01 and 02"); a bullet that says "not required" names a helpful
read, not a prerequisite. The map's arrows are those prerequisites with the ones implied by others removed (the
transitive reduction: 06 -> 09 is not drawn when 09 needs 07 and 07 needs 06). From them this tool derives

- the ``PREREQUISITES`` list of the map's code cell in notebook 00 (the figure draws exactly these arrows),
- the paragraph under 00's "The course map" heading: how many notebooks and parts, where the main line ends and
  where it branches,
- the number of notebooks wherever 00 says "N notebooks" in words.

The glossary. "First used in" is set from the notebooks by ``python -m tools.glossary_links --write-first-use``;
"explained in", written by hand, is checked here: it may not come before the first use, and the notebook it names
must use the term (headings included).

    python -m tools.crossrefs            # report what differs (exit 1 if anything does)
    python -m tools.crossrefs --write    # rewrite 00's PREREQUISITES line and map paragraph from the notebooks

``--write`` changes the map's code cell (one line) and a Markdown cell: re-execute notebook 00 afterwards.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"
START = "00_start_here.ipynb"
NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
NUMBER_WORDS = NUMBER_WORDS.split()
NAMED = re.compile(r"\b[Nn]otebooks?\s+(\d\d(?:(?:\s*,\s*|\s+and\s+|\s+or\s+)\d\d)*)|\[(\d\d) ·")
MAP_HEADING = re.compile(r"^##\s+\d+\s*·\s*The course map", re.M)
PREREQ_LINE = re.compile(r"^PREREQUISITES = \[.*?\]\n", re.M | re.S)


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def prerequisites(path: Path) -> set[str]:
    """The notebooks (as "05") that the Prerequisites section of ``path`` names, bullets saying "not required" aside."""
    text = next((_source(c) for c in _cells(path) if c["cell_type"] == "markdown"
                 and re.match(r"\s*##\s+Prerequisites", _source(c))), "")  # fmt: skip
    found = set()
    for bullet in re.split(r"\n(?=- )", text):
        if "not required" in bullet:
            continue
        for m in NAMED.finditer(bullet):
            found.update(re.findall(r"\d\d", m[1] or m[2]))
    return {n for n in found if n < path.name[:2]}  # only earlier notebooks: "used from notebook 04 on" is not one


def prerequisite_graph(paths: list[Path] | None = None) -> dict[str, set[str]]:
    """Notebook -> the notebooks it names as prerequisites."""
    return {p.name[:2]: prerequisites(p) for p in (paths or notebooks())}


def map_edges(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The arrows of the map: (a, b) for "read a before b", without those implied by a longer path."""

    def reaches(a: str, b: str, skip: tuple[str, str]) -> bool:  # is there a path b <- ... <- a avoiding `skip`?
        stack, seen = [b], set()
        while stack:
            node = stack.pop()
            for pre in graph.get(node, ()):
                if (pre, node) == skip or pre in seen:
                    continue
                if pre == a:
                    return True
                seen.add(pre)
                stack.append(pre)
        return False

    edges = [(a, b) for b, pres in graph.items() for a in pres]
    return sorted(e for e in edges if not reaches(e[0], e[1], skip=e))


def map_paragraph(edges: list[tuple[str, str]], parts: dict[str, str], number: int) -> str:
    """The sentence under 00's map heading, derived from the arrows. ``parts``: notebook -> its part's name."""
    children: dict[str, list[str]] = {}
    parents: dict[str, list[str]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
        parents.setdefault(b, []).append(a)
    line = ["00"]
    while len(children.get(line[-1], [])) == 1:
        line.append(children[line[-1]][0])
    forks = sorted(n for n, c in children.items() if len(c) > 1)

    def chain(start: str) -> list[str]:
        out = [start]
        while len(children.get(out[-1], [])) == 1 and len(parents.get(children[out[-1]][0], [])) == 1:
            out.append(children[out[-1]][0])
        return out

    count = len({n for e in edges for n in e} | {"00"})
    text = (
        f"{NUMBER_WORDS[number].capitalize()} notebooks in {NUMBER_WORDS[len(set(parts.values()))]} parts. "
        f"An arrow from A to B means *read A before B*. The main line runs from {line[0]} to {line[-1]}"
    )
    assert count == number, f"the map shows {count} notebooks, the folder holds {number}"
    for fork in forks:
        branches = [chain(c) for c in sorted(children[fork])]
        one_part = len({parts[b[-1]] for b in branches}) == 1  # "13 or 14 (language)", not the part twice
        names = [" → ".join(b) + ("" if one_part else f" ({parts[b[-1]].lower()})") for b in branches]
        listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        listed += f" ({parts[branches[0][-1]].lower()})" if one_part else ""
        text += f"; after notebook {fork} you can branch to {listed}"
    return text + "."


def _map_cell_values(cells: list[dict]) -> tuple[int, dict, dict, list]:
    """(index of the map's code cell, PARTS, NOTEBOOKS, PREREQUISITES) as written in notebook 00."""
    for i, cell in enumerate(cells):
        source = _source(cell)
        if cell["cell_type"] == "code" and "PREREQUISITES = [" in source:
            values = {}
            for node in ast.parse(source).body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    try:
                        values[node.targets[0].id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
            return i, values["PARTS"], values["NOTEBOOKS"], values["PREREQUISITES"]
    raise ValueError(f"{START}: no code cell defines PREREQUISITES")


def _prereq_source(edges: list[tuple[str, str]]) -> str:
    pairs = [f'("{a}", "{b}")' for a, b in edges]
    lines, line = [], "PREREQUISITES = ["
    for k, pair in enumerate(pairs):
        piece = pair + ("]" if k == len(pairs) - 1 else ", ")
        if len(line) + len(piece.rstrip()) > 118:
            lines.append(line.rstrip())
            line = " " * len("PREREQUISITES = [")
        line += piece
    return "\n".join(lines + [line]) + "\n"


def check_map(write: bool = False) -> list[str]:
    """Problems of notebook 00's map against the notebooks' prerequisites (fixed in place with ``write``)."""
    paths = notebooks()
    start = NOTEBOOKS_DIR / START
    nb = json.loads(start.read_text(encoding="utf-8"))
    cells = nb["cells"]
    edges = map_edges(prerequisite_graph(paths))
    index, parts, boxes, drawn = _map_cell_values(cells)
    problems = []
    if missing := sorted({p.name[:2] for p in paths} - set(boxes)):
        problems.append(f"{START}: the map has no box for {missing}")
    if sorted(tuple(e) for e in drawn) != edges:
        drawn_edges = sorted(map(tuple, drawn))
        problems.append(f"{START}: the map draws {drawn_edges}, the notebooks' prerequisites give {edges}")
        if write:
            source = PREREQ_LINE.sub(lambda m: _prereq_source(edges), _source(cells[index]), count=1)
            cells[index]["source"] = source.splitlines(keepends=True)
    paragraph = map_paragraph(edges, {n: v[1] for n, v in boxes.items()}, len(paths))
    heading = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and MAP_HEADING.search(_source(c)))
    source = _source(cells[heading])
    head, _, body = source.partition("</span>\n\n")
    if " ".join(body.split()) != paragraph:
        problems.append(f"{START}: the map's paragraph reads {body.strip()!r}, the notebooks give {paragraph!r}")
        if write:
            cells[heading]["source"] = (head + "</span>\n\n" + _wrap(paragraph)).splitlines(keepends=True)
    word = NUMBER_WORDS[len(paths)]
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for m in re.finditer(rf"\b({'|'.join(NUMBER_WORDS[2:])})\s+notebooks\b", _source(cell), re.I):
            if m[1].lower() != word:
                problems.append(f"{START}: markdown cell {i} says {m[0]!r}, there are {word} notebooks")
    if write and problems:
        start.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return problems


def _wrap(text: str, width: int = 116) -> str:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(lines + [line])


def check_glossary() -> list[str]:
    """Entries whose "explained in" comes before their first use, or names a notebook that never uses the term."""
    from tools import glossary_links  # noqa: PLC0415 (nbformat is only needed here)

    texts = {}
    for path in notebooks():
        markdown = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "markdown")
        markdown = re.split(r"^##\s+Further reading", markdown, flags=re.M | re.I)[0]
        texts[path.name[:2]] = glossary_links.GLOSSARY_LINK_RE.sub(lambda m: m[0][1 : m[0].index("](")], markdown)
    problems = []
    for e in glossary_links.read_glossary():
        if e.explained < e.first:
            problems.append(f"glossary: {e.term!r} is explained in {e.explained} but first used in {e.first}")
        if e.explained in texts and not any(r.search(texts[e.explained]) for r in e.regexes):
            problems.append(f"glossary: {e.term!r} is 'explained in' {e.explained}, whose text never uses it")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.crossrefs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite notebook 00's map from the prerequisites")
    args = parser.parse_args(argv)
    problems = check_map(write=args.write) + check_glossary()
    for problem in problems:
        print(problem)
    if args.write and problems:
        print(f"rewrote {START}'s map where it differed; re-execute it (make execute NOTEBOOKS=notebooks/{START})")
    return 1 if problems and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
