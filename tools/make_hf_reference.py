"""Build data/hf_reference.npz: what Hugging Face's Llama layer and PEFT's LoRA compute on tiny seeded models.

Notebook 15 checks the course's modern block and its LoRA against these libraries without importing them at run time
(``transformers`` and ``peft`` are test dependencies: the dev extra). This script builds, in code and with seeded
weights (no download):

- a ``LlamaDecoderLayer`` (D = 32, H = 4 query heads, H_kv = 2 key/value heads, F = 85 = 8 D / 3, RoPE base 10,000),
  every weight drawn from a seeded generator; it runs the layer in float64 on a seeded input ``x`` (2, 7, 32) with a
  causal mask, and stores the layer's weights under their Hugging Face names (``llama.<name>``), ``llama_x`` and
  ``llama_y`` (the layer's output);
- a course ``ModernLM`` (V = 30, D = 16, 2 layers, 2 query heads, 1 key/value head, F = 24) whose query and value
  projections PEFT wraps in LoRA adapters (r = 4, alpha = 8), its ``B`` matrices drawn at random (a trained ``B`` is
  not zero); it stores the model's weights (``lm.<name>``), every adapter's ``A`` and ``B`` (``lora.<layer>.A``,
  ``lora.<layer>.B``), the tokens ``lora_tokens`` (3, 10) and PEFT's logits ``lora_logits``.

:func:`reference` returns these arrays; tests/test_hf_reference.py recomputes them with live ``transformers`` and
``peft`` and compares them with the shipped file. Usage (in the course's environment with the dev extra):
    python -m tools.make_hf_reference data/hf_reference.npz
then compare the printed SHA-256 with data/SOURCES.md. The file is written with fixed zip timestamps, so the same
numbers give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import sys
import zipfile

import numpy as np
import torch

LLAMA = dict(D=32, H=4, H_KV=2, F=85, L=7, B=2)
LM = dict(V=30, D=16, H=2, H_KV=1, F=24, LAYERS=2, MAX_LEN=12)
RANK, ALPHA = 4, 8


def _llama_layer():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    d = LLAMA
    config = LlamaConfig(
        hidden_size=d["D"], intermediate_size=d["F"], num_attention_heads=d["H"], num_key_value_heads=d["H_KV"],
        head_dim=d["D"] // d["H"], vocab_size=8, rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=16,
        num_hidden_layers=1, attention_bias=False, mlp_bias=False,
    )  # fmt: skip
    config._attn_implementation = "eager"
    layer = LlamaDecoderLayer(config, layer_idx=0).double().eval()
    g = torch.Generator().manual_seed(15)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if name.endswith("layernorm.weight"):  # a gain: around 1, not exactly 1, so it is not tested at a no-op
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:  # (out, in): entries of variance 1 / in, so every part moves the output
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / p.shape[1] ** 0.5)
    return config, layer, g


def llama_arrays() -> dict[str, np.ndarray]:
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config, layer, g = _llama_layer()
    B, L, D = LLAMA["B"], LLAMA["L"], LLAMA["D"]
    x = torch.randn(B, L, D, generator=g, dtype=torch.float64)
    positions = torch.arange(L)[None]
    cos, sin = LlamaRotaryEmbedding(config)(x, positions)
    causal = torch.full((L, L), float("-inf"), dtype=torch.float64).triu(1)[None, None]  # additive, (1, 1, L, L)
    with torch.no_grad():
        y = layer(x, attention_mask=causal, position_ids=positions, position_embeddings=(cos, sin))
    y = y[0] if isinstance(y, tuple) else y
    out = {f"llama.{k}": v.numpy() for k, v in layer.state_dict().items()}
    return out | {"llama_x": x.numpy(), "llama_y": y.numpy()}


def lora_arrays() -> dict[str, np.ndarray]:
    import peft

    from course_lib.modern import ModernLM

    d = LM
    torch.manual_seed(16)
    model = ModernLM(d["V"], d["D"], d["H"], d["LAYERS"], max_len=d["MAX_LEN"], num_kv_heads=d["H_KV"], d_ff=d["F"])
    model = model.double().eval()
    base = {f"lm.{k}": v.detach().clone().numpy() for k, v in model.state_dict().items()}
    config = peft.LoraConfig(r=RANK, lora_alpha=ALPHA, target_modules=["w_q", "w_v"], lora_dropout=0.0)
    model = peft.inject_adapter_in_model(config, model)
    g = torch.Generator().manual_seed(17)
    adapters = {}
    with torch.no_grad():
        for name, module in model.named_modules():
            if hasattr(module, "lora_B") and isinstance(module.lora_B, torch.nn.ModuleDict):
                b = module.lora_B["default"].weight
                b.copy_(torch.randn(b.shape, generator=g, dtype=torch.float64) * 0.5)
                adapters[f"lora.{name}.A"] = module.lora_A["default"].weight.detach().clone().numpy()
                adapters[f"lora.{name}.B"] = b.detach().clone().numpy()
    tokens = torch.randint(0, d["V"], (3, 10), generator=g)
    with torch.no_grad():
        logits = model(tokens)
    return base | adapters | {"lora_tokens": tokens.numpy(), "lora_logits": logits.numpy()}


def reference() -> dict[str, np.ndarray]:
    """Every array of the file, computed now with the installed ``transformers`` and ``peft``."""
    return llama_arrays() | lora_arrays()


def write_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """An ``.npz`` that ``np.load`` reads, with fixed timestamps and order: the same arrays give the same bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(name + ".npy", date_time=(2026, 12, 1, 0, 0, 0))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            zf.writestr(info, buffer.getvalue(), compresslevel=9)


def write_run(
    out: str, model, losses: list[float], held_out: tuple[str, float], config: list[int], start: float,
    extra: dict[str, np.ndarray] | None = None,
) -> None:  # fmt: skip
    """A trained model's shipped file (tools/train_sorter.py, tools/train_translator.py): its weights as ``w.<name>``,
    the training losses, the held-out loss under its name (``test_loss``, ``val_loss``), the settings and any ``extra``
    arrays, written by :func:`write_npz`; prints the parameters, the losses, the CPU seconds since ``start`` and the
    file's sha256."""
    import hashlib
    import time

    name, loss = held_out
    arrays = {f"w.{k}": v.detach().numpy() for k, v in model.state_dict().items()}
    arrays |= {
        "loss": np.array(losses, dtype=np.float32),
        name: np.array([loss], dtype=np.float32),
        "config": np.array(config, dtype=np.int64),
    }
    arrays |= extra or {}
    write_npz(out, arrays)
    data_bytes = open(out, "rb").read()
    words = {"test_loss": "test loss", "val_loss": "validation loss"}.get(name, name)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters; loss {losses[0]:.3f} -> "
          f"{sum(losses[-10:]) / 10:.4f} (last 10); {words} {loss:.4f}")  # fmt: skip
    print(f"{time.process_time() - start:.1f} s of CPU; wrote {out}: {len(data_bytes):,} bytes, sha256 "
          f"{hashlib.sha256(data_bytes).hexdigest()}")  # fmt: skip


def main() -> None:
    import peft
    import transformers

    out = sys.argv[1]
    write_npz(out, reference())
    data = open(out, "rb").read()
    print(f"transformers {transformers.__version__}, peft {peft.__version__}, torch {torch.__version__}")
    print(f"wrote {out}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
