"""The lecturers' exam bank (docs/exam_bank.md, issue 32): its structure, and every number of its worked answers.

Each question is a level-3 heading ``### Q03.1 · compute · apply · 8 points · 10 min · title`` followed by three
parts, in this order: **Question.**, **Worked answer.** and **Marking.** The marking part splits the points into
bullets ``- 2 points: ...`` that add up to the heading's points.

The numbers: ``EXPECTED`` maps every question id to a function that recomputes its answer independently (float64,
fractions or integers, and float16 step by step where a question asks what float16 gives; ``course_lib`` only as a
second opinion where it has the function) and returns the strings the page must show, as written. A number in a
worked answer or in the marking notes that is neither one of these strings, nor given in the question, nor a small
integer (at most 12: step numbers, points, d_k = 4), fails the test: so a number cannot enter an answer without being
computed here.

The page's rule for building a paper (its section "Building a paper") is checked too: its example papers fit the
exam lengths of the lecturer's guide by the questions' stated minutes, and the rule refuses a paper that does not.

The page is withheld from students: tests/test_book.py checks that the book leaves it out.

Its Chinese translation, docs/zh/exam_bank.md, has the same questions under the same ids, and tests/test_exam_bank_zh.py
checks that it shows this page's numbers, formulas and code: a question's numbers change in both pages and here.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
import torch

import course_lib as cl
from course_lib.bpe import SPLIT_PATTERN
from course_lib.paths import NOTEBOOKS_DIR, ROOT

BANK = ROOT / "docs" / "exam_bank.md"
TEXT = BANK.read_text(encoding="utf-8")

HEADING = re.compile(
    r"^### (?P<id>Q(?P<nb>\d\d)\.(?P<n>\d+)) · (?P<kind>derive|compute|spot) · (?P<level>recall|apply|analyse)"
    r" · (?P<points>\d+) points · (?P<minutes>\d+) min · (?P<title>.+)$",
    re.M,
)
PARTS = ("**Question.**", "**Worked answer.**", "**Marking.**")
NUMBER = re.compile(r"(?<![A-Za-z_\d.,])\d+(?:,\d{3})*(?:\.\d+)?")  # not the 16 of float16
FREE_INTEGERS = 12  # integers up to this need no check (step numbers, points, small sizes)


def f4(x: float) -> str:
    """A number at 4 decimals, as the page writes it."""
    return f"{x:.4f}"


def g(n: int) -> str:
    """An integer with thousands separators, as the page writes it."""
    return f"{n:,}"


def softmax(scores: list[float]) -> list[float]:
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    return [x / sum(e) for x in e]


# ------------------------------------------------------------------------------------- the questions' numbers


def q01_1():
    strings = []
    for rate in (16_000, 8_000):
        n, frame, hop = int(1.5 * rate), rate * 25 // 1000, rate * 10 // 1000
        strings += [g(n), g(frame), g(hop), g(n - frame), f"{(n - frame) / hop}"]
        frames = 1 + (n - frame) // hop
        strings.append(str(frames - 1))  # the largest j
        assert frames == 148
    naive = round(1.5 / 0.010)  # duration / hop, the usual slip
    return strings + ["148", "(4, 148, 6)", "(4, 6)", str(naive), "(4, 6, 148)", g(16_000)]


def q01_2():
    sentence = "the dog saw the cat".split()
    counts = {w: sentence.count(w) for w in sentence}
    assert counts == {"the": 2, "dog": 1, "saw": 1, "cat": 1}
    V, D = 50_000, 300
    return ["(2, 2, 2)", "(1, 1, 1)", g(V * D), g(V), g(D)]


def q01_3():
    rate = 16_000
    n, frame, hop = rate, rate * 25 // 1000, rate * 10 // 1000
    frames = 1 + (n - frame) // hop
    D, h, max_len = 300, 256, 100
    r = max_len - 1
    return [
        str(frames),
        g(frame),
        g(n - frame),
        f"{(n - frame) / hop}",
        str(2 * r + 1),
        g((2 * r + 1) * D * h),
        str(r),
        g(D),
        g(h),
        str(max_len),
        "(98, 400)",
        g(n),
        g(hop),
        "16",
        str(2 * max_len),
        g(2 * max_len * D * h),  # a window of 2 * 100 positions: the common slip
    ]


def q02_1():
    bound = 1000  # the bound below 10^-3: 1 / 0.001
    k_small = math.log(bound) / math.log(1 / 0.8)
    k = math.ceil(k_small)  # the smallest whole distance
    assert 0.8**k < 1 / bound < 0.8 ** (k - 1)
    return [f4(0.8**10), f4(1.2**10), f4(math.log(bound)), f4(math.log(1.25)), f"{k_small:.2f}", str(k), str(k - 1)] + [
        str(bound)
    ]


def q02_2():
    w, u = 0.5, 0.9
    h1 = math.tanh(w * 1)
    a2 = u * h1
    h2 = math.tanh(a2)
    a3 = u * h2
    h3 = math.tanh(a3)
    d32 = (1 - h3**2) * u
    d21 = (1 - h2**2) * u
    d31 = d32 * d21
    dx1 = d31 * (1 - h1**2) * w
    I, H = 10, 20
    lstm = 4 * (H * I + H * H + 2 * H)
    rnn = H * (I + H) + 2 * H
    assert lstm == sum(p.numel() for p in torch.nn.LSTM(I, H).parameters())
    assert rnn == sum(p.numel() for p in torch.nn.RNN(I, H).parameters())
    return [f4(v) for v in (h1, a2, h2, a3, h3, d32, d21, d31, 1 - h1**2, dx1)] + [
        g(lstm),
        g(rnn),
        str(H * I),
        str(H * H),
        str(2 * H),
        str(H + I),
        f"{u * u:.2f}",
        g(4 * (H * I + H * H + H)),
    ]


def q02_3():
    out = []
    for n, d in ((256, 1024), (4096, 1024)):
        out += [g(n * n * d), g(n * d * d), g(n), g(d)]
    return out


def q03_1():
    q = [1, 1, 0, 0]
    keys = [[2, 0, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]]
    values = [[1, 0], [0, 1], [2, 2]]
    raw = [sum(a * b for a, b in zip(q, k)) for k in keys]
    scaled = [s / math.sqrt(4) for s in raw]
    a = softmax(scaled)
    b = [sum(a[j] * values[j][c] for j in range(3)) for c in range(2)]
    ref = cl.scaled_dot_product_attention(
        torch.tensor([q], dtype=torch.float64),
        torch.tensor(keys, dtype=torch.float64),
        torch.tensor(values, dtype=torch.float64),
    )
    torch.testing.assert_close(ref, torch.tensor([b], dtype=torch.float64))
    unscaled = softmax(raw)
    by_d_k = softmax([s / 4 for s in raw])
    e = math.e
    return [
        "(2, 0, 2)",
        "(1, 0, 1)",
        f4(e),
        f4(2 * e + 1),
        f4(a[0]),
        f4(a[1]),
        f4(a[2]),
        f4(b[0]),
        f4(b[1]),
        f4(3 * e),
        f4(unscaled[0]),
        f4(unscaled[1]),
        "(0.5, 0, 0.5)",
        f4(by_d_k[0]),
        f4(by_d_k[1]),
    ]


def q03_2():
    d_model, d_k = 512, 64
    count = 3 * d_model * d_k
    for bias, expected in ((False, count), (True, count + 3 * d_k)):
        layer = cl.SelfAttention(d_model, d_k, d_k, bias=bias)
        assert sum(p.numel() for p in layer.parameters()) == expected
    return [g(count), g(count + 3 * d_k), g(3 * d_k), str(d_model), str(d_k), g(4 * d_model * d_k)]


def q03_3():
    return [str(64), str(8), str(64 // 8)]


def q04_1():
    sigma_k2 = Fraction(1, 2) ** 2
    var = Fraction(16) * Fraction(3) ** 2 * sigma_k2
    assert var == 36
    return [str(int(var)), f4(1 / math.sqrt(var)), f4(1 / float(var)), "16", "64", f"{float(sigma_k2)}"]


def q04_2():
    a = [Fraction(5, 10), Fraction(3, 10), Fraction(2, 10)]
    J = [[(a[i] if i == j else 0) - a[i] * a[j] for j in range(3)] for i in range(3)]
    s = torch.tensor([0.3, -0.2, 0.9], dtype=torch.float64)  # any scores: J depends on the weights only
    w = torch.tensor([float(x) for x in a], dtype=torch.float64)
    auto = torch.autograd.functional.jacobian(lambda z: torch.softmax(z - s + w.log(), -1), s)
    torch.testing.assert_close(auto, torch.tensor([[float(x) for x in row] for row in J], dtype=torch.float64))
    g_up = [Fraction(2), Fraction(0), Fraction(1)]
    ag = sum(x * y for x, y in zip(a, g_up))
    grad = [a[i] * (g_up[i] - ag) for i in range(3)]
    assert grad == [sum(J[i][j] * g_up[j] for j in range(3)) for i in range(3)]
    entries = {f"{float(x):.2f}" for row in J for x in row}
    shifted = [f"{float(x - ag):.1f}" for x in g_up]  # g - a.g
    ones_minus = [f"{float(1 - x):.1f}" for x in a]  # the 1 - a_i of the diagonal
    return sorted(entries) + [f"{float(x):.2f}" for x in grad] + [f"{float(ag):.1f}"] + shifted + ones_minus


def sig4(x: float) -> str:
    """4 significant digits, trailing zeros kept (1.000)."""
    return f"{x:#.4g}"


def q04_3():
    big = torch.finfo(torch.float16).max
    s = torch.tensor([12.0, 3.0, 1.0], dtype=torch.float16)
    naive = torch.exp(s) / torch.exp(s).sum()  # the textbook softmax, in float16
    assert torch.isinf(torch.exp(s[0])) and torch.isnan(naive[0]) and naive[1:].eq(0).all()
    # the stable softmax step by step in float16: every operation rounds to float16
    terms = torch.exp(s - s.max())
    total = terms.sum()
    weights = terms / total
    assert total.dtype == torch.float16 and total.item() == 1.0  # 1.00014 rounds to 1 in float16
    torch.testing.assert_close(weights, torch.softmax(s, -1), rtol=0, atol=0)  # torch's float16 softmax agrees
    exact_total = sum(math.exp(x) for x in (0.0, -9.0, -11.0))
    as_float32 = torch.softmax(s.float(), -1)
    d_k = 1024
    q = torch.full((d_k,), 8.0, dtype=torch.float16)
    assert torch.isinf(q @ q)
    scale = math.isqrt(d_k)
    assert torch.isfinite((q / scale) @ q)
    return [
        g(int(big)),
        f"{math.log(big):.2f}",
        g(round(math.exp(12))),
        *(sig4(w) for w in weights.tolist()),
        sig4(terms[1].item()),
        f"{terms[2].item():.4g}",
        f"{exact_total:.5f}",
        sig4(torch.finfo(torch.float16).eps),  # the spacing of float16 numbers next to 1
        f4(as_float32[0].item()),
        g(8 * 8 * d_k),
        g(d_k),
        g(int(((q / scale) @ q).item())),
        str(scale),
    ]


def q05_1():
    scores, mask = [2.0, 1.0, 0.0, 3.0], [True, True, True, False]
    kept = softmax([s for s, m in zip(scores, mask) if m])
    full = softmax(scores)
    ours = cl.attention_weights(
        torch.tensor([[1.0]], dtype=torch.float64),
        torch.tensor([[s] for s in scores], dtype=torch.float64),
        mask=torch.tensor([mask]),
        scale=1.0,
    )
    torch.testing.assert_close(ours[0], torch.tensor(kept + [0.0], dtype=torch.float64))
    total = math.exp(2) + math.exp(1) + 1
    return [f4(x) for x in kept] + [f4(x) for x in full] + [f4(sum(full[:3])), f4(total), f4(math.exp(2)), f4(math.e)]


def q05_2():
    big = torch.finfo(torch.float16).max
    assert torch.isinf(torch.tensor(-1e9).to(torch.float16))
    return [g(int(big))]


def q05_3():
    return []


def q06_1():
    D, H, B, L = 256, 8, 2, 10
    d_k = D // H
    params = 4 * D * D + 4 * D
    mha = cl.MultiHeadAttention(D, H)
    assert sum(p.numel() for p in mha.parameters()) == params
    proj, attn = 8 * L * D * D, 4 * L * L * D
    full_width = 4 * H * D * D + 3 * H * D + D
    return [
        str(d_k),
        g(params),
        f"({B}, {H}, {L}, {L})",
        g(B * H * L * L),
        g(proj),
        g(attn),
        g(proj + attn),
        g(full_width),
        g(D * D),
        g(B * 4 * L * L),
        g(4 * D),
        str(D // 4),
        f"({B}, 4, {L}, {L})",
    ]


def q06_2():
    D, H = 64, 8
    d_k = D // H
    block = 2  # block 2 of the identity: rows 2 d_k to 3 d_k - 1
    return [g(2 * D * D), g(H * D * D), str(d_k), str(block * d_k), str((block + 1) * d_k - 1), str(D)]


def q06_3():
    L, D, H = 4, 8, 2
    d_k = D // H
    x = torch.arange(L * D).reshape(L, D)
    wrong = x.reshape(H, L, d_k)
    right = x.reshape(L, H, d_k).transpose(0, 1)
    assert torch.equal(wrong[0].flatten(), torch.arange(16))  # tokens 0 and 1, all 8 features each
    assert torch.equal(right[0], x[:, :4])
    return [str(L * d_k), "(2, 4, 4)", "16"]


def q07_1():
    omegas = [1.0, 10000 ** (-2 / 4)]

    def pe(pos):
        return [f(pos * w) for w in omegas for f in (math.sin, math.cos)]

    p2 = pe(2)
    table = cl.sinusoidal_encoding(9, 4).double()
    torch.testing.assert_close(table[2], torch.tensor(p2, dtype=torch.float64), atol=1e-6, rtol=0)
    dot = sum(a * b for a, b in zip(pe(5), pe(8)))
    assert math.isclose(dot, math.cos(3) + math.cos(0.03))
    return [f4(x) for x in p2] + [
        f4(math.cos(3)),
        f4(math.cos(0.03)),
        f4(dot),
        f"{omegas[1]:g}",
        f"{2 * omegas[1]:g}",
        f"{3 * omegas[1]:g}",
        f4(2 * math.cos(3)),
    ]


def q07_2():
    q, k = (2.0, 1.0), (1.0, 1.0)

    def rotate(v, m):  # v R_m, R_m = [[cos, sin], [-sin, cos]]
        c, s = math.cos(m), math.sin(m)
        return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)

    out = []
    for m, n in ((4, 2), (2, 4)):
        qr, kr = rotate(q, m), rotate(k, n)
        score = qr[0] * kr[0] + qr[1] * kr[1]
        delta = m - n
        formula = 3 * math.cos(delta) + 1 * math.sin(delta)
        assert math.isclose(score, formula)
        rope = cl.apply_rope(torch.tensor([[q], [k]], dtype=torch.float64), torch.tensor([[m], [n]]))
        torch.testing.assert_close((rope[0, 0] * rope[1, 0]).sum().item(), score)
        out.append(f4(score))
    return out + [f4(3 * math.cos(2)), f4(math.sin(2)), f4(math.cos(2))]


def q07_3():
    trained, longest, head_width = 16, 32, 16  # notebook 07's task and its heads' width
    offset = -18  # an unseen offset, one of those notebook 07's trained heads score highest
    assert trained <= abs(offset) < longest
    omega = cl.sinusoidal_frequencies(head_width).double().tolist()
    assert math.isclose(omega[1], 10000 ** (-2 / head_width), rel_tol=1e-6)
    pair0, pair1 = (offset * w % (2 * math.pi) for w in omega[:2])
    assert math.isclose(pair0, offset + 6 * math.pi)
    assert abs(pair0 - omega[0]) < 0.2 and abs(pair1 - omega[1]) < 0.3  # near offset +1's angles, not on them
    return [f4(2 * math.pi), str(longest - 1), str(trained - 1), str(-offset), f4(pair0), f4(omega[1]), f4(pair1)]


def q08_1():
    n, w = 10, 2
    allowed = n * (2 * w + 1) - w * (w + 1)
    assert allowed == int(cl.window_mask(n, w).sum())
    big, block = 16_384, 256
    full = big * big * 4
    blocked = 3 * big * block * 4
    layers = math.ceil(1000 / 128)
    assert (layers - 1) * 128 < 1000 <= layers * 128
    return [
        str(allowed),
        str(n * n),
        str(n * (2 * w + 1)),
        g(full),
        g(full // 2**20),
        g(blocked),
        g(blocked // 2**20),
        f"{blocked / full:.6f}",
        str(layers),
        g((layers - 1) * 128),
        g(layers * 128),
        g(big),
        str(block),
        "1000",
        "128",
    ]


def q08_2():
    s_a, v_a, s_b, v_b = [1.0, 3.0], [1.0, 0.0], [2.0, 0.0], [2.0, 4.0]

    def summary(s, v):
        m = max(s)
        return m, sum(math.exp(x - m) for x in s), sum(math.exp(x - m) * y for x, y in zip(s, v))

    (m1, l1, a1), (m2, l2, a2) = summary(s_a, v_a), summary(s_b, v_b)
    m = max(m1, m2)
    ell = math.exp(m1 - m) * l1 + math.exp(m2 - m) * l2
    acc = math.exp(m1 - m) * a1 + math.exp(m2 - m) * a2
    direct = sum(w * y for w, y in zip(softmax(s_a + s_b), v_a + v_b))
    assert math.isclose(acc / ell, direct)
    naive_l, naive_a = l1 + l2, a1 + a2  # merged without rescaling: the common slip
    values = (l1, a1, l2, a2, math.exp(-1), ell, acc, acc / ell, math.exp(-2), m + math.log(ell))
    return [f4(x) for x in values] + [f4(naive_l), f4(naive_a), f4(naive_a / naive_l)]


def q08_3():
    return ["64"]


def q09_1():
    def width(d, k):
        return 1 + d * (k - 1)

    L = 224 * 224
    entries = L * L
    side = 16  # the question's image side
    return [
        str(width(5, 3)),
        str(width(2, 5)),
        str(side - 1),  # the corners' distance
        str(side),
        g(L),
        g(entries),
        g(entries * 4),
        f4(entries * 4 / 2**30),
        "224",
    ]


def q09_2():
    alpha = 4
    z = 1 + 4 * math.exp(-alpha) + 4 * math.exp(-2 * alpha)
    target = 1 / z
    neighbours = 4 * math.exp(-alpha) / z
    weights = cl.shift_attention_weights(9, 9, 1, alpha=float(alpha))  # (heads, L, L); one head, Delta = (0, 0)
    centre = 4 * 9 + 4
    assert abs(weights.reshape(-1, 81, 81)[0, centre, centre].item() - target) < 1e-3
    return [
        f4(4 * math.exp(-alpha)),
        f4(4 * math.exp(-2 * alpha)),
        f4(z),
        f4(target),
        f4(neighbours),
        f4(1 - target),
        f4(z - 1),
    ]


def q09_3():
    seen = 1 + 3 * (3 - 1)  # three 3 x 3 layers
    return [str(seen * seen), str(9 * 9)]


def q10_1():
    S, C, P, P2 = 96, 3, 8, 16
    N = (S // P) ** 2
    return [
        str(S // P),
        str(N),
        str(C * P * P),
        str(N + 1),
        g((N + 1) ** 2),
        g((N + 1) ** 2 * 4 * 6),
        str((S // P2) ** 2),
        str(C * P2 * P2),
        str(S // P2),
        "96",
        g(N * N),  # without the class token
        str(P * P),
        str(P2 * P2),
    ]


def q10_2():
    C, P, D, classes, image = 1, 4, 16, 10, 8
    N = (image // P) ** 2
    patch = C * P * P * D + D
    positions = (1 + N) * D
    attn = 4 * D * D + 4 * D
    mlp = D * 2 * D + 2 * D + 2 * D * D + D
    norms = 2 * 2 * D
    block = attn + mlp + norms
    final = 2 * D + D * classes + classes
    total = patch + D + positions + block + final
    for heads in (1, 2, 4):
        model = cl.TinyViT(
            image_size=image,
            patch_size=P,
            in_channels=C,
            num_classes=classes,
            d_model=D,
            depth=1,
            num_heads=heads,
            mlp_ratio=2,
        )
        assert sum(p.numel() for p in model.parameters()) == total
    return [g(x) for x in (N, patch, D, positions, attn, mlp, norms, block, final, total)] + [
        str(C * P * P * D),
        str(D * 2 * D),
        str(2 * D),
        str(D * classes + classes),
        g(total - D),  # positions for the patches only: the common slip
        str(N * D),
    ]


def q10_3():
    C, P = 3, 16  # ViT-Base's RGB patches of 16 x 16
    return [str(C * P * P), str(P), g(1024)]


def q11_1():
    D, F = 256, 1024
    attn = 4 * D * D + 4 * D
    ffn = D * F + F + F * D + D
    norms = 4 * D
    layer = torch.nn.TransformerEncoderLayer(D, 8, dim_feedforward=F)
    assert sum(p.numel() for p in layer.parameters()) == attn + ffn + norms
    x = torch.tensor([2.0, 4.0, 4.0, 6.0], dtype=torch.float64)
    ln = torch.nn.functional.layer_norm(x, (4,), eps=1e-5)
    assert torch.allclose(ln, torch.tensor([-2.0, 0.0, 0.0, 2.0], dtype=torch.float64) / math.sqrt(2 + 1e-5))
    unbiased = (x - x.mean()) / x.var(unbiased=True).sqrt()
    return [
        g(attn),
        g(ffn),
        g(norms),
        g(attn + ffn + norms),
        f4(ln[0].item()),
        f4(ln[3].item()),
        f4(math.sqrt(2)),
        f4(unbiased[3].item()),
        f4(unbiased[0].item()),
        f4(8 / 3),
        f"{1 / (1 - 0.2):g}",  # inverted dropout's factor for p = 0.2
        "0.2",
        g(D * F),
        str(D),
        g(F),
        f"{ffn / (attn + ffn + norms):.2f}",
    ]


def q11_2():
    return [f4(0.5**10), f4(1.5**10)]


def q11_3():
    x = torch.tensor([2.0, 4.0, 4.0, 6.0], dtype=torch.float64)
    right = torch.nn.functional.layer_norm(x, (4,))
    wrong = (x - x.mean()) / (x.var(unbiased=True) + 1e-5).sqrt()
    return [f4(wrong[3].item()), f4(right[3].item())]


def q12_1():
    layers, h_kv, d_k, S, B, bytes_ = 24, 4, 64, 2048, 8, 2
    total = 2 * layers * h_kv * d_k * S * B * bytes_
    per_token = 2 * layers * h_kv * d_k * bytes_
    mha = total * 16 // h_kv
    return [
        g(total),
        g(total // 2**20),
        g(per_token),
        str(per_token // 1024),
        g(mha),
        g(mha // 2**20),
        f"{mha / 2**30:.1f}",
        g(S),
        g(total // 2),  # without the factor 2 for keys and values
        "16",
        "24",
        "64",
    ]


def q12_2():
    P, N = 10, 100
    without = sum(P + t for t in range(N))
    assert without == N * P + N * (N - 1) // 2
    return [g(without), g(N * P), g(N * (N - 1) // 2), str(P + N - 1), str(N), str(N - 1), str(P + N)] + [
        g(N * P + N * N // 2)
    ]


def q12_3():
    return []


def q12_4():
    z = [2.0, 1.0, 1.0, 0.0]
    t1 = softmax(z)
    t05 = softmax([x / 0.5 for x in z])
    logits = torch.tensor(z, dtype=torch.float64)
    k_kept = torch.softmax(cl.top_k_filter(logits, 2), -1)
    p_kept = torch.softmax(cl.top_p_filter(logits, 0.9), -1)
    torch.testing.assert_close(k_kept, p_kept)
    renorm = softmax(z[:3])
    torch.testing.assert_close(k_kept, torch.tensor(renorm + [0.0], dtype=torch.float64))
    return (
        [f4(x) for x in t1]
        + [f4(x) for x in t05]
        + [f4(x) for x in renorm]
        + [f4(t1[0] + t1[1]), f4(t1[0] + t1[1] + t1[2]), f4(math.exp(2) + 2 * math.e + 1), "(4, 2, 2, 0)"]
        + [f4(math.exp(4) + 2 * math.exp(2) + 1), f4(math.exp(2) + 2 * math.e)]
        + [f4(math.e / (math.e + 1)), f4(1 / (math.e + 1))]  # the tie broken: two tokens kept
    )


def plain_bpe(text: str, num_merges: int, *, pattern: str | None, ties: str = "smallest") -> list[tuple[int, int]]:
    """BPE written out, recounting every pair at each merge: the notebook's rule (ties to the smallest ids), or
    ``ties="first"``, the pair seen first (what ``Counter.most_common`` returns)."""
    chunks = [list(c.encode("utf-8")) for c in (re.findall(pattern, text) if pattern else [text])]
    merges = []
    for i in range(num_merges):
        counts: dict[tuple[int, int], int] = {}
        for ids in chunks:
            for pair in zip(ids, ids[1:]):
                counts[pair] = counts.get(pair, 0) + 1
        top = max(counts.values())
        tied = [p for p in counts if counts[p] == top]
        pair = min(tied) if ties == "smallest" else tied[0]
        chunks = [cl.merge_pair(ids, pair, 256 + i) for ids in chunks]
        merges.append(pair)
    return merges


def hf_bpe_merges(text: str, num_merges: int) -> list[tuple[bytes, bytes]]:
    """Hugging Face ``tokenizers``' merges on the course's chunks and byte order (notebook 13, section 4)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
    trainer = trainers.BpeTrainer(
        vocab_size=256 + num_merges,
        min_frequency=0,
        show_progress=False,
        initial_alphabet=[chr(b) for b in range(256)],
        special_tokens=[],
    )
    tok.train_from_iterator([text.encode("utf-8").decode("latin-1")], trainer)
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(p.encode("latin-1") for p in (m if isinstance(m, list) else m.split(" "))) for m in merges]


