"""Schematic diagrams drawn by code: boxes for tensors and operations, arrows for data flow, shapes on every tensor.

Five pictures the notebooks show before the code they explain:

- :func:`qkv_diagram` (notebook 03): one token's query, key and value, the scores against every key, the softmax
  and the weighted sum;
- :func:`multihead_diagram` (06): project → split into heads → attend per head → concatenate → :math:`W_o`;
- :func:`encoder_block_diagram` (05, 11): an encoder block, and where padding and causal masks act (on the scores,
  before the softmax);
- :func:`vit_diagram` (10): from an image to patches, tokens, the class token and the classifier;
- :func:`architecture_families_diagram` (12): encoder-only, decoder-only and encoder–decoder Transformers side by
  side, with the masks each uses.

Each returns a matplotlib ``Figure`` (matplotlib is imported inside the functions, as in
:mod:`course_lib.figures.plot`), so a notebook shows it with ``plt.show()`` and a test can read its labels.
"""

from __future__ import annotations

from ..validate import integer

__all__ = ["architecture_families_diagram", "encoder_block_diagram", "multihead_diagram", "qkv_diagram", "vit_diagram"]

TENSOR = "#e8f0fb"  # boxes that hold numbers
OPERATION = "#fdf0dc"  # boxes that compute
LEARNED = "#e3f2e1"  # learned parameters
MASK = "#fbe3e3"  # masks


