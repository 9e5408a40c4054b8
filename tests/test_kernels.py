"""course_lib.kernels.flash_attention (Triton) against the float32 reference and PyTorch's fused SDPA.

On a CUDA machine the kernel is compiled and run on the GPU. Without one it runs on the CPU under Triton's
interpreter (TRITON_INTERPRET=1) at small sizes: slow, but the same kernel source, masks and online softmax.
Triton reads TRITON_INTERPRET when a kernel is *decorated* (module import) and again while launching, so this
module sets it before importing course_lib.kernels and keeps it set only while its own tests run.
Without triton >= 3.6 every test here is skipped, and so is every test when Triton's interpreter itself cannot launch
a trivial kernel (a vector add, not the course's kernel): one skip with the interpreter's error and the versions.
"""

import contextlib
import importlib
import math
import os
import platform
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

CUDA = torch.cuda.is_available()
INTERPRET = not CUDA  # no GPU: use Triton's CPU interpreter
_ENV = "TRITON_INTERPRET"
# Triton 3.6 passed every kernel test compiled on an H100 (torch 2.11) and under the interpreter (Python 3.11,
# torch 2.13, NumPy 2.3.5; with NumPy 2.4.6 its interpreter fails, see interpreter_failure); 3.8 and 3.9 under the
# interpreter too. Every Triton API the kernel uses (tl.make_tensor_descriptor and triton.set_allocator for the TMA path
# included) is in 3.6.
MIN_TRITON = "3.6"


@contextlib.contextmanager
def _interpreter_env(on: bool = INTERPRET):
    """TRITON_INTERPRET=1 inside (when `on`), restored to what it was on the way out."""
    saved = os.environ.get(_ENV)
    if on:
        os.environ[_ENV] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = saved


def _import_kernels():
    """Import course_lib.kernels.launch with TRITON_INTERPRET set as this module needs it (re-import if needed)."""
    with _interpreter_env():
        pytest.importorskip(
            "triton",
            minversion=MIN_TRITON,
            reason=f"needs triton >= {MIN_TRITON} (pip install triton); kernel tests skipped",
        )
        already = "course_lib.kernels.launch" in sys.modules
        module = importlib.import_module("course_lib.kernels.launch")
        if already and module.built_for_interpreter() != INTERPRET:  # imported with another TRITON_INTERPRET:
            importlib.reload(importlib.import_module("course_lib.kernels.flash"))  # decorate the kernel again,
            module = importlib.reload(module)  # then bind the launcher to it
        return module


kernels = _import_kernels()
triton = importlib.import_module("triton")
tl = importlib.import_module("triton.language")
flash_attention = kernels.flash_attention
attention_reference = kernels.attention_reference
INTERPRETER_TILES = kernels.INTERPRETER_CONFIG

DEVICE = "cuda" if CUDA else "cpu"


# ---- is Triton's interpreter usable here at all? -------------------------------------------------------------------


# Decorated by interpreter_failure (while TRITON_INTERPRET=1), not here. Each program walks the vector in steps of
# num_programs · BLOCK: program ids, a loop with runtime bounds and masked loads and stores, which every kernel uses.
def _vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside)
        y = tl.load(y_ptr + offsets, mask=inside)
        tl.store(out_ptr + offsets, x + y, mask=inside)


def interpreter_failure(kernel=_vector_add) -> str | None:
    """Launch a trivial kernel (a vector add, never the course's kernel) once under Triton's CPU interpreter.

    None if it adds correctly; otherwise the one-line reason to skip this module with: the error's first line and
    the versions of Python, Triton, torch and NumPy (the interpreter runs on NumPy). Seen: with Python 3.13 and Triton
    3.8, an ImportError inside Triton (from triton.runtime.jit.mangle_type) on the first launch; with Triton 3.6 and
    NumPy 2.4.6 (2.3.5 works), "TypeError: only 0-dimensional arrays can be converted to Python scalars" from a loop
    with a runtime bound. Each gave 54 identical tracebacks before. A failure of the course's kernel is never hidden
    by this: only the vector add decides.
    """
    with _interpreter_env(True):
        try:
            add = triton.jit(kernel)  # decorated now, while TRITON_INTERPRET=1: an interpreted function
            x, y = torch.arange(20.0), torch.full((20,), 0.5)
            out = torch.zeros(20)
            add[(2,)](x, y, out, 20, BLOCK=8)  # two programs, three steps, the last one masked past n
            if torch.equal(out, x + y):
                return None
            problem = f"a vector add returned {out.tolist()} instead of {(x + y).tolist()}"
        except Exception as exc:  # noqa: BLE001 (any failure inside Triton means the same: no interpreter here)
            first_line = next((line for line in str(exc).splitlines() if line.strip()), "")
            problem = f"launching a vector add raised {type(exc).__name__}: {first_line}"
    return (
        f"Triton's CPU interpreter does not work here (Python {platform.python_version()}, triton "
        f"{triton.__version__}, torch {torch.__version__}, numpy {np.__version__}): {problem}; the kernel tests need it"
    )


