"""Searches on a batch of different sources, and the translator's step function, with tests that a small slip fails
(issue 43: mutation testing found such slips passing): a beam that reads another source's rows, finished flags that
do not follow their parent beams, a decoder whose self-attention sees later target tokens, a step whose rows read
another source's padding mask.

The searches run on a table model whose next-token log-probabilities depend on the source, the position and the
last two tokens, drawn so that each source has its own best output: any row read against the wrong source, or any
prefix glued to the wrong beam's tokens, changes the result. The references are independent: scoring every output
(exhaustive_search, one source at a time) and a score recomputed here from the table.
"""

import pytest
import torch

from course_lib.generation import beam_search, exhaustive_search, greedy_search
from course_lib.seq2seq import Translator

V, BOS, EOS, MAX_LEN, SOURCES = 4, 1, 2, 4, 3


def table_model(seed: int):
    """``(next_log_probs, table)``: log p(next | source, position t, previous token, last token) from a table."""
    logits = torch.randn(SOURCES, MAX_LEN, V, V, V, generator=torch.Generator().manual_seed(seed)) * 2
    logits[..., EOS] += 0.5  # outputs of every length compete
    table = torch.log_softmax(logits, dim=-1)  # (sources, T, V, V, V)

    def next_log_probs(tokens: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1] - 1  # the position of the token to come, 0 .. MAX_LEN - 1
        previous = tokens[:, -2] if t > 0 else tokens[:, -1]
        return table[source, t, previous, tokens[:, -1]]  # (N, V)

    return next_log_probs, table


def only(step, b: int):
    """The step function with every row read against source ``b``: a search of source ``b`` alone."""
    return lambda tokens, source: step(tokens, torch.full_like(source, b))


def score_of(table: torch.Tensor, b: int, output: torch.Tensor) -> torch.Tensor:
    """The sum of log p over the tokens of ``output`` up to and including its first eos, from the table itself."""
    tokens, total = [BOS, BOS], torch.zeros((), dtype=table.dtype)
    for t, token in enumerate(output.tolist()):
        total = total + table[b, t, tokens[-2], tokens[-1], token]
        if token == EOS:
            break
        tokens.append(token)
    return total