def q13_1():
    text, M = "a banana, a bandana", 3
    chunks = re.findall(SPLIT_PATTERN, text)
    assert chunks == ["a", " banana", ",", " a", " bandana"]
    merges = plain_bpe(text, M, pattern=SPLIT_PATTERN)
    assert merges == [(97, 110), (32, 98), (256, 97)]
    trained = cl.BytePairEncoder.train(text, M)
    assert trained.merges == merges
    pieces = [trained.token_bytes(256 + i) for i in range(M)]
    assert pieces == [b"an", b" b", b"ana"]
    assert hf_bpe_merges(text, M) == [(trained.token_bytes(a), trained.token_bytes(b)) for a, b in merges]
    # the counts before each merge, and the ties the rule decides
    first = Counter(p for c in chunks for p in zip(c.encode(), c.encode()[1:]))
    assert (first[97, 110], first[110, 97], first[32, 98], first[98, 97]) == (4, 3, 2, 2)
    encoded = trained.encode(text)
    assert len(encoded) == 11 and trained.decode(encoded) == text
    word = trained.encode(" bananas")
    assert [trained.token_text(t) for t in word] == [" b", "an", "ana", "s"]
    with_end = cl.BytePairEncoder(merges, specials=["<eos>"])
    first_seen = plain_bpe(text, M, pattern=SPLIT_PATTERN, ties="first")  # the common slip: ties by first sight
    across = plain_bpe(text, M, pattern=None)  # the other slip: pairs counted across chunks
    whole = list(text.encode("utf-8"))
    assert Counter(zip(whole, whole[1:]))[97, 32] == 2  # "a b", twice, only across chunks
    assert across == cl.BytePairEncoder.train(text, M, pattern=None).merges
    return [
        "(97, 110)",
        "(32, 98)",
        "(98, 256)",
        "(256, 97)",
        "(257, 256)",
        "(32, 97)",
        *(str(256 + i) for i in range(M)),
        str(len(encoded)),
        str(len(text.encode("utf-8"))),
        "(" + ", ".join(map(str, word)) + ")",
        str(with_end.vocab_size),
        str(with_end.encode("<eos>")[0]),
        str(with_end.vocab_size - 1),  # the special token forgotten
        str(first_seen[2]),
        "(97, 32)",
        str(across[2]),
    ]