if INTERPRET:
    _BROKEN_INTERPRETER = interpreter_failure()
    if _BROKEN_INTERPRETER:
        pytest.skip(_BROKEN_INTERPRETER, allow_module_level=True)


@pytest.fixture(autouse=True, scope="module")
def _interpreter_env_for_these_tests():
    """Keep TRITON_INTERPRET=1 while this module's tests run on a CPU-only machine; restore it afterwards."""
    with _interpreter_env():
        yield


_PROBE_ONLY_WITHOUT_GPU = pytest.mark.skipif(not INTERPRET, reason="the interpreter probe runs only without a GPU")


@_PROBE_ONLY_WITHOUT_GPU
def test_a_broken_interpreter_gives_one_clear_skip_reason(monkeypatch):
    """The failure seen with Python 3.13 and Triton 3.8, simulated: the first launch raises an ImportError inside
    Triton (from triton.runtime.jit.mangle_type, which the interpreter calls on every argument)."""
    error = (
        "cannot import name '__all__' from partially initialized module 'triton.experimental.gluon.amd.gfx1250' "
        "(most likely due to a circular import) (/site-packages/triton/experimental/gluon/amd/gfx1250.py)\n"
        "a second line that the reason leaves out"
    )

    def broken(*args, **kwargs):
        raise ImportError(error)

    monkeypatch.setattr(triton.runtime.jit, "mangle_type", broken)
    reason = interpreter_failure()
    assert reason is not None and "\n" not in reason
    assert "raised ImportError: cannot import name '__all__' from partially initialized module" in reason
    versions = f"Python {platform.python_version()}, triton {triton.__version__}, torch {torch.__version__}"
    assert f"({versions}, numpy {np.__version__})" in reason
    assert "second line" not in reason
    monkeypatch.undo()
    assert interpreter_failure() is None  # the real interpreter works here (or this module would have been skipped)


def _vector_subtract(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # a "vector add" that computes the wrong thing
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside)
        y = tl.load(y_ptr + offsets, mask=inside)
        tl.store(out_ptr + offsets, x - y, mask=inside)


@_PROBE_ONLY_WITHOUT_GPU
def test_an_interpreter_that_adds_wrongly_is_broken_too():
    reason = interpreter_failure(_vector_subtract)
    assert reason is not None and "a vector add returned [-0.5, 0.5, 1.5," in reason


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """‖out − ref‖ / ‖ref‖ (Frobenius), in float32."""
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


# ---- tolerances, derived from the unit roundoff u of the input type ----------------------------------------------
#
# u = 2**-8 for bfloat16 (8 significant bits), 2**-11 for float16 (11): rounding to nearest is off by at most u,
# relative, and by about u/√3 RMS (below, errors are measured as rel_error, ‖out − ref‖_F / ‖ref‖_F). The reference is
# float32 from the *same* bf16/fp16 q, k, v, so the kernel differs from it only where it rounds to the input type (its
# float32 arithmetic adds errors of order 2**-24):
#   (O) the output: at most u in each element, so at most u in the norm; RMS u/√3.
#   (P) p = exp2(s − m), rounded before p @ v (the denominator l sums the unrounded p): every weight is off by at most
#       u, relative. Those errors have independent signs and average out in Σ_j w_j v_j as the values v_j themselves
#       do, so (P) adds about u/√3.
#   (Q) q·log2(e)/√D, rounded before q kᵀ (trick 2 of the kernel): each query element is off by at most u, which moves
#       every score by an *absolute* amount, RMS (u/√3)·sqrt(Σ_d q_d² k_d² / D): (u/√3)·σ for scores of standard
#       deviation σ. The output moves by Σ_j w_j δs_j (v_j − o), about (u/√3)·κ relative, where κ ≈ σ when a row's
#       weight is spread over several keys and κ < σ when one key takes nearly all of it (it vanishes for one key).
#       κ ≈ 1 for the unit-normal q, k, v of these tests (0.6 to 1.04 for their shapes, computed from the inputs as
#       `_score_rounding_kappa` does).
# Independent errors add in quadrature: rel_error ≈ (u/√3)·sqrt(2 + κ²), which is u for κ = 1. The tolerance is 3 times
# that: 3u for unit-normal inputs, bf16 0.0117 and fp16 0.00146. Measured (an emulation of these three roundings
# reproduces the kernel's errors to 3 digits): 0.43u to 0.72u; the H100's 2.5e-3 to 2.8e-3 in the benchmark are
# 0.64u to 0.72u. Against SDPA, whose own error is of the same kind and size, the expected distance is about √2·u.
# Triton's *interpreter* converts float32 to bfloat16 by truncation (toward zero) instead of rounding to nearest: each
# conversion is off by up to 2u, all of one sign, so its errors add up instead of averaging out; 2u in place of u
# gives 6u = 0.0234 under the interpreter (measured 1.1u to 2.3u). Its float16 conversions round to nearest (NumPy).
UNIT_ROUNDOFF = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}


