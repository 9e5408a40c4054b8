r"""How much faster a decoder generates with its KV cache: ``python -m course_lib.bench.kv_cache``.

    python -m course_lib.bench.kv_cache                            # the course's run: N = 64 ... 512, target at 256
    python -m course_lib.bench.kv_cache --threads 1 --csv kv.csv   # one thread, and the rows as CSV
    python -m course_lib.bench.kv_cache --kv-heads 1               # multi-query attention: a cache 8 x smaller

A :class:`~course_lib.decoder.DecoderLM` with random weights (seeded; by default a small GPT: ``D = 256``, 4 layers,
8 heads, ``V = 512``, learned positions, float32 on the CPU) continues a random prompt of ``P`` tokens by ``N`` new
tokens with :func:`~course_lib.generation.generate`, greedily, once with ``use_cache=True`` (the prompt once, then
one token per step) and once with ``use_cache=False`` (the whole sequence again at every step), in
``torch.inference_mode()``.

**Time.** Wall-clock seconds of one whole ``generate`` call, the median of ``--repeats`` calls of each. The calls
are *interleaved* (without, with, then with, without, ...), so a change in the machine's load hits both alike:
the ratio ``speed-up = time without / time with`` from one run is trustworthy on a busy machine, the absolute
times are not. A short warm-up of both comes first.

**Correctness.** Every call's tokens must equal those of the first call without the cache; if not, the run stops
with exit status 3.

**Cache size.** The cache ``generate`` holds at its end: ``P + N - 1`` positions (the last token is returned, never
read), rebuilt by one forward pass of those tokens into a fresh :class:`~course_lib.grouped_query.KVCache`. Its
``nbytes`` must equal the formula ``2 * B * layers * H_kv * Dk * (P + N - 1) * bytes per element`` (exit status 3
if not); both are printed in MiB.

**Target.** The course asks for a speed-up of at least 3 at ``N = 256``: checked when 256 is among the ``N``.
Exit status 0 when it is met or not checked, 1 when it is missed, 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import torch
from torch import Tensor

from ..decoder import DecoderLM
from ..generation import generate
from ..grouped_query import KVCache
from ..validate import integer
from .report import describe_machine

__all__ = [
    "TARGET_N",
    "TARGET_SPEEDUP",
    "CacheMismatch",
    "KVRow",
    "build_model",
    "cache_bytes_formula",
    "check_kv_target",
    "format_kv_table",
    "main",
    "run_kv_benchmark",
]

TARGET_N, TARGET_SPEEDUP = 256, 3.0  # the course's target: at least 3 x faster with the cache at N = 256
DEFAULT_NEW_TOKENS = (64, 128, 256, 512)
MIB = 2**20


class CacheMismatch(RuntimeError):
    """Generation with and without the cache disagreed, or the cache's bytes disagree with the formula."""


@dataclass
class KVRow:
    """One ``N``: median seconds of ``generate`` without and with the cache, their ratio, and the final cache."""

    new_tokens: int
    no_cache_ms: float
    cache_ms: float
    speedup: float
    cache_length: int  # P + N - 1 positions
    cache_bytes: int  # KVCache.nbytes
    formula_bytes: int  # 2 * B * layers * H_kv * Dk * length * bytes per element
    repeats: int


