"""Sampling, with tests that a small slip fails (issue 43: mutation testing found such slips passing): top-p applied
before the temperature instead of after, p = 1 dropping a token by rounding, greedy's tie rule, and which logits
generate returns."""

import torch

from course_lib import DecoderLM, generate, sample_next_token, top_p_filter


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def test_top_p_filters_the_distribution_after_the_temperature():
    """Probabilities 0.5, 0.3, 0.15, 0.05: top-p with p = 0.6 keeps two tokens. At temperature 100 the distribution
    sampled is nearly uniform (running sums 0.25, 0.50, 0.75 ...) and the same p keeps three: the filter must act on
    softmax(logits / T), the distribution that is sampled."""
    logits = torch.tensor([0.5, 0.3, 0.15, 0.05]).log().expand(400, 4)
    hot = sample_next_token(logits, temperature=100.0, top_p=0.6, generator=seeded(0))
    assert set(hot.tolist()) == {0, 1, 2}  # each kept token has probability about 1/3: all drawn in 400 draws
    cool = sample_next_token(logits, temperature=1.0, top_p=0.6, generator=seeded(0))
    assert set(cool.tolist()) == {0, 1}


def test_top_p_of_one_keeps_every_token_even_where_the_running_sum_rounds_to_one():
    logits = torch.tensor([[0.0, -30.0, -31.0]])  # float32: 1 + e^-30 rounds to 1 before the last two tokens
    assert torch.equal(top_p_filter(logits, 1.0), logits)
    many = torch.randn(300, 6, generator=seeded(1)) * 4
    with_p = sample_next_token(many, temperature=0.7, top_p=1.0, generator=seeded(2))
    assert torch.equal(with_p, sample_next_token(many, temperature=0.7, generator=seeded(2)))  # the same draws


def test_greedy_takes_the_first_of_tied_largest_logits():
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 5.0, 5.0], [-1.0, 7.0, 0.0, 7.0]])
    assert sample_next_token(logits).tolist() == [1, 0, 2, 1]
    assert sample_next_token(logits.to(torch.bfloat16)).tolist() == [1, 0, 2, 1]


def test_generate_returns_the_models_logits_each_token_was_drawn_from():
    """With a temperature and a filter, the logits returned are the model's own (before temperature and filters),
    one per new token, at the position that predicted it: those of the whole sequence read at once."""
    torch.manual_seed(0)
    model = DecoderLM(11, 16, 4, 2, max_len=12, d_ff=24).double().eval()
    prompt = torch.randint(0, 11, (2, 3), generator=seeded(3))
    for use_cache in (True, False):
        new, logits = generate(model, prompt, 5, temperature=2.0, top_k=6, generator=seeded(0), use_cache=use_cache,
                               return_logits=True)  # fmt: skip
        with torch.no_grad():
            whole = model(torch.cat((prompt, new), dim=1))  # (B, P + N, V)
        torch.testing.assert_close(logits, whole[:, 2:-1], atol=1e-10, rtol=1e-10)  # positions P - 1 .. P + N - 2
        # each token is one the filter kept: among the 6 largest of its logits
        assert (logits.topk(6, dim=-1).indices == new[..., None]).any(-1).all()