def tolerance(dtype: torch.dtype, kappa: float = 1.0) -> float:
    """Largest rel_error accepted against the float32 reference: 3·(u/√3)·sqrt(2 + κ²), see above."""
    u = UNIT_ROUNDOFF[dtype]
    if INTERPRET and dtype == torch.bfloat16:
        u *= 2  # the interpreter truncates float32 -> bfloat16
    return 3 * u / math.sqrt(3) * math.sqrt(2 + kappa**2)


# For unit-normal q, k, v: 3u (6u for bfloat16 under the interpreter).
TOL = {dtype: tolerance(dtype) for dtype in UNIT_ROUNDOFF}


def _score_rounding_kappa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> float:
    """κ of (Q) above, computed from the inputs: the RMS of ‖δO‖_F / ((u/√3)·‖O‖_F) when every element of q gets an
    independent relative error of RMS u/√3. To first order δs_ij = Σ_d ε_id q_id k_jd / √D and
    δo_i = Σ_j w_ij δs_ij (v_j − o_i) = Σ_d ε_id (q_id / √D) g_id with g_id = Σ_j w_ij k_jd (v_j − o_i)."""
    q, k, v = q.double(), k.double(), v.double()
    D = q.shape[-1]
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)  # (..., N, N), not causal
    o = w @ v  # (..., N, D)
    g = torch.einsum("...ij,...jd,...je->...ide", w, k, v) - (w @ k)[..., None] * o[..., :, None, :]  # (..., N, D, D)
    return ((q**2 / D)[..., None] * g**2).sum().sqrt().item() / o.norm().item()


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
    """Causal row 0 sees only key 0: p = exp2(0) = 1, l = 1, acc = v[0], so out[0] = v[0], a float16 value that rounds
    to itself: exact. One rounding of the output (u = 2**-11, relative) is allowed, for a GPU whose fast exp2 might not
    return exactly 1."""
    q, k, v = qkv(1, 1, 40, 64, torch.float16)
    out = flash_attention(q, k, v, causal=True)
    torch.testing.assert_close(out[..., 0, :], v[..., 0, :], atol=0, rtol=UNIT_ROUNDOFF[torch.float16])


def test_large_scores_do_not_overflow():
    """Scores of ±hundreds: the running max keeps every exp2 argument ≤ 0, so no inf / NaN appears.

    The scores' standard deviation is 30 here, so rounding the scaled queries to bfloat16 (term (Q) above) moves them
    by about (u/√3)·30 ≈ 0.07: the tolerance takes κ from these inputs (about 4, well below 30, because most rows put
    nearly all their weight on one key). Measured: 0.0102 on an H100, as an emulation of the roundings predicts, against
    0.0288 allowed; 0.0095 under the interpreter, against 0.0576."""
    q, k, v = qkv(1, 1, 50, 64, torch.bfloat16)
    q = q * 30
    out = flash_attention(q, k, v)
    assert torch.isfinite(out).all()
    kappa = _score_rounding_kappa(q, k, v)
    assert 2 < kappa < 6  # 4.0 for these inputs: a tolerance near 0.03 (0.06), far below the error of a wrong softmax
    assert rel_error(out, attention_reference(q, k, v)) <= tolerance(torch.bfloat16, kappa)


def _config_id(c: dict) -> str:
    return f"M{c['BLOCK_M']}N{c['BLOCK_N']}w{c['num_warps']}s{c['num_stages']}"


_TUNED = sys.modules["course_lib.kernels.flash"].CONFIGS  # the kernel module that course_lib.kernels.launch launches
AUTOTUNE_CONFIGS = [{**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages} for c in _TUNED]
if INTERPRET:
    # num_warps and num_stages mean nothing to the interpreter, so each tile shape that the autotuner (or
    # `python -m course_lib.kernels.bench --explore`) may run on a GPU is run once. N = 300 is ragged for every
    # BLOCK_N (32, 64, 128) and spans several query tiles.
    from course_lib.kernels.tuning import EXPLORE_CONFIGS

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
    assert rel_error(out, F.scaled_dot_product_attention(q, k, v, is_causal=causal)) <= TOL[torch.bfloat16]
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