def q13_2():
    text = "注意力 is attention."
    chinese = sum(ord(ch) > 0x7F for ch in text)
    raw = text.encode("utf-8")
    assert len(raw) == 3 * chinese + (len(text) - chinese)
    cp = ord("注")
    assert cp == 0x6CE8
    bits = f"{cp:016b}"
    high, mid, low = bits[:4], bits[4:10], bits[10:]  # 4 | 6 | 6 bits into 1110xxxx 10xxxxxx 10xxxxxx
    by_hand = [int("1110" + high, 2), int("10" + mid, 2), int("10" + low, 2)]
    assert bytes(by_hand) == "注".encode()
    ascii_only = cl.BytePairEncoder.train("the tokens of attention: it is all attention. " * 3, 40)
    assert all(b < 128 for t in range(256, ascii_only.vocab_size) for b in ascii_only.token_bytes(t))
    assert ascii_only.encode("注") == by_hand and ascii_only.encode("注意力")[:3] == by_hand
    assert len(ascii_only.encode("注意力")) == 9 and ascii_only.decode(ascii_only.encode(text)) == text
    cut = cl.BytePairEncoder().decode(by_hand[:2])
    assert cut == "\ufffd"  # one replacement character for the unfinished character
    return [
        str(len(text)),
        str(len(text) - chinese),
        str(len(raw)),
        str(3 * chinese),
        " ".join(bits[i : i + 4] for i in range(0, 16, 4)),
        high,
        mid,
        low,
        *(f"{b:08b}" for b in by_hand),
        ", ".join(str(b) for b in by_hand),
        f"{cp >> 8}, {cp & 0xFF}",  # the common slip: the code point's two bytes taken as the UTF-8 bytes
        str(len(ascii_only.encode("注意力"))),
        str(2**7 - 1),  # the largest ASCII byte
        str(2**7),
        "1110",
        str(len(bits)),
        str(cl.BytePairEncoder().vocab_size),  # the byte tokens, always there
    ]


