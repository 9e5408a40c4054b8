"""IPython start-up file of the ``jitter`` profile of tools/portability.py (copied into a fresh IPYTHONDIR).

Why: random numbers are computed by vectorised kernels, and a CPU with other kernels draws other last bits. Measured
with torch 2.13 on an AVX2 machine: ``torch.randn`` in float32 under ``ATEN_CPU_CAPABILITY=default`` differs from the
AVX2 draw in 39 % of its entries, by ``k * 2**-23`` with k at most 16 (median 1, 90th percentile 4), whatever the size
of the entry; float64 draws agree. A profile can only lower the instruction set, so an AVX2 machine cannot draw what an
AVX-512 one draws; this file imitates the *effect* instead. Every float32 normal draw moves by ``k * 2**-23`` with k
one of -4, -2, -1, 0, 0, 1, 2, 4 (three quarters of the entries move): ``torch.randn``, ``randn_like``, ``normal`` and
``Tensor.normal_`` (hence ``nn.init.normal_`` and embedding tables). Uniform draws are left alone: ``torch.rand`` and
the default ``nn.Linear`` initialisation came out bit-identical under both kernels.

The nudge is a fixed function of the drawn value (a hash of its bits), not a second random stream: the same seed
still gives the same numbers, so a notebook that redraws with the same seed and checks equality still passes, and
the global random stream is untouched. A notebook whose stored outputs survive this does not depend on the last bits
of its random draws. ``COURSE_JITTER_SALT=N`` (an int, default 0) picks another perturbation of the same size, for
trying an experiment under several.
"""

import functools
import os

import torch

_GOLDEN = 2654435761  # Knuth's multiplicative hash constant
_SALT = int(os.environ.get("COURSE_JITTER_SALT", "0"))  # another salt, another (equally small) perturbation
_STEPS = (-4.0, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 4.0)  # in units of 2**-23, the float32 machine epsilon


def _nudge(t):
    """Move the finite float32 entries of ``t`` by ``k * 2**-23`` (k from a hash of the entry's bits), in place."""
    if not isinstance(t, torch.Tensor) or t.dtype != torch.float32 or t.numel() == 0:
        return t
    with torch.no_grad():
        bits = t.view(torch.int32).to(torch.int64)
        pick = (((bits + _SALT) * _GOLDEN) & 0xFFFFFFFF) >> 29  # 0 .. 7, a fixed function of the value
        steps = torch.tensor(_STEPS, device=t.device)[pick] * torch.finfo(torch.float32).eps
        t.add_(torch.where(torch.isfinite(t), steps, torch.zeros_like(steps)))
    return t


def _wrap(draw):
    @functools.wraps(draw)
    def jittered(*args, **kwargs):
        return _nudge(draw(*args, **kwargs))

    return jittered


for _name in ("randn", "randn_like", "normal"):
    setattr(torch, _name, _wrap(getattr(torch, _name)))
torch.Tensor.normal_ = _wrap(torch.Tensor.normal_)
