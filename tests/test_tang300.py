"""The shipped Tang poems file: its checksum, its contents, and clear errors when it is missing or altered."""

import hashlib
import re
import shutil

import pytest

from course_lib.data import TANG300_SHA256, DataFileError, load_tang300
from course_lib.paths import DATA_DIR, ROOT


def test_shipped_file_matches_its_checksum_and_sources_md():
    digest = hashlib.sha256((DATA_DIR / "tang300.txt").read_bytes()).hexdigest()
    assert digest == TANG300_SHA256
    sources = (ROOT / "data" / "SOURCES.md").read_text(encoding="utf-8")
    assert "tang300.txt" in sources and TANG300_SHA256 in sources and "public domain" in sources
    assert (DATA_DIR / "GPL-3.0.txt").read_text().startswith("                    GNU GENERAL PUBLIC LICENSE")


def test_poems_contents():
    poems = load_tang300()
    assert len(poems) == 313
    title, author, text = poems[0]
    assert (title, author) == ("《感遇・其一》", "张九龄") and text.startswith("兰叶春葳蕤，桂华秋皎洁。\n")
    authors = {a for _, a, _ in poems}
    assert {"李白", "杜甫", "王维", "李商隐"} <= authors
    for title, author, text in poems:
        assert title.startswith("《") and title.endswith("》") and 1 <= len(author) <= 10
        assert text.endswith("\n") and "\n\n" not in text and "\x1b" not in text
    # the regular forms dominate: most pieces between punctuation marks have five or seven characters
    pieces = [len(p) for _, _, text in poems for p in re.split(r"[，。？！；：、\n]", text) if p]
    assert sum(n in (5, 7) for n in pieces) / len(pieces) > 0.9


def test_missing_or_altered_file_raises_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"Tang poems file .* is missing.*git checkout data/tang300.txt"):
        load_tang300(tmp_path / "tang300.txt")
    copy = tmp_path / "tang300.txt"
    shutil.copy(DATA_DIR / "tang300.txt", copy)
    assert load_tang300(copy) == load_tang300()
    copy.write_text(copy.read_text(encoding="utf-8").replace("兰叶", "兰花", 1), encoding="utf-8")
    with pytest.raises(DataFileError, match=rf"SHA-256 is [0-9a-f]{{64}}, expected {TANG300_SHA256}"):
        load_tang300(copy)
    with pytest.raises(TypeError, match="path must be a str or a path"):
        load_tang300(3)


def test_every_data_file_is_listed_in_sources_md_with_its_checksum():
    sources = (DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    for path in sorted(DATA_DIR.rglob("*")):
        if path.is_file() and path.name != "SOURCES.md":
            name = path.relative_to(DATA_DIR).as_posix()
            assert f"`{name}`" in sources, f"data/{name} is not listed in data/SOURCES.md"
            assert hashlib.sha256(path.read_bytes()).hexdigest() in sources, f"data/{name}: checksum not listed"