def check_outputs(table, outputs, scores):
    """Each row's score is its output's score, and after the first eos every token is eos."""
    for b in range(len(outputs)):
        ended = torch.cumsum((outputs[b] == EOS).long(), 0) - (outputs[b] == EOS).long() > 0
        assert torch.all(outputs[b][ended] == EOS), f"source {b}: a token after eos in {outputs[b].tolist()}"
        torch.testing.assert_close(scores[b], score_of(table, b, outputs[b]), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_a_wide_beam_on_a_batch_finds_every_sources_own_best_output(seed):
    step, table = table_model(seed)
    outputs, scores = beam_search(step, SOURCES, bos=BOS, eos=EOS, max_len=MAX_LEN, beam_width=V**MAX_LEN)
    best = [exhaustive_search(only(step, b), V, bos=BOS, eos=EOS, max_len=MAX_LEN) for b in range(SOURCES)]
    assert len({tuple(tokens.tolist()) for tokens, _ in best}) > 1  # the sources differ: a mix-up shows
    for b, (tokens, score) in enumerate(best):
        assert torch.equal(outputs[b], tokens), f"source {b}"
        torch.testing.assert_close(scores[b], score, atol=1e-5, rtol=1e-5)
    check_outputs(table, outputs, scores)


@pytest.mark.parametrize("beam_width", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_a_narrow_beam_on_a_batch_equals_each_source_searched_alone(seed, beam_width):
    """Narrow beams drop prefixes and keep finished ones: each row must equal its source searched alone, and its
    score must be its output's (a finished flag left with the wrong beam gives eos for free, or tokens after eos)."""
    step, table = table_model(seed)
    outputs, scores = beam_search(step, SOURCES, bos=BOS, eos=EOS, max_len=MAX_LEN, beam_width=beam_width)
    for b in range(SOURCES):
        alone, alone_score = beam_search(only(step, b), 1, bos=BOS, eos=EOS, max_len=MAX_LEN, beam_width=beam_width)
        assert torch.equal(outputs[b], alone[0]), f"source {b}"
        torch.testing.assert_close(scores[b], alone_score[0], atol=1e-5, rtol=1e-5)
    check_outputs(table, outputs, scores)


@pytest.mark.parametrize("seed", range(4))
def test_greedy_on_a_batch_equals_each_source_alone_and_beam_width_one(seed):
    step, table = table_model(seed)
    outputs, scores = greedy_search(step, SOURCES, bos=BOS, eos=EOS, max_len=MAX_LEN)
    one, one_scores = beam_search(step, SOURCES, bos=BOS, eos=EOS, max_len=MAX_LEN, beam_width=1)
    assert torch.equal(outputs, one)
    torch.testing.assert_close(scores, one_scores, atol=1e-5, rtol=1e-5)
    for b in range(SOURCES):
        alone, _ = greedy_search(only(step, b), 1, bos=BOS, eos=EOS, max_len=MAX_LEN)
        assert torch.equal(outputs[b], alone[0]), f"source {b}"
    check_outputs(table, outputs, scores)


def test_a_finished_flag_follows_its_beam_when_the_beam_is_dropped():
    """Two beams. Step 0 keeps [0] (p = 0.65, live) and [eos] (0.30, finished). Step 1 extends [0] to [0, 3] (0.3315)
    and [0, 0] (0.312): both beat the finished 0.30, which drops out, and [0, 0] takes its place. A finished flag
    left at that place (not carried by the parent beam) would end [0, 0] with a free eos and return it (0.312).
    Right: step 2 keeps [0, 3, eos] (0.1989) and [0, 0, 0] (0.1713), and [0, 3, eos, eos] wins."""
    probs = {  # (position t, last token) -> next-token probabilities over 0, BOS, EOS, 3
        (0, BOS): [0.65, 0.001, 0.30, 0.049],
        (1, 0): [0.48, 0.001, 0.009, 0.51],
        (2, 3): [0.0005, 0.0005, 0.6, 0.399],
        (2, 0): [0.549, 0.0005, 0.45, 0.0005],
        (3, 0): [0.549, 0.0005, 0.45, 0.0005],
    }

    def step(tokens, source):
        t = tokens.shape[1] - 1
        rows = [probs.get((t, last), [0.25] * V) for last in tokens[:, -1].tolist()]
        return torch.tensor(rows).log()  # (N, V)

    outputs, scores = beam_search(step, 1, bos=BOS, eos=EOS, max_len=MAX_LEN, beam_width=2)
    assert outputs[0].tolist() == [0, 3, EOS, EOS]
    torch.testing.assert_close(scores[0], torch.tensor(0.65 * 0.51 * 0.6).log())


# ------------------------------------------------------------------------------------------- the translator


def tiny_translator(seed=0, layers=2):
    torch.manual_seed(seed)
    return Translator(7, 6, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=layers).eval()


def test_the_translators_decoder_never_reads_a_later_target_token():
    model = tiny_translator()
    src, tgt = torch.tensor([[3, 4, 5, 6]]), torch.tensor([[1, 3, 4, 5, 3]])
    changed = tgt.clone()
    changed[0, 3] = 2  # only position 3 changes
    with torch.no_grad():
        logits, weights = model(src, tgt, return_weights=True)
        other = model(src, changed)
    torch.testing.assert_close(other[:, :3], logits[:, :3], atol=1e-6, rtol=1e-6)  # earlier positions: unchanged
    assert not torch.allclose(other[:, 3:], logits[:, 3:])  # the change reaches position 3 on
    for w in weights["decoder"]:  # (B, H, L, L) per block: nothing above the diagonal
        assert w.shape == (1, 2, 5, 5) and torch.all(w.triu(1) == 0)
        torch.testing.assert_close(w.sum(-1), torch.ones(1, 2, 5))


def test_each_row_of_a_step_reads_its_own_source_and_its_padding():
    """Rows of a step read sources of three lengths in another order: each equals the model run on its source alone,
    without padding (so a row reading another row's source or padding mask shows)."""
    model = tiny_translator(1, layers=1)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 5, 4, 3, 6], [5, 3, 0, 0, 0]])  # lengths 3, 5, 2; pad_index 0
    tokens, source = torch.tensor([[1, 3], [1, 4], [1, 3], [1, 5]]), torch.tensor([2, 0, 1, 2])
    with torch.no_grad():
        rows = model.step_function(src)(tokens, source)  # (4, V)
        for row, b in enumerate(source.tolist()):
            alone = model(src[b : b + 1, : int((src[b] != 0).sum())], tokens[row : row + 1])[0, -1]
            torch.testing.assert_close(rows[row], torch.log_softmax(alone, -1), atol=1e-5, rtol=1e-5)
