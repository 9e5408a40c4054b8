"""course_lib.kernels.flash_attention (Triton) against the float32 reference and PyTorch's fused SDPA.

On a CUDA machine the kernel is compiled and run on the GPU. Without one it runs on the CPU under Triton's
interpreter (TRITON_INTERPRET=1) at small sizes: slow, but the same kernel source, masks and online softmax.
Triton reads TRITON_INTERPRET when a kernel is *decorated* (module import) and again while launching, so this
module sets it before importing course_lib.kernels and keeps it set only while its own tests run.
Without triton installed every test here is skipped.
"""

import importlib
import math
import os
import sys

import pytest
import torch
import torch.nn.functional as F

CUDA = torch.cuda.is_available()
INTERPRET = not CUDA  # no GPU: use Triton's CPU interpreter
_ENV = "TRITON_INTERPRET"


def _import_kernels():
    """Import course_lib.kernels with TRITON_INTERPRET set as this module needs it (re-import if needed)."""
    saved = os.environ.get(_ENV)
    if INTERPRET:
        os.environ[_ENV] = "1"
    try:
        pytest.importorskip(
            "triton", minversion="3.8", reason="needs triton >= 3.8 (pip install triton); kernel tests skipped"
        )
        already = "course_lib.kernels" in sys.modules
        module = importlib.import_module("course_lib.kernels")
        if already and module.built_for_interpreter() != INTERPRET:  # imported with another TRITON_INTERPRET:
            importlib.reload(importlib.import_module("course_lib.flash_kernel"))  # decorate the kernel again,
            module = importlib.reload(module)  # then bind the launcher to it
        return module
    finally:
        if saved is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = saved


kernels = _import_kernels()
flash_attention = kernels.flash_attention
attention_reference = kernels.attention_reference
INTERPRETER_TILES = kernels.INTERPRETER_CONFIG

DEVICE = "cuda" if CUDA else "cpu"


@pytest.fixture(autouse=True, scope="module")
def _interpreter_env():
    """Keep TRITON_INTERPRET=1 while this module's tests run on a CPU-only machine; restore it afterwards."""
    saved = os.environ.get(_ENV)
    if INTERPRET:
        os.environ[_ENV] = "1"
    yield
    if saved is None:
        os.environ.pop(_ENV, None)
    else:
        os.environ[_ENV] = saved


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """‖out − ref‖ / ‖ref‖ (Frobenius), in float32."""
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


# bf16 has an 8-bit significand: rounding the inputs, p and the output gives ≈ 2–4e-3 relative error. The Triton
# *interpreter* casts float32 → bfloat16 by truncation instead of rounding (a GPU rounds to nearest), which about
# doubles that, so it gets a looser bound. float16 (11-bit significand) is an order of magnitude tighter.
TOL = {
    torch.bfloat16: 2e-2 if INTERPRET else 1e-2,
    torch.float16: 2e-3,
}


def qkv(B, H, N, D, dtype, seed=0, device=DEVICE):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, N, D, generator=g).to(device=device, dtype=dtype) for _ in range(3)]


