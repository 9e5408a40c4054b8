"""course_lib.bench: the peak-memory probe measures what it should, the runner and its reports work, and the CLI
runs end to end. Sizes are small: these tests check the machinery, the benchmark itself lives in the CLI."""

import csv
import os
import resource

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course_lib import bench
from course_lib.bench import BenchRow, memory
from course_lib.bench.cli import main as bench_main


def test_cpu_peak_of_naive_attention_holds_the_score_matrix():
    n = 2048
    scores_bytes = n * n * 4  # one float32 N x N matrix: 16 MiB
    naive = bench.measure_cpu_peak("naive", n)
    chunked = bench.measure_cpu_peak("chunked", n, chunk_size=64)
    assert "error" not in naive and "error" not in chunked
    # naive holds the scores and the softmax of them at once; chunked never holds even one N x N matrix
    assert naive["peak_bytes"] >= 1.5 * scores_bytes
    assert chunked["peak_bytes"] < 0.5 * scores_bytes
    assert naive["seconds"] > 0


def test_cpu_peak_grows_quadratically_for_naive_attention():
    peaks = [bench.measure_cpu_peak("naive", n)["peak_bytes"] for n in (1024, 2048, 4096)]
    exponent = bench.growth_exponent([1024, 2048, 4096], peaks)
    assert 1.7 < exponent < 2.3, peaks


def test_cpu_peak_of_naive_attention_is_two_score_matrices_to_half_a_mib():
    """Where the peak mark can be reset (Linux), the child warms the method up at the measured size, so the peak is
    the call's own data: the scores and their softmax (2 n^2 float32 numbers, alive at once), plus the output
    (n x 64 float32: 0.25 to 1 MiB here, allocated once the scores are freed, so not always at the peak) and small
    buffers. A warm-up on a short input only left about 1 MiB of library code paged in during the call."""
    for n in (1024, 2048, 4096):
        result = bench.measure_cpu_peak("naive", n, threads=1)
        if not result["exact"]:
            pytest.skip("the peak mark cannot be reset here: the all-time peak is read, with a short warm-up")
        two_matrices = 2 * n * n * 4
        output = n * 64 * 4
        assert two_matrices <= result["peak_bytes"] <= two_matrices + output + 2**19, (n, result["peak_bytes"])


def test_child_errors_are_reported_not_raised():
    result = bench.measure_cpu_peak("sliding", 64, window=-1)  # the child raises ValueError
    assert "error" in result and "window" in result["error"]
    with pytest.raises(ValueError, match="unknown method"):
        bench.measure_cpu_peak("quadratic", 64)


def test_run_benchmark_small():
    rows = bench.run_benchmark([64, 96], bench.ALL_METHODS, repeats=2, window=8, chunk_size=24, progress=False)
    assert [(r.n, r.method) for r in rows] == [(n, m) for n in (64, 96) for m in bench.ALL_METHODS]
    for r in rows:
        assert r.status == "ok" and r.device == "cpu" and r.dtype == "float32"
        assert r.time_ms > 0 and r.peak_mib is not None and 1 <= r.repeats <= 2
        if r.method in ("naive", "chunked", "sdpa_math", "sliding", "masked"):
            assert r.err is not None and r.err < 1e-5, r  # checked against a reference of the same run
    assert all(r.err is None for r in rows if r.method in ("linear", "sdpa"))


def test_a_call_slower_than_the_budget_runs_once_and_its_output_is_still_checked(monkeypatch):
    from course_lib.bench import runner

    def no_second_call(*args):  # every timed call in this process goes through time_once
        raise AssertionError("a call slower than the budget is not repeated: the memory call is the only one")

    monkeypatch.setattr(runner, "time_once", no_second_call)
    rows = bench.run_benchmark(
        [64, 96], bench.ALL_METHODS, repeats=1, time_budget_s=0, window=8, chunk_size=24, progress=False
    )
    for r in rows:
        assert r.status == "ok" and r.repeats == 1 and r.time_ms == r.best_ms > 0 and r.peak_mib is not None
        if r.method in ("naive", "chunked", "sdpa_math", "sliding", "masked"):
            assert r.err is not None and r.err < 1e-5, r  # the child's output against the reference's child's
    assert all(r.err is None for r in rows if r.method in ("linear", "sdpa"))


