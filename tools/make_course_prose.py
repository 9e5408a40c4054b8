"""Build data/course_prose.txt: the English prose of notebooks 00-12, as of one commit (byte-reproducible).

The course's own words (its markdown cells, CC BY 4.0 like all the course's prose; see LICENSE), cleaned into plain
text for notebook 13 to train a tokenizer on: every markdown cell of notebooks 00-12 up to "Further reading" (the
citations are left out), with

- Markdown links ``[text](target)`` reduced to their text and HTML tags (the section badges) removed;
- display math (``$$ ... $$``) and fenced code blocks removed; inline math and code spans kept as written;
- heading marks, emphasis stars and list bullets kept (they are part of how the text is written);
- cells separated by one blank line, notebooks by two; trailing spaces removed; LF line ends.

The notebooks are read from git at a fixed commit, so the output does not change when they are edited later:

    python -m tools.make_course_prose 457a649a079e152fc2060905f79d6cc366521a79 data/course_prose.txt

then compare the printed SHA-256 with data/SOURCES.md.
"""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

NOTEBOOKS = [f"{n:02d}" for n in range(13)]


def notebook_paths(commit: str) -> list[str]:
    listing = subprocess.run(["git", "ls-tree", "--name-only", commit, "notebooks/"], capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    return [next(p for p in listing if p.startswith(f"notebooks/{n}_") and p.endswith(".ipynb")) for n in NOTEBOOKS]


def clean(markdown: str) -> str:
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)  # fenced code
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)  # display math
    text = re.sub(r"!?\[([^\]]*)\]\([^)\s]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>\n]+>", "", text)  # HTML tags
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def prose(notebook: dict) -> str:
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        if re.match(r"\s*##\s+Further reading", source, re.I):
            break
        if cleaned := clean(source):
            cells.append(cleaned)
    return "\n\n".join(cells)


def main() -> None:
    commit, out = sys.argv[1], Path(sys.argv[2])
    texts = []
    for path in notebook_paths(commit):
        raw = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, check=True).stdout
        texts.append(prose(json.loads(raw.decode("utf-8"))))
    text = "\n\n\n".join(texts) + "\n"
    out.write_bytes(text.encode("utf-8"))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"wrote {out} from commit {commit}: {len(texts)} notebooks, {len(text)} characters, "
          f"{len(text.encode('utf-8'))} bytes, sha256 {digest}")  # fmt: skip


if __name__ == "__main__":
    main()
