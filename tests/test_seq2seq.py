"""course_lib.seq2seq against torch.nn.Transformer with copied weights; greedy, beam and exhaustive search against one
another; the English-to-Chinese date task (notebook 14)."""

import datetime
import warnings

import pytest
import torch
from torch import nn

import course_lib as cl
from course_lib.data import date_pair, date_splits, date_tokens
from course_lib.generation import beam_search, exhaustive_search, greedy_search
from course_lib.seq2seq import EncoderDecoder, TransformerDecoderBlock, Translator

TOL = dict(atol=1e-5, rtol=1e-4)


@pytest.fixture(autouse=True)
def _no_fast_path():
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(True)


def _transformer(D, H, n_enc, n_dec, norm_first, activation="relu"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return nn.Transformer(D, H, n_enc, n_dec, 2 * D, dropout=0.1, activation=activation, batch_first=True,
                              norm_first=norm_first).eval()  # fmt: skip


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize(("S", "L"), [(7, 5), (3, 9), (6, 6)])
def test_encoder_decoder_equals_nn_transformer_with_all_masks(norm_first, activation, S, L):
    torch.manual_seed(S * 10 + L)
    ref = _transformer(16, 4, 2, 3, norm_first, activation)
    with torch.no_grad():  # layers differ from one another
        for p in ref.parameters():
            p.add_(0.05 * torch.randn_like(p))
    ours = EncoderDecoder.from_torch(ref).eval()
    src, tgt = torch.randn(3, S, 16), torch.randn(3, L, 16)
    sv = cl.padding_mask(torch.tensor([S, max(1, S - 2), 1]), S)  # (B, 1, S)
    tv = cl.padding_mask(torch.tensor([L, max(1, L - 3), 1]), L)  # (B, 1, L)
    causal = cl.causal_mask(L)
    with torch.no_grad():
        expected = ref(src, tgt, src_key_padding_mask=~sv[:, 0], tgt_mask=~causal, tgt_key_padding_mask=~tv[:, 0],
                       memory_key_padding_mask=~sv[:, 0])  # fmt: skip
        got, weights = ours(src, tgt, src_mask=sv, tgt_mask=causal & tv, memory_mask=sv, return_weights=True)
    torch.testing.assert_close(got, expected, **TOL)
    assert [w.shape for w in weights["cross"]] == [(3, 4, L, S)] * 3
    assert torch.all(weights["cross"][0][2, :, :, 1:] == 0)  # source padding gets no weight


def test_decoder_block_gradients_equal_pytorchs():
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    ours = TransformerDecoderBlock.from_torch(layer)
    x, m = torch.randn(2, 4, 8), torch.randn(2, 6, 8)
    layer(x, m, tgt_mask=~cl.causal_mask(4)).square().sum().backward()
    ours(x, m, mask=cl.causal_mask(4)).square().sum().backward()
    torch.testing.assert_close(ours.cross_attn.w_q.weight.grad, layer.multihead_attn.in_proj_weight.grad[:8], **TOL)


def test_translator_padding_does_not_change_real_positions():
    torch.manual_seed(1)
    model = Translator(9, 7, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1).eval()
    src, tgt = torch.tensor([[3, 4, 5]]), torch.tensor([[1, 3, 4]])
    padded_src, padded_tgt = torch.tensor([[3, 4, 5, 0, 0]]), torch.tensor([[1, 3, 4, 0]])
    with torch.no_grad():
        torch.testing.assert_close(model(padded_src, padded_tgt)[:, :3], model(src, tgt), **TOL)


def _tiny_step(seed, V=4):
    torch.manual_seed(seed)
    model = Translator(6, V, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1).eval()
    return model.step_function(torch.randint(1, 6, (1, 4)))


@pytest.mark.parametrize("seed", range(12))
def test_a_wide_beam_is_exhaustive_and_width_one_is_greedy(seed):
    step = _tiny_step(seed)
    with torch.no_grad():
        best, score = exhaustive_search(step, 4, bos=1, eos=2, max_len=4)
        wide, wide_score = beam_search(step, 1, bos=1, eos=2, max_len=4, beam_width=4**4)
        greedy, greedy_score = greedy_search(step, 1, bos=1, eos=2, max_len=4)
        one, one_score = beam_search(step, 1, bos=1, eos=2, max_len=4, beam_width=1)
        narrow, narrow_score = beam_search(step, 1, bos=1, eos=2, max_len=4, beam_width=2)
    assert torch.equal(wide[0], best) and torch.equal(one, greedy)
    torch.testing.assert_close(wide_score[0], score, **TOL)
    torch.testing.assert_close(one_score, greedy_score, **TOL)
    assert narrow_score[0] <= score + 1e-5 and greedy_score[0] <= score + 1e-5
    after = torch.cumsum((best == 2).long(), 0) - (best == 2).long() > 0
    assert torch.all(best[after] == 2)  # after the first eos only eos


def _greedy_misses(seed) -> bool:
    step = _tiny_step(seed)
    with torch.no_grad():
        _, score = exhaustive_search(step, 4, bos=1, eos=2, max_len=4)
        _, greedy_score = greedy_search(step, 1, bos=1, eos=2, max_len=4)
    return bool(greedy_score[0] < score - 1e-4)


def test_greedy_sometimes_misses_the_best_output():
    # Some seed of the 20 gives a model where greedy misses; the search stops at the first (seed 1 here).
    assert any(_greedy_misses(seed) for seed in range(20))


def test_beam_search_on_a_batch_equals_one_source_at_a_time():
    torch.manual_seed(3)
    model = Translator(6, 5, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1).eval()
    src = torch.randint(1, 6, (3, 4))
    with torch.no_grad():
        batch, scores = beam_search(model.step_function(src), 3, bos=1, eos=2, max_len=5, beam_width=3)
        for b in range(3):
            one, one_score = beam_search(model.step_function(src[b : b + 1]), 1, bos=1, eos=2, max_len=5, beam_width=3)
            assert torch.equal(one[0], batch[b])
            torch.testing.assert_close(one_score[0], scores[b], **TOL)


def test_searches_refuse_bad_arguments():
    step = _tiny_step(0)
    with pytest.raises(TypeError, match="next_log_probs"):
        beam_search("not a function", 1, bos=1, eos=2, max_len=3, beam_width=2)
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(step, 1, bos=1, eos=2, max_len=3, beam_width=0)
    with pytest.raises(ValueError, match="too many"):
        exhaustive_search(step, 40, bos=1, eos=2, max_len=6)
    with pytest.raises(TypeError, match="a torch.nn.Transformer"):
        EncoderDecoder.from_torch(nn.Linear(2, 2))
    long_source, short_target = torch.ones(1, 6, dtype=torch.long), torch.ones(1, 2, dtype=torch.long)
    with pytest.raises(ValueError, match="max_len"):
        Translator(5, 5, d_model=8, num_heads=2, max_len=4)(long_source, short_target)


def test_date_splits_are_deterministic_disjoint_and_right():
    train, val, test = date_splits((300, 100, 100), seed=5)
    assert (train, val, test) == tuple(date_splits((300, 100, 100), seed=5))
    assert train != date_splits((300, 100, 100), seed=6)[0]
    days = [{zh[: zh.index("日") + 1] for _, zh in part} for part in (train, val, test)]
    assert [len(d) for d in days] == [300, 100, 100]
    assert not (days[0] & days[1] or days[0] & days[2] or days[1] & days[2])
    months = "January February March April May June July August September October November December".split()
    for en, zh in train + val + test:
        tokens = date_tokens(en)
        year, month = int("".join(tokens[-4:])), months.index(next(t for t in tokens if t in months)) + 1
        day = int("".join(t for t in tokens[:-4] if t.isdigit()))
        date = datetime.date(year, month, day)
        assert zh.startswith(f"{year}年{month}月{day}日")
        if "星期" in zh:
            assert "一二三四五六日"[date.weekday()] == zh[-1] and tokens[0] == date.strftime("%A")
    assert {len(date_tokens(en)) for en, _ in train} == set(range(6, 12))  # 'May 1, 1900' .. 'the 21st of May, 1900'


def test_date_pair_writes_the_five_forms_and_the_weekday_in_two():
    tuesday = datetime.date(2024, 3, 5)
    pairs = [date_pair(tuesday, form) for form in range(5)]
    assert [en for en, _ in pairs] == ["March 5, 2024", "5 March 2024", "the 5th of March, 2024",
                                       "Tuesday, March 5, 2024", "Tuesday 5 March 2024"]  # fmt: skip
    assert [zh for _, zh in pairs] == ["2024年3月5日"] * 3 + ["2024年3月5日星期二"] * 2
    assert date_pair(datetime.date(1900, 1, 1), 3) == ("Monday, January 1, 1900", "1900年1月1日星期一")
    assert [date_pair(datetime.date(2001, 1, d), 2)[0][4:8] for d in (1, 2, 3, 11, 12, 13, 21, 22, 23)] == [
        "1st ", "2nd ", "3rd ", "11th", "12th", "13th", "21st", "22nd", "23rd"]  # fmt: skip


def test_date_task_refuses_bad_arguments():
    with pytest.raises(TypeError, match="sizes"):
        date_splits(10)
    with pytest.raises(ValueError, match="distinct dates"):
        date_splits((80_000,))
    with pytest.raises(TypeError, match="english"):
        date_tokens(5)
    with pytest.raises(TypeError, match="date"):
        date_pair("2024-03-05", 0)
    with pytest.raises(ValueError, match="form"):
        date_pair(datetime.date(2024, 3, 5), 5)
