"""course_lib.models against PyTorch's nn.TransformerEncoderLayer / nn.TransformerEncoder with copied weights."""

import pytest
import torch
import torch.nn.functional as F
from conftest import float_dtypes, transformer_fast_path
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from course_lib import causal_mask, padding_mask
from course_lib.classifiers import BagOfEmbeddings, SequenceClassifier
from course_lib.models import TransformerEncoder, TransformerEncoderBlock

TOL = {torch.float32: dict(atol=2e-5, rtol=1e-4), torch.float64: dict(atol=1e-10, rtol=1e-10)}

# Which arithmetic runs. In eval mode without autograd, nn.TransformerEncoderLayer takes PyTorch's inference "fast
# path" (torch._transformer_encoder_layer_fwd, in torch/nn/modules/transformer.py; no dtype condition, so float64 too)
# on the CPU and CUDA (not on MPS). Its feed-forward network (aten/src/ATen/native/transformers/transformer.cpp, ffn ->
# linear_for_ffn) computes Linear + activation in one call, at::_addmm_activation(b1, x, W1^T, use_gelu). On the CPU
# that applies the exact GELU x Phi(x). On CUDA (aten/src/ATen/native/cuda/Blas.cpp, addmm_out_cuda_impl) it fuses the
# GELU into cuBLASLt's GELU epilogue, which computes the tanh approximation, and every other CUDA path calls
# at::gelu_(result, "tanh") to agree with it (PyTorch pull request #104061; PyTorch's own test_linalg checks
# _addmm_activation against gelu(approximate="tanh") on CUDA and the exact GELU on the CPU). ReLU is exact everywhere.
# The two GELUs differ by up to GELU_TANH_GAP (at |x| = 2.70; test_gelu_tanh_gap): another function, not a rounding
# error, so float64 does not help. On an H100 (torch 2.11) it moved the outputs compared here by up to 3.6e-4 in
# float64 (and notebook 11's by 2.8e-4 in float32), above both tolerances in TOL. Nor is cuBLASLt's epilogue
# F.gelu(approximate="tanh") to the last bit: our block with F.gelu(..., "tanh") still differed from the fast path by
# up to 4.3e-10 in float64 on that H100 (2026-11-27), above float64's TOL, because the epilogue evaluates tanh its own
# way. So each comparison below says which arithmetic it compares: the Python path (fast path off: the same operations
# as course_lib on every device, tight TOL), or the module as users call it against our block whose first Linear and
# GELU are the very call the fast path makes (the same kernel on every device, so the same TOL: the same arithmetic up
# to the rounding of the other operations). test_fused_gelu_is_the_fast_paths_gelu checks which GELU that call is.
GELU_TANH_GAP = 4.73e-4


def fast_path_gelu(device: torch.device) -> str:
    """The GELU (``approximate=`` of F.gelu) that nn.TransformerEncoderLayer's inference fast path computes on
    ``device``: "tanh" on CUDA (cuBLASLt's GELU epilogue), "none" (exact) on the CPU and where no fast path runs."""
    return "tanh" if device.type == "cuda" else "none"


def fast_path_linear_gelu(linear: nn.Linear, h: torch.Tensor) -> torch.Tensor:
    """GELU(linear(h)) computed by the call that the fast path's feed-forward network makes (transformer.cpp,
    linear_for_ffn): at::_addmm_activation(b, h as rows, W^T, use_gelu=True), on (..., D) inputs."""
    rows = h.reshape(-1, h.shape[-1])
    hidden = torch._addmm_activation(linear.bias, rows, linear.weight.t(), use_gelu=True)
    return hidden.reshape(*h.shape[:-1], -1)


def computing_like_the_fast_path(block: TransformerEncoderBlock, device: torch.device) -> TransformerEncoderBlock:
    """``block`` with its feed-forward network's first Linear and GELU computed by the fast path's own fused call, so
    on ``device`` it computes the GELU that ``fast_path_gelu(device)`` names, with the same kernel (the dropout between
    the Linears is the identity in eval mode)."""
    if block.activation == "gelu":
        block.feed_forward = lambda h: block.linear2(fast_path_linear_gelu(block.linear1, h))
    return block


