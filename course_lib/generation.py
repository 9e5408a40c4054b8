r"""Generating text with a decoder-only model: greedy decoding, sampling with a temperature, top-k and top-p filters.

Autoregressive generation feeds the model its own output: from the logits of the last position choose the next
token, append it, repeat. Choosing is either **greedy** (the most likely token, deterministic) or **sampling** from

.. math::  p_i = \operatorname{softmax}(z / \tau)_i

with temperature :math:`\tau > 0` (below 1 sharper, above 1 flatter), optionally restricted first to the ``k`` most
likely tokens (top-k; Fan et al., "Hierarchical Neural Story Generation", ACL 2018) or to the smallest set of tokens
whose probability reaches ``p`` (top-p or nucleus sampling; Holtzman et al., "The Curious Case of Neural Text
Degeneration", ICLR 2020). A filter sets the logits it removes to ``-inf``, so their probability is exactly 0.

Shape legend: ``B`` batch, ``P`` prompt length, ``N`` new tokens, ``V`` vocabulary size.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from .decoder import DecoderLM
from .grouped_query import KVCache
from .validate import compute_dtype, flag, instance, integer, number, shape_of, tensor, token_ids

__all__ = ["generate", "sample_next_token", "top_k_filter", "top_p_filter"]


def _check_logits(logits: object) -> Tensor:
    if tensor("logits", logits, min_dim=1, floating=True, layout="(..., V)").shape[-1] == 0:
        raise ValueError(f"logits must have at least one entry along V, got shape {shape_of(logits)}")
    return logits


def top_k_filter(logits: Tensor, k: int) -> Tensor:
    """Keep the ``k`` largest logits of each row ``(..., V)``, set the others to ``-inf``; a new tensor.

    Ties with the ``k``-th largest value are all kept (so a row may keep more than ``k``); ``k >= V`` keeps every
    logit.
    """
    _check_logits(logits)
    return _top_k(logits, integer("k", k, minimum=1))


def _top_k(logits: Tensor, k: int) -> Tensor:
    """:func:`top_k_filter` unchecked."""
    k = min(k, logits.shape[-1])
    kth_largest = torch.topk(logits, k, dim=-1).values[..., -1:]  # (..., 1)
    return logits.masked_fill(logits < kth_largest, float("-inf"))


def top_p_filter(logits: Tensor, p: float) -> Tensor:
    """Keep the smallest set of most likely tokens whose total probability is at least ``p``; ``-inf`` elsewhere.

    Sort the probabilities ``softmax(logits)`` in decreasing order and keep a token while the probability of the
    tokens before it is still below ``p``: the most likely token is always kept, and ``p = 1`` keeps every token.
    ``logits`` ``(..., V)``, ``0 < p <= 1``; returns a new tensor of the same shape and dtype.
    """
    _check_logits(logits)
    return _top_p(logits, number("p", p, minimum=0.0, strict_minimum=True, maximum=1.0))


def _top_p(logits: Tensor, p: float) -> Tensor:
    """:func:`top_p_filter` unchecked."""
    if p == 1.0:  # every token; rounding in the cumulative sum could otherwise drop the least likely one
        return logits.clone()
    probs = torch.softmax(logits.to(compute_dtype(logits.dtype)), dim=-1)  # (..., V)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)  # (..., V), most likely first
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs  # probability of the tokens ranked before each
    keep_sorted = before < p  # (..., V), True for the first token at least
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # back to vocabulary order
    return logits.masked_fill(~keep, float("-inf"))


def _check_sampling(
    temperature: float | None, top_k: int | None, top_p: float | None, generator: torch.Generator | None
) -> None:
    if temperature is not None:
        number("temperature", temperature, minimum=0.0, strict_minimum=True)
    if top_k is not None:
        integer("top_k", top_k, minimum=1)
    if top_p is not None:
        number("top_p", top_p, minimum=0.0, strict_minimum=True, maximum=1.0)
    if temperature is None and (top_k is not None or top_p is not None):
        name = "top_k" if top_k is not None else "top_p"
        raise ValueError(f"{name} filters sampling, but temperature=None means greedy: give a temperature too")
    instance("generator", generator, torch.Generator, "a torch.Generator", optional=True)


def sample_next_token(
    logits: Tensor,
    *,
    temperature: float | None = None,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Choose one token per row of ``logits`` ``(B, V)``; returns ids ``(B,)`` (int64).

    ``temperature=None``: greedy, the argmax (the first one on ties). A float ``> 0``: sample from
    ``softmax(filtered / temperature)`` with ``torch.multinomial(..., generator=generator)``, after
    :func:`top_k_filter` and then :func:`top_p_filter` when ``top_k`` / ``top_p`` are given. The probabilities are
    computed in float32 for half-precision logits; ``generator`` must live on the logits' device.
    """
    _check_sampling(temperature, top_k, top_p, generator)
    if _check_logits(logits).dim() != 2:
        raise ValueError(f"logits must have shape (B, V), got {shape_of(logits)}")
    return _choose(logits, temperature, top_k, top_p, generator)


