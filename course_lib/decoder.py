r"""A decoder-only language model (GPT-style) built from the course's parts.

Each block is pre-LN with *causal* self-attention (:class:`course_lib.grouped_query.GroupedQueryAttention`): the token
at position ``t`` sees positions ``0 .. t`` only, so the model learns to predict token ``t + 1`` at every position at
once and generates one token at a time (:func:`course_lib.generation.generate`, with a
:class:`course_lib.grouped_query.KVCache`).

.. math::  h = x + \operatorname{Attn}(\operatorname{LN}_1(x)), \qquad
           y = h + \operatorname{FFN}(\operatorname{LN}_2(h))

Shape legend: ``B`` batch, ``L`` new tokens in this call, ``T`` positions already in the cache, ``S = T + L`` keys,
``D`` model width, ``H`` query heads, ``F`` feed-forward width, ``V`` vocabulary size.
"""

from __future__ import annotations

from torch import Tensor, nn

from .grouped_query import GroupedQueryAttention, KVCache
from .masks import expand_mask
from .models import TransformerEncoderBlock
from .positional import LearnedPositionalEmbedding
from .validate import choice, flag, instance, integer, probability, shape_of, token_ids

__all__ = ["DecoderBlock", "DecoderLM"]


class DecoderBlock(TransformerEncoderBlock):
    """A pre-LN decoder block: ``x + Attn(LN_1(x))``, then ``h + FFN(LN_2(h))``, the attention causal.

    That is :class:`course_lib.models.TransformerEncoderBlock` with ``norm_first=True`` whose attention ``self_attn``
    is a :class:`GroupedQueryAttention` (causal, with RoPE and a KV cache when asked): the feed-forward network,
    norms, dropouts and activations are the encoder block's. With ``num_kv_heads = num_heads`` and no RoPE it equals
    ``nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0, activation=..., batch_first=True,
    norm_first=True)`` called with a causal mask (tested; the names ``self_attn``, ``linear1``, ``linear2``, ``norm1``,
    ``norm2`` are PyTorch's). Arguments as in :class:`GroupedQueryAttention`, plus ``d_ff`` (default
    ``4 * d_model``), ``dropout`` (on each branch and inside the feed-forward network), ``activation`` (``"gelu"`` as
    GPT-2, or ``"relu"``) and ``layer_norm_eps``.

    Forward ``(x, mask=None, return_weights=False, *, cache=None, layer=0)`` as :class:`GroupedQueryAttention`:
    ``(B, L, D)`` → ``(B, L, D)`` (and the weights ``(B, H, L, S)``).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        *,
        d_ff: int | None = None,
        dropout: float = 0.0,
        activation: str = "gelu",
        rope: bool = False,
        rope_base: float = 10000.0,
        layer_norm_eps: float = 1e-5,
        bias: bool = True,
    ):
        attention = GroupedQueryAttention(d_model, num_heads, num_kv_heads, bias=bias, rope=rope, rope_base=rope_base)
        settings = dict(d_ff=d_ff, dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps, bias=bias)
        super().__init__(d_model, num_heads, norm_first=True, attention=attention, **settings)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        return_weights: bool = False,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """The encoder block's pre-LN forward, the attention causal and fed the cache: ``(B, L, D)`` → ``(B, L, D)``."""
        mask = self.self_attn._check(x, mask, cache, layer)  # the edge: x, the mask and the cache, once
        flag("return_weights", return_weights)
        x, weights = self._forward(x, mask, cache, layer)
        return (x, weights) if return_weights else x

    def _forward(
        self, x: Tensor, mask: Tensor | None, cache: KVCache | None = None, layer: int = 0
    ) -> tuple[Tensor, Tensor]:
        """The arithmetic of :meth:`forward` on checked inputs: ``(B, L, D)`` and the weights ``(B, H, L, S)``."""
        attended, weights = self.self_attn._forward(self.norm1(x), mask, cache, layer)  # (B, L, D), (B, H, L, S)
        x = x + self.dropout1(attended)
        x = x + self.dropout2(self.feed_forward(self.norm2(x)))  # (B, L, D)
        return x, weights


