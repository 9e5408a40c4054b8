"""course_lib.lora: the low-rank update, merging, and equality with Hugging Face PEFT's LoRA (a test dependency: the
dev extra) on the same weights."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from course_lib import lora
from course_lib.modern import ModernLM

# float64 throughout: the two computations differ only in the order of their sums, so their difference is a few
# float64 roundings (about 1e-16 relative) per operation; 1e-10 leaves a wide margin and catches any real difference.
TOL = dict(rtol=1e-10, atol=1e-10)


def tiny_model(seed: int = 0) -> ModernLM:
    torch.manual_seed(seed)
    return ModernLM(30, 16, 2, 2, max_len=12, num_kv_heads=1, d_ff=24).double().eval()


def tokens() -> torch.Tensor:
    return torch.randint(0, 30, (3, 10), generator=torch.Generator().manual_seed(1))


def with_random_b(model: nn.Module) -> nn.Module:
    """B starts at zero (the adapted model starts as the pretrained one); a trained B is not zero."""
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, lora.LoRALinear):
                module.lora_B.copy_(torch.randn(module.lora_B.shape, generator=generator, dtype=torch.float64))
    return model


def test_a_new_adapter_changes_nothing_and_trains_only_its_own_parameters():
    model = tiny_model()
    before = model(tokens())
    names = lora.add_lora(model, rank=4, alpha=8)
    assert names == [f"blocks.{i}.self_attn.w_{m}" for i in (0, 1) for m in "qv"]
    torch.testing.assert_close(model(tokens()), before, rtol=0, atol=0)  # B = 0: exactly the pretrained model
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {f"{n}.lora_{m}" for n in names for m in "AB"}
    # per adapted layer r (d_in + d_out): w_q 4 (16 + 16), w_v 4 (16 + 8) (one key/value head of width 8)
    assert lora.count_parameters(model, trainable=True) == 2 * (4 * 32 + 4 * 24)


def test_the_update_is_alpha_over_r_times_b_a_and_merging_gives_the_same_outputs():
    model = tiny_model()
    lora.add_lora(model, rank=4, alpha=8)
    with_random_b(model)
    layer = model.blocks[0].self_attn.w_q
    x = torch.randn(5, 16, dtype=torch.float64)
    expected = x @ (layer.base.weight + (8 / 4) * layer.lora_B @ layer.lora_A).T
    torch.testing.assert_close(layer(x), expected, **TOL)
    adapted = model(tokens())
    merged = lora.merge_lora(copy.deepcopy(model))
    assert not any(isinstance(m, lora.LoRALinear) for m in merged.modules())
    torch.testing.assert_close(merged(tokens()), adapted, **TOL)


def test_lora_equals_pefts_on_the_same_weights():
    peft = pytest.importorskip("peft")
    ours, theirs = tiny_model(), tiny_model()
    lora.add_lora(ours, rank=4, alpha=8)
    with_random_b(ours)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["w_q", "w_v"], lora_dropout=0.0)
    theirs = peft.inject_adapter_in_model(config, theirs)
    with torch.no_grad():
        for name, module in ours.named_modules():
            if isinstance(module, lora.LoRALinear):
                other = theirs.get_submodule(name)
                other.lora_A["default"].weight.copy_(module.lora_A)
                other.lora_B["default"].weight.copy_(module.lora_B)
    torch.testing.assert_close(ours(tokens()), theirs(tokens()), **TOL)
    assert lora.count_parameters(ours, trainable=True) == sum(p.numel() for p in theirs.parameters() if p.requires_grad)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="base"):
        lora.LoRALinear(nn.Conv1d(2, 2, 1), rank=2)
    with pytest.raises(ValueError, match="rank"):
        lora.LoRALinear(nn.Linear(4, 4), rank=0)
    with pytest.raises(ValueError, match="alpha"):
        lora.LoRALinear(nn.Linear(4, 4), rank=2, alpha=-1.0)
    with pytest.raises(ValueError, match="no nn.Linear"):
        lora.add_lora(tiny_model(), rank=2, targets=("q_proj",))
