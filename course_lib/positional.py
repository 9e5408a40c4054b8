r"""Positional information for attention: sinusoidal encodings, learned position embeddings and RoPE.

Attention by itself is permutation equivariant: shuffle the tokens and the outputs are shuffled the same way.
Every function here gives the model a way to tell positions apart.

Shape legend: ``...`` any leading dimensions (batch ``B``, heads ``H``); ``L`` sequence length (number of
positions); ``D`` width of a vector (``d_model``, or a head's width ``Dk`` for RoPE); ``P`` a number of positions.

The angle of pair ``i`` (dimensions ``2i`` and ``2i + 1``) at position ``pos`` is the same in the sinusoidal
encoding and in RoPE:

.. math::  \phi_{pos, i} = pos \cdot \omega_i, \qquad \omega_i = \text{base}^{-2i/D},
           \qquad i = 0, 1, \dots, \lceil D/2 \rceil - 1

so pair 0 turns fastest (one radian per position) and the last pair slowest (a wavelength of
``2 * pi * base ** ((D - 2) / D)`` positions, about 47,000 for ``D = 64`` and ``base = 10000``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .validate import broadcasts_to, integer, number, tensor

__all__ = [
    "LearnedPositionalEmbedding",
    "apply_rope",
    "rope_rotation_matrix",
    "sinusoidal_encoding",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
]


def sinusoidal_frequencies(
    d_model: int, base: float = 10000.0, *, device: torch.device | str | None = None, dtype: torch.dtype | None = None
) -> Tensor:
    r"""Angular frequencies ``(ceil(D/2),)``: :math:`\omega_i = \text{base}^{-2i/D}`, from 1 down towards ``1/base``."""
    integer("d_model", d_model, minimum=1)
    base = number("base", base, minimum=0, strict_minimum=True)
    return _frequencies(d_model, base, device, torch.float32 if dtype is None else dtype)


def _frequencies(d_model: int, base: float, device: torch.device | str | None, dtype: torch.dtype) -> Tensor:
    """:func:`sinusoidal_frequencies` unchecked."""
    two_i = torch.arange(0, d_model, 2, device=device, dtype=torch.float64)  # 0, 2, 4, ...
    return torch.exp(-math.log(base) * two_i / d_model).to(dtype)


def sinusoidal_encoding(
    num_positions: int,
    d_model: int,
    base: float = 10000.0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> Tensor:
    r"""The fixed sinusoidal position table of Vaswani et al. (2017), shape ``(P, D)`` with ``P = num_positions``.

    Row ``pos`` encodes position ``pos = 0, 1, ..., P - 1``. **Even dimensions hold sines, odd dimensions
    cosines**, of the same angle:

    .. math::  PE_{pos, 2i} = \sin(pos\, \omega_i), \qquad PE_{pos, 2i+1} = \cos(pos\, \omega_i), \qquad
               \omega_i = \text{base}^{-2i/D}

    An odd ``d_model`` is allowed: its last dimension is a sine without a cosine partner. The angles are
    computed in float64 and the table is returned in ``dtype`` (default float32) on ``device``.
    """
    integer("num_positions", num_positions, minimum=1)
    freqs = sinusoidal_frequencies(d_model, base, device=device, dtype=torch.float64)  # (ceil(D/2),)
    pos = torch.arange(num_positions, device=device, dtype=torch.float64)  # (P,)
    angles = pos[:, None] * freqs[None, :]  # (P, ceil(D/2))
    pe = torch.empty(num_positions, d_model, device=device, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)  # dimensions 0, 2, 4, ...
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])  # dimensions 1, 3, 5, ...
    return pe.to(torch.float32 if dtype is None else dtype)


def _block_rotations(angles: Tensor, d_model: int) -> Tensor:
    """Block-diagonal ``(..., D, D)``: block ``i`` is ``[[cos a_i, sin a_i], [-sin a_i, cos a_i]]``; a lone last
    dimension (odd ``D``) gets 1."""
    c, s = torch.cos(angles), torch.sin(angles)  # (..., ceil(D/2))
    m = torch.zeros(*angles.shape[:-1], d_model, d_model, dtype=angles.dtype, device=angles.device)
    even = torch.arange(0, d_model - 1, 2, device=angles.device)  # first dimension of each full pair
    n = len(even)
    m[..., even, even] = c[..., :n]
    m[..., even + 1, even + 1] = c[..., :n]
    m[..., even, even + 1] = s[..., :n]
    m[..., even + 1, even] = -s[..., :n]
    if d_model % 2:
        m[..., -1, -1] = 1.0
    return m


def sinusoidal_shift_matrix(offset: int | float, d_model: int, base: float = 10000.0) -> Tensor:
    r"""The fixed matrix ``M_k`` ``(D, D)`` (float64) with ``PE[pos + k] = PE[pos] @ M_k`` for **every** ``pos``.

    It is block diagonal; the block of pair ``i`` rotates ``(sin, cos)`` by the angle ``k * omega_i``
    (the angle-addition formulas, with row vectors multiplied from the left):

    .. math::  \begin{pmatrix}\sin(a + b) & \cos(a + b)\end{pmatrix} =
               \begin{pmatrix}\sin a & \cos a\end{pmatrix}
               \begin{pmatrix}\cos b & -\sin b \\ \sin b & \cos b\end{pmatrix},
               \qquad a = pos\,\omega_i,\ b = k\,\omega_i

    ``M_k`` depends on the offset ``k`` only, not on ``pos``. ``d_model`` must be even (every sine needs the
    cosine of its pair).
    """
    integer("d_model", d_model, minimum=1)
    if d_model % 2:
        raise ValueError(f"the shift matrix needs (sin, cos) pairs, so d_model must be even, got {d_model}")
    freqs = sinusoidal_frequencies(d_model, base, dtype=torch.float64)
    m = _block_rotations(float(offset) * freqs, d_model)
    return m.transpose(-2, -1)  # [[cos, -sin], [sin, cos]] per block


def rope_rotation_matrix(position: int | float, d_model: int, base: float = 10000.0) -> Tensor:
    """The matrix ``R_m`` ``(D, D)`` (float64) with ``apply_rope(x, positions=[m]) == x @ R_m`` for a row ``x``.

    Block diagonal, one 2-by-2 rotation by ``m * omega_i`` per pair of dimensions; orthogonal, with
    ``R_m @ R_n.T == R_{m - n}``, which is why RoPE scores depend only on the offset ``m - n``.
    """
    integer("d_model", d_model, minimum=1)
    if d_model % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so d_model must be even, got {d_model}")
    freqs = sinusoidal_frequencies(d_model, base, dtype=torch.float64)
    return _block_rotations(float(position) * freqs, d_model)


def apply_rope(x: Tensor, positions: Tensor | None = None, base: float = 10000.0) -> Tensor:
    r"""Rotary position embedding (RoPE, Su et al. 2021) of queries or keys ``x`` ``(..., L, D)``, ``D`` even.

    Pair ``i`` of the vector at position ``m`` (dimensions ``2i`` and ``2i + 1``, the interleaved convention of
    the RoFormer paper) is rotated by the angle ``m * omega_i``:

    .. math::  \begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
               \begin{pmatrix} \cos m\omega_i & -\sin m\omega_i \\ \sin m\omega_i & \cos m\omega_i \end{pmatrix}
               \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}

    Applied to both queries and keys, the score ``rope(q, m) . rope(k, n)`` depends on ``m`` and ``n`` only
    through ``m - n``. Lengths are preserved (each step is a rotation).

    Args:
        x: ``(..., L, D)`` floating tensor.
        positions: the position of each of the ``L`` vectors, shape ``(L,)`` or any shape that broadcasts to
            ``x.shape[:-1]`` (e.g. ``(B, 1, L)`` for per-sequence positions with heads); integer or float.
            Default ``0, 1, ..., L - 1``.
        base: the base of the frequencies ``omega_i = base^(-2i/D)``.

    Returns:
        a new tensor of ``x``'s shape, dtype and device (angles computed in float32, or float64 for float64 ``x``).
    """
    tensor("x", x, floating=True, shape=(..., None, None), layout="(..., L, D)")
    L, D = x.shape[-2], x.shape[-1]
    if D % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so the last dimension D of x must be even, got {D}")
    if positions is None:
        positions = torch.arange(L, device=x.device)
    elif not isinstance(positions, Tensor):
        positions = torch.as_tensor(positions, device=x.device)
    if not broadcasts_to(positions.shape, x.shape[:-1]):
        raise ValueError(
            f"positions of shape {tuple(positions.shape)} do not broadcast to x.shape[:-1] = {tuple(x.shape[:-1])} "
            f"(x has shape {tuple(x.shape)}; expected e.g. ({L},))"
        )
    number("base", base, minimum=0, strict_minimum=True)
    return _rope(x, positions, base)


def _rope(x: Tensor, positions: Tensor, base: float) -> Tensor:
    """:func:`apply_rope` unchecked, ``positions`` given: for layers that checked their input at their edge."""
    D = x.shape[-1]
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    freqs = _frequencies(D, base, x.device, compute)  # (D/2,)
    angles = positions.to(device=x.device, dtype=compute)[..., None] * freqs  # (..., L, D/2)
    cos, sin = torch.cos(angles), torch.sin(angles)
    pairs = x.to(compute).unflatten(-1, (D // 2, 2))  # (..., L, D/2, 2)
    a, b = pairs[..., 0], pairs[..., 1]  # dimensions 2i and 2i + 1
    rotated = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)  # (..., L, D/2, 2)
    return rotated.flatten(-2).to(x.dtype)  # (..., L, D)


class LearnedPositionalEmbedding(nn.Module):
    """A learned vector per position, added to the input: ``x + P[0:L]`` (as in BERT, GPT-2 and ViT).

    The table ``P`` is an ``nn.Embedding(max_len, d_model)`` trained with the rest of the model. It knows only
    positions ``0 .. max_len - 1``: a longer input raises ``ValueError`` — the length limit of learned positions
    (and positions never seen in training keep their random initial vectors).

    Args:
        max_len: number of positions in the table.
        d_model: width ``D``.
        init_std: standard deviation of the normal initialisation of the table. The default 1.0 is that of
            ``nn.Embedding``, so positions start at the scale of the course's token embeddings; GPT-2 and ViT
            use 0.02 for positions *and* tokens.

    Forward:
        ``x`` ``(..., L, D)`` with ``L <= max_len``, optional integer ``positions`` broadcastable to ``(..., L)``
        (default ``0 .. L - 1``) → ``x + P[positions]`` ``(..., L, D)``.
    """

    def __init__(self, max_len: int, d_model: int, *, init_std: float = 1.0):
        super().__init__()
        integer("max_len", max_len, minimum=1)
        integer("d_model", d_model, minimum=1)
        self.max_len, self.d_model = max_len, d_model
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=init_std)

    @property
    def weight(self) -> Tensor:
        """The table ``P`` ``(max_len, D)``."""
        return self.embedding.weight

    def forward(self, x: Tensor, positions: Tensor | None = None) -> Tensor:
        tensor("x", x, shape=(..., None, self.d_model), layout=f"(..., L, d_model={self.d_model})")
        L = x.shape[-2]
        if positions is None:
            if L > self.max_len:
                raise ValueError(
                    f"x has length L={L} but this table holds only max_len={self.max_len} positions "
                    f"(x has shape {tuple(x.shape)})"
                )
            positions = torch.arange(L, device=x.device)
        elif positions.numel() and (int(positions.min()) < 0 or int(positions.max()) >= self.max_len):
            raise ValueError(
                f"positions must lie in [0, max_len={self.max_len}), got values up to {int(positions.max())}"
            )
        return x + self.embedding(positions).to(x.dtype)  # (..., L, D)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"
