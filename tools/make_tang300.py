"""Build data/tang300.txt from Debian's fortunes-zh package (byte-reproducible).

The 313 poems of *Three Hundred Tang Poems* (唐诗三百首, compiled by Sun Zhu, 1763; the poems are of the 7th-10th
centuries), as transcribed in simplified characters in the file ``tang300`` of Debian's ``fortunes-zh`` 2.98. This
script removes the terminal colour codes and the "作者：" label and writes one poem a paragraph:

    《title》
    author
    line
    line
    (blank line)

Usage (apt-get download needs no root):
    apt-get download fortunes-zh && dpkg-deb -x fortunes-zh_2.98_all.deb /tmp/fz
    python -m tools.make_tang300 /tmp/fz/usr/share/games/fortunes/tang300 data/tang300.txt
then compare the printed SHA-256 values with data/SOURCES.md.
"""

import hashlib
import re
import sys
from pathlib import Path


def poems(text: str) -> list[tuple[str, str, list[str]]]:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # the fortune file colours titles and authors
    result = []
    for block in text.split("\n%\n"):
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        if not lines:
            continue
        title, author, *body = lines
        if not (title.startswith("《") and title.endswith("》") and author.startswith("作者：") and body):
            raise ValueError(f"unexpected poem layout: {lines[:3]}")
        result.append((title, author.removeprefix("作者："), body))
    return result


def main() -> None:
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    raw = source.read_bytes()
    print("source", source, len(raw), "bytes, sha256", hashlib.sha256(raw).hexdigest())
    found = poems(raw.decode("utf-8"))
    text = "\n".join(f"{title}\n{author}\n" + "".join(f"{line}\n" for line in body) for title, author, body in found)
    out.write_bytes(text.encode("utf-8"))
    data = out.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    print(f"wrote {out}: {len(found)} poems, {len(text)} characters, {len(data)} bytes, sha256 {digest}")


if __name__ == "__main__":
    main()
