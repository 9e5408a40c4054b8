"""Held-out answers to notebook 12's exercise 3 (``greedy_with_cache``) that a red team handed in (issue 44, 3 of 3
scored, unflagged): each calls the model as the check records it, the prompt once and then one token per step with a
``KVCache``, and takes its tokens from calls the record did not see, which recompute the whole prefix at every step.
Exercise 3's check recorded the calls of ``model.forward`` only (an attribute of the instance, which
``type(model).forward`` passes by); it now also counts, through a hook on every layer's call, the positions the token
embeddings looked up and the linear layers computed, so each fails, saying that it recomputed what the cache holds:

- r1_throwaway_caches: the calls for the record each with a new, empty cache; the tokens from
  ``type(model).forward(model, prefix)`` (the red team's);
- r2_one_cache_for_show: the calls for the record with one cache that they fill as an honest answer does; the tokens
  from ``model._forward``, the unchecked inner forward;
- r3_a_copy: the calls for the record as r2's; the tokens from a copy of the model whose recorded forward is deleted;
- r4_by_hand (the lead's, after the red team's): the calls for the record with one cache, fed zeros; the tokens from
  the decoder's arithmetic written out with the model's weights (``F.linear``, ``F.layer_norm``), which calls no layer
  and so escapes the count too. The check now also compares the tokens fed with the prompt and the tokens chosen: it
  fails, saying that it fed other tokens (BEFORE_12_EXERCISE_3_TOKENS: the last commit whose check it passes, hidden
  tests included). With the right tokens fed, the calls are an honest answer's, whatever else it computes.

Not cheats the reading can see (no internals, nothing of the check's touched): wrong answers, failed by the check
(tests/heldout/test_third_lecturer.py in this process; tests/test_grading.py with nbgrader, unflagged).
"""

RECOMPUTED_12_EXERCISE_3 = {
    "r1_throwaway_caches": """
@torch.no_grad()
def greedy_with_cache(model, prompt, N):
    seq, new = prompt, []
    model(prompt, cache=cl.KVCache(model.num_layers))  # for the record: the prompt, with a cache
    for i in range(N):
        token = type(model).forward(model, seq)[:, -1].argmax(dim=-1, keepdim=True)  # the whole prefix again
        new.append(token)
        seq = torch.cat([seq, token], dim=1)
        if i < N - 1:
            model(token, cache=cl.KVCache(model.num_layers))  # for the record: one token, with a cache
    return torch.cat(new, dim=1)
""",
    "r2_one_cache_for_show": """
@torch.no_grad()
def greedy_with_cache(model, prompt, N):
    cache, seq, new = cl.KVCache(model.num_layers), prompt, []
    model(prompt, cache=cache)
    for i in range(N):
        logits, _ = model._forward(seq, None, None)  # the whole prefix again
        token = logits[:, -1].argmax(dim=-1, keepdim=True)
        new.append(token)
        seq = torch.cat([seq, token], dim=1)
        if i < N - 1:
            model(token, cache=cache)
    return torch.cat(new, dim=1)
""",
    "r3_a_copy": """
import copy


@torch.no_grad()
def greedy_with_cache(model, prompt, N):
    twin = copy.deepcopy(model)
    try:
        del twin.forward  # a forward set on the instance (a recorder) goes with the copy
    except AttributeError:
        pass
    cache, seq, new = cl.KVCache(model.num_layers), prompt, []
    model(prompt, cache=cache)
    for i in range(N):
        token = twin(seq)[:, -1].argmax(dim=-1, keepdim=True)  # the whole prefix again
        new.append(token)
        seq = torch.cat([seq, token], dim=1)
        if i < N - 1:
            model(token, cache=cache)
    return torch.cat(new, dim=1)
""",
    "r4_by_hand": """
import math

import torch.nn.functional as F


def _by_hand(model, seq):  # the decoder's arithmetic with the model's weights: no layer of it is called
    L = seq.shape[1]
    x = model.token_embedding.weight[seq]
    if model.position_embedding is not None:
        x = x + model.position_embedding.weight[:L]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    for block in model.blocks:
        a = block.self_attn
        B, H, H_kv, Dk = x.shape[0], a.num_heads, a.num_kv_heads, a.d_head
        h = F.layer_norm(x, x.shape[-1:], block.norm1.weight, block.norm1.bias, block.norm1.eps)
        q = F.linear(h, a.w_q.weight, a.w_q.bias).view(B, L, H, Dk).transpose(1, 2)
        k, v = (F.linear(h, w.weight, w.bias).view(B, L, H_kv, Dk).transpose(1, 2) for w in (a.w_k, a.w_v))
        if a.rope:
            q, k = cl.apply_rope(q, base=a.rope_base), cl.apply_rope(k, base=a.rope_base)
        k, v = k.repeat_interleave(H // H_kv, dim=1), v.repeat_interleave(H // H_kv, dim=1)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(Dk)).masked_fill(~causal, float("-inf"))
        out = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, L, H * Dk)
        x = x + F.linear(out, a.w_o.weight, a.w_o.bias)
        h = F.layer_norm(x, x.shape[-1:], block.norm2.weight, block.norm2.bias, block.norm2.eps)
        h = F.gelu(F.linear(h, block.linear1.weight, block.linear1.bias))
        x = x + F.linear(h, block.linear2.weight, block.linear2.bias)
    x = F.layer_norm(x, x.shape[-1:], model.norm.weight, model.norm.bias, model.norm.eps)
    return F.linear(x, model.lm_head.weight)


@torch.no_grad()
def greedy_with_cache(model, prompt, N):
    cache, seq, new = cl.KVCache(model.num_layers), prompt, []
    model(torch.zeros_like(prompt), cache=cache)  # for the record: P tokens with a cache (any tokens)
    for i in range(N):
        token = _by_hand(model, seq)[:, -1].argmax(dim=-1, keepdim=True)  # the whole prefix again, by hand
        new.append(token)
        seq = torch.cat([seq, token], dim=1)
        if i < N - 1:
            model(torch.zeros_like(token), cache=cache)  # for the record: one token with the same cache
    return torch.cat(new, dim=1)
""",
}

# The last commit whose notebook 12 has exercise 3's check as it was: the model's calls recorded, not what they computed
BEFORE_12_EXERCISE_3_WORK = "ea0239e"
# The last commit whose exercise-3 check did not compare the tokens fed with the prompt and the tokens chosen
BEFORE_12_EXERCISE_3_TOKENS = "2f913ee"
