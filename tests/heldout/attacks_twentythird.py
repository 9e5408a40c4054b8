"""Held-out attacks: a twenty-third lecturer's trial (2026-12-05, notebooks 05, 08 and 15), answers that scored full
marks unflagged because a library function did the exercise's work and its check blocked other spellings only
(each is ``answer``, written as the trial wrote it):

- 15's ``rms_norm`` by ``torch.rms_norm`` (11 blocked it, 15 did not), and by ``F.layer_norm`` of ``[x, -x]``: its
  mean is zero, so a LayerNorm of it is an RMSNorm of ``x``;
- 05's ``masked_mean`` by ``torch.segment_reduce``, ``F.embedding_bag`` and ``Tensor.index_reduce_(..., "mean")``;
- 15's ``merged_weight`` by a ``LoRALinear``'s forward on the identity: the merged weight, transposed.

Each family is now named once (:mod:`course_lib.classroom.shortcuts`) and blocked by every check of its kind.
"""

TWENTYTHIRD_ATTACKS = {
    "rms_norm: torch.rms_norm": """
def answer(x, weight, eps):
    return torch.rms_norm(x, (x.shape[-1],), weight, eps)
""",
    "rms_norm: F.layer_norm of [x, -x], whose mean is zero": """
def answer(x, weight, eps):
    both = torch.cat([x, -x], dim=-1)
    return F.layer_norm(both, (both.shape[-1],), eps=eps)[..., : x.shape[-1]] * weight
""",
    "masked_mean: torch.segment_reduce over each sequence's real rows": """
def answer(x, lengths):
    B, L, D = x.shape
    rows = torch.cat([x[b, : int(n)] for b, n in enumerate(lengths)])
    return torch.segment_reduce(rows, "mean", lengths=lengths)
""",
    "masked_mean: F.embedding_bag in mean mode": """
def answer(x, lengths):
    B, L, D = x.shape
    index = torch.cat([b * L + torch.arange(int(n)) for b, n in enumerate(lengths)])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    return F.embedding_bag(index, x.reshape(B * L, D), offsets, mode="mean")
""",
    "masked_mean: Tensor.index_reduce_ in mean mode": """
def answer(x, lengths):
    B, L, D = x.shape
    rows = torch.cat([x[b, : int(n)] for b, n in enumerate(lengths)])
    which = torch.cat([torch.full((int(n),), b) for b, n in enumerate(lengths)])
    return torch.zeros(B, D, dtype=x.dtype).index_reduce_(0, which, rows, "mean", include_self=False)
""",
    "merged_weight: a LoRALinear's forward on the identity": """
def answer(weight, lora_A, lora_B, alpha):
    base = nn.Linear(weight.shape[1], weight.shape[0], bias=False, dtype=weight.dtype)
    adapted = cl.LoRALinear(base, rank=lora_A.shape[0], alpha=alpha)
    with torch.no_grad():
        base.weight.copy_(weight), adapted.lora_A.copy_(lora_A), adapted.lora_B.copy_(lora_B)
        return adapted(torch.eye(weight.shape[1], dtype=weight.dtype)).T
""",
}
