"""course_lib.diagrams: each schematic is a figure whose labels carry the shapes its arguments give, and whose boxes
stay inside the drawing (nothing cut off at the border)."""

import matplotlib

matplotlib.use("Agg")  # headless

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_lib import diagrams  # noqa: E402


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
    assert "heads 3 to 3" in text and "W_O" in text


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


@pytest.mark.parametrize("draw", [diagrams.qkv_diagram, diagrams.multihead_diagram, diagrams.encoder_block_diagram,
                                  diagrams.vit_diagram])  # fmt: skip
def test_every_box_lies_inside_the_drawing(draw):
    fig = draw()
    ax = fig.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    for patch in ax.patches:
        box = patch.get_extents().transformed(ax.transData.inverted())
        assert x0 - 0.05 <= box.x0 and box.x1 <= x1 + 0.05 and y0 - 0.05 <= box.y0 and box.y1 <= y1 + 0.05