@pytest.mark.parametrize("threads", [1, 2])  # a fork of this process (Linux), the measuring server
def test_the_child_sends_back_the_output_of_its_call(threads):
    q, k, v = bench.methods.inputs(96, batch=1, heads=1, dim=64, dtype=torch.float32, device="cpu", seed=0)
    result = bench.measure_cpu_peak("chunked", 96, chunk_size=24, output_after_s=0.0, threads=threads)
    torch.testing.assert_close(result["output"], torch.nn.functional.scaled_dot_product_attention(q, k, v))
    assert "output" not in bench.measure_cpu_peak("chunked", 96, chunk_size=24, threads=threads)  # only if asked
    assert "output" not in bench.measure_cpu_peak("chunked", 96, chunk_size=24, output_after_s=60, threads=threads)


@pytest.mark.skipif(not memory.forks_here(1), reason="forks the caller only on Linux with glibc")
def test_a_wrong_output_of_the_only_call_is_caught(monkeypatch):
    real, threads = bench.methods.make_method, torch.get_num_threads()

    def doubled_naive(name, n, **options):  # the forked child computes a wrong naive attention
        fn = real(name, n, **options)
        return (lambda *args: 2 * fn(*args)) if name == "naive" else fn

    monkeypatch.setattr(memory, "make_method", doubled_naive)
    torch.set_num_threads(1)  # the measurement forks this process, where the wrong method is patched in
    try:
        naive, sdpa = bench.run_benchmark([64], ["naive", "sdpa"], repeats=1, time_budget_s=0, progress=False)
    finally:
        torch.set_num_threads(threads)
    assert naive.err > 0.1 and sdpa.err is None  # the child's wrong output is what was checked


def test_run_benchmark_skips_quadratic_methods_above_the_limit_and_can_skip_memory():
    rows = bench.run_benchmark(
        [32, 64], ("naive", "chunked"), max_quadratic_n=32, measure_memory=False, repeats=1, progress=False
    )
    by = {(r.n, r.method): r for r in rows}
    assert by[(64, "naive")].status.startswith("skipped") and by[(64, "naive")].time_ms is None
    assert by[(64, "chunked")].status == "ok" and by[(64, "chunked")].peak_mib is None
    assert by[(32, "naive")].time_ms > 0


def test_run_benchmark_bad_arguments():
    with pytest.raises(ValueError, match="unknown method"):
        bench.run_benchmark([16], ["fast"], progress=False)
    with pytest.raises(ValueError, match="repeats"):
        bench.run_benchmark([16], ["naive"], repeats=0, progress=False)
    with pytest.raises(ValueError, match="time_budget_s must be >= 0"):
        bench.run_benchmark([16], ["naive"], time_budget_s=-1.0, progress=False)
    with pytest.raises(ValueError, match="runs on CUDA only"):
        bench.run_benchmark([16], ["naive", "kernel"], progress=False)


@pytest.mark.parametrize("n, window", [(1, 0), (37, 0), (37, 5), (64, 8), (20, 19), (20, 50)])
def test_the_masked_method_attends_through_the_band_of_window_mask(n, window):
    # make_method masks with course_lib.window_mask; the reference is the loop over each query's band
    from course_lib.efficient import sliding_window_attention_reference

    q, k, v = (torch.randn(2, 3, n, 16, dtype=torch.float64) for _ in range(3))
    masked = bench.make_method("masked", n, window=window, chunk_size=8, device="cpu")
    torch.testing.assert_close(masked(q, k, v), sliding_window_attention_reference(q, k, v, window))


def test_a_time_budget_of_zero_times_only_the_memory_call():
    (row,) = bench.run_benchmark([64], ["naive"], time_budget_s=0, progress=False)
    assert row.status == "ok" and row.repeats == 1 and row.time_ms == row.best_ms > 0


@pytest.mark.parametrize("threads", [1, 2])
def test_with_one_thread_a_cpu_call_is_timed_by_its_threads_cpu_time(threads):
    """A call that waits (as one waits for a busy machine's other programs) costs no CPU time: with one thread it
    adds nothing to the time; with more, whose work the calling thread's clock would not see, the wall clock."""
    import time

    from course_lib.bench.methods import clock, time_once

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        seconds, out = time_once(lambda x: time.sleep(0.05) or x + 1, [torch.zeros(2)], torch.device("cpu"))
        assert clock(torch.device("cpu")) is (time.thread_time if threads == 1 else time.perf_counter)
    finally:
        torch.set_num_threads(before)
    assert out.tolist() == [1.0, 1.0]
    assert seconds < 0.02 if threads == 1 else seconds >= 0.05, seconds