def q13_3():
    n_char = 2_000
    models_ = {"bytes": (5_740, 1.10), "BPE": (2_880, 2.00), "characters": (2_000, 3.00)}
    totals = {name: n * loss for name, (n, loss) in models_.items()}
    bpc = {name: total / (n_char * math.log(2)) for name, total in totals.items()}
    for name, (n, loss) in models_.items():  # the same as bits per token times tokens per character
        assert math.isclose(bpc[name], loss / math.log(2) * (n / n_char))
    by_token = sorted(models_, key=lambda k: models_[k][1])
    by_char = sorted(models_, key=bpc.get)
    assert by_token == ["bytes", "BPE", "characters"] and by_char == ["BPE", "characters", "bytes"]
    per_char_bytes = models_["bytes"][0] / n_char
    uniform_bytes = math.log2(256) * per_char_bytes
    uniform_chars = math.log2(2_364)
    return (
        [g(round(t)) for t in totals.values()]
        + [f"{n_char * math.log(2):,.4f}"]
        + [f4(v) for v in bpc.values()]
        + [f"{per_char_bytes:.2f}", "256", f"{uniform_bytes:.2f}", g(2_364), f4(uniform_chars)]
        + [f"{math.log2(256 + 2_364) * 1.113:.2f}", g(256 + 2_364), "1.113"]  # notebook 13's table: byte fallback
        + [f4(t / n_char) for t in totals.values()]  # nats per character: ln 2 forgotten
        + [f4(loss / math.log(2)) for _, loss in models_.values()]  # bits per token: N_char not used
    )