@pytest.mark.parametrize("switch", [{"WARP_SPECIALIZE": True}, {"LONGEST_FIRST": False}], ids=["ws", "shortest"])
@pytest.mark.parametrize("causal", [False, True])
def test_the_measuring_switches_compute_the_same_attention(switch, causal):
    """Warp specialization and the causal tile order change how the work is scheduled, never what is computed
    (python -m course_lib.kernels.ablation times them; a switch that changed the result would be a bug, not a speed)."""
    if CUDA and "WARP_SPECIALIZE" in switch and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("warp specialization needs a Hopper-class GPU (or Triton's CPU interpreter)")
    q, k, v = qkv(1, 2, 100 if INTERPRET else 1000, 64, torch.bfloat16)
    # 8 warps: Triton 3.6's warp specialization pass fails to compile 4 (H200, 2026-12-04; the ablation's 4-warp tiles)
    tiles = INTERPRETER_TILES if INTERPRET else {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}
    out = flash_attention(q, k, v, causal, config={**tiles, **switch})
    assert rel_error(out, attention_reference(q, k, v, causal)) <= TOL[torch.bfloat16]


def test_the_ablation_changes_one_thing_per_variant():
    """Each variant of python -m course_lib.kernels.ablation differs from the baseline's launch in exactly the
    technique it names; the tile order is measured only where it exists (causal)."""
    ablation = pytest.importorskip("course_lib.kernels.ablation")
    tile = (128, 64, 4, 3)
    base_tma, base = ablation._config(tile, "baseline")
    assert (base_tma, base) == (False, {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3})
    changed = {}
    for variant in ablation.VARIANTS:
        use_tma, config = ablation._config(tile, variant)
        changed[variant] = {key for key in set(config) | set(base) if config.get(key) != base.get(key)}
        changed[variant] |= {"use_tma"} if use_tma != base_tma else set()
    assert changed == {
        "baseline": set(),
        "TMA loads": {"use_tma"},
        "warp specialization": {"WARP_SPECIALIZE"},
        "TMA + warp spec.": {"use_tma", "WARP_SPECIALIZE"},
        "no pipelining": {"num_stages"},
        "shortest first": {"LONGEST_FIRST"},
    }
    assert "shortest first" in ablation.variants_for(True) and "shortest first" not in ablation.variants_for(False)
    for D, tiles in ablation.CANDIDATES.items():
        assert D in kernels.SUPPORTED_HEAD_DIMS and all(bm % bn == 0 for bm, bn, _, _ in tiles)


def test_the_ablation_table_reads_both_ratios():
    ablation = pytest.importorskip("course_lib.kernels.ablation")
    row = {"D": 128, "causal": True, "N": 8192, "variant": "TMA loads", "tflops": 512.4, "vs_baseline": 1.08,
           "speed_vs_sdpa": 0.86, "config": "BM64 BN64 w4 s3"}  # fmt: skip
    header, rule, line = ablation.format_table([row]).splitlines()
    assert header.count("|") == rule.count("|") == line.count("|")
    assert line == "| 128 | yes | 8192 | TMA loads | 512 | 1.08× | 0.86× | BM64 BN64 w4 s3 |"


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


@pytest.mark.parametrize("causal", [1, None, "yes"])
def test_rejects_a_causal_that_is_not_a_bool(causal):
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(TypeError, match="causal must be a bool"):
        flash_attention(q, k, v, causal)


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


@pytest.mark.parametrize(
    "config,error,match",
    [
        ({"BLOCK_M": 32, "BLOCK_N": 16}, ValueError, "missing \\['num_warps', 'num_stages'\\]"),
        ({**INTERPRETER_TILES, "WARP_SPECIALISE": True}, ValueError, "unknown \\['WARP_SPECIALISE'\\]"),
        ({**INTERPRETER_TILES, "LONGEST_FIRST": 0}, TypeError, "LONGEST_FIRST must be a bool"),
    ],
    ids=["missing", "misspelt-switch", "switch-not-bool"],
)
def test_rejects_configs_it_would_misread(config, error, match):
    """A misspelt switch would otherwise reach the kernel as an unknown keyword (or be ignored): say so first."""
    q, k, v = qkv(1, 1, 8, 64, torch.bfloat16)
    with pytest.raises(error, match=match):
        flash_attention(q, k, v, config=config)


def test_flop_count_convention():
    """The benchmark's FLOP count: 2 matmuls of 2·N²·D each per head; half of that when causal."""
    bench = pytest.importorskip("course_lib.kernels.measure")
    assert bench.attention_flops(2, 3, 1024, 64, causal=False) == 4 * 2 * 3 * 1024**2 * 64
    assert bench.attention_flops(2, 3, 1024, 64, causal=True) == 2 * 2 * 3 * 1024**2 * 64
    assert math.isclose(bench.tflops(1e12, 1.0), 1000.0)


def test_benchmark_table_says_which_way_the_ratio_goes():
    """The table's last number is SDPA's time over ours (above 1: ours is faster), with the tile config beside it."""
    bench = pytest.importorskip("course_lib.kernels.bench")
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