def _canvas(width: float, height: float):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def _box(ax, x: float, y: float, text: str, color: str, width: float = 1.6, height: float = 0.55, size: int = 10):
    """A rounded box centred at (x, y) with a label; returns its centre and half-sizes for arrows."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=color, edgecolor="#555555", linewidth=1.0,
        )
    )  # fmt: skip
    ax.text(x, y, text, ha="center", va="center", fontsize=size)
    return (x, y, width / 2, height / 2)


def _arrow(ax, start, end, label: str | None = None) -> None:
    """An arrow from the border of box ``start`` to the border of box ``end`` (boxes as returned by ``_box``)."""
    (x0, y0, w0, h0), (x1, y1, w1, h1) = start, end
    dx, dy = x1 - x0, y1 - y0
    scale0 = 1 / max(abs(dx) / w0 if dx else 0, abs(dy) / h0 if dy else 0, 1e-9)
    scale1 = 1 / max(abs(dx) / w1 if dx else 0, abs(dy) / h1 if dy else 0, 1e-9)
    tail = (x0 + dx * scale0, y0 + dy * scale0)
    head = (x1 - dx * scale1, y1 - dy * scale1)
    ax.annotate("", xy=head, xytext=tail, arrowprops={"arrowstyle": "-|>", "color": "#333333", "lw": 1.1})
    if label:
        ax.text((tail[0] + head[0]) / 2 + 0.08, (tail[1] + head[1]) / 2, label, fontsize=8, color="#333333")


def qkv_diagram(n: int = 4, d_model: int = 300, d_k: int = 100):
    """One token's path through self-attention: ``x_i`` ``(1, d_model)`` → ``q_i``, and every token's ``k_j``, ``v_j``
    ``(n, d_k)`` → scores ``q_i · k_j`` ``(n,)`` → softmax → weights ``a_ij`` ``(n,)`` → ``b_i = Σ_j a_ij v_j``."""
    for name, value in (("n", n), ("d_model", d_model), ("d_k", d_k)):
        integer(name, value, minimum=1)
    fig, ax = _canvas(10, 4.2)
    x_i = _box(ax, 1.1, 3.4, f"$x_i$\n(1, {d_model})", TENSOR, height=0.75)
    X = _box(ax, 1.1, 1.2, f"$X$: all tokens\n({n}, {d_model})", TENSOR, height=0.75)
    wq = _box(ax, 3.2, 3.4, "$\\cdot W_q$", LEARNED, width=1.0)
    wk = _box(ax, 3.2, 1.8, "$\\cdot W_k$", LEARNED, width=1.0)
    wv = _box(ax, 3.2, 0.6, "$\\cdot W_v$", LEARNED, width=1.0)
    q = _box(ax, 5.0, 3.4, f"$q_i$  (1, {d_k})", TENSOR)
    k = _box(ax, 5.0, 1.8, f"$K$: keys  ({n}, {d_k})", TENSOR, width=1.9)
    v = _box(ax, 5.0, 0.6, f"$V$: values  ({n}, {d_k})", TENSOR, width=1.9)
    s = _box(ax, 7.0, 2.6, f"scores $q_i k_j^\\top/\\sqrt{{d_k}}$\n({n},)", OPERATION, width=2.0, height=0.75)
    a = _box(ax, 7.0, 1.3, f"softmax → $a_{{ij}}$\n({n},), sum 1", OPERATION, width=2.0, height=0.75)
    b = _box(ax, 9.1, 0.6, f"$b_i = \\sum_j a_{{ij}} v_j$\n(1, {d_k})", TENSOR, width=1.6, height=0.75)
    for start, end in ((x_i, wq), (wq, q), (X, wk), (wk, k), (X, wv), (wv, v), (q, s), (k, s), (s, a), (a, b), (v, b)):
        _arrow(ax, start, end)
    ax.set_title("Self-attention for one token $i$ (every token does the same, in parallel)", fontsize=11)
    return fig


def multihead_diagram(seq_len: int = 10, d_model: int = 512, num_heads: int = 8):
    """Multi-head attention with shapes: ``X (n, D)`` → ``Q, K, V (n, D)`` → split ``(H, n, D/H)`` → attention per
    head → concatenate ``(n, H·D/H) = (n, D)`` → ``W_o`` → ``(n, D)``."""
    for name, value in (("seq_len", seq_len), ("d_model", d_model), ("num_heads", num_heads)):
        integer(name, value, minimum=1)
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
    T, D, h, dh = seq_len, d_model, num_heads, d_model // num_heads
    fig, ax = _canvas(11, 4.2)  # the heads a box apart, room for the arrows, and narrow enough for a slide's 16 px
    x = _box(ax, 0.65, 2.1, f"$X$\n({T}, {D})", TENSOR, width=1.1, height=0.8)
    proj = _box(ax, 2.35, 2.1, "$Q = XW_q$\n$K = XW_k$\n$V = XW_v$", LEARNED, width=1.45, height=1.2)
    split = _box(ax, 4.1, 2.1, f"split into\n{h} heads\n({h}, {T}, {dh})", OPERATION, width=1.45, height=1.2)
    heads = [_box(ax, 6.05, 3.3 - 1.2 * i, f"head {i}: attention\n({T}, {dh})", OPERATION, 1.7, 0.6)
             for i in range(min(h, 3))]  # fmt: skip
    ax.text(6.05, 0.3, f"⋮  (heads 3 to {h - 1})" if h > 3 else "", ha="center", va="center", fontsize=10)
    concat = _box(ax, 8.25, 2.1, f"concatenate\n({T}, {h}·{dh}) = ({T}, {D})", OPERATION, width=2.0, height=0.9)
    wo = _box(ax, 10.3, 2.1, f"$\\cdot W_o$\n({T}, {D})", LEARNED, width=1.1, height=0.8)
    for start, end in ((x, proj), (proj, split), (concat, wo)):
        _arrow(ax, start, end)
    for head in heads:
        _arrow(ax, split, head)
        _arrow(ax, head, concat)
    ax.set_title(f"Multi-head attention: {h} heads of width {D}/{h} = {dh}", fontsize=11)
    return fig


def encoder_block_diagram():
    """A (post-LN) encoder block, and where masks act: on the ``(L, S)`` scores, before the softmax, inside attention.
    A padding mask hides keys that are padding (whole columns); a causal mask hides keys after the query (the upper
    triangle). Both are boolean, True = may attend. Both are drawn for comparison: an encoder uses only the padding
    mask, a decoder both. A hidden score is replaced by the dtype's most negative number (``masked_fill``)."""
    fig, ax = _canvas(10.6, 4.6)
    x = _box(ax, 0.9, 0.6, "input $X$\n(B, L, D)", TENSOR, width=1.4, height=0.75)
    scores = _box(ax, 2.9, 1.5, "scores $QK^\\top/\\sqrt{d_k}$\n(B, H, L, S)", OPERATION, width=2.2, height=0.75)
    mask = _box(ax, 2.9, 2.7, "masks here: hidden\nscores → finfo.min", MASK, width=2.2, height=0.75)
    soft = _box(ax, 2.9, 3.9, "softmax over keys,\nthen $\\cdot V$, heads, $W_o$", OPERATION, width=2.2, height=0.75)
    add1 = _box(ax, 5.3, 3.9, "add & LayerNorm", OPERATION, width=1.7)
    ffn = _box(ax, 5.3, 2.7, "feed-forward\n(position-wise)", OPERATION, width=1.7, height=0.75)
    add2 = _box(ax, 5.3, 1.5, "add & LayerNorm", OPERATION, width=1.7)
    out = _box(ax, 5.3, 0.5, "output (B, L, D)", TENSOR, width=1.7)
    for start, end in ((x, scores), (scores, mask), (mask, soft), (soft, add1), (add1, ffn), (ffn, add2), (add2, out)):
        _arrow(ax, start, end)
    _draw_mask(ax, 7.0, 2.0, "padding")
    _draw_mask(ax, 8.8, 2.0, "causal")
    ax.set_title(
        "Masks act on the scores, before the softmax\n"
        "(an encoder uses a padding mask; a decoder, padding and causal masks)",
        fontsize=11,
    )
    return fig