def q13_4():
    def student_train(text, num_merges):  # the question's code, as printed
        ids = list(text.encode("utf-8"))
        merges = []
        for i in range(num_merges):
            counts = Counter(zip(ids, ids[1:]))
            pair = counts.most_common(1)[0][0]
            ids = cl.merge_pair(ids, pair, 256 + i)
            merges.append(pair)
        return merges

    def student_decode(ids, pieces):
        return "".join(pieces[t].decode("utf-8") for t in ids)

    toy = "the tiny token, the tidy tokens, the tiniest tokens"
    theirs = student_train(toy, 3)
    assert theirs == [(32, 116), (104, 101), (257, 256)]
    two = cl.merge_pair(cl.merge_pair(list(toy.encode("utf-8")), (32, 116), 256), (104, 101), 257)
    assert Counter(zip(two, two[1:]))[257, 256] == 3  # "he t": the t of the next word, three times
    ours = cl.BytePairEncoder.train(toy, 3).merges
    assert ours == plain_bpe(toy, 3, pattern=SPLIT_PATTERN) == [(32, 116), (101, 110), (104, 101)]
    # which fault makes which difference: each fixed alone
    assert plain_bpe(toy, 3, pattern=SPLIT_PATTERN, ties="first")[1] == (104, 101)  # the tie rule: 'he' for 'en'
    assert plain_bpe(toy, 3, pattern=None)[2] == (101, 256)  # no chunks: a token across a word boundary
    after_first = cl.merge_pair(list(toy.encode("utf-8")), (32, 116), 256)
    counts = Counter(zip(after_first, after_first[1:]))
    tied = sorted(p for p, c in counts.items() if c == 3)
    assert len(tied) == 7 and (101, 110) in tied and min(tied) == (101, 110)
    pieces = [bytes([b]) for b in range(256)] + [b"\xe5\xba"]  # the two tokens of 床, as notebook 13 shows them
    with pytest.raises(UnicodeDecodeError):
        student_decode([256, 0x8A], pieces)
    assert b"".join(pieces[t] for t in [256, 0x8A]).decode("utf-8") == "床"
    # any merges give an exact round trip once decode joins the bytes first
    student_tok = cl.BytePairEncoder(theirs, pattern=None)
    assert student_tok.decode(student_tok.encode(toy + " 床前明月光")) == toy + " 床前明月光"
    return ["(101, 110)", "(257, 256)", str(len(tied))]