class DecoderLM(nn.Module):
    """A decoder-only language model: token embedding, positions, ``num_layers`` :class:`DecoderBlock` s, a final
    LayerNorm and a linear head to ``V`` logits (the layout of GPT-2: Radford et al.,
    "Language Models are Unsupervised Multitask Learners", OpenAI, 2019).

    Args:
        vocab_size: ``V``.
        d_model, num_heads, num_kv_heads, d_ff, dropout, activation: as in :class:`DecoderBlock`.
        num_layers: number of blocks.
        max_len: the context: the most positions the model reads, cache included (``ValueError`` beyond).
        positions: ``"learned"`` (a :class:`course_lib.positional.LearnedPositionalEmbedding` added to the token
            embeddings) or ``"rope"`` (queries and keys rotated in every layer, nothing added).
        tie_embeddings: the head reuses the token embedding matrix (``lm_head.weight is token_embedding.weight``;
            Press & Wolf, "Using the Output Embedding to Improve Language Models", EACL 2017).
        rope_base: the base of the RoPE frequencies.

    Forward ``(tokens, mask=None, return_weights=False, *, cache=None)``:
        ``tokens`` integer ``(B, L)`` → logits ``(B, L, V)``: row ``t`` scores the token that follows position
        ``t``. With a :class:`KVCache` (``KVCache(model.num_layers)``) the tokens continue the ``T`` cached ones and
        sit at positions ``T .. T + L - 1``: feeding a sequence in pieces gives the logits of feeding it whole.
        ``mask`` as in :class:`GroupedQueryAttention`; ``return_weights`` adds a list of ``(B, H, L, S)`` per layer.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        num_heads: int,
        num_layers: int,
        *,
        max_len: int,
        num_kv_heads: int | None = None,
        d_ff: int | None = None,
        positions: str = "learned",
        tie_embeddings: bool = False,
        dropout: float = 0.0,
        activation: str = "gelu",
        rope_base: float = 10000.0,
    ):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_layers", num_layers)):
            integer(name, value, minimum=1)
        self.max_len = integer("max_len", max_len, minimum=1)
        self.positions = choice("positions", positions, ("learned", "rope"))
        self.vocab_size, self.num_layers = vocab_size, num_layers
        self.tie_embeddings = flag("tie_embeddings", tie_embeddings)
        self.token_embedding = nn.Embedding(vocab_size, d_model)  # (V, D)
        self.position_embedding = LearnedPositionalEmbedding(max_len, d_model) if positions == "learned" else None
        self.dropout = nn.Dropout(probability("dropout", dropout))
        block = dict(d_ff=d_ff, dropout=dropout, activation=activation, rope=positions == "rope", rope_base=rope_base)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, num_heads, num_kv_heads, **block) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)  # pre-LN: the residual stream is normalised once more at the end
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)  # (V, D) weight: logits = h W^T
        if self.tie_embeddings:
            self.lm_head.weight = self.token_embedding.weight  # one parameter, used twice

    def forward(
        self, tokens: Tensor, mask: Tensor | None = None, return_weights: bool = False, *, cache: KVCache | None = None
    ) -> Tensor | tuple[Tensor, list[Tensor]]:
        token_ids("tokens", tokens, self.vocab_size)
        if (
            instance("cache", cache, KVCache, "a KVCache", optional=True) is not None
            and cache.num_layers != self.num_layers
        ):
            raise ValueError(f"cache must have num_layers={self.num_layers} like the model, got {cache.num_layers}")
        (B, L), past = tokens.shape, (0 if cache is None else cache.length)
        if past + L > self.max_len:
            raise ValueError(
                f"tokens of shape {shape_of(tokens)} after {past} cached positions need {past + L} positions, "
                f"more than the context max_len={self.max_len}"
            )
        if mask is not None:  # checked once for every block: each has num_heads heads
            mask = expand_mask(mask, (B, self.blocks[0].num_heads, L, past + L), heads=True)
        flag("return_weights", return_weights)
        logits, all_weights = self._forward(tokens, mask, cache)
        return (logits, all_weights) if return_weights else logits

    def _forward(self, tokens: Tensor, mask: Tensor | None, cache: KVCache | None) -> tuple[Tensor, list[Tensor]]:
        """The arithmetic of :meth:`forward` on checked inputs: logits ``(B, L, V)`` and one ``(B, H, L, S)`` per
        block. :func:`course_lib.generation.generate` calls it for every new token."""
        past, L = (0 if cache is None else cache._length(0)), tokens.shape[1]
        x = self.token_embedding(tokens)  # (B, L, D)
        if self.position_embedding is not None:  # positions T .. T + L - 1 (forward checked that they exist)
            x = x + self.position_embedding.weight[past : past + L].to(x.dtype)
        x = self.dropout(x)
        all_weights = []
        for i, block in enumerate(self.blocks):
            x, weights = block._forward(x, mask, cache, i)  # (B, L, D), (B, H, L, S)
            all_weights.append(weights)
        return self.lm_head(self.norm(x)), all_weights  # (B, L, V)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, positions={self.positions!r}, tie_embeddings={self.tie_embeddings}"