# ---- the reference itself ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_reference_equals_sdpa_in_float32(causal):
    q, k, v = qkv(2, 3, 37, 64, torch.float32, device="cpu")
    ref = attention_reference(q, k, v, causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(ref, expected, atol=1e-5, rtol=1e-5)
    assert ref.dtype == torch.float32


# ---- correctness of the kernel -------------------------------------------------------------------------------------

if INTERPRET:
    # Small: the interpreter executes every tile op in NumPy. INTERPRETER_CONFIG uses 32 × 16 tiles, so these
    # lengths cover one partial tile (1, 13), exact tiles (32, 64), and several query tiles with a ragged tail
    # (100), i.e. the unmasked off-diagonal loop, the masked diagonal loop and the masked tail loop.
    SHAPES = [(1, 1, 1), (1, 2, 13), (1, 1, 32), (2, 1, 64), (1, 2, 100)]
else:
    SHAPES = [(1, 1, 1), (2, 3, 100), (2, 2, 1000), (1, 4, 4096)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("B,H,N", SHAPES, ids=[f"B{b}H{h}N{n}" for b, h, n in SHAPES])
def test_flash_attention_matches_reference_and_sdpa(B, H, N, D, dtype, causal):
    q, k, v = qkv(B, H, N, D, dtype, seed=N + D)
    # Fixed tiles on the GPU keep compilation short here; the autotuned path is tested below and in the benchmark.
    config = None if INTERPRET else {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
    out = flash_attention(q, k, v, causal, config=config)
    assert out.shape == q.shape and out.dtype == dtype and out.device == q.device
    assert torch.isfinite(out).all()
    ref = attention_reference(q, k, v, causal)
    assert rel_error(out, ref) <= TOL[dtype]
    sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert rel_error(out, sdpa) <= TOL[dtype]


def test_first_query_of_causal_attention_copies_first_value():
    """Causal row 0 sees only key 0: its softmax weight is exactly 1, so out[0] = v[0] (up to rounding)."""
    q, k, v = qkv(1, 1, 40, 64, torch.float16)
    out = flash_attention(q, k, v, causal=True)
    torch.testing.assert_close(out[..., 0, :], v[..., 0, :], atol=1e-3, rtol=1e-3)


def test_large_scores_do_not_overflow():
    """Scores of ±hundreds: the running max keeps every exp2 argument ≤ 0, so no inf / NaN appears."""
    q, k, v = qkv(1, 1, 50, 64, torch.bfloat16)
    q = q * 30
    out = flash_attention(q, k, v)
    assert torch.isfinite(out).all()
    assert rel_error(out, attention_reference(q, k, v)) <= TOL[torch.bfloat16]


def _config_id(c: dict) -> str:
    return f"M{c['BLOCK_M']}N{c['BLOCK_N']}w{c['num_warps']}s{c['num_stages']}"


_TUNED = sys.modules["course_lib.flash_kernel"].CONFIGS  # the kernel module that course_lib.kernels launches
AUTOTUNE_CONFIGS = [{**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages} for c in _TUNED]
if INTERPRET:
    # num_warps and num_stages mean nothing to the interpreter, so each tile shape that the autotuner (or
    # `kernels_bench --explore`) may run on a GPU is run once. N = 300 is ragged for every BLOCK_N (32, 64, 128) and
    # spans several query tiles.
    from course_lib.kernels_tuning import EXPLORE_CONFIGS

    _explored = [{"BLOCK_M": m, "BLOCK_N": n, "num_warps": w, "num_stages": s} for m, n, w, s in EXPLORE_CONFIGS]
    TUNED_TILES = list({(c["BLOCK_M"], c["BLOCK_N"]): c for c in AUTOTUNE_CONFIGS + _explored}.values())
    TUNED_SHAPE = (1, 2, 300)
else:
    TUNED_TILES = AUTOTUNE_CONFIGS
    TUNED_SHAPE = (2, 4, 1024)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("config", TUNED_TILES, ids=_config_id)
def test_every_autotune_config_is_correct(config, causal):
    """Whichever configuration the autotuner picks on a GPU, the result is the same attention."""
    q, k, v = qkv(*TUNED_SHAPE, 64, torch.bfloat16)
    out = flash_attention(q, k, v, causal, config=config)
    assert rel_error(out, attention_reference(q, k, v, causal)) <= TOL[torch.bfloat16]


@pytest.mark.skipif(not CUDA, reason="needs a GPU")
@pytest.mark.parametrize("causal", [False, True])
def test_autotuned_call_matches_sdpa(causal):
    q, k, v = qkv(2, 4, 1000, 64, torch.bfloat16)
    out = flash_attention(q, k, v, causal)
    assert rel_error(out, F.scaled_dot_product_attention(q, k, v, is_causal=causal)) <= 1e-2
    assert kernels.best_config(q, causal) is not None


@pytest.mark.skipif(
    CUDA and not kernels.tma_supported(), reason="TMA needs a Hopper-class GPU (or Triton's CPU interpreter)"
)
@pytest.mark.parametrize("N", [100, 128] if INTERPRET else [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_tma_path_is_correct(N, causal):
    """Tiles loaded and stored through tensor descriptors (N = 100 leaves a ragged last tile). The descriptor's shape
    (N, D) is what stops the last tile's store at row N; with a larger shape it writes into the next head's rows or
    past the end of the output (tried: under the interpreter that crashes this test)."""
    q, k, v = qkv(1, 2, N, 64, torch.bfloat16)
    config = INTERPRETER_TILES if INTERPRET else {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}
    out = flash_attention(q, k, v, causal, use_tma=True, config=config)
    assert rel_error(out, attention_reference(q, k, v, causal)) <= TOL[torch.bfloat16]


# ---- input validation ----------------------------------------------------------------------------------------------


def test_rejects_non_tensors():
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        flash_attention(q.tolist(), k, v)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_rejects_unsupported_dtypes(dtype):
    q, k, v = (t.to(dtype) for t in qkv(1, 1, 8, 64, torch.bfloat16))
    with pytest.raises(TypeError, match="float16 and bfloat16"):
        flash_attention(q, k, v)


def test_rejects_mixed_dtypes():
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(TypeError, match="same dtype"):
        flash_attention(q, k.half(), v)


def test_rejects_wrong_rank():
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(ValueError, match=r"\(B, H, N, D\)"):
        flash_attention(q[0], k[0], v[0])


def test_rejects_mismatched_shapes():
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="same shape"):
        flash_attention(q, k[..., :4, :], v)


@pytest.mark.parametrize("D", [16, 32, 96, 256])
def test_rejects_unsupported_head_dims(D):
    q, k, v = qkv(1, 1, 8, D, torch.bfloat16)
    with pytest.raises(ValueError, match="head dimension"):
        flash_attention(q, k, v)


def test_rejects_empty_inputs():
    q, k, v = qkv(1, 1, 0, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="non-empty"):
        flash_attention(q, k, v)


def test_rejects_non_contiguous_inputs():
    q, k, v = qkv(1, 8, 4, 64, torch.bfloat16)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (1, 4, 8, 64) views with swapped strides
    with pytest.raises(ValueError, match="contiguous"):
        flash_attention(q, k, v)


def test_rejects_cpu_tensors_outside_the_interpreter(monkeypatch):
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16, device="cpu")
    monkeypatch.setattr(kernels, "interpreter_active", lambda: False)
    with pytest.raises(ValueError, match="CUDA GPU"):
        flash_attention(q, k, v)


@pytest.mark.parametrize(
    "capability, ok", [((7, 5), False), ((7, 0), False), ((8, 0), True), ((8, 9), True), ((9, 0), True)]
)
def test_rejects_gpus_older_than_ampere(monkeypatch, capability, ok):
    """A T4 (7.5) or V100 (7.0) gets a clear error naming its capability instead of a failure inside Triton's
    compiler (the capability query is faked: this runs without a GPU)."""
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    if ok:
        kernels._check_capability("cuda:0")
    else:
        with pytest.raises(
            ValueError, match=rf"compute capability 8\.0 or newer .*has {capability[0]}\.{capability[1]}"
        ):
            kernels._check_capability("cuda:0")


def test_rejects_bad_tile_config():
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="multiple of BLOCK_N"):
        flash_attention(q, k, v, config={"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1})


def test_flop_count_convention():
    """The benchmark's FLOP count: 2 matmuls of 2·N²·D each per head; half of that when causal."""
    bench = pytest.importorskip("course_lib.kernels_bench")
    assert bench.attention_flops(2, 3, 1024, 64, causal=False) == 4 * 2 * 3 * 1024**2 * 64
    assert bench.attention_flops(2, 3, 1024, 64, causal=True) == 2 * 2 * 3 * 1024**2 * 64
    assert math.isclose(bench.tflops(1e12, 1.0), 1000.0)


def test_benchmark_table_says_which_way_the_ratio_goes():
    """The table's last number is SDPA's time over ours (above 1: ours is faster), with the tile config beside it."""
    bench = pytest.importorskip("course_lib.kernels_bench")
    row = {
        "N": 4096,
        "B": 16,
        "H": 16,
        "D": 64,
        "causal": True,
        "tma": False,
        "ours_ms": 2.0,
        "ours_tflops": 1.0,
        "sdpa_ms": 2.5,
        "sdpa_tflops": 0.8,
        "speed_vs_sdpa": 2.5 / 2.0,
        "config": "BM128 BN64 w4 s3",
    }
    header, rule, line = bench.format_table([row]).splitlines()
    assert "speed vs SDPA" in header and header.count("|") == rule.count("|") == line.count("|")
    assert "| 4096 | 16×16 | yes | 2.000 |" in line and "| 1.25× | BM128 BN64 w4 s3 |" in line