def q14_1():
    lengths, S = [4], 6
    mask = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]  # (B, S): the source's padding mask
    row = "(" + ", ".join(str(v) for v in mask[0].tolist()) + ")"
    assert row == "(True, True, True, True, False, False)"
    return [row]


def q14_2():
    first = {"a": Fraction(5, 10), "b": Fraction(4, 10), "c": Fraction(1, 10)}
    second = {
        "a": dict(zip("abc", (Fraction(4, 10), Fraction(3, 10), Fraction(3, 10)))),
        "b": dict(zip("abc", (Fraction(9, 10), Fraction(5, 100), Fraction(5, 100)))),
        "c": dict(zip("abc", (Fraction(5, 10), Fraction(25, 100), Fraction(25, 100)))),
    }
    every = {x + y: first[x] * second[x][y] for x in "abc" for y in "abc"}
    greedy_first = max(first, key=first.get)
    greedy = greedy_first + max(second[greedy_first], key=second[greedy_first].get)
    beam = sorted(first, key=first.get, reverse=True)[:2]
    extensions = {p + y: first[p] * second[p][y] for p in beam for y in "abc"}
    kept = sorted(extensions, key=extensions.get, reverse=True)[:2]
    best = max(every, key=every.get)
    assert (greedy, kept, best) == ("aa", ["ba", "aa"], "ba")
    return [f"{float(v):.2f}" for v in extensions.values()] + [
        f"{float(every['ca']):.2f}",
        f4(math.log(every[best])),
        f4(math.log(every[greedy])),
        "0.9",
        "0.4",
    ]


def q14_3():
    return []


def q15_1():
    x = torch.tensor([1.0, 3.0], dtype=torch.float64)
    centred = x - x.mean()
    layer_norm = centred / centred.pow(2).mean().sqrt()
    rms = x.pow(2).mean().sqrt()
    assert layer_norm.tolist() == [-1.0, 1.0] and x.pow(2).mean() == centred.pow(2).mean() + x.mean() ** 2
    from course_lib.modern import RMSNorm  # a second opinion (its eps made tiny)

    torch.testing.assert_close(RMSNorm(2, eps=1e-300).double()(x), x / rms, rtol=1e-12, atol=0)
    return [f4(rms.item()), f4((x / rms)[0].item()), f4((x / rms)[1].item())]


def q15_2():
    layers, d, r = 32, 4096, 16
    per_matrix = r * (d + d)
    lora, full = 2 * layers * per_matrix, 2 * layers * d * d
    assert (8 * full) >> 30 == 8 and (8 * lora) >> 20 == 64  # 8 GiB and 64 MiB
    return [str(2 * d), str(2 * layers), g(per_matrix), g(lora), g(full), f"{100 * lora / full:.2f} %", g(8 * full),
            g(8 * lora)]  # fmt: skip


def q15_3():
    return []


# ------------------------------------------------------------------------------------- the recall questions


