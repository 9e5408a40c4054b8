r"""A FlashAttention-style fused attention forward pass, written in Triton.

The kernel itself; :func:`course_lib.kernels.flash_attention` checks the inputs and launches it. What it computes is
exactly :func:`course_lib.kernels.attention_reference` (the plain PyTorch version, in float32):

.. math::  O = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{D}}\right) V
           \qquad\text{(optionally with a causal mask: query } i \text{ sees keys } j \le i)

What it never does is build the ``N × N`` score matrix in GPU memory. Each Triton *program* (one thread block on
one streaming multiprocessor) owns a tile of ``BLOCK_M`` queries, keeps it on-chip, and walks over the keys and
values ``BLOCK_N`` at a time, keeping a running ("online") softmax. The ``N × N`` scores and weights never
travel to or from global memory; only Q (once), K and V (once per query tile, ``N / BLOCK_M`` times) and the output
do, which is why this is fast (traffic ``O(N²·D / BLOCK_M)`` per head instead of ``O(N²)`` of scores).

Shape legend (used in every comment below):

- ``B``        batch size                     ``H``  number of heads
- ``N``        sequence length (queries = keys = values; self-attention)
- ``D``        head dimension, 64 or 128 (``HEAD_DIM`` inside the kernel)
- ``BLOCK_M``  queries handled by one program (rows of the output tile)
- ``BLOCK_N``  keys / values consumed per step of the inner loop
- inputs ``q, k, v`` and the output: ``(B, H, N, D)``, contiguous, float16 or bfloat16

Inside one program (everything here lives in registers or shared memory, never in global memory):

- ``q``    ``(BLOCK_M, D)``        the query tile, loaded once, already multiplied by ``scale · log2(e)``
- ``k, v`` ``(BLOCK_N, D)``        the current key / value tile, streamed in from global memory (HBM)
- ``s``    ``(BLOCK_M, BLOCK_N)``  scores of this tile, float32, in base-2 units (see "exp2" below)
- ``p``    ``(BLOCK_M, BLOCK_N)``  unnormalised probabilities ``exp2(s - m)``
- ``m``    ``(BLOCK_M,)``          running row maximum of the scores seen so far
- ``l``    ``(BLOCK_M,)``          running row sum of ``p`` (the softmax denominator, not yet divided by)
- ``acc``  ``(BLOCK_M, D)``        running ``p @ v``, float32; divided by ``l`` once, at the very end

Tricks that close the gap to a hand-written CUDA kernel (each one is marked in the code):

1. **Online softmax.** After a new tile of scores ``s``: ``m_new = max(m, rowmax(s))``;
   ``alpha = exp(m - m_new)`` rescales what was accumulated under the old maximum;
   ``l_new = l·alpha + rowsum(exp(s - m_new))``; ``acc_new = acc·alpha + exp(s - m_new) @ v``.
2. **exp2 instead of exp.** ``exp(x) = exp2(x · log2 e)``; the GPU has a native ``exp2``. The factor
   ``log2 e`` is folded together with ``1/√D`` into the query tile once, so the inner loop does no scaling.
3. **Division delayed.** ``acc / l`` happens once per output row at the end, not once per tile.
4. **Causal: skip and split.** Key tiles entirely to the right of the diagonal are never loaded. Tiles
   entirely to the left need no mask, so the loop is split into an unmasked off-diagonal stage and a short
   masked stage over the diagonal tiles only.
5. **Masking only where needed.** When ``N`` is not a multiple of the tile sizes the last tile is loaded with
   a bounds mask; every other tile is loaded without one.
6. **Autotuning.** Tile sizes, ``num_warps`` (threads per program / 32) and ``num_stages`` (how many K/V
   tiles are prefetched ahead by the software pipeline) are picked per ``(N, D, causal)`` by
   ``triton.autotune`` from a short list.
7. **Switches for measuring** (``python -m course_lib.kernels.ablation``): ``WARP_SPECIALIZE=True`` asks the
   compiler to split the unmasked loop between loading and computing warps; ``LONGEST_FIRST=False`` launches causal
   tiles shortest first.

Requires ``triton`` >= 3.6 (it ships with the CUDA builds of PyTorch): its tests passed with 3.6 on an H100 and with
3.6 (NumPy 2.3), 3.8 and 3.9 under the interpreter (``TRITON_INTERPRET=1`` set *before* ``triton`` is imported runs
the same kernel on the CPU: slow, but exact enough to test against at small sizes); they fail with 2.3.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["BUILT_FOR_INTERPRETER", "CONFIGS", "INTERPRETER_CONFIG", "flash_attention_fwd", "flash_attention_fwd_tuned"]


@triton.jit
def _load_kv_tile(
    head_ptr,
    desc,
    start_n,
    tile_offsets,
    N,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MASKED: tl.constexpr,
    USE_TMA: tl.constexpr,
):
    """Load rows start_n .. start_n + BLOCK_N of one head's K or V: a (BLOCK_N, D) tile, global → on-chip."""
    if USE_TMA:
        # Hopper's Tensor Memory Accelerator copies the tile asynchronously; rows past N come back as zeros.
        tile = desc.load([start_n, 0])
    else:
        ptrs = head_ptr + start_n * HEAD_DIM + tile_offsets  # (BLOCK_N, D) addresses
        if MASKED:
            # Only the last tile can run past the end of the sequence: zero-fill the rows that do not exist.
            rows = start_n + tl.arange(0, BLOCK_N)
            tile = tl.load(ptrs, mask=rows[:, None] < N, other=0.0)
        else:
            tile = tl.load(ptrs)
    return tile


