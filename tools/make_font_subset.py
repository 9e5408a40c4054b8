"""Build ``data/fonts/NotoSansSC-CourseSubset.otf``: a small subset of Noto Sans CJK SC for the course's plots.

Why: matplotlib ships no CJK font, so Chinese token labels render as empty boxes ("tofu") on a machine without
one. ``course_lib.figures.plot`` registers this subset with matplotlib at call time and uses it as a fallback after the
default font, so every Chinese label renders as glyphs, with no system font installed.

What is kept (see :func:`character_set`):

- every character of GB 2312 (the 6,763 hanzi of levels 1 and 2, i.e. the common simplified Chinese characters,
  plus its 682 symbols: CJK punctuation, full-width forms, Greek, Cyrillic, kana, box drawing ...);
- printable ASCII and Latin-1, general punctuation, CJK Symbols and Punctuation (U+3000-U+303F) and
  Halfwidth and Fullwidth Forms (U+FF00-U+FFEF), where the source font has them.

Outlines stay CFF (PostScript), hinting is dropped, and the family is renamed "Noto Sans SC Course Subset"
(a modified version should not pose as the original; "Noto" is not a Reserved Font Name of this font). The
output is byte-for-byte reproducible: no time stamps are rewritten.

Source: Debian's ``fonts-noto-cjk`` (1:20220127+repack1-1, upstream noto-cjk Sans 2.004), file
``NotoSansCJK-Regular.ttc``, face "Noto Sans CJK SC". License: SIL Open Font License 1.1 (copied next to the
font as ``data/fonts/OFL.txt``). To reproduce, without installing the font system-wide::

    apt-get download fonts-noto-cjk
    dpkg-deb -x fonts-noto-cjk_*_all.deb extracted
    python -m tools.make_font_subset extracted/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

It needs ``fontTools``, which matplotlib already depends on. Then update the SHA-256 in ``data/SOURCES.md``
and ``course_lib/plot.py`` (``tests/test_plot.py`` checks that the three agree).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont

SOURCE_FAMILY = "Noto Sans CJK SC"
FAMILY = "Noto Sans SC Course Subset"
POSTSCRIPT_NAME = "NotoSansSC-CourseSubset"
OUTPUT = Path(__file__).resolve().parent.parent / "data" / "fonts" / f"{POSTSCRIPT_NAME}.otf"


def gb2312_characters() -> list[str]:
    """Every character of GB 2312, decoded from its 94 x 94 code table with Python's own codec."""
    chars = []
    for row in range(0xA1, 0xF8):
        for col in range(0xA1, 0xFF):
            try:
                chars.append(bytes([row, col]).decode("gb2312"))
            except UnicodeDecodeError:
                pass  # an unassigned code point of the table
    return chars


def character_set() -> list[int]:
    """Code points to keep, sorted."""
    ranges = [
        (0x0020, 0x007E),  # printable ASCII
        (0x00A0, 0x00FF),  # Latin-1 supplement
        (0x2010, 0x205E),  # general punctuation: dashes, quotes, ellipsis, ...
        (0x3000, 0x303F),  # CJK symbols and punctuation
        (0xFF00, 0xFFEF),  # halfwidth and fullwidth forms
    ]
    points = {p for low, high in ranges for p in range(low, high + 1)}
    points |= {ord(c) for c in gb2312_characters()}
    return sorted(points)


def load_face(path: Path) -> TTFont:
    """The face named ``SOURCE_FAMILY`` of a .ttc collection, or the font itself for an .otf file."""
    if path.suffix.lower() == ".ttc":
        for font in TTCollection(str(path)).fonts:
            if font["name"].getDebugName(1) == SOURCE_FAMILY:
                return font
        raise SystemExit(f"{path} has no face named {SOURCE_FAMILY!r}")
    return TTFont(str(path))


def rename(font: TTFont) -> None:
    """Give the subset its own family name in the name table and the CFF table."""
    names = {1: FAMILY, 2: "Regular", 3: f"{POSTSCRIPT_NAME};subset for course_lib", 4: FAMILY, 6: POSTSCRIPT_NAME}
    table = font["name"]
    table.names = [n for n in table.names if n.nameID not in (16, 17, 21, 22)]  # typographic family: use 1/2
    for record in table.names:
        if record.nameID in names:
            record.string = names[record.nameID]
    cff = font["CFF "].cff
    cff.fontNames = [POSTSCRIPT_NAME]
    top = cff.topDictIndex[0]
    for key, value in (("FullName", FAMILY), ("FamilyName", FAMILY)):
        if hasattr(top, key):
            setattr(top, key, value)


def make_subset(source: Path, output: Path) -> str:
    font = load_face(source)
    font.recalcTimestamp = False  # keep the source's head.modified: reproducible bytes
    options = subset.Options()
    options.layout_features = ["kern", "palt", "vert", "vrt2"]  # kerning and vertical forms, nothing else
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # copyright, names, version, license text and URL
    options.name_languages = [0x409]  # English names only
    options.hinting = False
    options.notdef_outline = True
    options.glyph_names = False
    subsetter = subset.Subsetter(options)
    wanted = character_set()
    cmap = font.getBestCmap()
    subsetter.populate(unicodes=[p for p in wanted if p in cmap])
    subsetter.subset(font)
    rename(font)
    output.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(output))
    missing = [chr(p) for p in wanted if p not in cmap and p > 0x3000]
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    print(f"kept {len(font.getGlyphOrder())} glyphs; {len(missing)} wanted CJK code points not in the source")
    print(f"wrote {output} ({output.stat().st_size / 1e6:.2f} MB)")
    print(f"SHA-256 {digest}")
    return digest


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.make_font_subset", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="NotoSansCJK-Regular.ttc or NotoSansCJKsc-Regular.otf")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    make_subset(args.source, args.output)


if __name__ == "__main__":
    main()