def test_fused_gelu_is_the_fast_paths_gelu(device):
    """The fused call computes the GELU that fast_path_gelu names, not the other one: its largest distance from that
    GELU is below a thousandth of the gap between the two (float64, pre-activations over [-6, 6], |x| = 2.70 among
    them), and its distance from the other GELU is at least half that gap."""
    torch.manual_seed(0)
    linear = nn.Linear(2, 64).to(device, torch.float64)
    with torch.no_grad():  # W = 0, so the pre-activations are the bias: a grid over [-6, 6], and 2.70 where the GELUs
        linear.weight.zero_()
        linear.bias.copy_(torch.linspace(-6, 6, 64, dtype=torch.float64))
        linear.bias[0] = 2.70  # differ most
    h = torch.zeros(8, 2, dtype=torch.float64, device=device)
    with torch.no_grad():
        fused = fast_path_linear_gelu(linear, h)
        pre = linear(h)
    named = fast_path_gelu(device)
    other = "none" if named == "tanh" else "tanh"
    to_named = (fused - F.gelu(pre, approximate=named)).abs().max().item()
    to_other = (fused - F.gelu(pre, approximate=other)).abs().max().item()
    print(f"fused GELU on {device.type}: {to_named:.1e} from GELU({named!r}), {to_other:.1e} from GELU({other!r})")
    assert to_named < GELU_TANH_GAP / 1000 and to_other > GELU_TANH_GAP / 2


def torch_layer(norm_first, activation, device, dtype, d_model=16, heads=4, d_ff=24, dropout=0.1):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model, heads, d_ff, dropout=dropout, activation=activation, batch_first=True, norm_first=norm_first
    )
    with torch.no_grad():  # non-trivial LayerNorm parameters, so that copying them is tested too
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return layer.to(device=device, dtype=dtype).eval()


def batch(device, dtype, B=3, L=7, D=16):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, L, D, generator=g, dtype=dtype).to(device)
    lengths = torch.tensor([L, 4, 1], device=device)  # one full sequence, one padded, one of a single token
    return x, padding_mask(lengths, L)  # (B, L, D), (B, 1, L) True = may attend


def test_gelu_tanh_gap():
    x = torch.linspace(-8, 8, 1_600_001, dtype=torch.float64)
    gap = (F.gelu(x) - F.gelu(x, approximate="tanh")).abs()
    assert abs(gap.max().item() - GELU_TANH_GAP) < 1e-6 and abs(abs(x[gap.argmax()].item()) - 2.70) < 0.01


