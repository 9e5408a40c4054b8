"""Byte-pair encoding (BPE, 字节对编码) on UTF-8 bytes: train merges, encode, decode. Taught in notebook 13.

The base alphabet is the 256 byte values, so every text can be encoded, whatever characters it holds (byte
fallback): a character no merge covers is simply its UTF-8 bytes. Token ids:

- ``0 .. 255``: the bytes;
- ``256 + i``: the ``i``-th merge, the concatenation of the two tokens it joins;
- then the special tokens, in the order given.

So the vocabulary size is ``256 + len(merges) + len(specials)``, not the number of merges.

Training (:meth:`BytePairEncoder.train`) first splits the text into chunks with a regular expression (a merge never
crosses a chunk boundary), counts each distinct chunk once, then repeats: count the adjacent pairs of tokens (every
position, so ``a a a`` holds the pair ``(a, a)`` twice), merge the most frequent pair everywhere, left to right. Ties
go to the pair with the smallest ids ``(a, b)``, the rule of Hugging Face ``tokenizers``' BPE trainer when its base
tokens are numbered in byte order. Pair counts are updated only in the chunks that held the merged pair (a heap keeps
the counts in order), so a merge costs the size of those chunks, not of the corpus.

Shape legend: a text is a ``str``; token ids are a list of ints (a 1-D integer tensor is accepted by :meth:`decode`).
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import repeat
from pathlib import Path

import torch

from .validate import instance, integer
from .validate import text as checked_text

__all__ = ["SPLIT_PATTERN", "BytePairEncoder", "merge_pair"]

#: The default chunking: runs of letters, of digits and of other characters, each with at most one leading space,
#: and runs of whitespace. Only ASCII classes, so it splits a text at the same bytes as it splits the text's bytes
#: read as Latin-1 characters (what the test against ``tokenizers`` relies on). A Chinese line without spaces is one
#: chunk.
SPLIT_PATTERN = r" ?[A-Za-z]+| ?[0-9]+| ?[^ \t\n\rA-Za-z0-9]+|[ \t\n\r]+(?![^ \t\n\r])|[ \t\n\r]+"
NUM_BYTES = 256
_UNRANKED = float("inf")  # the rank of a pair that no merge joins


def _sites(ids: Sequence[int], pair: tuple[int, int]) -> list[int]:
    """Start positions of the non-overlapping occurrences of ``pair`` in ``ids``, found left to right."""
    a, b = pair
    sites, i, last = [], 0, len(ids) - 1
    while True:
        try:
            i = ids.index(a, i)  # the scan for the first token runs in C
        except ValueError:
            return sites
        if i < last and ids[i + 1] == b:
            sites.append(i)
            i += 2
        else:
            i += 1


def _merge(ids: list[int], pair: tuple[int, int], new_id: int, sites: list[int] | None = None) -> list[int]:
    out, start = [], 0
    for i in _sites(ids, pair) if sites is None else sites:  # sites: the pair's sites in ids, if found already
        out += ids[start:i]
        out.append(new_id)
        start = i + 2
    return out + ids[start:]


def merge_pair(ids: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """``ids`` with every occurrence of ``pair`` replaced by ``new_id``, scanning left to right.

    Occurrences do not overlap: ``merge_pair([7, 7, 7], (7, 7), 9) == [9, 7]``.
    """
    instance("ids", ids, (list, tuple), "a list of token ids")
    ids = [integer(f"ids[{i}]", t, minimum=0) for i, t in enumerate(ids)]
    instance("pair", pair, (list, tuple), "a pair of token ids")
    if len(pair) != 2:
        raise ValueError(f"pair must hold two token ids, got {len(pair)}: {pair!r}")
    pair = (integer("pair[0]", pair[0], minimum=0), integer("pair[1]", pair[1], minimum=0))
    return _merge(ids, pair, integer("new_id", new_id, minimum=0))


def _chunks(text: str, pattern: str | None) -> list[str]:
    return [text] if pattern is None else re.findall(pattern, text)


def _train_merges(chunks: Counter[bytes], num_merges: int) -> list[tuple[int, int]]:
    """The first ``num_merges`` merges (fewer if no pair is left) of a table chunk -> count."""
    words = [list(chunk) for chunk in chunks]
    counts = list(chunks.values())
    pairs: Counter[tuple[int, int]] = Counter()
    where: defaultdict[tuple[int, int], set[int]] = defaultdict(set)  # pair -> chunks that may hold it
    for w, (word, count) in enumerate(zip(words, counts, strict=True)):
        for pair in zip(word, word[1:], strict=False):
            pairs[pair] += count
            where[pair].add(w)
    heap = [(-count, pair) for pair, count in pairs.items()]  # largest count first, then the smallest pair
    heapq.heapify(heap)
    merges: list[tuple[int, int]] = []
    while len(merges) < num_merges and heap:
        negative, pair = heapq.heappop(heap)
        if -negative != pairs[pair]:  # a stale entry: its count fell since, and the new count was pushed then
            continue
        new_id = NUM_BYTES + len(merges)
        merges.append(pair)
        changed = set()
        for w in sorted(where.pop(pair)):
            old, count = words[w], counts[w]
            sites = _sites(old, pair)
            if not sites:
                continue
            new = _merge(old, pair, new_id, sites)
            # only the pairs that touch a merge change: old pairs j-1, j, j+1 around a site j; new pairs k-1, k
            # around the new token at k (the k-th site sits at k = j - k, as every earlier site shortened the word)
            gone = {j + d for j in sites for d in (-1, 0, 1) if 0 <= j + d < len(old) - 1}
            came = {j - k + d for k, j in enumerate(sites) for d in (-1, 0) if 0 <= j - k + d < len(new) - 1}
            for j in gone:
                pairs[old[j], old[j + 1]] -= count
                changed.add((old[j], old[j + 1]))
            for k in came:
                pairs[new[k], new[k + 1]] += count
                where[new[k], new[k + 1]].add(w)
                changed.add((new[k], new[k + 1]))
            words[w] = new
        for p in changed:
            if pairs[p] > 0:
                heapq.heappush(heap, (-pairs[p], p))
    return merges


class BytePairEncoder:
    """A byte-level BPE tokenizer: ``merges`` (pairs of ids, in the order learned), the chunking ``pattern`` (None:
    the whole text is one chunk) and ``specials``, strings that are always one token of their own.

    Build one with :meth:`train`, or from saved merges with :meth:`load`. ``decode(encode(text)) == text`` for every
    ``str`` (tested on arbitrary Unicode).
    """

    def __init__(
        self,
        merges: Sequence[tuple[int, int]] = (),
        *,
        pattern: str | None = SPLIT_PATTERN,
        specials: Sequence[str] = (),
    ) -> None:
        instance("merges", merges, (list, tuple), "a list of (id, id) pairs")
        instance("pattern", pattern, str, "a regular expression (str)", optional=True)
        instance("specials", specials, (list, tuple), "a list of strings")
        self.merges = [self._checked_pair(i, pair) for i, pair in enumerate(merges)]
        self.pattern = pattern
        self.specials = [checked_text(f"specials[{i}]", s) for i, s in enumerate(specials)]
        if len(set(self.specials)) != len(self.specials):
            raise ValueError(f"specials must be distinct, got {self.specials}")
        self._bytes = [bytes([b]) for b in range(NUM_BYTES)]
        for a, b in self.merges:
            self._bytes.append(self._bytes[a] + self._bytes[b])
        self._bytes += [s.encode("utf-8") for s in self.specials]
        self._rank = {pair: i for i, pair in enumerate(self.merges)}
        first_special = NUM_BYTES + len(self.merges)
        self._special_ids = {s: first_special + i for i, s in enumerate(self.specials)}
        longest_first = sorted(self.specials, key=len, reverse=True)  # "<|e|>" before "<|e", which starts it
        self._special_split = "(" + "|".join(map(re.escape, longest_first)) + ")" if specials else None
        self._done: dict[str, list[int]] = {}  # chunk -> its ids: chunks repeat (words, lines) within and across texts

    def _checked_pair(self, i: int, pair: object) -> tuple[int, int]:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(f"merges[{i}] must be a pair of token ids, got {pair!r}")
        a, b = (integer(f"merges[{i}][{j}]", t, minimum=0) for j, t in enumerate(pair))
        if max(a, b) >= NUM_BYTES + i:
            raise ValueError(f"merges[{i}] = {(a, b)} joins an id that does not exist yet (ids < {NUM_BYTES + i})")
        return a, b

    @classmethod
    def train(
        cls,
        text: str,
        num_merges: int,
        *,
        pattern: str | None = SPLIT_PATTERN,
        specials: Sequence[str] = (),
    ) -> BytePairEncoder:
        """Learn ``num_merges`` merges from ``text`` (fewer if the text runs out of pairs). The specials are cut out
        first, the longest first as :meth:`encode` cuts them, so no merge crosses or enters one."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        integer("num_merges", num_merges, minimum=0)
        split = cls(pattern=pattern, specials=specials)._special_split  # checks both; cuts as encode does
        pieces = re.split(split, text)[::2] if split else [text]  # the text between the specials, without them
        chunks = Counter(c.encode("utf-8") for piece in pieces for c in _chunks(piece, pattern) if c)
        return cls(_train_merges(chunks, num_merges), pattern=pattern, specials=specials)

    @property
    def vocab_size(self) -> int:
        """``256 + len(merges) + len(specials)``: the bytes, one token per merge, the special tokens."""
        return len(self._bytes)

    def token_bytes(self, token: int) -> bytes:
        """The bytes that token id ``token`` stands for."""
        integer("token", token, minimum=0)
        if token >= self.vocab_size:
            raise ValueError(f"token must be < vocab_size={self.vocab_size}, got {token}")
        return self._bytes[token]

    def token_text(self, token: int) -> str:
        """The token as text; bytes that are not a whole UTF-8 character are written ``\\xNN``."""
        return self.token_bytes(token).decode("utf-8", errors="backslashreplace")

    def _encode_chunk(self, ids: list[int]) -> list[int]:
        rank_of = self._rank.get
        while len(ids) > 1:
            # the earliest learned merge among the adjacent pairs; a pair without a merge ranks _UNRANKED (map hands
            # rank_of each pair and that default, so the scan runs in C)
            rank = min(map(rank_of, zip(ids, ids[1:], strict=False), repeat(_UNRANKED, len(ids) - 1)))
            if rank == _UNRANKED:
                break
            ids = _merge(ids, self.merges[rank], NUM_BYTES + rank)
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: its UTF-8 bytes, then every merge in the order learned, chunk by chunk."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        pieces = re.split(self._special_split, text) if self._special_split else [text]
        ids: list[int] = []
        done = self._done  # each distinct chunk is encoded once in the encoder's life
        for piece in pieces:
            if piece in self._special_ids:
                ids.append(self._special_ids[piece])
                continue
            for chunk in _chunks(piece, self.pattern):
                if chunk not in done:
                    done[chunk] = self._encode_chunk(list(chunk.encode("utf-8")))
                ids += done[chunk]
        return ids

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``. Bytes that do not form valid UTF-8 (ids cut in the middle of a character) become
        U+FFFD, the replacement character; ``decode(encode(text))`` is always ``text``."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1 or ids.dtype.is_floating_point or ids.dtype == torch.bool:
                raise TypeError(f"ids must be a list of ints or a 1-D integer tensor, got {ids.dtype} {ids.dim()}-D")
            ids = ids.tolist()
        instance("ids", ids, (list, tuple), "a list of token ids")
        vocab_size = self.vocab_size
        if not (set(map(type, ids)) == {int} and 0 <= min(ids) and max(ids) < vocab_size):  # else: name a bad id
            for i, token in enumerate(ids):
                integer(f"ids[{i}]", token, minimum=0)
                if token >= vocab_size:
                    raise ValueError(f"ids[{i}] must be < vocab_size={vocab_size}, got {token}")
        return b"".join([self._bytes[t] for t in ids]).decode("utf-8", errors="replace")

    def save(self, path: str | Path) -> None:
        """Write the merges, the pattern and the specials to ``path`` as JSON (:meth:`load` reads them back)."""
        data = {"format": "course_lib.bpe 1", "pattern": self.pattern, "specials": self.specials,
                "merges": [list(pair) for pair in self.merges]}  # fmt: skip
        Path(path).write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> BytePairEncoder:
        """The encoder saved by :meth:`save` at ``path``."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != "course_lib.bpe 1":
            raise ValueError(f"{path} is not a file written by BytePairEncoder.save")
        return cls([tuple(pair) for pair in data["merges"]], pattern=data["pattern"], specials=data["specials"])

    def __repr__(self) -> str:
        merges, specials = len(self.merges), len(self.specials)
        return f"BytePairEncoder({merges} merges, {specials} specials, vocab_size={self.vocab_size})"