@triton.jit
def _attend_to_tiles(
    acc,
    l_i,
    m_i,
    q,
    K_head,
    V_head,
    k_desc,
    v_desc,
    tile_offsets,
    offs_m,
    N,
    lo,
    hi,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
    USE_TMA: tl.constexpr,
    UPCAST_DOTS: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr = False,
):
    """Fold the key/value tiles lo, lo + BLOCK_N, ... (< hi) into the running softmax state (acc, l_i, m_i).

    MASKED=False: every key in [lo, hi) exists and is visible to every query of the tile (no mask work at all).
    MASKED=True:  keys past N are hidden, and with CAUSAL also keys to the right of each query's position.
    """
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):  # switch 7 (a plain range if off)
        start_n = tl.multiple_of(start_n, BLOCK_N)  # tells the compiler the tile start is aligned

        # -- scores of this tile: s = q kᵀ, (BLOCK_M, D) x (D, BLOCK_N) on the tensor cores, float32 result.
        #    q already carries scale·log2(e), so s is in base-2 units: softmax weights are exp2(s - max).
        k = _load_kv_tile(K_head, k_desc, start_n, tile_offsets, N, HEAD_DIM, BLOCK_N, MASKED, USE_TMA)
        if UPCAST_DOTS:  # interpreter only, see _load_query
            k = k.to(tl.float32)
        s = tl.dot(q, tl.trans(k))

        if MASKED:
            cols = start_n + tl.arange(0, BLOCK_N)  # key positions of this tile, (BLOCK_N,)
            visible = cols[None, :] < N  # (1, BLOCK_N): the key exists
            if CAUSAL:
                visible = visible & (cols[None, :] <= offs_m[:, None])  # (BLOCK_M, BLOCK_N): key j <= query i
            # -inf scores become exactly 0 after exp2. Every query row has at least one visible key in the
            # first tile it meets, so m_i is finite from then on and no (-inf) - (-inf) = NaN can appear.
            s = tl.where(visible, s, float("-inf"))

        # -- online softmax: new running maximum, and the factor that re-bases everything accumulated so far.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))  # (BLOCK_M,)  m_new = max(m, rowmax(s))
        alpha = tl.math.exp2(m_i - m_new)  # (BLOCK_M,)  exp(m - m_new) <= 1; 0 on the first tile (m = -inf)
        p = tl.math.exp2(s - m_new[:, None])  # (BLOCK_M, BLOCK_N) unnormalised probabilities, in [0, 1]
        l_i = l_i * alpha + tl.sum(p, axis=1)  # l_new = l·exp(m - m_new) + rowsum(p)

        # -- output accumulator: rescale the old sum, then add p @ v (p rounded to fp16/bf16 for the tensor cores,
        #    accumulated in float32).
        v = _load_kv_tile(V_head, v_desc, start_n, tile_offsets, N, HEAD_DIM, BLOCK_N, MASKED, USE_TMA)
        acc = acc * alpha[:, None]
        p = p.to(v.dtype)  # bf16/fp16 operand for the tensor cores
        if UPCAST_DOTS:
            p = p.to(tl.float32)
            v = v.to(tl.float32)
        acc = tl.dot(p, v, acc)  # acc_new = acc·alpha + p @ v
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _head_descriptor(ptr, N, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    """A TMA descriptor over one head's (N, D) rows, moved BLOCK rows at a time. Its shape stops at row N, so loads
    past it are zero-filled and stores past it are dropped by the hardware: a tile never spills into the next head."""
    return tl.make_tensor_descriptor(ptr, shape=[N, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK, HEAD_DIM])


@triton.jit
def _key_ranges(start_m, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Where the query tile starting at row start_m visits keys: (full_end, masked_end). Tiles in [0, full_end) are
    seen whole by every query of the tile (no mask, no bounds check); tiles in [full_end, masked_end) need the mask."""
    if CAUSAL:
        # Keys 0 .. start_m-1 lie left of the diagonal for every query here (needs BLOCK_M % BLOCK_N == 0); then
        # the diagonal block, clipped to N. Tiles right of it are never visited: half a causal attention saved.
        full_end = start_m
        masked_end = tl.minimum(start_m + BLOCK_M, N)
    else:
        # Every key is visible: all complete tiles unmasked, then a ragged last tile (N not a multiple of
        # BLOCK_N), if there is one, masked.
        full_end = (N // BLOCK_N) * BLOCK_N
        masked_end = N
    return full_end, masked_end


@triton.jit
def _first_query_row(BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr, LONGEST_FIRST: tl.constexpr):
    """The first query row of this program's tile. Grid = (number of query tiles, B·H)."""
    tile_m = tl.program_id(0)
    if CAUSAL and LONGEST_FIRST:
        # Under a causal mask the last query tiles have the most keys to visit: launch them first so the
        # short tiles fill the gaps at the end instead of leaving the GPU half idle.
        tile_m = tl.num_programs(0) - 1 - tile_m
    return tile_m * BLOCK_M


@triton.jit
def _load_query(
    head_ptr, desc, start_m, offs_m, offs_d, N, qk_scale, HEAD_DIM: tl.constexpr, USE_TMA: tl.constexpr,
    UPCAST_DOTS: tl.constexpr,
):  # fmt: skip
    """This tile's query rows (BLOCK_M, D), already multiplied by qk_scale; rows past N are zeros (never stored)."""
    if USE_TMA:
        q = desc.load([start_m, 0])
    else:
        q = tl.load(head_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N, other=0.0)
    # The query tile stays on-chip for the whole loop. Fold (1/√D)·log2(e) into it once (trick 2): the
    # BLOCK_M·D multiplies here replace BLOCK_M·BLOCK_N multiplies in every step of the loop.
    q = (q.to(tl.float32) * qk_scale).to(q.dtype)
    if UPCAST_DOTS:
        # Triton's CPU interpreter computes tl.dot of bfloat16 tiles wrongly (it multiplies the raw bits), so under
        # the interpreter the already-rounded operands are widened to float32: same values, correct products.
        # On a GPU this flag is always False and the dots run on bf16/fp16 tensor cores.
        q = q.to(tl.float32)
    return q


@triton.jit
def _store_rows(out, head_ptr, desc, start_m, offs_m, offs_d, N, HEAD_DIM: tl.constexpr, USE_TMA: tl.constexpr):
    """Write the finished (BLOCK_M, D) output tile; rows past N are dropped."""
    if USE_TMA:
        desc.store([start_m, 0], out)
    else:
        tl.store(head_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out, mask=offs_m[:, None] < N)


@triton.jit
def flash_attention_fwd(
    Q,
    K,
    V,
    Out,  # pointers to the first element of the (B, H, N, D) tensors
    qk_scale,  # (1/√D) · log2(e), a float
    N,  # sequence length (runtime value: one compiled kernel serves every N)
    HEAD_DIM: tl.constexpr,  # D: a compile-time constant, 64 or 128
    CAUSAL: tl.constexpr,
    USE_TMA: tl.constexpr,  # load through Hopper TMA tensor descriptors instead of plain pointers
    UPCAST_DOTS: tl.constexpr,  # True only under the CPU interpreter with bfloat16, see _load_query
    BLOCK_M: tl.constexpr,  # chosen by the autotuner (or passed explicitly)
    BLOCK_N: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr = False,  # switches 7: see the module docstring
    LONGEST_FIRST: tl.constexpr = True,
):
    start_m = _first_query_row(BLOCK_M, CAUSAL, LONGEST_FIRST)  # my query rows: start_m .. start_m + BLOCK_M - 1

    # ---- Where is my head? Contiguous (B, H, N, D): head b·H + h starts (b·H + h)·N·D elements in (int64: > 2³¹).
    head_offset = tl.program_id(1).to(tl.int64) * N * HEAD_DIM
    Q_head, K_head, V_head, O_head = Q + head_offset, K + head_offset, V + head_offset, Out + head_offset

    offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,) query positions of this tile
    offs_d = tl.arange(0, HEAD_DIM)  # (D,)
    tile_offsets = tl.arange(0, BLOCK_N)[:, None] * HEAD_DIM + offs_d[None, :]  # (BLOCK_N, D) offsets in a tile

    if USE_TMA:  # one descriptor per tensor and head
        q_desc = _head_descriptor(Q_head, N, HEAD_DIM, BLOCK_M)
        k_desc = _head_descriptor(K_head, N, HEAD_DIM, BLOCK_N)
        v_desc = _head_descriptor(V_head, N, HEAD_DIM, BLOCK_N)
        o_desc = _head_descriptor(O_head, N, HEAD_DIM, BLOCK_M)
    else:
        q_desc, k_desc, v_desc, o_desc = None, None, None, None
    q = _load_query(Q_head, q_desc, start_m, offs_m, offs_d, N, qk_scale, HEAD_DIM, USE_TMA, UPCAST_DOTS)

    # ---- Running softmax state, float32, in registers.
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)  # running max: nothing seen yet
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)  # running denominator
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)  # running numerator (unnormalised output)

    # ---- Two passes over the keys (tricks 4 and 5): first the tiles that every query of this tile sees whole, with
    #      no mask and no bounds check, then the rest with the mask.
    full_end, masked_end = _key_ranges(start_m, N, BLOCK_M, BLOCK_N, CAUSAL)
    acc, l_i, m_i = _attend_to_tiles(
        acc, l_i, m_i, q, K_head=K_head, V_head=V_head, k_desc=k_desc, v_desc=v_desc, tile_offsets=tile_offsets,
        offs_m=offs_m, N=N, lo=0, hi=full_end, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, MASKED=False, CAUSAL=CAUSAL,
        USE_TMA=USE_TMA, UPCAST_DOTS=UPCAST_DOTS, WARP_SPECIALIZE=WARP_SPECIALIZE,
    )  # fmt: skip
    acc, l_i, m_i = _attend_to_tiles(
        acc, l_i, m_i, q, K_head=K_head, V_head=V_head, k_desc=k_desc, v_desc=v_desc, tile_offsets=tile_offsets,
        offs_m=offs_m, N=N, lo=full_end, hi=masked_end, HEAD_DIM=HEAD_DIM, BLOCK_N=BLOCK_N, MASKED=True,
        CAUSAL=CAUSAL, USE_TMA=USE_TMA, UPCAST_DOTS=UPCAST_DOTS,
    )  # fmt: skip

    # ---- Epilogue (trick 3): one division per output element, then back to fp16/bf16 and out to global memory.
    out = (acc / l_i[:, None]).to(Out.dtype.element_ty)
    _store_rows(out, O_head, o_desc, start_m, offs_m, offs_d, N, HEAD_DIM, USE_TMA)


# The configurations the autotuner times, once per (N, D, causal, TMA), on the first call with a new key.
# BLOCK_M = 128 query rows per program fills a Hopper warpgroup MMA; BLOCK_N trades register pressure (p and s are
# BLOCK_M × BLOCK_N) against fewer loop steps; num_stages = how many K/V tiles are in flight ahead of the compute.
CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
    for bm, bn, w, s in [(128, 64, 4, 3), (128, 64, 4, 4), (128, 64, 8, 3),
                         (128, 128, 8, 2), (128, 128, 8, 3), (64, 64, 4, 3)]
]  # fmt: skip

flash_attention_fwd_tuned = triton.autotune(CONFIGS, key=["N", "HEAD_DIM", "CAUSAL", "USE_TMA"])(flash_attention_fwd)

# Interpreter tiles (no autotuning there): small, so short test sequences cross tiles, the diagonal and a ragged tail.
INTERPRETER_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1}

# Triton decides at decoration time (the import of this module) whether @triton.jit compiles or interprets.
BUILT_FOR_INTERPRETER = type(flash_attention_fwd).__name__ == "InterpretedFunction"