@pytest.mark.parametrize("fast_path", [False, True], ids=["python-path", "fast-path"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_block_equals_torch_layer_with_padding(norm_first, activation, fast_path, device):
    """python-path: nn.TransformerEncoderLayer's own Python code (exact GELU on every device) against our block.
    fast-path: the layer as users call it in eval mode, against our block computing the fast path's GELU."""
    for dtype in float_dtypes(device):
        layer = torch_layer(norm_first, activation, device, dtype)
        ours = TransformerEncoderBlock.from_torch(layer).eval()
        assert ours.norm_first == norm_first and ours.activation == activation
        if fast_path:
            ours = computing_like_the_fast_path(ours, device)
        x, mask = batch(device, dtype)
        with torch.no_grad(), transformer_fast_path(fast_path):
            expected = layer(x, src_key_padding_mask=~mask[:, 0])  # PyTorch: True = padding
            got = ours(x, mask=mask)
        torch.testing.assert_close(got, expected, **TOL[dtype])


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_block_gradients_equal_torch_layer(norm_first, device):
    dtype = float_dtypes(device)[-1]
    layer = torch_layer(norm_first, "gelu", device, dtype)
    ours = TransformerEncoderBlock.from_torch(layer).eval()
    x, mask = batch(device, dtype)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    (layer(x1, src_key_padding_mask=~mask[:, 0]) ** 2).sum().backward()
    (ours(x2, mask=mask) ** 2).sum().backward()
    torch.testing.assert_close(x2.grad, x1.grad, **TOL[dtype])
    torch.testing.assert_close(ours.linear1.weight.grad, layer.linear1.weight.grad, **TOL[dtype])
    torch.testing.assert_close(ours.self_attn.w_q.weight.grad, layer.self_attn.in_proj_weight.grad[:16], **TOL[dtype])


def test_block_with_causal_mask_equals_torch(device):
    layer = torch_layer(True, "relu", device, torch.float32)
    ours = TransformerEncoderBlock.from_torch(layer).eval()
    x, _ = batch(device, torch.float32)
    mask = causal_mask(7, device=device)
    with torch.no_grad():
        torch.testing.assert_close(ours(x, mask=mask), layer(x, src_mask=~mask), **TOL[torch.float32])


def test_training_mode_without_dropout_equals_torch():
    layer = torch_layer(False, "relu", "cpu", torch.float64, dropout=0.0).train()
    ours = TransformerEncoderBlock.from_torch(layer).train()
    x, mask = batch("cpu", torch.float64)
    torch.testing.assert_close(ours(x, mask), layer(x, src_key_padding_mask=~mask[:, 0]), **TOL[torch.float64])


@pytest.mark.parametrize("fast_path", [False, True], ids=["python-path", "fast-path"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_equals_torch_encoder(norm_first, fast_path, device):
    """As test_block_equals_torch_layer_with_padding: each layer's own Python code, or the fast path (per layer here:
    enable_nested_tensor=False) against blocks computing its GELU."""
    dtype = float_dtypes(device)[-1]
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, activation="gelu", batch_first=True, norm_first=norm_first)
    final = nn.LayerNorm(16) if norm_first else None
    encoder = nn.TransformerEncoder(layer, 3, norm=final, enable_nested_tensor=False).to(device, dtype).eval()
    with torch.no_grad():  # the three layers start as copies of `layer`: make them differ (drawn on the CPU, then
        for p in encoder.parameters():  # moved: the same weights on every device)
            p.add_(0.05 * torch.randn(p.shape, dtype=torch.float64).to(p))
    ours = TransformerEncoder.from_torch(encoder).eval()
    assert (ours.norm is not None) == norm_first and len(ours.layers) == 3
    if fast_path:
        for block in ours.layers:
            computing_like_the_fast_path(block, device)
    x, mask = batch(device, dtype)
    with torch.no_grad(), transformer_fast_path(fast_path):
        expected = encoder(x, src_key_padding_mask=~mask[:, 0])
        got, weights = ours(x, mask=mask, return_weights=True)
    torch.testing.assert_close(got, expected, **TOL[dtype])
    assert len(weights) == 3 and weights[0].shape == (3, 2, 7, 7)


def test_attention_weights_ignore_padding_and_sum_to_one():
    block = TransformerEncoderBlock(16, 4, dropout=0.0).eval()
    x, mask = batch("cpu", torch.float32)
    out, weights = block(x, mask, return_weights=True)
    assert out.shape == (3, 7, 16) and weights.shape == (3, 4, 7, 7)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 7))
    assert (weights[1, :, :, 4:] == 0).all() and (weights[2, :, :, 1:] == 0).all()  # padded keys get no weight


@settings(max_examples=20, deadline=None)
@given(length=st.integers(1, 6), seed=st.integers(0, 1000))
def test_padding_content_does_not_change_real_outputs(length, seed):
    torch.manual_seed(0)
    encoder = TransformerEncoder(8, 2, 2, d_ff=16, dropout=0.0, norm_first=True).eval()
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(1, 6, 8, generator=g)
    noisy = x.clone()
    noisy[:, length:] = 100 * torch.randn(1, 6 - length, 8, generator=g)  # garbage in the padded positions
    mask = padding_mask([length], 6)
    torch.testing.assert_close(encoder(noisy, mask)[:, :length], encoder(x, mask)[:, :length])


def test_post_ln_output_is_normalised_and_pre_ln_residual_stream_is_not():
    torch.manual_seed(0)
    x = 3 * torch.randn(4, 5, 16) + 1
    post = TransformerEncoderBlock(16, 2, norm_first=False, dropout=0.0)(x)
    pre = TransformerEncoderBlock(16, 2, norm_first=True, dropout=0.0)(x)
    torch.testing.assert_close(post.mean(-1), torch.zeros(4, 5), atol=1e-5, rtol=0)  # LayerNorm last, weight 1
    torch.testing.assert_close(post.var(-1, unbiased=False), torch.ones(4, 5), atol=1e-3, rtol=0)
    assert pre.mean(-1).abs().mean() > 0.3  # x + f(LN(x)) keeps x's offset of 1


def test_dropout_is_active_in_training_and_off_in_evaluation():
    block = TransformerEncoderBlock(16, 2, dropout=0.5)
    x = torch.randn(2, 5, 16)
    assert not torch.allclose(block.train()(x), block(x))
    torch.testing.assert_close(block.eval()(x), block(x))


def tokens_batch():
    tokens = torch.tensor([[5, 6, 7, 8, 0, 0], [9, 3, 4, 0, 0, 0], [3, 4, 5, 6, 7, 8]])  # 0 = padding
    return tokens, torch.tensor([[8, 7, 6, 5, 0, 0], [4, 9, 3, 0, 0, 0], [8, 3, 7, 4, 6, 5]])  # real tokens reordered


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_without_positions_order_is_invisible_and_with_positions_it_is_not(pooling):
    tokens, shuffled = tokens_batch()
    torch.manual_seed(0)
    blind = SequenceClassifier(10, 3, d_model=16, positions=None, pooling=pooling, max_len=6).eval()
    torch.testing.assert_close(blind(shuffled), blind(tokens))  # permutation invariant
    bag = BagOfEmbeddings(10, 3, d_model=16).eval()
    torch.testing.assert_close(bag(shuffled), bag(tokens))
    for positions in ("sinusoidal", "learned"):
        torch.manual_seed(0)
        model = SequenceClassifier(10, 3, d_model=16, positions=positions, pooling=pooling, max_len=6).eval()
        assert not torch.allclose(model(shuffled), model(tokens), atol=1e-4)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", None])
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_classifier_ignores_padding(positions, pooling):
    torch.manual_seed(0)
    model = SequenceClassifier(10, 3, d_model=16, positions=positions, pooling=pooling, max_len=9).eval()
    tokens, _ = tokens_batch()
    longer = torch.cat([tokens, torch.zeros(3, 3, dtype=torch.long)], dim=1)  # three more padding positions
    logits, weights = model(tokens, return_weights=True)
    torch.testing.assert_close(model(longer), logits)
    assert logits.shape == (3, 3) and len(weights) == 2
    assert weights[0].shape == (3, 2, 6 + (pooling == "cls"), 6 + (pooling == "cls"))


def test_mask_is_combined_with_padding():
    torch.manual_seed(0)
    model = SequenceClassifier(10, 3, d_model=16, max_len=6, dropout=0.0).eval()
    tokens, _ = tokens_batch()
    everything = torch.ones(7, 7, dtype=torch.bool)  # (L', L') with the class token: nothing more is hidden
    torch.testing.assert_close(model(tokens, mask=everything), model(tokens))
    hide = everything.clone()
    hide[0, 1] = False  # the class token may not look at the first token
    logits, weights = model(tokens, mask=hide, return_weights=True)
    assert (weights[0][:, :, 0, 1] == 0).all() and (weights[1][:, :, 0, 1] == 0).all()
    assert not torch.allclose(logits, model(tokens))
    x, valid = model.embed(tokens)
    assert x.shape == (3, 7, 16) and valid[:, 0].all() and valid.sum().item() == 3 + 4 + 3 + 6
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        model(tokens, mask=everything.float())


def test_classifier_runs_on_the_device(device):
    model = SequenceClassifier(10, 4, d_model=16, max_len=6).to(device)
    tokens, _ = tokens_batch()
    logits = model(tokens.to(device))
    assert logits.device.type == device.type and logits.shape == (3, 4)
    logits.sum().backward()
    assert model.embedding.weight.grad is not None


@pytest.mark.parametrize(
    "make,words",
    [
        (lambda: TransformerEncoderBlock(10, 3), "d_model=10 is not divisible by num_heads=3"),
        (
            lambda: TransformerEncoderBlock(16, 2, activation="tanh"),
            "activation must be one of 'relu', 'gelu'; got 'tanh'",
        ),
        (lambda: TransformerEncoderBlock(16, 2, dropout=1.0), "dropout must be < 1.0, got 1.0"),
        (lambda: TransformerEncoder(16, 2, 0), "num_layers must be >= 1"),
        (lambda: SequenceClassifier(10, 2, positions="rope"), "positions must be 'sinusoidal', 'learned' or None"),
        (lambda: SequenceClassifier(10, 2, pooling="max"), "pooling must be 'cls' or 'mean'"),
        (lambda: TransformerEncoderBlock(16, 2)(torch.randn(5, 16)), "x must have shape (B, L, d_model=16)"),
        (
            lambda: SequenceClassifier(10, 2)(torch.randn(2, 5)),
            "tokens must hold integer token ids, got dtype torch.float32",
        ),
        (lambda: SequenceClassifier(10, 2, max_len=4)(torch.ones(2, 5, dtype=torch.long)), "L=5 > max_len=4"),
        (
            lambda: TransformerEncoderBlock.from_torch(
                nn.TransformerEncoderLayer(16, 2, activation=nn.GELU(approximate="tanh"), batch_first=True)
            ),
            "activation must be one of 'relu', 'gelu'; got GELU(approximate='tanh')",
        ),
    ],
)
def test_bad_arguments_are_reported_in_words(make, words):
    with pytest.raises((ValueError, TypeError)) as info:
        make()
    assert words in str(info.value)


def test_from_torch_rejects_other_modules():
    with pytest.raises(TypeError, match="must be a torch.nn.TransformerEncoderLayer, got Linear"):
        TransformerEncoderBlock.from_torch(nn.Linear(2, 2))
    with pytest.raises(TypeError, match="must be a torch.nn.TransformerEncoder, got Linear"):
        TransformerEncoder.from_torch(nn.Linear(2, 2))
