"""course_lib.bench.kv_cache: the KV-cache benchmark's table, its checks (tokens, cache bytes, the target) and its
arguments. Tiny models: these tests check the machinery; the benchmark itself is the CLI's default run."""

import csv
import itertools

import pytest
import torch

from course_lib.bench import kv_cache
from course_lib.bench.kv_cache import KVRow

# D = 16, 2 layers, H = 4, H_kv = 2 (so Dk = 4), V = 32, P = 3
TINY = ["--d-model", "16", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--vocab", "32", "--prompt", "3"]
TINY += ["--repeats", "2"]


def tiny_model(**overrides):
    options = dict(vocab_size=32, d_model=16, num_heads=4, num_kv_heads=2, num_layers=2, max_len=40) | overrides
    return kv_cache.build_model(**options)


def table_rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-----")) + 1
    return [line.split() for line in lines[start:] if line.strip() and line.split()[0].isdigit()]


def test_the_table_has_a_row_per_n_and_every_column(capsys, tmp_path):
    path = tmp_path / "kv.csv"
    code = kv_cache.main([*TINY, "--new-tokens", "4", "9", "--csv", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    header = next(line for line in out.splitlines() if "speed-up" in line)
    for column in ("N", "no cache ms", "cache ms", "speed-up", "cache T", "cache MiB", "formula MiB", "reps"):
        assert column in header
    rows = table_rows(out)
    assert [r[0] for r in rows] == ["4", "9"] and all(len(r) == 8 for r in rows)
    for r in rows:
        no_cache, cache, speedup = float(r[1]), float(r[2]), float(r[3].rstrip("x"))
        # the times are printed to 0.1 ms and the speed-up to 0.01, from unrounded times: on a fast machine the tiny
        # model's steps take about a millisecond, so the printed times bound the speed-up only to their rounding
        half = 0.05
        low, high = (no_cache - half) / (cache + half), (no_cache + half) / max(cache - half, 1e-9)
        assert low - 0.005 <= speedup <= high + 0.005, (no_cache, cache, speedup)
        assert r[5] == r[6] and r[7] == "2"
    assert "logical cores" in out and "thread(s)" in out  # the machine line
    assert "target not checked" in out
    with open(path) as f:
        read = list(csv.DictReader(f))
    assert [int(r["new_tokens"]) for r in read] == [4, 9]
    assert all(float(r["no_cache_ms"]) > 0 and float(r["cache_ms"]) > 0 for r in read)


@pytest.mark.parametrize("batch, n", [(1, 4), (2, 6)])
def test_the_cache_bytes_are_the_formula_written_by_hand(batch, n):
    (row,) = kv_cache.run_kv_benchmark(tiny_model(), [n], prompt_len=3, batch=batch, repeats=1)
    length = 3 + n - 1  # the last new token is never read
    by_hand = 2 * batch * 2 * 2 * 4 * length * 4  # keys and values, B, layers, H_kv, Dk, T, float32
    assert row.cache_length == length
    assert row.cache_bytes == row.formula_bytes == by_hand
    mqa = kv_cache.build_model(vocab_size=32, d_model=16, num_heads=4, num_kv_heads=1, num_layers=2, max_len=40)
    assert kv_cache.cache_bytes_formula(mqa, length, batch) == by_hand // 2  # one K/V head instead of two


def test_the_printed_cache_mib_is_the_formula(capsys):
    assert kv_cache.main([*TINY, "--batch", "2", "--new-tokens", "7"]) == 0
    (row,) = table_rows(capsys.readouterr().out)
    assert row[4] == str(3 + 7 - 1)
    assert row[5] == row[6] == f"{2 * 2 * 2 * 2 * 4 * (3 + 7 - 1) * 4 / 2**20:.3f}"


def test_tokens_with_and_without_the_cache_agree_and_a_difference_is_caught(monkeypatch, capsys):
    model = tiny_model()
    kv_cache.run_kv_benchmark(model, [5, 8], prompt_len=3, repeats=2)  # raises if they differ
    real_generate = kv_cache.generate

    def off_by_one_with_cache(model, prompt, n, *, use_cache):
        tokens = real_generate(model, prompt, n, use_cache=use_cache)
        return (tokens + 1) % model.vocab_size if use_cache else tokens

    monkeypatch.setattr(kv_cache, "generate", off_by_one_with_cache)
    with pytest.raises(kv_cache.CacheMismatch, match="use_cache=True chose other tokens"):
        kv_cache.run_kv_benchmark(model, [5], prompt_len=3, repeats=1)
    assert kv_cache.main([*TINY, "--new-tokens", "5"]) == 3
    assert "use_cache=True chose other tokens" in capsys.readouterr().err


def fake_timer(no_cache, cache, calls=None):
    """A stand-in for one timed generate call: all-zero tokens, and the seconds of ``no_cache`` (without the cache)
    or ``cache`` (with it) in turn; each call's ``use_cache`` is appended to ``calls``."""
    seconds = {False: itertools.cycle(no_cache), True: itertools.cycle(cache)}

    def timed(model, prompt, n, use_cache):
        if calls is not None:
            calls.append(use_cache)
        return next(seconds[use_cache]), torch.zeros(prompt.shape[0], n, dtype=torch.long)

    return timed


@pytest.mark.parametrize("speedup, code, verdict", [(2.0, 1, "target missed"), (4.0, 0, "target met")])
def test_the_target_at_256_new_tokens(monkeypatch, capsys, speedup, code, verdict):
    monkeypatch.setattr(kv_cache, "_time_generate", fake_timer([1.0], [1.0 / speedup]))
    assert kv_cache.main([*TINY, "--new-tokens", "8", "256"]) == code
    out = capsys.readouterr().out
    assert verdict in out and f"{speedup:.2f}x" in out


def test_check_kv_target():
    def row(n, speedup):
        return KVRow(n, 1.0, 1.0 / speedup, speedup, 10, 100, 100, 1)

    assert kv_cache.check_kv_target([row(128, 1.0), row(256, 3.0)])["passed"]  # the limit itself passes
    assert not kv_cache.check_kv_target([row(256, 2.99)])["passed"]
    assert kv_cache.check_kv_target([row(128, 10.0)]) is None  # N = 256 not run: nothing to check


def test_calls_alternate_and_the_median_is_reported(monkeypatch):
    calls = []
    monkeypatch.setattr(kv_cache, "_time_generate", fake_timer([1.0, 100.0, 2.0], [0.3, 0.4, 50.0], calls))
    (row,) = kv_cache.run_kv_benchmark(tiny_model(), [4], prompt_len=3, repeats=3)
    assert calls == [False, True, True, False, False, True]  # without first, then with first, ...
    assert row.no_cache_ms == pytest.approx(2000.0) and row.cache_ms == pytest.approx(400.0)  # medians, not means
    assert row.speedup == pytest.approx(5.0) and row.repeats == 3


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--repeats", "0"], "--repeats must be >= 1, got 0"),
        (["--new-tokens", "8", "0"], "--new-tokens must be >= 1, got 0"),
        (["--threads", "0"], "--threads must be >= 1, got 0"),
        (["--kv-heads", "3"], "num_heads=4 is not divisible by num_kv_heads=3"),
        (["--d-model", "18"], "d_model=18 is not divisible by num_heads=4"),
        (["--new-tokens", "many"], "invalid int value: 'many'"),
        (["--positions", "alibi"], "invalid choice: 'alibi'"),
    ],
)
def test_bad_arguments_are_named(capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        kv_cache.main([*TINY, *extra])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_run_kv_benchmark_checks_its_arguments():
    model = tiny_model(max_len=10)
    with pytest.raises(ValueError, match="repeats must be >= 1, got 0"):
        kv_cache.run_kv_benchmark(model, [4], prompt_len=3, repeats=0)
    with pytest.raises(ValueError, match="new_tokens must name at least one N"):
        kv_cache.run_kv_benchmark(model, [], prompt_len=3)
    with pytest.raises(TypeError, match="new_tokens must be an int, got float 4.0"):
        kv_cache.run_kv_benchmark(model, [4.0], prompt_len=3)
    with pytest.raises(ValueError, match="exceed the model's max_len=10"):
        kv_cache.run_kv_benchmark(model, [9], prompt_len=3)
    with pytest.raises(TypeError, match="model must be a course_lib DecoderLM"):
        kv_cache.run_kv_benchmark(torch.nn.Linear(2, 2), [4])
