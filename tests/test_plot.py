"""course_lib.figures.fonts and course_lib.figures.plot: the shipped CJK font (file, checksum, license, coverage),
Chinese labels that render as glyphs without any "missing glyph" warning, and plot_attention's orientation, labels
and input handling."""

import io
import re
import warnings

import matplotlib

matplotlib.use("Agg")  # headless: the tests draw into memory

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from fontTools.ttLib import TTFont  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from course_lib.figures import fonts, plot  # noqa: E402
from course_lib.paths import DATA_DIR  # noqa: E402

TOKENS = ["猫", "坐在", "垫子", "上"]
GB2312_LEVEL_1 = [  # the 3,755 most common simplified hanzi, rows 16-55 of the GB 2312 table
    bytes([row, col]).decode("gb2312")
    for row in range(0xB0, 0xD8)
    for col in range(0xA1, 0xFF)
    if not (row == 0xD7 and col > 0xF9)
]
CJK_PUNCTUATION = "，。、：；！？“”‘’（）《》【】「」…—·"
MISSING_GLYPH = re.compile(r"missing from (the )?(current )?font|Glyph .* missing", re.IGNORECASE)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def render(fig) -> np.ndarray:
    """Draw `fig` with Agg and return its RGBA pixels."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def text_image(text: str, family) -> np.ndarray:
    fig = plt.figure(figsize=(0.8, 0.8), dpi=100)
    fig.text(0.5, 0.5, text, fontsize=40, ha="center", va="center", fontfamily=family)
    return render(fig)


# ------------------------------------------------------------------ the font file


def test_font_file_checksum_and_sources_entry():
    path = fonts.font_path()
    assert path == DATA_DIR / "fonts" / "NotoSansSC-CourseSubset.otf" and path.is_file()
    import hashlib

    assert hashlib.sha256(path.read_bytes()).hexdigest() == fonts.FONT_SHA256
    sources = (DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    assert fonts.FONT_SHA256 in sources and "fonts/NotoSansSC-CourseSubset.otf" in sources
    assert path.stat().st_size < 3_000_000  # "a few MB at most"


def test_font_license_is_shipped():
    text = (DATA_DIR / "fonts" / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in text
    assert "Copyright 2014-2021 Adobe" in text and "Reserved Font Name 'Source'" in text
    font = TTFont(fonts.font_path())
    assert font["name"].getDebugName(1) == fonts.FONT_FAMILY
    assert "Source" not in fonts.FONT_FAMILY  # the Reserved Font Name may not name a modified version


def test_font_covers_common_chinese_and_punctuation():
    """Read the font's own character map with fontTools, independently of matplotlib."""
    cmap = TTFont(fonts.font_path()).getBestCmap()
    assert len(GB2312_LEVEL_1) == 3755
    missing = [c for c in GB2312_LEVEL_1 + list(CJK_PUNCTUATION) + list("".join(TOKENS)) if ord(c) not in cmap]
    assert not missing, f"characters missing from the shipped font: {missing[:20]}"


# ------------------------------------------------------------------ registration and fallback list


def test_register_is_idempotent_and_family_list_is_robust():
    assert fonts.register_cjk_font() == fonts.FONT_FAMILY
    fonts.register_cjk_font()
    entries = [e for e in font_manager.fontManager.ttflist if e.name == fonts.FONT_FAMILY]
    assert len(entries) == 1
    family = fonts.font_family()
    assert family[: len(matplotlib.rcParams["font.family"])] == list(matplotlib.rcParams["font.family"])
    assert family.count(fonts.FONT_FAMILY) == 1
    installed = {e.name for e in font_manager.fontManager.ttflist}
    generic = {"sans-serif", "serif", "monospace", "cursive", "fantasy"}
    assert all(f in installed or f in generic for f in family)  # no "font family not found" lookups


def test_font_family_follows_the_users_default_font():
    with plt.rc_context({"font.family": ["DejaVu Serif"]}):
        assert fonts.font_family()[:2] == ["DejaVu Serif", fonts.FONT_FAMILY]


# ------------------------------------------------------------------ Chinese renders as glyphs, silently


