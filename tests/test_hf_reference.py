"""data/hf_reference.npz (notebook 15's check against Hugging Face's Llama layer and PEFT's LoRA): the shipped file is
what tools/make_hf_reference.py computes now with live transformers and peft (test dependencies: the dev extra), and
course_lib's block and LoRA reproduce it."""

from __future__ import annotations

import hashlib
import shutil

import pytest
import torch

from course_lib.corpus import ARRAYS_SHA256, load_arrays
from course_lib.data import DataFileError
from course_lib.paths import DATA_DIR, ROOT

# HF's RMSNorm and its RoPE's cos and sin round to float32 (unit roundoff 2**-24) inside a float64 run: a transformers
# release that orders a float64 sum differently may flip such a rounding, so outputs are compared within 200 of them
# (as tests/test_modern.py's HF_TOL). Weights, inputs and tokens come from seeded generators: compared exactly.
HF_TOL = dict(rtol=200 * 2**-24, atol=200 * 2**-24)
# PEFT's LoRA computes in float64 throughout: a different order of sums moves the logits by a few float64 roundings.
F64_TOL = dict(rtol=1e-10, atol=1e-10)


def test_the_shipped_file_has_its_checksum_and_is_listed():
    digest = hashlib.sha256((DATA_DIR / "hf_reference.npz").read_bytes()).hexdigest()
    assert digest == ARRAYS_SHA256["hf_reference.npz"]
    assert digest in (ROOT / "data" / "SOURCES.md").read_text(encoding="utf-8")


def test_the_shipped_file_is_what_transformers_and_peft_compute_now():
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    from tools.make_hf_reference import reference

    shipped, now = load_arrays("hf_reference.npz"), reference()
    assert sorted(shipped) == sorted(now)
    for name, value in now.items():
        tol = HF_TOL if name == "llama_y" else F64_TOL if name == "lora_logits" else dict(rtol=0, atol=0)
        torch.testing.assert_close(shipped[name], torch.from_numpy(value), **tol, msg=name)


def test_course_lib_reproduces_the_shipped_outputs():
    from course_lib.lora import LoRALinear, add_lora
    from course_lib.modern import ModernDecoderBlock, ModernLM, load_llama_layer

    ref = load_arrays("hf_reference.npz")
    llama = {k.removeprefix("llama."): v for k, v in ref.items() if k.startswith("llama.")}
    block = load_llama_layer(ModernDecoderBlock(32, 4, 2).double().eval(), llama)
    with torch.no_grad():
        torch.testing.assert_close(block(ref["llama_x"]), ref["llama_y"], **HF_TOL)
    lm = ModernLM(30, 16, 2, 2, max_len=12, num_kv_heads=1, d_ff=24).double().eval()
    lm.load_state_dict({k.removeprefix("lm."): v for k, v in ref.items() if k.startswith("lm.")})
    add_lora(lm, rank=4, alpha=8)
    with torch.no_grad():
        for name, module in lm.named_modules():
            if isinstance(module, LoRALinear):
                module.lora_A.copy_(ref[f"lora.{name}.A"])
                module.lora_B.copy_(ref[f"lora.{name}.B"])
        torch.testing.assert_close(lm(ref["lora_tokens"]), ref["lora_logits"], **F64_TOL)


def test_load_arrays_refuses_other_names_and_altered_files(tmp_path):
    with pytest.raises(ValueError, match="hf_reference.npz"):
        load_arrays("digits.npz")
    with pytest.raises(FileNotFoundError, match="array file"):
        load_arrays("hf_reference.npz", tmp_path / "missing.npz")
    copy = tmp_path / "hf_reference.npz"
    shutil.copy(DATA_DIR / "hf_reference.npz", copy)
    with open(copy, "ab") as f:
        f.write(b"\0")
    with pytest.raises(DataFileError, match="SHA-256"):
        load_arrays("hf_reference.npz", copy)
