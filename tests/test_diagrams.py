"""course_lib.figures.diagrams: each schematic is a figure whose labels carry the shapes its arguments give, and
whose boxes stay inside the drawing (nothing cut off at the border)."""

import matplotlib

matplotlib.use("Agg")  # headless

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

from course_lib.figures import diagrams  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def labels(fig) -> str:
    return " | ".join(t.get_text() for ax in fig.axes for t in ax.texts + [ax.title])


def test_qkv_diagram_shows_one_tokens_path_with_shapes():
    text = labels(diagrams.qkv_diagram(n=5, d_model=12, d_k=3))
    for part in ("(1, 12)", "(5, 12)", "(5, 3)", "(1, 3)", "softmax", "W_q", "W_k", "W_v", "sum 1"):
        assert part in text, part


def test_multihead_diagram_concatenates_heads_to_the_model_width():
    text = labels(diagrams.multihead_diagram(seq_len=7, d_model=24, num_heads=4))
    assert "(4, 7, 6)" in text, "the split heads: (h, T, D/h)"
    assert "(7, 4·6) = (7, 24)" in text, "concatenated: T x (h·d_k) = T x D, not T x d_k x h"
    assert "heads 3 to 3" in text and "W_o" in text


def test_encoder_block_diagram_puts_the_masks_on_the_scores():
    fig = diagrams.encoder_block_diagram()
    text = labels(fig)
    assert "padding mask" in text and "causal mask" in text and "before the softmax" in text
    ax = fig.axes[0]
    cells = [p for p in ax.patches if type(p).__name__ == "Rectangle"]
    assert len(cells) == 2 * 25, "two 5x5 masks"
    visible = sum(1 for p in cells if p.get_facecolor()[1] > 0.6 and p.get_facecolor()[0] < 0.6)
    assert visible == 5 * 3 + 15, "padding: 3 visible keys per query; causal: the lower triangle (15 cells)"


def test_vit_diagram_counts_patches_and_tokens():
    text = labels(diagrams.vit_diagram(image_size=12, patch_size=3, d_model=16))
    assert "16 patches" in text and "(16, 9)" in text and "(17, 16)" in text


FAMILIES = ("encoder-only", "decoder-only", "encoder–decoder")


def is_allowed(cell) -> bool:
    """A mask cell is coloured green when the query may attend to the key."""
    red, green, _, _ = cell.get_facecolor()
    return green > 0.6 and red < 0.6


def drawn_masks(ax) -> dict[str, list[list[bool]]]:
    """The masks drawn in each panel (the panel whose title is nearest), rebuilt from the cells' positions and
    colours: rows are queries from top to bottom, columns are keys."""
    centres = {t.get_text(): t.get_position()[0] for t in ax.texts if t.get_text() in FAMILIES}
    cells = {}
    for cell in (p for p in ax.patches if type(p).__name__ == "Rectangle"):
        panel = min(centres, key=lambda name: abs(centres[name] - cell.get_x()))
        cells.setdefault(panel, []).append(cell)
    masks = {}
    for panel, group in cells.items():
        xs = sorted({round(c.get_x(), 6) for c in group})
        ys = sorted({round(c.get_y(), 6) for c in group}, reverse=True)
        masks[panel] = [[None] * len(xs) for _ in ys]
        for c in group:
            masks[panel][ys.index(round(c.get_y(), 6))][xs.index(round(c.get_x(), 6))] = is_allowed(c)
    return masks


def box_around(ax, label: str):
    """The smallest rounded box around the one text that starts with ``label``, in data coordinates."""
    (centre,) = [t.get_position() for t in ax.texts if t.get_text().startswith(label)]
    boxes = [p.get_extents().transformed(ax.transData.inverted()) for p in ax.patches
             if type(p).__name__ == "FancyBboxPatch"]  # fmt: skip
    return min((b for b in boxes if b.contains(*centre)), key=lambda b: b.width * b.height)


def has_arrow(ax, start: str, end: str) -> bool:
    """Whether an arrow runs from the border of the box labelled ``start`` to that of the box labelled ``end``."""
    source, target = box_around(ax, start).padded(0.05), box_around(ax, end).padded(0.05)
    arrows = [(a.xyann, a.xy) for a in ax.texts if isinstance(a, Annotation) and a.arrow_patch is not None]
    return any(source.contains(*tail) and target.contains(*head) for tail, head in arrows)


def test_architecture_families_diagram_has_the_three_families_and_their_masks():
    fig = diagrams.architecture_families_diagram()
    titles = [t.get_text() for t in fig.axes[0].texts]
    assert all(name in titles for name in FAMILIES), "one panel per family, titled with its name"
    text = labels(fig)
    for part in ("BERT", "ViT", "GPT", "LLaMA", "T5", "bidirectional", "causal self-attention", "next-token logits"):
        assert part in text, part
    assert text.count("masks:") == 3, "each panel says which masks it uses"


def test_architecture_families_diagram_draws_a_full_and_a_causal_mask():
    masks = drawn_masks(diagrams.architecture_families_diagram().axes[0])
    full, causal = masks["encoder-only"], masks["decoder-only"]
    assert len(full) >= 3 and all(len(row) == len(full) and all(row) for row in full), "bidirectional: all allowed"
    n = len(causal)
    assert n >= 3 and causal == [[key <= query for key in range(n)] for query in range(n)], "the lower triangle"


def test_architecture_families_diagram_wires_cross_attention_and_the_generation_loop():
    ax = diagrams.architecture_families_diagram().axes[0]
    assert has_arrow(ax, "encoder output", "cross-attention"), "the encoder's output feeds cross-attention"
    assert has_arrow(ax, "causal self-attention", "cross-attention"), "the decoder: self-attention, then cross"
    assert has_arrow(ax, "sample a token", "tokens so far"), "decoder-only: the sampled token goes back in"
    assert "append the new token" in labels(ax.figure)


def test_architecture_families_diagram_texts_neither_overlap_nor_straddle_a_box():
    fig = diagrams.architecture_families_diagram()
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
    boxes = [p.get_window_extent(renderer) for p in ax.patches if type(p).__name__ == "FancyBboxPatch"]

    def overlap(a, b):
        return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1

    def inside(a, b):
        return b.x0 <= a.x0 and a.x1 <= b.x1 and b.y0 <= a.y0 and a.y1 <= b.y1

    assert not [(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :] if overlap(a, b)], "texts overlap"
    assert all(inside(t, box) or not overlap(t, box) for t in texts for box in boxes), "a text crosses a box border"
    assert all(inside(t, fig.bbox) for t in texts), "a text is cut off at the border"
    assert all(t.get_fontsize() >= 8 for t in ax.texts), "too small to read"


@pytest.mark.parametrize("draw", [diagrams.qkv_diagram, diagrams.multihead_diagram, diagrams.encoder_block_diagram,
                                  diagrams.vit_diagram, diagrams.architecture_families_diagram])  # fmt: skip
def test_every_box_lies_inside_the_drawing(draw):
    fig = draw()
    ax = fig.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    for patch in ax.patches:
        box = patch.get_extents().transformed(ax.transData.inverted())
        assert x0 - 0.05 <= box.x0 and box.x1 <= x1 + 0.05 and y0 - 0.05 <= box.y0 and box.y1 <= y1 + 0.05