def build_model(
    *,
    vocab_size: int = 512,
    d_model: int = 256,
    num_heads: int = 8,
    num_kv_heads: int | None = None,
    num_layers: int = 4,
    max_len: int = 528,
    positions: str = "learned",
    seed: int = 0,
) -> DecoderLM:
    """A :class:`DecoderLM` with random weights drawn from ``seed``, in eval mode (the global RNG is left as it
    was: the weights are drawn inside ``torch.random.fork_rng``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(integer("seed", seed))
        model = DecoderLM(
            vocab_size, d_model, num_heads, num_layers, max_len=max_len, num_kv_heads=num_kv_heads, positions=positions
        )
    return model.eval()


def cache_bytes_formula(model: DecoderLM, length: int, batch: int = 1) -> int:
    """``2 * B * layers * H_kv * Dk * T * bytes``: the keys and values a full cache of ``T`` positions holds."""
    attn = model.blocks[0].self_attn
    element = model.lm_head.weight.element_size()
    return 2 * batch * model.num_layers * attn.num_kv_heads * attn.d_head * length * element


def _time_generate(model: DecoderLM, prompt: Tensor, n: int, use_cache: bool) -> tuple[float, Tensor]:
    """Seconds of one greedy ``generate`` call, and its tokens ``(B, N)``."""
    start = time.perf_counter()
    tokens = generate(model, prompt, n, use_cache=use_cache)
    return time.perf_counter() - start, tokens


def _final_cache_bytes(model: DecoderLM, prompt: Tensor, tokens: Tensor) -> tuple[int, int]:
    """``(T, nbytes)`` of the cache ``generate`` ends with: the prompt and every new token but the last."""
    cache = KVCache(model.num_layers)
    model(torch.cat((prompt, tokens[:, :-1]), dim=1), cache=cache)  # (B, P + N - 1) tokens
    return cache.length, cache.nbytes


def _measure(model: DecoderLM, prompt: Tensor, n: int, repeats: int) -> KVRow:
    samples: dict[bool, list[float]] = {False: [], True: []}
    reference = None
    for round_ in range(repeats):
        for use_cache in (False, True) if round_ % 2 == 0 else (True, False):  # alternate who goes first
            seconds, tokens = _time_generate(model, prompt, n, use_cache)
            samples[use_cache].append(seconds)
            reference = tokens if reference is None else reference
            if not torch.equal(tokens, reference):
                first = (tokens != reference).any(dim=0).nonzero()[0, 0].item()
                raise CacheMismatch(
                    f"N={n}: generate with use_cache={use_cache} chose other tokens than the first call "
                    f"without the cache (first difference at new token {first})"
                )
    length, nbytes = _final_cache_bytes(model, prompt, reference)
    formula = cache_bytes_formula(model, length, prompt.shape[0])
    if nbytes != formula:
        raise CacheMismatch(f"N={n}: KVCache.nbytes = {nbytes} but the formula gives {formula}")
    without, with_ = statistics.median(samples[False]), statistics.median(samples[True])
    return KVRow(n, 1000 * without, 1000 * with_, without / with_, length, nbytes, formula, repeats)


def run_kv_benchmark(
    model: DecoderLM,
    new_tokens: Sequence[int],
    *,
    prompt_len: int = 16,
    batch: int = 1,
    repeats: int = 3,
    seed: int = 0,
) -> list[KVRow]:
    """Time greedy generation of each ``N`` in ``new_tokens`` with and without the cache; one :class:`KVRow` each.

    The prompt is ``(batch, prompt_len)`` random token ids drawn from ``seed``. Raises :class:`CacheMismatch` when
    the two ways choose different tokens or the cache's bytes differ from :func:`cache_bytes_formula`.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be a course_lib DecoderLM, got {type(model).__name__}")
    for name, value in (("prompt_len", prompt_len), ("batch", batch), ("repeats", repeats)):
        integer(name, value, minimum=1)
    if not new_tokens:
        raise ValueError("new_tokens must name at least one N, got none")
    for n in new_tokens:
        integer("new_tokens", n, minimum=1)
    if prompt_len + max(new_tokens) - 1 > model.max_len:
        raise ValueError(
            f"prompt_len={prompt_len} + N={max(new_tokens)} - 1 positions exceed the model's max_len={model.max_len}"
        )
    g = torch.Generator().manual_seed(integer("seed", seed))
    prompt = torch.randint(model.vocab_size, (batch, prompt_len), generator=g)  # (B, P)
    with torch.inference_mode():
        for use_cache in (False, True):  # warm-up: first calls load kernels and thread pools
            generate(model, prompt, min(4, max(new_tokens)), use_cache=use_cache)
        return [_measure(model, prompt, n, repeats) for n in new_tokens]


def format_kv_table(rows: Sequence[KVRow]) -> str:
    """A plain-text table, one line per ``N``."""
    head = (
        f"{'N':>5} {'no cache ms':>12} {'cache ms':>10} {'speed-up':>9} {'cache T':>8} {'cache MiB':>10} "
        f"{'formula MiB':>12} {'reps':>4}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.new_tokens:>5} {r.no_cache_ms:>12.1f} {r.cache_ms:>10.1f} {r.speedup:>8.2f}x {r.cache_length:>8} "
            f"{r.cache_bytes / MIB:>10.3f} {r.formula_bytes / MIB:>12.3f} {r.repeats:>4}"
        )
    return "\n".join(lines)