def _draw_mask(ax, x0: float, y0: float, kind: str, n: int = 5, cell: float = 0.27, title: str | None = None) -> None:
    """A small n×n boolean mask at (x0, y0) (bottom left): coloured = may attend. ``kind`` is ``"padding"`` (the last
    2 keys are pads), ``"causal"`` (no later keys) or ``"full"`` (every key, as in bidirectional self-attention)."""
    from matplotlib.patches import Rectangle

    allowed = {"padding": lambda i, j: j < n - 2, "causal": lambda i, j: j <= i, "full": lambda i, j: True}[kind]
    for i in range(n):  # query (row, top to bottom)
        for j in range(n):  # key (column)
            ax.add_patch(
                Rectangle((x0 + j * cell, y0 + (n - 1 - i) * cell), cell, cell,
                          facecolor="#7fb77e" if allowed(i, j) else "#f4f4f4", edgecolor="#999999", linewidth=0.6)
            )  # fmt: skip
    titles = {"padding": "padding mask\n(2 keys are pads)", "causal": "causal mask\n(no later keys)"}
    title = title or titles.get(kind, "no mask\n(every key)")
    ax.text(x0 + n * cell / 2, y0 + n * cell + 0.3, title, ha="center", va="bottom", fontsize=8)
    ax.text(x0 + n * cell / 2, y0 - 0.15, "keys →", ha="center", va="top", fontsize=8)
    ax.text(x0 - 0.1, y0 + n * cell / 2, "queries ↓", ha="right", va="center", fontsize=8, rotation=90)


def vit_diagram(image_size: int = 8, patch_size: int = 2, d_model: int = 32):
    """The Vision Transformer's pipeline with shapes: image ``(C, H, W)`` → ``N = (H/P)²`` patches ``(N, C·P²)`` →
    linear ``(N, D)`` → class token in front ``(1 + N, D)`` → + positions → encoder blocks → class token's vector
    → classifier."""
    integer("image_size", image_size, minimum=1)
    integer("patch_size", patch_size, minimum=1)
    integer("d_model", d_model, minimum=1)
    if image_size % patch_size:
        raise ValueError(f"image_size={image_size} is not divisible by patch_size={patch_size}")
    N, P = (image_size // patch_size) ** 2, patch_size
    fig, ax = _canvas(11, 2.6)
    steps = [
        (f"image\n(1, {image_size}, {image_size})", TENSOR),
        (f"{N} patches\n({N}, {P * P})", OPERATION),
        (f"linear\n({N}, {d_model})", LEARNED),
        (f"class token\nin front\n({1 + N}, {d_model})", LEARNED),
        (f"+ positions\n({1 + N}, {d_model})", LEARNED),
        ("encoder\nblocks", OPERATION),
        (f"class token's\nvector ({d_model},)", TENSOR),
        ("LayerNorm,\nlinear → logits", LEARNED),
    ]
    boxes = [_box(ax, 0.72 + 1.37 * i, 1.2, text, color, width=1.27, height=1.1, size=8) for i, (text, color) in
             enumerate(steps)]  # fmt: skip
    for start, end in zip(boxes, boxes[1:], strict=False):
        _arrow(ax, start, end)
    ax.set_title(
        f"A Vision Transformer: {image_size}×{image_size} images, {P}×{P} patches, width {d_model}", fontsize=11
    )
    return fig


def architecture_families_diagram():
    """The three Transformer families side by side: the same blocks, wired and masked differently.

    - encoder-only (BERT, ViT; notebook 11): tokens ``(B, L, D)`` → N encoder blocks with bidirectional
      self-attention (a padding mask at most) → one vector per token ``(B, L, D)`` → classify (from the class
      token's vector) or tag (every token): for understanding a whole input at once;
    - decoder-only (GPT, LLaMA; notebook 12): the tokens so far ``(B, t, D)`` → N decoder blocks with causal
      self-attention → next-token logits ``(B, V)`` → sample, append, repeat: for writing, one token at a time;
    - encoder–decoder (the original Transformer, T5): source ``(B, S, D)`` → encoder → keys and values
      ``(B, S, D)`` for the cross-attention (notebook 06) of every decoder block; target so far ``(B, t, D)`` →
      causal self-attention → cross-attention → next-token logits ``(B, V)``: for turning one sequence into
      another (translation, speech recognition)."""
    fig, ax = _canvas(15.0, 6.6)
    # 15 x 6.6 units on 15 x 4.7 inches, without a title across the panels: a slide deck cuts the figure at the blank
    # columns between the families and shows one a slide (tools.slide_figures), each short enough to project.
    fig.set_size_inches(15.0, 4.7)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.99)
    _encoder_only_panel(ax)
    _decoder_only_panel(ax)
    _encoder_decoder_panel(ax)
    return fig


