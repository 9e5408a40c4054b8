"""Numbers quoted in a notebook's prose that no output of the notebook prints.

The course promises that every number you read was produced by the code above it. This tool reads the decimal
numbers of each notebook's Markdown (``0.74``, ``3.58``, ``85.8 %``) and looks for each one among the numbers its
code cells printed (stream text, text results, error messages): a prose number with k decimals is found when some
printed number rounds to it at k decimals (or, for a percentage, some printed fraction times 100 does). What it
does not read: the reading list (citations), link targets, and numbers on ``ALLOWED``'s short list of constants
(``0.5`` and the like, each with the reason it needs no output).

``python -m tools.quoted_numbers notebooks/*.ipynb`` lists what is missing (exit 1 if anything is).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import nbformat

# Constants a text may state without printing them (definitions, not results).
ALLOWED = {
    "0.5": "one half",
    "0.1": "a round example value or a dropout probability",
    "0.2": "a round example value",
    "0.9": "a round example value",
    "1.0": "one",
    "0.0": "zero",
}
# Section references ("section 4.1", "§ 6.2", "deep dive 5.1") and versions ("PyTorch 2.3") are not quantities.
# Numbers quoted from a cited paper, per notebook: (number, source). Short on purpose.
CITED: dict[str, dict[str, str]] = {
    "06": {"24.9": "BLEU, one head (Vaswani et al., 2017, Table 3)", "25.8": "BLEU, base model (same table)"},
    "09": {"1.3": "ImageNet-1k's 1.3 million images (Dosovitskiy et al., 2021)"},
    "10": {"1.3": "ImageNet-1k's 1.3 million images (Dosovitskiy et al., 2021)"},
}
NOT_A_QUANTITY = re.compile(
    r"(?:[Ss]ections?|§|[Dd]eep dives?|[Ss]teps?|[Tt]ables?|[Ff]igures?|[Ee]quations?|[Ee]q\.|Python|PyTorch|torch|"
    r"Triton|CUDA|version|nbformat|v)\s*\d+(?:\.\d+)+(?:\s*(?:,|and|or|to|–)\s*\d+(?:\.\d+)+)*"
)
NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+)(?!\.\d)(\s*%)?")
SKIP_SECTIONS = ("further reading",)
THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")  # 2,894 and 1,000,000 as printed by f"{n:,}"


def prose(nb) -> str:
    """The notebook's Markdown, without the reading list, link targets, URLs and HTML tags."""
    parts, skipping = [], False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        source = cell.source
        heading = re.match(r"#+\s+(.+)", source.lstrip())
        if heading:
            skipping = heading[1].strip().lower() in SKIP_SECTIONS
        if skipping:
            continue
        source = re.sub(r"\]\([^)]*\)", "]", source)  # link targets
        source = re.sub(r"https?://\S+|<[^>]+>|arXiv:\S+", " ", source)
        source = re.sub(r"(?m)^(#+\s+)[\d.]+", r"\1", source)  # heading numbers
        source = NOT_A_QUANTITY.sub(" ", source)
        parts.append(source)
    return "\n".join(parts)


def printed_numbers(nb) -> list[float]:
    values = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            texts = [out.get("text", "")] if out.get("output_type") == "stream" else []
            data = out.get("data", {})
            texts += [data.get(k, "") for k in ("text/plain", "text/html", "text/markdown") if k in data]
            texts += [out.get("evalue", "")]
            for text in texts:
                text = "".join(text) if isinstance(text, list) else text
                values += [float(m) for m in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+", text)]
                # "2,894" is also the number 2894 (a tuple "(1,234)" keeps its parts above too)
                values += [float(m.replace(",", "")) for m in THOUSANDS.findall(text)]
    return values


def _rounds_to(value: float, quoted: str) -> bool:
    decimals = len(quoted.split(".")[1])
    target = float(quoted)
    return abs(abs(value) - target) <= 0.5 * 10**-decimals + 1e-12


def missing(nb, number: str = "") -> list[str]:
    """The prose's decimal numbers that no output prints (in order of first appearance, each once); ``number`` is the
    notebook's two digits, which select its entries of ``CITED``."""
    printed = printed_numbers(nb)
    seen, out = set(), []
    for match in NUMBER.finditer(prose(nb)):
        quoted, percent = match[1], bool(match[2])
        if quoted in ALLOWED or quoted in CITED.get(number, {}) or quoted in seen:
            continue
        seen.add(quoted)
        candidates = printed + ([100 * v for v in printed] if percent else [])
        if not any(math.isfinite(v) and _rounds_to(v, quoted) for v in candidates):
            out.append(quoted + ("%" if percent else ""))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.quoted_numbers", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    failed = False
    for path in args.notebooks:
        found = missing(nbformat.read(path, as_version=4), path.stem[:2])
        print(f"{path.name}: " + (", ".join(found) if found else "every quoted number is printed"))
        failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
