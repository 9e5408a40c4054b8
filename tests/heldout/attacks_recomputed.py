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
- r3_a_copy: the calls for the record as r2's; the tokens from a copy of the model whose recorded forward is deleted.

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
}

# The last commit whose notebook 12 has exercise 3's check as it was: the model's calls recorded, not what they computed
BEFORE_12_EXERCISE_3_WORK = "ea0239e"