def _panel(ax, x: float, name: str, examples: str, masks: str) -> None:
    """A panel's name and examples at the top, centred on x, and the attention masks it uses at the bottom."""
    ax.text(x, 6.25, name, ha="center", va="center", fontsize=12, fontweight="bold")
    ax.text(x, 5.92, examples, ha="center", va="center", fontsize=9, color="#444444")
    ax.text(x, 0.4, masks, ha="center", va="center", fontsize=8.5, color="#8a2b2b")


def _column(ax, x: float, steps, width: float = 2.1, height: float = 0.75) -> list:
    """Boxes ``(y, text, colour)`` stacked bottom to top at x, joined by arrows; returns them."""
    boxes = [_box(ax, x, y, text, color, width=width, height=height, size=9) for y, text, color in steps]
    for start, end in zip(boxes, boxes[1:], strict=False):
        _arrow(ax, start, end)
    return boxes


def _encoder_only_panel(ax) -> None:
    _panel(ax, 2.1, "encoder-only", "BERT, ViT, notebook 11's classifier",
           "masks: padding only (bidirectional:\nevery token sees every token)")  # fmt: skip
    _column(ax, 1.35, [
        (1.3, "input tokens (+ class\ntoken)  (B, L, D)", TENSOR),
        (2.65, "N × encoder block\nbidirectional self-attn.", OPERATION),
        (4.0, "one vector per token\n(B, L, D)", TENSOR),
        (5.2, "classify (class token)\nor tag (every token)", LEARNED),
    ])  # fmt: skip
    _draw_mask(ax, 2.95, 2.2, "full", n=4, cell=0.22, title="full: all\nallowed")


def _decoder_only_panel(ax) -> None:
    _panel(ax, 6.45, "decoder-only", "GPT, LLaMA, notebook 12",
           "masks: causal (+ padding): token i\nsees tokens 1 … i only")  # fmt: skip
    tokens, _, _, sample = _column(ax, 6.0, [
        (1.3, "tokens so far\n(B, t, D)", TENSOR),
        (2.65, "N × decoder block\ncausal self-attention", OPERATION),
        (4.0, "next-token logits\n(B, V), last position", LEARNED),
        (5.2, "sample a token\n(B, 1)", OPERATION),
    ], width=2.0)  # fmt: skip
    loop = {"arrowstyle": "-|>", "color": "#333333", "lw": 1.1, "connectionstyle": "bar,fraction=0.1"}  # go left
    ax.annotate("", xy=(tokens[0] - tokens[2], tokens[1]), xytext=(sample[0] - sample[2], sample[1]), arrowprops=loop)
    ax.text(4.42, 3.25, "append the new token, repeat", rotation=90, ha="center", va="center", fontsize=9)
    _draw_mask(ax, 7.55, 2.2, "causal", n=4, cell=0.22, title="causal: lower\ntriangle")


def _encoder_decoder_panel(ax) -> None:
    _panel(ax, 11.8, "encoder–decoder", "original Transformer (2017), T5: translation, speech",
           "masks: encoder padding; decoder causal;\ncross-attention: source padding")  # fmt: skip
    encoded = _column(ax, 9.85, [
        (1.3, "source tokens\n(B, S, D)", TENSOR),
        (2.65, "N × encoder block\nbidirectional self-attn.", OPERATION),
        (4.0, "encoder output\n(B, S, D)", TENSOR),
    ], width=2.0)[-1]  # fmt: skip
    _box(ax, 13.35, 3.25, "", "#f5f5f5", width=2.3, height=2.75)  # the decoder block, repeated N times
    ax.text(14.68, 3.25, "N × decoder block", ha="center", va="center", fontsize=9, rotation=-90)
    _, _, cross, _, _ = _column(ax, 13.35, [
        (1.3, "target so far\n(B, t, D)", TENSOR),
        (2.3, "causal self-attention", OPERATION),
        (3.2, "cross-attention: Q from\ntarget, K, V from encoder", OPERATION),
        (4.1, "feed-forward", OPERATION),
        (5.2, "next-token logits\n(B, V)", LEARNED),
    ], width=2.0, height=0.62)  # fmt: skip
    _arrow(ax, encoded, cross)
    ax.text(11.5, 4.2, "keys, values\nto every\ndecoder block", ha="center", va="bottom", fontsize=8)