def test_growth_exponent():
    ns = [256, 512, 1024, 2048]
    assert bench.growth_exponent(ns, [3.0 * n**2 for n in ns]) == pytest.approx(2.0)
    assert bench.growth_exponent(ns, [0.5 * n for n in ns]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        bench.growth_exponent([1], [1.0])


def fake_rows(chunked_mib=40.0, chunked_ms=500.0, sliding_mib=100.0):
    def row(method, n, ms, mib):
        return BenchRow("cpu", "float32", method, n, time_ms=ms, best_ms=ms, peak_mib=mib, repeats=1)

    return [
        row("naive", 8192, 2000.0, 512.0),
        row("chunked", 8192, chunked_ms, chunked_mib),
        row("sdpa", 8192, 250.0, 3.0),
        row("sliding", 16384, 100.0, sliding_mib),
        row("masked", 16384, 9000.0, 4096.0),
    ]


def test_check_targets():
    targets = {t["target"]: t for t in bench.check_targets(fake_rows())}
    assert targets["chunked / naive peak memory"]["measured"] == pytest.approx(40 / 512)
    assert targets["chunked / sdpa time"]["measured"] == pytest.approx(2.0)
    assert all(t["passed"] for t in targets.values())
    failing = {t["target"]: t["passed"] for t in bench.check_targets(fake_rows(60.0, 800.0, 300.0))}
    assert failing == {
        "chunked / naive peak memory": False,
        "chunked / sdpa time": False,
        "sliding / masked peak memory": False,
    }
    assert bench.check_targets(fake_rows()[:1]) == []  # nothing to compare


def test_on_cuda_the_time_target_is_the_kernels():
    """On CUDA exact attention in linear memory is timed as the fused Triton kernel; chunked keeps its memory target,
    and without a kernel row there is no time target (not chunked's in its place)."""
    rows = [BenchRow("cuda", "bfloat16", r.method, r.n, r.time_ms, r.best_ms, r.peak_mib, 1) for r in fake_rows()]
    targets = {t["target"]: t["passed"] for t in bench.check_targets(rows, "cuda")}
    assert targets == {"chunked / naive peak memory": True, "sliding / masked peak memory": True}
    rows.append(BenchRow("cuda", "bfloat16", "kernel", 8192, 1000.0, 1000.0, 1.0, 1))
    kernel = {t["target"]: t for t in bench.check_targets(rows, "cuda")}["kernel / sdpa time"]
    assert kernel["measured"] == pytest.approx(4.0) and not kernel["passed"]
    assert bench.check_targets(rows, "cpu") == []  # rows of another device are not this device's targets


def test_table_csv_and_plot(tmp_path):
    rows = fake_rows() + [BenchRow("cpu", "float32", "naive", 16384, status="skipped (N > 8192)")]
    table = bench.format_table(rows)
    assert "peak MiB" in table and "skipped (N > 8192)" in table and table.count("\n") == len(rows) + 1
    path = tmp_path / "rows.csv"
    bench.save_csv(rows, path)
    with open(path) as f:
        read = list(csv.DictReader(f))
    assert len(read) == len(rows) and read[1]["method"] == "chunked" and float(read[1]["peak_mib"]) == 40.0
    fig = bench.plot_results(rows, title="test")
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 5
    fig.savefig(tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_cli_end_to_end(tmp_path, capsys):
    csv_path, png_path = tmp_path / "b.csv", tmp_path / "b.png"
    code = bench_main(
        ["--device", "cpu", "--lengths", "64", "128", "--methods", "naive", "chunked", "sdpa", "--repeats", "1",
         "--no-progress", "--csv", str(csv_path), "--plot", str(png_path)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "method" in out and "chunked" in out and "cores" in out
    assert csv_path.exists() and png_path.exists()


def test_describe_machine_names_the_cpu():
    text = bench.describe_machine("cpu")
    assert "torch" in text and "thread" in text


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_path():
    rows = bench.run_benchmark([512, 1024], ("naive", "chunked", "sdpa"), device="cuda", repeats=2, progress=False)
    by = {(r.n, r.method): r for r in rows}
    assert all(r.status == "ok" and r.dtype == "bfloat16" for r in rows)
    # the naive float32 scores: 1024^2 * 4 bytes, and its softmax
    assert by[(1024, "naive")].peak_mib >= 1.5 * 1024**2 * 4 / 2**20
    assert by[(1024, "chunked")].peak_mib < by[(1024, "naive")].peak_mib
    assert by[(1024, "chunked")].err < 2e-2


@pytest.mark.parametrize("threads", [1, 2])  # a fork of this process (Linux), the measuring server
def test_a_measurement_that_times_out_is_reported_and_the_next_one_works(threads):
    result = bench.measure_cpu_peak("naive", 8192, timeout_s=0.05, threads=threads)  # far too short for 8192 x 8192
    assert result == {"error": "no answer within 0 s"}
    again = bench.measure_cpu_peak("linear", 64, threads=threads)
    assert "peak_bytes" in again
    server = memory._SERVER  # threads = 2: the server, started again after the timeout; it stops when asked
    memory.stop_server()
    assert memory._SERVER is None and (server is None or server.returncode == 0)


@pytest.mark.skipif(not memory.forks_here(1), reason="forks the caller only on Linux with glibc")
def test_a_fork_of_the_caller_counts_memory_the_caller_freed_and_is_reaped_by_it():
    """A one-thread measurement forks this process, whose heap may hold resident memory it freed: the child must
    still pay for every page the call uses, as a new interpreter would; and no helper process is left behind."""
    n, server, mib, libc = 2048, memory._SERVER, 2**20, memory._GLIBC
    libc.mallopt(-3, 32 * mib)  # M_MMAP_THRESHOLD: blocks below 32 MiB from the heap (where freed ones can rise to)
    libc.mallopt(-1, 1024 * mib)  # M_TRIM_THRESHOLD: freed memory stays in the heap, resident
    try:
        blocks = [torch.ones(4 * mib // 4) for _ in range(10)]  # 40 MiB of heap, touched
        del blocks  # without _allocate_afresh the two 16 MiB matrices reuse it and look almost free (7 MiB here)
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        naive = bench.measure_cpu_peak("naive", n, threads=1)
    finally:
        libc.mallopt(-3, 128 * 1024)  # glibc's initial values
        libc.mallopt(-1, 128 * 1024)
        libc.malloc_trim(0)
    assert naive["peak_bytes"] >= 1.5 * n * n * 4  # the scores and their softmax, as in a fresh interpreter
    assert memory._SERVER is server  # no server started for it
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert after.ru_utime + after.ru_stime > children_before.ru_utime + children_before.ru_stime  # reaped here


def _thp_enabled_in_a_child(prepare) -> str:
    """The ``THP_enabled`` line of /proc/self/status in a fork of this process after ``prepare()`` (Linux >= 5.0)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            prepare()
            line = next((x for x in open("/proc/self/status") if x.startswith("THP_enabled:")), "")
            os.write(write_end, line.split(":")[-1].strip().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 64).decode()
    os.close(read_end)
    os.waitpid(pid, 0)
    return answer


@pytest.mark.skipif(not memory.forks_here(1), reason="the child's set-up uses glibc, on Linux")
def test_the_measuring_child_uses_small_pages():
    """Where transparent huge pages are "always" on, one byte touched in a fresh 2 MiB of heap makes 2 MiB resident:
    on such a machine notebook 08's naive peak at n = 1024 read 10.7 MiB instead of 8.7 at random (its memory exponent
    1.80 instead of 1.96). The measuring child switches them off for itself; the caller keeps them."""
    if _thp_enabled_in_a_child(lambda: None) != "1":
        pytest.skip("this kernel reports no THP_enabled, or it is already off for this process")
    assert _thp_enabled_in_a_child(memory._allocate_afresh) == "0"
    assert _thp_enabled_in_a_child(lambda: None) == "1"  # the caller (and a fork without the set-up) unchanged


class _KeepEveryResult(TorchDispatchMode):  # a dispatch mode as a debugging tool (or a test profile) may run
    def __init__(self):
        super().__init__()
        self.kept = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        self.kept.append(result)
        return result


def test_a_fork_of_the_caller_measures_without_the_callers_dispatch_modes():
    """A fork inherits the caller's dispatch modes; a new interpreter has none, and the measurement is of the method
    alone: the naive call holds its two n x n matrices, not every intermediate result the mode keeps (3.1 of them)."""
    n = 2048
    with _KeepEveryResult():
        naive = bench.measure_cpu_peak("naive", n, threads=1)
    assert 1.5 * n * n * 4 <= naive["peak_bytes"] < 2.5 * n * n * 4


def test_without_fork_each_measurement_starts_a_new_interpreter(monkeypatch):
    monkeypatch.delattr(os, "fork")  # as on Windows
    result = bench.measure_cpu_peak("naive", 1024)
    assert result["peak_bytes"] >= 1024 * 1024 * 4  # at least one float32 score matrix