def _choose(logits: Tensor, temperature, top_k, top_p, generator) -> Tensor:
    """:func:`sample_next_token` unchecked: what :func:`generate` calls at every step."""
    if temperature is None:
        return logits.argmax(dim=-1)  # (B,)
    z = logits.to(compute_dtype(logits.dtype)) / temperature  # (B, V)
    if top_k is not None:
        z = _top_k(z, top_k)
    if top_p is not None:
        z = _top_p(z, top_p)
    probs = torch.softmax(z, dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]  # (B,)


@torch.no_grad()
def generate(
    model: DecoderLM,
    prompt: Tensor,
    max_new_tokens: int,
    *,
    temperature: float | None = None,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    return_logits: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Continue every prompt of ``prompt`` ``(B, P)`` by ``max_new_tokens`` tokens chosen by :func:`sample_next_token`.

    Returns the **new tokens only**, ``(B, N)`` (``torch.cat((prompt, new), dim=1)`` is the whole text), and with
    ``return_logits`` also the model's logits ``(B, N, V)`` from which each new token was chosen (before temperature
    and filters).

    ``use_cache=True`` feeds the prompt once and then one token per step, reusing every earlier key and value
    (:class:`KVCache`); ``use_cache=False`` recomputes the whole sequence at every step. Both give the same tokens
    and logits (up to rounding; tested). The context is a hard limit, with or without the cache: every token the
    model reads needs a position, so ``P + N - 1 <= model.max_len`` (the last token is returned, never read), else
    ``ValueError`` — no sliding window. The model is used in whatever mode it is in: call ``model.eval()`` first if
    it has dropout. Tokens and logits are on the model's device; the dtype of the logits is the model's.
    """
    instance("model", model, DecoderLM, "a course_lib DecoderLM")
    token_ids("prompt", prompt, model.vocab_size)
    integer("max_new_tokens", max_new_tokens, minimum=0)
    _check_sampling(temperature, top_k, top_p, generator)
    flag("use_cache", use_cache)
    flag("return_logits", return_logits)
    B, P = prompt.shape
    if prompt.device != model.lm_head.weight.device:
        raise ValueError(f"prompt is on {prompt.device} but the model on {model.lm_head.weight.device}: move one")
    if P > model.max_len:
        raise ValueError(f"prompt of length P={P} is longer than the context max_len={model.max_len}")
    if P + max_new_tokens - 1 > model.max_len:
        raise ValueError(
            f"max_new_tokens={max_new_tokens} after a prompt of P={P} tokens needs P + max_new_tokens - 1 = "
            f"{P + max_new_tokens - 1} positions, more than the context max_len={model.max_len}"
        )
    cache = KVCache(model.num_layers) if use_cache else None
    sequence, new_tokens, step_logits = prompt, [], []
    # Everything is checked above, and the model's own tokens are valid ids: its unchecked forward from here on.
    logits = model._forward(prompt, None, cache)[0][:, -1]  # (B, V): what follows the prompt
    for step in range(max_new_tokens):
        token = _choose(logits, temperature, top_k, top_p, generator)  # (B,)
        new_tokens.append(token)
        step_logits.append(logits)
        if step == max_new_tokens - 1:
            break  # the last token is returned, never read
        if use_cache:  # only the new token; its keys and values join the cache
            logits = model._forward(token[:, None], None, cache)[0][:, -1]
        else:  # the whole sequence again
            sequence = torch.cat((sequence, token[:, None]), dim=1)  # (B, P + step + 1)
            logits = model._forward(sequence, None, None)[0][:, -1]
    empty = torch.empty(B, 0, dtype=torch.long, device=prompt.device)
    new = torch.stack(new_tokens, dim=1) if new_tokens else empty  # (B, N) int64
    if not return_logits:
        return new
    logits = torch.stack(step_logits, dim=1) if step_logits else logits.new_empty(B, 0, model.vocab_size)
    return new, logits  # (B, N), (B, N, V)


# ---------------------------------------------------------------- searching for the most likely output (notebook 14)
# ``next_log_probs(tokens (N, t), source (N,)) -> (N, V)``: log-probabilities of the next token after each prefix,
# row i read against source ``source[i]`` (e.g. :meth:`course_lib.seq2seq.Translator.step_function`). Every output
# has ``max_len`` tokens after the start token; after the first ``eos`` every token is ``eos`` again and adds 0 to
# the score, the sum of the log-probabilities of the tokens up to and including the first ``eos``.

__all__ += ["beam_search", "exhaustive_search", "greedy_search"]


def _check_search(next_log_probs: object, batch_size: int, bos: int, eos: int, max_len: int) -> None:
    instance("next_log_probs", next_log_probs, Callable, "a function (tokens, source) -> log-probabilities")
    for name, value, low in (("batch_size", batch_size, 1), ("bos", bos, 0), ("eos", eos, 0), ("max_len", max_len, 1)):
        integer(name, value, minimum=low)


def _log_probs(logp: object, rows: int, eos: int, vocab_size: int | None = None) -> Tensor:
    """What ``next_log_probs`` returned for ``rows`` prefixes, checked: log-probabilities ``(rows, V)`` with
    ``V > eos`` (and ``V = vocab_size`` when given), not probabilities, logits or token ids."""
    name, width = "next_log_probs's output", "V" if vocab_size is None else f"V={vocab_size}"
    tensor(name, logp, floating=True, shape=(rows, vocab_size), layout=f"(N={rows}, {width}), a row per prefix")
    if eos >= logp.shape[1]:
        raise ValueError(f"eos={eos} must be a token id below V={logp.shape[1]}, the width of {name}")
    # log_softmax rounds each entry y_i to a relative eps of its dtype: the row's logsumexp moves by at most about
    # eps * (entropy + 2 ln V) <= 3 eps ln V (entropy <= ln V); 8 eps (1 + ln V) leaves a margin of two.
    tol = 8 * torch.finfo(logp.dtype).eps * (1 + math.log(logp.shape[1]))
    largest, sums = logp.max(), torch.logsumexp(logp.double(), dim=-1)  # (), (N,)
    if rows and not (float(largest) <= tol and float(sums.abs().max()) <= tol):  # `not <=`: NaN fails too
        raise ValueError(
            f"{name} must hold log-probabilities (entries <= 0, each row's exp summing to 1, as torch.log_softmax("
            f"logits, dim=-1) gives), got a largest entry {float(largest):.4g} and rows whose logsumexp lies in "
            f"[{float(sums.min()):.4g}, {float(sums.max()):.4g}]"
        )
    return logp


def greedy_search(next_log_probs, batch_size: int, *, bos: int, eos: int, max_len: int, device=None):
    """The most likely next token at every step: ``(tokens (B, max_len), scores (B,))`` with ``B = batch_size``."""
    _check_search(next_log_probs, batch_size, bos, eos, max_len)
    source = torch.arange(batch_size, device=device)
    tokens = torch.full((batch_size, 1), bos, device=device)  # (B, 1): the start token
    scores = torch.zeros(batch_size, device=device)
    done = torch.zeros(batch_size, dtype=torch.bool, device=device)
    for _ in range(max_len):
        logp = _log_probs(next_log_probs(tokens, source), batch_size, eos)  # (B, V)
        best, token = logp.max(dim=-1)  # (B,), (B,)
        token = torch.where(done, eos, token)
        scores = scores + torch.where(done, 0.0, best)
        done = done | (token == eos)
        tokens = torch.cat((tokens, token[:, None]), dim=1)
    return tokens[:, 1:], scores


def beam_search(next_log_probs, batch_size: int, *, bos: int, eos: int, max_len: int, beam_width: int, device=None):
    """Keep the ``beam_width`` most likely prefixes at every step; return the best at the end.

    At each step every kept prefix is extended by every token (a finished one only by ``eos``, at no cost), and the
    ``b = beam_width`` (notebook 14's beam width) extensions with the highest total log-probability are kept. ``b = 1``
    is greedy decoding; a ``b`` at least the number of possible outputs keeps them all and finds the most likely one
    (:func:`exhaustive_search`); any ``b`` in between may miss it. Returns ``(tokens (B, max_len), scores (B,))``.
    """
    _check_search(next_log_probs, batch_size, bos, eos, max_len)
    width = integer("beam_width", beam_width, minimum=1)
    B = batch_size
    source = torch.arange(B, device=device).repeat_interleave(width)  # (B*width,): beam s*width + k reads source s
    tokens = torch.full((B * width, 1), bos, device=device)
    scores = torch.full((B, width), float("-inf"), device=device)
    scores[:, 0] = 0.0  # one live beam at the start: the width copies of the start token must not compete
    done = torch.zeros(B * width, dtype=torch.bool, device=device)
    for _ in range(max_len):
        logp = _log_probs(next_log_probs(tokens, source), B * width, eos).float()  # (B*width, V)
        V = logp.shape[-1]
        finished = torch.full_like(logp, float("-inf"))
        finished[:, eos] = 0.0  # a finished beam continues with eos only, at no cost
        logp = torch.where(done[:, None], finished, logp)
        candidates = (scores.reshape(B * width, 1) + logp).reshape(B, width * V)  # (B, width*V): every extension
        scores, index = candidates.topk(width, dim=1)  # (B, width) each
        rows = (torch.arange(B, device=device)[:, None] * width + index // V).reshape(-1)  # (B*width,): parents
        token = (index % V).reshape(-1)  # (B*width,)
        tokens = torch.cat((tokens[rows], token[:, None]), dim=1)
        done = done[rows] | (token == eos)
    best = scores.argmax(dim=1)  # (B,)
    picked = tokens.view(B, width, -1)[torch.arange(B, device=device), best]  # (B, 1 + max_len)
    return picked[:, 1:], scores.gather(1, best[:, None])[:, 0]


def exhaustive_search(next_log_probs, vocab_size: int, *, bos: int, eos: int, max_len: int, device=None):
    """The most likely output for one source (``source`` 0), found by scoring every possible output.

    The reference for :func:`beam_search`: it lists all ``vocab_size ** max_len`` token sequences, makes each token
    after the first ``eos`` an ``eos``, drops the duplicates, scores each one with ``max_len`` calls that read all of
    them at once (teacher forcing), and sums the log-probabilities. Returns ``(tokens (max_len,), score)``.
    ValueError above a million sequences.
    """
    _check_search(next_log_probs, 1, bos, eos, max_len)
    integer("vocab_size", vocab_size, minimum=1)
    if eos >= vocab_size:
        raise ValueError(f"eos={eos} must be a token id below vocab_size={vocab_size}")
    if vocab_size**max_len > 1_000_000:
        raise ValueError(f"vocab_size ** max_len = {vocab_size}**{max_len} sequences is too many to list (> 10^6)")
    grid = torch.cartesian_prod(*[torch.arange(vocab_size, device=device)] * max_len).reshape(-1, max_len)  # (N, T)
    ended = torch.cumsum((grid == eos).long(), dim=1) - (grid == eos).long() > 0  # (N, T): after the first eos
    outputs = torch.unique(grid.masked_fill(ended, eos), dim=0)  # (M, T)
    counted = ~(torch.cumsum((outputs == eos).long(), dim=1) - (outputs == eos).long() > 0)  # up to the first eos
    inputs = torch.cat((torch.full((len(outputs), 1), bos, device=device), outputs), dim=1)  # (M, 1 + T)
    source = torch.zeros(len(outputs), dtype=torch.long, device=device)
    logp = torch.stack([_log_probs(next_log_probs(inputs[:, : t + 1], source), len(outputs), eos, vocab_size)
                        .float().gather(1, outputs[:, t : t + 1])[:, 0] for t in range(max_len)], dim=1)  # fmt: skip
    totals = torch.where(counted, logp, 0.0).sum(dim=1)  # (M,): logp (M, T) holds log p(y_t | y_<t)
    best = int(totals.argmax())
    return outputs[best], totals[best]