def check_kv_target(rows: Sequence[KVRow]) -> dict | None:
    """The course's target, speed-up >= 3 at N = 256, as a dict with ``passed``; None when N = 256 was not run."""
    for r in rows:
        if r.new_tokens == TARGET_N:
            return dict(n=TARGET_N, measured=r.speedup, limit=TARGET_SPEEDUP, passed=r.speedup >= TARGET_SPEEDUP)
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.bench.kv_cache",
        description="Time greedy generation with and without the KV cache, and the cache's size.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--new-tokens", type=int, nargs="+", default=[*DEFAULT_NEW_TOKENS], metavar="N", help="default 64 ... 512")
    add("--prompt", type=int, default=16, metavar="P", help="prompt length P (default 16)")
    add("--batch", type=int, default=1, help="prompts generated at once, B (default 1)")
    add("--d-model", type=int, default=256, help="model width D (default 256)")
    add("--layers", type=int, default=4, help="decoder blocks (default 4)")
    add("--heads", type=int, default=8, help="query heads H (default 8)")
    add("--kv-heads", type=int, help="key/value heads H_kv, dividing H (default H; 1 = multi-query)")
    add("--vocab", type=int, default=512, help="vocabulary size V (default 512)")
    add("--positions", choices=("learned", "rope"), default="learned", help="learned positions (default) or RoPE")
    add("--repeats", type=int, default=3, help="timed calls of each way per N, median reported (default 3)")
    add("--seed", type=int, default=0, help="seeds the weights and the prompt (default 0)")
    add("--threads", type=int, help="torch.set_num_threads (default: torch's choice)")
    add("--csv", help="write the rows to this CSV file")
    return parser


def _setup(parser: argparse.ArgumentParser, args: argparse.Namespace) -> DecoderLM:
    """Check the arguments (a bad one ends the program with argparse's usage message) and build the model."""
    flags = {"--prompt": args.prompt, "--batch": args.batch, "--d-model": args.d_model, "--layers": args.layers,
             "--heads": args.heads, "--vocab": args.vocab, "--repeats": args.repeats, "--kv-heads": args.kv_heads,
             "--threads": args.threads}  # fmt: skip
    for flag, value in (*flags.items(), *(("--new-tokens", n) for n in args.new_tokens)):
        if value is None:  # --kv-heads or --threads not given
            continue
        try:
            integer(flag, value, minimum=1)
        except ValueError as err:
            parser.error(str(err))
    try:
        return build_model(
            vocab_size=args.vocab, d_model=args.d_model, num_heads=args.heads, num_kv_heads=args.kv_heads,
            num_layers=args.layers, max_len=args.prompt + max(args.new_tokens), positions=args.positions,
            seed=args.seed,
        )  # fmt: skip
    except ValueError as err:  # d_model not divisible by heads, heads by kv-heads, an odd head width with rope
        parser.error(str(err))


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0 target met or not checked, 1 missed, 3 cache mismatch)."""
    parser = _parser()
    args = parser.parse_args(argv)
    model = _setup(parser, args)
    if args.threads:
        torch.set_num_threads(args.threads)
    kv_heads = args.kv_heads or args.heads
    print(f"cpu: {describe_machine('cpu')}", flush=True)
    print(
        f"DecoderLM D={args.d_model} layers={args.layers} H={args.heads} H_kv={kv_heads} V={args.vocab} "
        f"positions={args.positions}, float32; B={args.batch} P={args.prompt}; greedy; "
        f"time = median of {args.repeats} interleaved calls of generate",
        flush=True,
    )
    start = time.perf_counter()
    try:
        rows = run_kv_benchmark(model, args.new_tokens, prompt_len=args.prompt, batch=args.batch,
                                repeats=args.repeats, seed=args.seed)  # fmt: skip
    except CacheMismatch as err:
        print(f"error: {err}", file=sys.stderr)
        return 3
    print(format_kv_table(rows))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=[field.name for field in fields(KVRow)])
            writer.writeheader()
            writer.writerows(asdict(r) for r in rows)
        print(f"wrote {args.csv}")
    print(f"total {time.perf_counter() - start:.0f} s")
    target = check_kv_target(rows)
    if target is None:
        print(f"target not checked: N = {TARGET_N} was not run")
        return 0
    verdict = "target met" if target["passed"] else "target missed"
    print(f"target: speed-up at N={TARGET_N} is {target['measured']:.2f}x (at least {TARGET_SPEEDUP:.0f}x): {verdict}")
    return 0 if target["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