def q02_4():
    n, d = 128, 512
    attention, recurrent = n * n * d, n * d * d
    assert recurrent // attention == d // n
    return [g(attention), g(recurrent), str(d // n)]


def q04_4():
    big32 = torch.finfo(torch.float32).max
    s = torch.tensor([1000.0, 1000.0])  # float32
    naive = torch.exp(s) / torch.exp(s).sum()
    assert torch.isnan(naive).all()
    stable = torch.exp(s - s.max()) / torch.exp(s - s.max()).sum()
    torch.testing.assert_close(stable, torch.softmax(s, -1))
    assert torch.isfinite(torch.exp(torch.tensor(88.72))) and torch.isinf(torch.exp(torch.tensor(88.73)))
    return [f"{math.log(big32):.2f}", f"{stable[0].item():g}", "1000"]


def q05_4():
    n, n_big = 4, 100
    causal = cl.causal_mask(n)
    assert torch.equal(causal, torch.ones(n, n, dtype=torch.bool).tril())
    padding = torch.tensor([True] * (n - 1) + [False])
    combined = causal & padding[None, :]
    assert not combined[:, -1].any() and combined[-1].sum() == n - 1
    return [str(int(causal.sum())), g(int(cl.causal_mask(n_big).sum())), str(n_big), g(n_big * n_big // 2)]


def q06_4():
    D, H, B, L = 12, 3, 2, 5
    d_k = D // H
    layer = cl.MultiHeadAttention(D, H)
    count = sum(p.numel() for p in layer.parameters())
    assert count == 4 * D * D + 4 * D
    out = layer(torch.zeros(B, L, D))
    assert tuple(out.shape) == (B, L, D)
    return [str(d_k), f"({B}, {H}, {L}, {d_k})", f"({B}, {H}, {L}, {L})", f"({B}, {L}, {D})", g(4 * D * D)] + [
        str(4 * D),
        g(count),
        f"({B}, {L}, {L})",  # the common slip: one head's scores
    ]


def q07_4():
    D, base = 8, 10000
    omega = cl.sinusoidal_frequencies(D).double().tolist()
    ours = [base ** (-2 * i / D) for i in range(D // 2)]
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(omega, ours))
    return [str(base)] + [f"{w:g}" for w in ours] + [f4(2 * math.pi / ours[0]), f"{2 * math.pi / ours[-1]:,.4f}"]


def q09_4():
    def width(layers, k):
        return 1 + layers * (k - 1)

    conv = torch.nn.Conv2d(1, 1, 3, padding=1, bias=False)
    assert width(3, 3) == 7 and width(2, 5) == 9
    stack = torch.nn.Sequential(conv, conv, conv)  # a pixel's gradient reaches a 7 x 7 window
    x = torch.zeros(1, 1, 15, 15, requires_grad=True)
    stack(x)[0, 0, 7, 7].backward()
    assert int((x.grad[0, 0] != 0).any(0).sum()) <= width(3, 3)
    return [str(width(3, 3)), str(width(2, 5)), str(3 * 3), str(5 * 5)]


def q11_4():
    D, H, B, L = 64, 4, 8, 20
    block = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=4 * D, batch_first=True, norm_first=True)
    x = torch.zeros(B, L, D)
    assert tuple(block(x).shape) == (B, L, D) and block.linear1.out_features == 4 * D
    return [f"({B}, {L}, {D})", str(4 * D), f"({B}, {L}, {4 * D})", f"({B}, {L}, {L})"]


def q12_5():
    return []


def q13_5():
    base = cl.BytePairEncoder().vocab_size
    merges = 1000
    sizes = {word: len(word.encode("utf-8")) for word in ("cat", "猫", "café")}
    assert base == 256 and len("é".encode()) == 2
    return [str(base), *(str(n) for n in sizes.values()), g(merges), g(base + merges)]


EXPECTED = {
    "Q01.1": q01_1,
    "Q01.2": q01_2,
    "Q01.3": q01_3,
    "Q02.1": q02_1,
    "Q02.2": q02_2,
    "Q02.3": q02_3,
    "Q02.4": q02_4,
    "Q03.1": q03_1,
    "Q03.2": q03_2,
    "Q03.3": q03_3,
    "Q04.1": q04_1,
    "Q04.2": q04_2,
    "Q04.3": q04_3,
    "Q04.4": q04_4,
    "Q05.1": q05_1,
    "Q05.2": q05_2,
    "Q05.3": q05_3,
    "Q05.4": q05_4,
    "Q06.1": q06_1,
    "Q06.2": q06_2,
    "Q06.3": q06_3,
    "Q06.4": q06_4,
    "Q07.1": q07_1,
    "Q07.2": q07_2,
    "Q07.3": q07_3,
    "Q07.4": q07_4,
    "Q08.1": q08_1,
    "Q08.2": q08_2,
    "Q08.3": q08_3,
    "Q09.1": q09_1,
    "Q09.2": q09_2,
    "Q09.3": q09_3,
    "Q09.4": q09_4,
    "Q10.1": q10_1,
    "Q10.2": q10_2,
    "Q10.3": q10_3,
    "Q11.1": q11_1,
    "Q11.2": q11_2,
    "Q11.3": q11_3,
    "Q11.4": q11_4,
    "Q12.1": q12_1,
    "Q12.2": q12_2,
    "Q12.3": q12_3,
    "Q12.4": q12_4,
    "Q12.5": q12_5,
    "Q13.1": q13_1,
    "Q13.2": q13_2,
    "Q13.3": q13_3,
    "Q13.4": q13_4,
    "Q13.5": q13_5,
    "Q14.1": q14_1,
    "Q14.2": q14_2,
    "Q14.3": q14_3,
    "Q15.1": q15_1,
    "Q15.2": q15_2,
    "Q15.3": q15_3,
}


# ---------------------------------------------------------------------------------------------- parsing


def questions(text: str = TEXT, heading: re.Pattern = HEADING) -> dict[str, dict]:
    """Every question of a bank's page (the English by default; tests/test_exam_bank_zh.py reads the Chinese): its
    heading fields and its text up to the next heading."""
    found = {}
    matches = list(heading.finditer(text))
    for match, nxt in zip(matches, [*matches[1:], None]):
        end = nxt.start() if nxt else len(text)
        body = text[match.end() : end]
        body = re.split(r"^#{2,3} ", body, maxsplit=1, flags=re.M)[0]  # stop at a section heading
        assert match["id"] not in found, f"question id {match['id']} used twice"
        found[match["id"]] = {**match.groupdict(), "body": body}
    return found


QUESTIONS = questions()


def parts(body: str, markers: tuple[str, ...] = PARTS) -> dict[str, str]:
    """A question's three parts: the question, the worked answer and the marking notes (``markers`` head them)."""
    positions = [body.find(p) for p in markers]
    assert all(p >= 0 for p in positions), f"missing one of {markers}"
    assert positions == sorted(positions), f"the parts must come in the order {markers}"
    question, worked, marking = (body[a:b] for a, b in zip(positions, [*positions[1:], len(body)]))
    return {"question": question, "worked": worked, "marking": marking}


def numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text.replace("{,}", ",")))


def committed_notebooks() -> list[str]:
    """The notebooks git tracks (a notebook still being written is left alone); all present ones without git."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "notebooks"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
        ).stdout
        return [Path(line).name for line in out.splitlines()]
    except (OSError, subprocess.SubprocessError):
        return [path.name for path in NOTEBOOKS_DIR.glob("*.ipynb")]


def notebooks_with_questions() -> list[str]:
    """Every committed notebook from 01 on (a notebook still being written, not yet committed, is left alone)."""
    return sorted({m[1] for name in committed_notebooks() if (m := re.fullmatch(r"(\d\d)_.*\.ipynb", name))} - {"00"})


# ------------------------------------------------------------------------------------------------ tests


def test_the_page_says_it_is_for_lecturers_only():
    top = TEXT[:1500].lower()
    assert "for lecturers" in top and "do not hand out" in top
    assert "not part of the book" in top and "handouts" in top


@pytest.mark.parametrize("nb", notebooks_with_questions())
def test_every_notebook_has_three_kinds_of_question(nb):
    mine = [q for q in QUESTIONS.values() if q["nb"] == nb]
    assert len(mine) >= 3, f"notebook {nb}: {len(mine)} questions in docs/exam_bank.md (at least 3 wanted)"
    kinds = {q["kind"] for q in mine}
    assert kinds == {"derive", "compute", "spot"}, f"notebook {nb}: kinds {sorted(kinds)}"
    assert re.search(rf"^## Notebook {nb} · ", TEXT, re.M), f"no section '## Notebook {nb} · ...'"


def test_questions_are_numbered_in_order_and_sections_match():
    ids = [m["id"] for m in HEADING.finditer(TEXT)]
    assert ids == sorted(ids, key=lambda i: (i[1:3], int(i.split(".")[1]))), ids
    for match in HEADING.finditer(TEXT):
        section = [m for m in re.finditer(r"^## Notebook (\d\d) · ", TEXT[: match.start()], re.M)][-1]
        assert section.group(1) == match["nb"], f"{match['id']} sits in the section of notebook {section.group(1)}"


@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_each_question_has_a_worked_answer_and_marking_that_add_up(qid):
    q = QUESTIONS[qid]
    p = parts(q["body"])
    assert len(p["worked"].split()) >= 40, f"{qid}: the worked answer is too short to be step by step"
    split = [int(x) for x in re.findall(r"^- (\d+) points?:", p["marking"], re.M)]
    assert split, f"{qid}: the marking notes split no points ('- 2 points: ...')"
    assert sum(split) == int(q["points"]), f"{qid}: marking bullets add up to {sum(split)}, heading says {q['points']}"
    assert re.search(r"common (wrong|slip|mistake|error)", p["marking"], re.I), f"{qid}: no common wrong answers"
    assert 2 <= int(q["minutes"]) <= 15


def test_every_question_has_a_check_and_every_check_a_question():
    assert set(EXPECTED) == set(QUESTIONS), (
        f"without a check: {sorted(set(QUESTIONS) - set(EXPECTED))}; "
        f"checks without a question: {sorted(set(EXPECTED) - set(QUESTIONS))}"
    )


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_worked_answers_show_the_recomputed_numbers(qid):
    if qid not in QUESTIONS:
        pytest.fail(f"{qid} is not on the page")
    p = parts(QUESTIONS[qid]["body"])
    expected = EXPECTED[qid]()
    answer = p["worked"] + p["marking"]
    shown = (answer + p["question"]).replace("{,}", ",")  # LaTeX writes 23{,}600 for 23,600
    missing = [s for s in expected if s not in shown]
    assert not missing, f"{qid}: the page does not show these recomputed values as written: {missing}"
    allowed = numbers(" ".join(expected)) | numbers(p["question"])
    unchecked = sorted(x for x in numbers(answer) if x not in allowed and not (x.isdigit() and int(x) <= FREE_INTEGERS))
    assert not unchecked, f"{qid}: numbers in the answer that no check computes: {unchecked}"


# ------------------------------------------------------------------------------------------ building a paper

GUIDE = ROOT / "docs" / "lecturers_guide.md"
TIME_SHARE = (Fraction(75, 100), Fraction(85, 100))  # the questions' minutes over the paper's minutes
MIN_RECALL = 10
PAPER = re.compile(
    r"^- \*\*Example (?P<name>midterm|final[^*]*)\*\* \((?P<minutes>\d+) minutes, notebooks (?P<covers>[^)]+)\): "
    r"(?P<ids>Q\d\d\.\d+(?:,\s+Q\d\d\.\d+)*)\.$",
    re.M,
)


def covered(text: str) -> set[str]:
    """'01–08 and 11–14' -> {'01', ..., '08', '11', ..., '14'}"""
    out = set()
    for first, last in re.findall(r"(\d\d)–(\d\d)", text):
        out |= {f"{i:02d}" for i in range(int(first), int(last) + 1)}
    return out


def paper_problems(ids: list[str], minutes: int, covers: set[str]) -> list[str]:
    """What breaks the bank's rule for building a paper (empty: nothing)."""
    qs = [QUESTIONS[i] for i in ids]
    problems = []
    total = sum(int(q["minutes"]) for q in qs)
    low, high = (math.ceil(minutes * TIME_SHARE[0]), math.floor(minutes * TIME_SHARE[1]))
    if not low <= total <= high:
        problems.append(f"{total} minutes of questions, the rule wants {low} to {high}")
    notebooks = [q["nb"] for q in qs]
    if len(set(notebooks)) < len(notebooks) or not set(notebooks) <= covers:
        problems.append(f"notebooks {notebooks}: one question each, from {sorted(covers)}")
    if len(set(notebooks)) < math.ceil(len(covers) / 2):
        problems.append(f"{len(set(notebooks))} notebooks, fewer than half of {len(covers)}")
    if not any(q["level"] == "recall" for q in qs) or not any(q["kind"] == "compute" for q in qs):
        problems.append("no recall question or no compute question")
    points = sum(int(q["points"]) for q in qs)
    analyse = sum(int(q["points"]) for q in qs if q["level"] == "analyse")
    if 4 * analyse < points:
        problems.append(f"{analyse} of {points} points at level analyse, less than a quarter")
    return problems


def exam_minutes() -> dict[str, int]:
    """The lecturer's guide's exam lengths, from its assessment table."""
    plan = GUIDE.read_text(encoding="utf-8").split("## Assessment", 1)[1]
    found = dict(re.findall(r"^\| (midterm|final) exam \| \d+ % \| (\d+) minutes", plan, re.M))
    assert set(found) == {"midterm", "final"}, found
    return {name: int(m) for name, m in found.items()}


def test_the_bank_states_the_rule_for_building_a_paper():
    rule = TEXT.split("## Building a paper", 1)[1].split("\n## ", 1)[0]
    low, high = (int(x * 100) for x in TIME_SHARE)
    assert f"{low} to {high} % of the paper's minutes" in rule
    for name, minutes in exam_minutes().items():
        share = (math.ceil(minutes * TIME_SHARE[0]), math.floor(minutes * TIME_SHARE[1]))
        assert f"{share[0]} to {share[1]}" in rule and f"{minutes}-minute {name}" in rule, (name, share)


def test_the_example_papers_follow_the_rule_and_the_guides_exam_lengths():
    papers = list(PAPER.finditer(TEXT))
    names = [p["name"].split(",")[0] for p in papers]
    assert names.count("midterm") >= 1 and names.count("final") >= 1, names
    lengths = exam_minutes()
    for paper in papers:
        kind = paper["name"].split(",")[0]
        assert int(paper["minutes"]) == lengths[kind], f"{paper['name']}: the guide gives {lengths[kind]} minutes"
        ids = re.split(r",\s+", paper["ids"])
        assert set(ids) <= set(QUESTIONS), f"{paper['name']}: unknown questions {set(ids) - set(QUESTIONS)}"
        problems = paper_problems(ids, int(paper["minutes"]), covered(paper["covers"]))
        assert not problems, f"{paper['name']}: {problems}"
    midterm = next(p for p in papers if p["name"] == "midterm")
    assert covered(midterm["covers"]) == {f"{i:02d}" for i in range(1, 8)}, "the midterm covers weeks 1-7"


def test_the_rule_catches_a_paper_that_does_not_fit():
    midterm = ["Q01.1", "Q02.2", "Q03.1", "Q04.3", "Q05.2", "Q06.2", "Q07.3"]  # one of each: 70 minutes in 60
    assert any("minutes of questions" in p for p in paper_problems(midterm, 60, covered("01–07")))
    assert any(
        "analyse" in p for p in paper_problems(["Q01.1", "Q02.4", "Q03.1", "Q04.2", "Q07.1"], 60, covered("01–07"))
    )


def test_the_bank_has_enough_recall_questions():
    recall = sorted(q for q, fields in QUESTIONS.items() if fields["level"] == "recall")
    assert len(recall) >= MIN_RECALL, f"{len(recall)} recall questions: {recall}"