def test_chinese_label_without_the_font_warns():
    """The control: DejaVu Sans alone has no 猫, and matplotlib says so. (So the next test can fail.)"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text_image("猫", ["DejaVu Sans"])
    assert any(MISSING_GLYPH.search(str(w.message)) for w in caught)


@pytest.mark.parametrize("fmt", ["png", "pdf", "svg"])
def test_plot_attention_with_chinese_labels_emits_no_glyph_warning(fmt):
    weights = torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), dim=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning, a missing glyph included, fails the test
        fig = plot.plot_attention(weights, TOKENS, [f"{t} key" for t in TOKENS], title="注意力权重 (attention)")
        fig.savefig(io.BytesIO(), format=fmt)


def test_default_font_plus_subset_renders_mixed_text_silently():
    """DejaVu Sans (matplotlib's default) for Latin, the subset for hanzi: no warning, whatever is installed."""
    register = fonts.register_cjk_font()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text_image("猫 cat，。", ["DejaVu Sans", register])


def test_hanzi_render_as_distinct_glyphs_not_boxes():
    """A missing glyph is drawn as the same empty box for every character; real glyphs differ."""
    family = fonts.font_family()
    cat, dog = text_image("猫", family), text_image("狗", family)
    assert (cat[..., :3] < 128).any(), "nothing was drawn"
    assert not np.array_equal(cat, dog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box_cat, box_dog = text_image("猫", ["DejaVu Sans"]), text_image("狗", ["DejaVu Sans"])
    assert np.array_equal(box_cat, box_dog)  # the control: without the font both are the same box
    assert not np.array_equal(cat, box_cat)


def test_tick_labels_use_the_fallback_family_and_survive_a_later_rc_change():
    fig = plot.plot_attention(torch.full((4, 4), 0.25), TOKENS, TOKENS)
    ax = fig.axes[0]
    with plt.rc_context({"font.family": ["DejaVu Sans"]}), warnings.catch_warnings():
        warnings.simplefilter("error")
        render(fig)
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        assert fonts.FONT_FAMILY in label.get_fontfamily()


# ------------------------------------------------------------------ plot_attention itself


def test_rows_are_queries_and_columns_are_keys():
    weights = torch.softmax(torch.randn(3, 5, generator=torch.Generator().manual_seed(1)), dim=-1)
    queries, keys = ["q0", "q1", "q2"], ["猫", "坐在", "垫子", "上", "。"]
    fig = plot.plot_attention(weights, queries, keys)
    ax = fig.axes[0]
    mesh = ax.collections[0]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(3, 5), weights.double().numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == keys
    assert [t.get_text() for t in ax.get_yticklabels()] == queries
    assert ax.get_xlabel().startswith("key") and ax.get_ylabel().startswith("query")
    annotations = [t.get_text() for t in ax.texts]
    assert annotations == [f"{w:.2f}" for w in weights.flatten().tolist()]  # small matrix: annotated
    assert len(fig.axes) == 2  # heatmap and colour bar


def test_draws_into_a_given_axes_and_returns_its_figure():
    fig, axes = plt.subplots(1, 2)
    returned = plot.plot_attention(torch.eye(3), None, None, ax=axes[1], colorbar=False, annot=False)
    assert returned is fig
    assert len(axes[1].collections) == 1 and len(axes[0].collections) == 0
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["0", "1", "2"]


def test_accepts_tensors_on_any_device_and_dtype(device):
    weights = torch.softmax(torch.randn(4, 6, generator=torch.Generator().manual_seed(2)), dim=-1)
    expected = weights.double().numpy()
    dtypes = [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if device.type != "mps" else [])
    for dtype in dtypes:
        w = weights.to(device=device, dtype=dtype).requires_grad_()
        fig = plot.plot_attention(w, list("abcd"), list("uvwxyz"))
        shown = np.asarray(fig.axes[0].collections[0].get_array()).reshape(4, 6)
        np.testing.assert_allclose(shown, expected, atol=1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6)
        plt.close(fig)
    fig = plot.plot_attention(expected, None, None)  # NumPy works too
    np.testing.assert_allclose(np.asarray(fig.axes[0].collections[0].get_array()).reshape(4, 6), expected)


def test_boolean_masks_are_drawn_as_zero_and_one():
    fig = plot.plot_attention(torch.ones(3, 3, dtype=torch.bool).tril(), None, None)
    shown = np.asarray(fig.axes[0].collections[0].get_array()).reshape(3, 3)
    np.testing.assert_array_equal(shown, np.tril(np.ones((3, 3))))


def test_nan_rows_are_drawn_empty_without_error():
    weights = torch.tensor([[0.5, 0.5], [float("nan"), float("nan")]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render(plot.plot_attention(weights, ["a", "b"], ["x", "y"]))


def test_large_matrices_are_not_annotated():
    fig = plot.plot_attention(torch.full((20, 20), 0.05), None, None)
    assert len(fig.axes[0].texts) == 0


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match=r"\(L, S\).*\(2, 3, 4\).*weights\[0\]"):
        plot.plot_attention(torch.rand(2, 3, 4), None, None)
    with pytest.raises(ValueError, match="query_labels has 2 labels but weights has 3 queries"):
        plot.plot_attention(torch.rand(3, 4), ["a", "b"], None)
    with pytest.raises(ValueError, match="key_labels has 5 labels but weights has 4 keys"):
        plot.plot_attention(torch.rand(3, 4), None, list("abcde"))
    with pytest.raises(TypeError, match="single string"):
        plot.plot_attention(torch.rand(3, 4), "abc", None)
    with pytest.raises(TypeError, match="floating"):
        plot.plot_attention(torch.ones(2, 2, dtype=torch.int64), None, None)
    with pytest.raises(ValueError, match="at least one query"):
        plot.plot_attention(torch.rand(0, 3), None, None)
