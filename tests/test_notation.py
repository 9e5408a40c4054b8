"""One notation for the whole course (docs/glossary.md, "Notation"; issue 31): the notebooks' prose, and the pages of
docs/ that teach (glossary, misconceptions, exam bank, lecturers' guide), use the symbols stated there, and none of the
old ones: $D_h$ or $N_h$ or $d_\\text{head}$ for the width and number of heads (the course writes $d_k$ and $H$),
$L_q$/$L_k$ for the numbers of queries and keys ($L$ and $S$), column-vector projections such as $W_q x$ (tokens are row
vectors: $x W_q$), and upper-case projection subscripts such as $W_Q$ or $W_O^{(h)}$ (the course writes $W_q$, ...,
$W_o$, as the code's `w_q`, ..., `w_o`; the named circuits $W_{OV}$ and $W_{QK}$ keep theirs), and a loss written $L$
in a derivative such as $\\partial L / \\partial a$ ($\\mathcal{L}$: $L$ is the number of queries), and the matrix
of scores written $S$, as in $S = QK^\\top$ or $S_{ij}$ (the course writes $Z = QK^\\top$: $S$ is the number of keys).
An image's height and width are $H_\\text{img}$ and $W_\\text{img}$, never $H \\times W$ or $HW/P^2$ ($H$ is the number
of heads).
The printed legends of the notebooks' code cells use the code's names: `Dk` for the head width, never `Dh`, `D_h` or
`N_h`; and their code names the numbers of queries and keys `L` and `S`, never `L_q` or `L_k`, and never calls the
score matrix `S` (`Z`, `Z_ex`, `scores`), in code or in what it prints.
The sequence models (notebooks 12-14, issue 43) keep one notation too, in the notebooks (prose, code and output) and
the pages of docs/: the vocabulary's size is $V$, never $|\\mathcal{V}|$ or $|V|$; $M$ is the number of BPE merges from
notebook 12 on and in the glossary, never the encoder's memory; the end-of-sequence token has the one name the
glossary gives it (`<eos>`, "end-of-sequence token"), never `</s>`, `<|endoftext|>` or "end token"; and exposure bias
is called that, never "the exposure gap". The beam width is $b$ from notebook 14 on and in docs/ (issue 43), never
$K$, which is the matrix of keys. From notebook 12 on $V$ is a vocabulary's
size only, never the matrix of values; the notation table defines $F$, $N$ and $V$ (issue 43), and $M$, $P$, $\\tau$,
$T$ and $|y|$ (the number of merges, a prompt's length, the temperature, the longest output a search writes and one
output's length)."""

import json
import re

import pytest

from course_lib.paths import NOTEBOOKS_DIR, ROOT

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = ROOT / "docs" / "glossary.md"
DOCS = [ROOT / "docs" / name for name in ("glossary.md", "misconceptions.md", "exam_bank.md", "lecturers_guide.md")]
# The Chinese exam bank too, written by hand rather than generated from the English: these checks read its maths and
# its code tokens, the same in both languages (tests/test_exam_bank_zh.py keeps its formulas the English ones).
DOCS.append(ROOT / "docs" / "zh" / "exam_bank.md")


def doc_id(path) -> str:
    """A page's path under docs/ ('glossary.md', 'zh/exam_bank.md')."""
    return path.relative_to(ROOT / "docs").as_posix()


# A cell that quotes a paper in the paper's own symbols says so with this HTML comment (invisible when rendered),
# and maps them to the course's symbols in the same cell.
PAPERS_NOTATION = "<!-- paper's notation"
OLD = {
    r"(?<![\w\\])D_h\b|D_\{h\}": "the width of one head is $d_k$",
    r"(?<![\w\\])N_h\b|N_\{h\}": "the number of heads is $H$",
    r"d_\{?\\text\{head\}|(?<![\w`])d_head\b(?!`)": "the width of one head is $d_k$",
    r"(?<![\w\\])L_q\b|(?<![\w\\])L_k\b|L_\{q\}|L_\{k\}": "the numbers of queries and keys are $L$ and $S$",
    r"(?<![\w\\])W_\{?[qkvQKV]\}?(?:\^\{?\(h\)\}?)?\s*x\b": "tokens are row vectors: $x W_q$, not $W_q x$",
    r"d_\{\\text\{model\}\}\s*/\s*h\b": "the number of heads is $H$ (lower-case $h$ numbers one head)",
    r"(?<![\\_])W_(?:[QKVO](?![A-Za-z])|\{[QKVO]\})": "projections have lower-case subscripts: $W_q, W_k, W_v, W_o$",
    r"\\partial\s*L(?![\w])": "the loss is $\\mathcal{L}$ ($L$ is the number of queries)",
    # an image's height and width: C x H x W, HW/P^2, H/P, W/P (the course writes H_img, W_img: H numbers the heads)
    r"(?<![\w\\])H\s*(?:\\times|×)\s*W(?![\w])|(?<![\w\\])HW\s*/|\\frac\{[HW]\}\{P\}|(?<![\w\\])[HW]\s*/\s*P(?![\w])": (
        "an image is $H_\\text{img} \\times W_\\text{img}$ pixels ($H$ is the number of heads)"
    ),
    # S = QK^T, S = Q K^T, S = QQ^T, S = X M X^T; S_{ij}, S_{im}; softmax(S), softmax(Pi S Pi^T); S/sqrt(d_k); S^T
    r"(?<![\w\\])S\s*=\s*(?:Q\s*[KQ]|X\s*M)|(?<![\w\\])S_\{?i\s*,?\s*[jm]\}?(?!\w)"
    r"|\\operatorname\{softmax\}[^$(]{0,30}\(\s*(?:\\Pi\s*)?S(?!\w)|(?<![\w\\])S\s*/\s*\\sqrt|(?<![\w\\])S\^\{?\\top": (
        "the score matrix is $Z = QK^\\top$ ($S$ is the number of keys)"
    ),
}
# The old names of the two lengths in code (the code writes L and S, as the notation table says).
OLD_CODE = re.compile(r"(?<![\w.])L_[qk](?!\w)")
# The score matrix named S in code (the code writes Z, Z_ex, scores; S is the number of keys): S or S_... assigned a
# matrix product or a transpose, passed to a softmax, or one of the old names of notebook 03.
OLD_SCORE_CODE = re.compile(
    r"^[ \t]*S(?:_\w+)?[ \t]*=(?!=)[^\n]*(?:@|\bmatmul\(|\beinsum\(|\bbmm\(|\.T\b|\.mT\b|\.transpose\()"
    r"|softmax\(\s*S(?:_\w+)?\s*[,/)]|(?<![\w.])S_(?:ex|ex_scaled|tied|illus_row1)(?!\w)",
    re.M,
)
# ... and in what code cells print: "S=QK^T", "S - S^T".
OLD_SCORE_PRINTED = re.compile(r"(?<![\w\\])S\s*=\s*Q\s*K|(?<![\w\\])S\^T\b")
# The old head-width names in what code cells print (stream text and text/plain): the code says Dk.
OLD_PRINTED = re.compile(r"(?<![\w\\])(?:Dh|D_h|N_h)(?!\w)|D_\{h\}|N_\{h\}")


def prose(path) -> list[tuple[int, str]]:
    """(cell index, Markdown text) up to "Further reading", without code blocks, code spans and link targets."""
    out = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        if re.match(r"\s*##\s+Further reading", text, re.I):
            break
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        text = re.sub(r"`[^`\n]*`|\]\([^)]*\)", " ", text)
        out.append((i, text))
    return out


def doc_prose(path) -> list[tuple[int, str]]:
    """(line number, paragraph) of a Markdown page, without code blocks, code spans and link targets."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m[0].count("\n"), path.read_text(encoding="utf-8"), flags=re.S)
    out = []
    for m in re.finditer(r"(?:[^\n]+\n?)+", text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, re.sub(r"`[^`\n]*`|\]\([^)]*\)", " ", m[0])))
    return out


def printed(path) -> list[tuple[int, str]]:
    """(cell index, text) of what each code cell printed: stream output and text/plain results."""
    out = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            text = output.get("text") if output["output_type"] == "stream" else output.get("data", {}).get("text/plain")
            if text:
                out.append((i, "".join(text)))
    return out


def old_printed(outputs: list[tuple[int, str]]) -> list[str]:
    return [
        f"code cell {i} printed {m[0]!r}: ...{text[max(0, m.start() - 40) : m.end() + 20]!r}..."
        for i, text in outputs
        for m in OLD_PRINTED.finditer(text)
    ]


def old_symbols(cells: list[tuple[int, str]], where: str = "markdown cell") -> list[str]:
    found = []
    for i, text in cells:
        for pattern, rule in OLD.items():
            if PAPERS_NOTATION in text and ("D_h" in pattern or "N_h" in pattern):
                continue
            for m in re.finditer(pattern, text):
                context = text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
                found.append(f"{where} {i}: {m[0]!r} ({rule}): ...{context}...")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_uses_the_course_notation(path):
    found = old_symbols(prose(path))
    assert not found, f"{path.name}: old symbols (see docs/glossary.md#notation):\n" + "\n".join(found)


@pytest.mark.parametrize("path", [p for p in DOCS if p.exists()], ids=doc_id)
def test_the_docs_use_the_course_notation(path):
    found = old_symbols(doc_prose(path), where="line")
    assert not found, f"docs/{doc_id(path)}: old symbols (see docs/glossary.md#notation):\n" + "\n".join(found)


def code(path) -> list[tuple[int, str]]:
    """(cell index, source) of every code cell."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "code"]


def matches(cells: list[tuple[int, str]], pattern, where="code cell") -> list[str]:
    """Every match of ``pattern`` in the (index, text) pairs ``cells``, with 40 characters of context before it."""
    return [
        f"{where} {i}: {m[0]!r}: ...{s[max(0, m.start() - 40) : m.end() + 20]!r}..."
        for i, s in cells
        for m in pattern.finditer(s)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_names_the_lengths_L_and_S(path):
    found = matches(code(path), OLD_CODE)
    rule = "L_q/L_k in code (the notation's L and S, see docs/glossary.md#notation)"
    assert not found, f"{path.name}: {rule}:\n" + "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_and_legends_name_the_score_matrix_Z(path):
    found = matches(code(path), OLD_SCORE_CODE) + matches(printed(path), OLD_SCORE_PRINTED, "output of code cell")
    rule = "the score matrix named S (the notation's Z = QK^T; S is the number of keys, see docs/glossary.md#notation)"
    assert not found, f"{path.name}: {rule}:\n" + "\n".join(found)


def test_the_checkers_flag_a_score_matrix_written_S_and_spare_the_number_of_keys():
    # The old forms, as notebooks 03, 07 and 08 had them.
    cells = [
        (0, r"Row $i$ of $S = QK^\top$; $A_{ij} = \exp(S_{ij}/\sqrt{d_k}) / \sum_m \exp(S_{im}/\sqrt{d_k})$"),
        (1, r"So $S = X M X^\top$. Then $S = QQ^\top$, or $S = Q K^\top$, with $S_{i,j}$ and $S^\top$"),
        (2, r"$S = QK^\top/\sqrt{d_k}$, $\operatorname{softmax}(\Pi S\Pi^\top)$, $A = \operatorname{softmax}(S)$"),
        (3, r"$\operatorname{softmax}(S/\sqrt{d})$, $\operatorname{softmax}_{\text{row}}\left(S / \sqrt{d_k}\right)$"),
        (4, r"$Z = QK^\top$, $Z_{ij}$, $S = 7$ keys, $L = S = d_k$, $L \times S$ scores, $S = T + L$, $s_{ij}$"),
    ]
    found = [f.split(":")[0] for f in old_symbols(cells)]
    assert found == [f"markdown cell {i}" for i, count in enumerate((3, 5, 3, 2)) for _ in range(count)], found
    sources = [
        (0, "S = Q @ K.T\nA = torch.softmax(S / math.sqrt(d_k), dim=-1)"),
        (1, "S_ex = Q_ex @ K_ex.T\nA_ex = torch.softmax(S_ex_scaled, dim=-1)\nshow(S_tied)"),
        (2, "    S = q @ k.transpose(-2, -1) / math.sqrt(d)\nS_h = torch.einsum('bld,bsd->bls', q, k)"),
        (3, "batch, heads, L, S, d_k, d_v = 2, 3, 5, 7, 8, 6\nk = torch.randn(batch, heads, S, d_k)"),
        (4, "S = tokens.shape[1]\nS_left, length = 5, 3\nmask = torch.rand(L, S) > 0.4\nZ = Q @ K.T\nS == Z.shape[-1]"),
    ]
    found = [f.split(":")[0] for f in matches(sources, OLD_SCORE_CODE)]
    assert found == ["code cell 0"] * 2 + ["code cell 1"] * 3 + ["code cell 2"] * 2, found
    outputs = [(0, " S=QK^T: (4, 4)\nS - S^T\n"), (1, " Z=QK^T: (4, 4)\nL = 5, S = d_k = 7 also runs, (L, S) = (5, 7)")]
    found = [f.split(":")[0] for f in matches(outputs, OLD_SCORE_PRINTED, "output")]
    assert found == ["output 0"] * 2, found


def test_the_checker_flags_an_image_written_H_by_W():
    cells = [
        (0, r"Cut the $C \times H \times W$ image into $N = HW/P^2$ patches, $\frac{H}{P} \cdot \frac{W}{P}$"),
        (1, r"grid row $\lfloor n / (W/P) \rfloor$, token $n = r \cdot W / P + s$, an $H \times W$ grid"),
        (2, r"$C \times H_\text{img} \times W_\text{img}$, $N = H_\text{img} W_\text{img} / P^2$, $d_k = D/H$"),
        (3, r"$W_o$, a $224 \times 224$ image, $W_\text{img}/P$"),
    ]
    found = [f.split(":")[0] for f in old_symbols(cells)]
    assert found == ["markdown cell 0"] * 4 + ["markdown cell 1"] * 3, found


def test_the_checkers_flag_a_loss_written_L_and_old_length_names_in_code():
    cells = [
        (0, r"$g = \partial L / \partial a$ and $\frac{\partial L}{\partial s}$"),
        (1, r"$\partial \mathcal{L}/\partial s$, $L \times S$ weights, $\partial L_p$ is not the loss"),
    ]
    assert [f.split(":")[0] for f in old_symbols(cells)] == ["markdown cell 0"] * 2
    sources = [(0, "batch, L_q, L_k = 2, 5, 7"), (1, "L, S = 5, 7  # x.L_q, L_qk, my_L_k are other names")]
    assert [f.split(":")[0] for f in matches(sources, OLD_CODE)] == ["code cell 0"] * 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_printed_legends_use_the_codes_head_width(path):
    found = old_printed(printed(path))
    assert not found, f"{path.name}: old head-width names in printed output (the code writes Dk):\n" + "\n".join(found)


def test_the_checker_flags_old_symbols_and_spares_code_and_quoted_papers():
    cells = [
        (0, "Heads of width $D_h = D/H$, $N_h$ of them, a projection $q = W_q x$, $L_q = 5$ queries."),
        (1, "Code such as `Q.view(B, L, H, D_h)` and $x W_q$ with $d_k$, $H$, $L$, $S$ is fine."),
        (2, "<!-- paper's notation: quoted -->\n> with $N_h$ heads of dimension $D_h$ ..."),
        (3, "$Q = XW_Q$, then $W_{K}$, a head's $W_V^{(h)}$ and $W_O$; in plain text W_O^(h)."),
        (4, "The circuits $W_{OV}^{(h)} = W_v^{(h)} W_o^{(h)}$ and $W_{QK}$, `W_O` in code, and W_OV in plain text."),
    ]
    cells = [(i, re.sub(r"`[^`\n]*`", " ", t)) for i, t in cells]
    found = old_symbols(cells)
    assert [f.split(":")[0] for f in found] == ["markdown cell 0"] * 4 + ["markdown cell 3"] * 5, found
    assert [f.split("'")[1] for f in found[4:]] == ["W_Q", "W_{K}", "W_V", "W_O", "W_O"], found


def test_the_printed_checker_flags_old_head_widths_only():
    outputs = [
        (0, "per-head outputs  (2, 3, 5, 4)   (B, H, L, Dh)\nH * Dh = 3 * 4 = 12"),
        (1, "(1, 4, 5, 16) = (B, H_kv, T, D_h); N_h = 4 heads"),
        (2, "(B, H, L, Dk), d_head = 8, DHL, Dhaka, mha.d_head, x_Dh2, D_head"),
    ]
    found = old_printed(outputs)
    assert [f.split(" printed ")[0] for f in found] == ["code cell 0"] * 2 + ["code cell 1"] * 2, found


def test_the_notation_is_stated_once_and_linked_from_notebook_00():
    glossary = GLOSSARY.read_text(encoding="utf-8")
    assert glossary.count("\n## Notation\n") == 1
    table = glossary.split("\n## Notation\n")[1].split("\n## ")[0]
    for symbol in ("$d_k$", "$d_v$", "$H$", "$n$", "$L$, $S$", "$Q = X W_q$", "$Z = QK^\\top$"):
        assert symbol in table, f"the Notation table does not define {symbol}"
    start = "".join("".join(c["source"]) for c in json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))["cells"])
    assert "glossary.md#notation" in start, "notebook 00 should point at the notation table"


# One notation for the sequence models (issue 43): the vocabulary's size is $V$, $M$ counts a BPE tokenizer's merges,
# the end-of-sequence token has the one name the glossary gives it, and exposure bias is called by the glossary's term.
# Each drift below was in notebooks 00, 13 or 14 or in docs/ when the rule was written.
VOCAB_SIZE = re.compile(r"\\mathcal\s*\{?\s*V(?![A-Za-z])|𝒱|\|V\||\\l?vert\s*V\s*\\r?vert")  # |𝒱|, |V| for V
# $M$ in the mathematics of a text (M_i, M^l and {M} included). Before notebook 12 the course names local matrices M,
# each defined where it is used (03's W_q W_k^T, the masks of 05 and 08, 07's rotation, 08's running sum, 09's); from
# the sequence models on, and in the glossary, $M$ is the number of merges of notebook 13, never the encoder's memory.
MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)
M_SYMBOL = re.compile(r"(?<![A-Za-z\\])M(?![A-Za-z])")
M_IS_MERGES_FROM = "12"
# The end-of-sequence token written as a token (in prose, code or output), and named in words: the glossary's entry
# gives the one token and the one term, "end-of-sequence token".
END_TOKEN = re.compile(r"</s>|<\|?(?:end_?of_?text|eos|eot(?:_id)?|end|stop)\|?>", re.I)
END_NAME = re.compile(
    r"\b(?:end|stop|end-of-text|end-of-sentence|EOS|end of (?:the )?(?:sequence|text|sentence))[ -]"
    r"(?:token|marker|symbol)s?\b",
    re.I,
)
# "exposure gap", "exposure problem", ...; and a link to the glossary's entry under another name
EXPOSURE = re.compile(r"\bexposure[ -](?!bias\b)[\w-]+|\[(?!exposure bias\])[^\]]*\]\([^)]*#exposure-bias\)", re.I)


def glossary_end_token() -> str:
    """The end-of-sequence token as docs/glossary.md names it (the first code span of its entry)."""
    entry = re.search(r'<a id="end-of-sequence-token"></a>.*', GLOSSARY.read_text(encoding="utf-8"))
    assert entry, "docs/glossary.md has no end-of-sequence-token entry"
    return re.search(r"`([^`]+)`", entry[0])[1]


def markdown(path) -> list[tuple[int, str]]:
    """(cell index, text) of every Markdown cell as written: code spans, links and Further reading included."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def doc_paragraphs(path) -> list[tuple[int, str]]:
    """(line number, paragraph) of a Markdown page as written, code blocks left out."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m[0].count("\n"), path.read_text(encoding="utf-8"), flags=re.S)
    return [(text.count("\n", 0, m.start()) + 1, m[0]) for m in re.finditer(r"(?:[^\n]+\n?)+", text)]


def hits(cells: list[tuple[int, str]], pattern, where: str, rule: str, unless: str | None = None) -> list[str]:
    """Every match of ``pattern`` in the (index, text) pairs, except the text ``unless``, with its context."""
    return [
        f"{where} {i}: {m[0]!r} ({rule}): ...{text[max(0, m.start() - 40) : m.end() + 30]!r}..."
        for i, text in cells
        for m in pattern.finditer(text)
        if m[0] != unless
    ]


def m_not_merges(cells: list[tuple[int, str]], where: str = "markdown cell") -> list[str]:
    """Each cell (or paragraph) that writes $M$ in its mathematics and does not speak of merges."""
    return [
        f"{where} {i}: $M$ without merges ($M$ is the number of BPE merges): {text[:80]!r}..."
        for i, text in cells
        if "merge" not in text.lower() and any(M_SYMBOL.search(span[0]) for span in MATH.finditer(text))
    ]


def sequence_drifts(texts, sources=(), outputs=(), where: str = "markdown cell") -> list[str]:
    """Every drift from the sequence models' notation in texts (Markdown), code sources and printed outputs."""
    end = glossary_end_token()
    token, term = f"the end-of-sequence token is {end}", "the glossary's term is end-of-sequence token"
    return (
        hits(texts, VOCAB_SIZE, where, "the vocabulary's size is $V$")
        + hits(outputs, VOCAB_SIZE, "output of code cell", "the vocabulary's size is V")
        + hits(texts, END_TOKEN, where, token, unless=end)
        + hits(sources, END_TOKEN, "code cell", token, unless=end)
        + hits(outputs, END_TOKEN, "output of code cell", token, unless=end)
        + hits(texts, END_NAME, where, term)
        + hits(texts, EXPOSURE, where, "the glossary's term is exposure bias")
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_sequence_models_use_one_notation(path):
    found = sequence_drifts(markdown(path), code(path), printed(path))
    if path.name[:2] >= M_IS_MERGES_FROM:
        found += m_not_merges(prose(path))
    assert not found, f"{path.name}: see docs/glossary.md (issue 43):\n" + "\n".join(found)


@pytest.mark.parametrize("path", [p for p in DOCS if p.exists()], ids=doc_id)
def test_the_docs_use_the_sequence_models_notation(path):
    found = sequence_drifts(doc_paragraphs(path), where="line")
    if path == GLOSSARY:
        found += m_not_merges(doc_prose(path), where="line")
    assert not found, f"docs/{doc_id(path)}: see docs/glossary.md (issue 43):\n" + "\n".join(found)


def test_the_sequence_checkers_flag_each_drift_and_spare_the_course_notation():
    assert glossary_end_token() == "<eos>", "the glossary's end-of-sequence token changed: update the examples below"
    texts = [
        (0, r"With $\mathcal{V}$ the vocabulary, $|\mathcal{V}|$ its size, $|\mathcal V|^L$ outputs, "
            r"$\lvert V \rvert$, |V|, |𝒱|"),
        (1, "the end token `</s>`, GPT-2's `<|endoftext|>`, an `<EOS>`, an end-of-text marker and two EOS tokens"),
        (2, "Teacher forcing and the exposure gap; the [exposure problem](../docs/glossary.md#exposure-bias) again"),
        (3, "$V = 256 + M + 2$ tokens for $M$ merges; `<eos>`, the end-of-sequence token; $V$, `V`, $|x|$, $V_{kv}$; "
            "[exposure bias](../docs/glossary.md#exposure-bias); an exposure bias; the end of the sequence; <s>"),
    ]  # fmt: skip
    sources = [(0, 'SPECIALS = ["<pad>", "<s>", "</s>"]'), (1, 'SPECIALS = ["<pad>", "<eos>"]\nids + [EOS]  # eos=EOS')]
    outputs = [(0, "→ </s>, log_probs (b, |V|)"), (1, "vocabulary V = 1,215 and <eos>; (B, L, V)")]
    found = [f.split(":")[0] for f in sequence_drifts(texts, sources, outputs)]
    assert sorted(found) == sorted(
        ["markdown cell 0"] * 6 + ["markdown cell 1"] * 6 + ["markdown cell 2"] * 2 + ["code cell 0"]
        + ["output of code cell 0"] * 2
    ), found  # fmt: skip
    cells = [
        (0, r"$h_2 = h_1 + \operatorname{CA}(\operatorname{LN}_2(h_1), M)$, with $M$ the encoder's output"),
        (1, r"A BPE vocabulary is $256 + M$ + the special tokens: one token per merge."),
        (2, r"The state $M_i = \sum_{j \le i} \phi(k_j) v_j^\top$; its $(L, S)$ weights; $\mathcal{M}$, $Mx$, `M`"),
    ]
    assert [f.split(":")[0] for f in m_not_merges(cells)] == ["markdown cell 0", "markdown cell 2"]


# The beam width is $b$ (issue 43): $K$ is the matrix of keys ($K = X W_k$), so from notebook 14 on, where beam search
# is taught, and in the pages of docs/, a passage that speaks of a beam never writes its width K: not in its maths ("the
# $K$ best prefixes", $K \cdot V$, $K = 2$), not in what a cell prints ("beam search with K = 341") and not in the
# comments and strings of a cell that runs a beam search ("# K = 1 is greedy"). A passage is a Markdown cell, a line of
# printed output, a code cell, or a paragraph, list item or table row of a page. Code names are free (`beam_width`).
BEAM = re.compile(r"\bbeam", re.I)
BEAM_K = re.compile(r"(?<![\w\\.{])K(?![\w^_'(\[{.])")
BEAM_WIDTH_IS_B_FROM = "14"
CODE_TEXT = re.compile(r"#[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'")  # comments and one-line strings
PASSAGE = re.compile(r"\n(?=[ \t]*(?:[-*|]|\d+\.|\([a-z]\))[ \t])")  # a list item, table row or lettered part


def beam_k(passages: list[tuple[int, str]], where: str) -> list[str]:
    """Each K written in a passage that speaks of a beam (the beam width is $b$; $K$ is the matrix of keys)."""
    return hits([(i, t) for i, t in passages if BEAM.search(t)], BEAM_K, where, "the beam width is $b$, $K$ the keys")


def beam_passages(path) -> tuple[list, list, list]:
    """A notebook's Markdown cells (prose), lines of printed output, and comments and strings of its code cells."""
    lines = [(i, line) for i, text in printed(path) for line in text.splitlines()]
    code_text = [(i, "\n".join(CODE_TEXT.findall(s))) for i, s in code(path) if BEAM.search(s)]
    return prose(path), lines, code_text


def beam_width_drifts(path) -> list[str]:
    texts, lines, code_text = beam_passages(path)
    return (
        beam_k(texts, "markdown cell")
        + beam_k(lines, "output of code cell")
        + beam_k(code_text, "comment or string of code cell")
    )


def passages(paragraphs: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(line number, passage) of a page's (line number, paragraph): each list item and table row on its own."""
    out = []
    for line, text in paragraphs:
        for part in PASSAGE.split(text):
            out.append((line, part))
            line += part.count("\n") + 1
    return out


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name[:2] >= BEAM_WIDTH_IS_B_FROM], ids=lambda p: p.stem)
def test_the_beam_width_is_b(path):
    found = beam_width_drifts(path)
    assert not found, f"{path.name}: see docs/glossary.md#notation (issue 43):\n" + "\n".join(found)


@pytest.mark.parametrize("path", [p for p in DOCS if p.exists()], ids=doc_id)
def test_the_docs_write_the_beam_width_b(path):
    found = beam_k(passages(doc_prose(path)), "line")
    assert not found, f"docs/{doc_id(path)}: see docs/glossary.md#notation (issue 43):\n" + "\n".join(found)


def test_the_notation_table_names_the_beam_width_b():
    table = GLOSSARY.read_text(encoding="utf-8").split("\n## Notation\n")[1].split("\n## ")[0]
    rows = [row for row in table.splitlines() if row.startswith("| $b$ |")]
    assert len(rows) == 1 and "beam width" in rows[0], "the Notation table should define $b$, the beam width, once"


def test_the_beam_checker_flags_a_beam_width_K_and_spares_the_keys():
    texts = [
        (0, r"**Beam search** keeps the $K$ best prefixes and scores the $K \cdot V$ extensions; with $K = 1$ ..."),
        (1, r"Above, beam search with $K = 2$ missed the best; a beam (K = 4) of K prefixes"),
        (2, r"A beam of $b = 341$ holds them all; $QK^\top$, $K^\top$, $W_k$, $K_{ij}$, $\mathbf{K}$, KV cache"),
        (3, r"The keys $K = X W_k$ and $K \cdot V$ in a cell that says nothing of the search"),
    ]
    assert [f.split(":")[0] for f in beam_k(texts, "cell")] == ["cell 0"] * 3 + ["cell 1"] * 3
    lines = [(0, "beam K = 2 missed the best: 3 of 12"), (0, "K = 341 without the word"), (1, "beam b = 2, K.T")]
    assert [f.split(":")[0] for f in beam_k(lines, "output")] == ["output 0"]
    source = 'K = integer("beam_width", w)  # K = 1 is greedy\nprint(f"beam search with K = {n}", K)\nQK = q @ K.T'
    assert CODE_TEXT.findall(source) == ['"beam_width"', "# K = 1 is greedy", '"beam search with K = {n}"']
    page = [
        (1, "Intro, the keys $K$."),
        (3, "| $K$ | keys |\n| $b$ | beam width |\n- **beam search** keeps\n  $K$ ones"),
    ]
    assert [line for line, _ in passages(page)] == [1, 3, 4, 5]
    assert [f.split(":")[0] for f in beam_k(passages(page), "line")] == ["line 5"]


# $V$ has two senses in the course (docs/glossary.md#notation, issue 43): the matrix of values $V = X W_v$ in the
# attention notebooks, and a vocabulary's size. From notebook 12 on it is only the size: the values are named in words,
# never written as a matrix V ($V = X W_v$, $Q, K, V$, $A V$ or $A_h V_h$, $\operatorname{softmax}(\dots) V$, $V_h$).
V_IS_VOCABULARY_FROM = "12"
VALUES_V = re.compile(
    r"(?<![\w\\])V\s*=\s*X\s*W_v|(?<![\w\\])Q\s*,\s*K\s*,\s*V(?![\w])|(?<![\w\\])A(?:_\{?\w+\}?)?\s*V(?![\w])"
    r"|\)\s*V(?![\w])|(?<![\w\\])V_\{?h\}?(?![\w])"
)


def values_written_v(cells: list[tuple[int, str]], where: str = "markdown cell") -> list[str]:
    """Each V in the mathematics of a text that is the matrix of values, not a vocabulary's size."""
    maths = [(i, span[0]) for i, text in cells for span in MATH.finditer(text)]
    return hits(maths, VALUES_V, where, "from notebook 12 on $V$ is a vocabulary's size; name the values in words")


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name[:2] >= V_IS_VOCABULARY_FROM], ids=lambda p: p.stem)
def test_v_is_a_vocabulary_size_from_notebook_12_on(path):
    found = values_written_v(prose(path))
    assert not found, f"{path.name}: see docs/glossary.md#notation (issue 43):\n" + "\n".join(found)


def test_the_values_checker_flags_the_value_matrix_and_spares_the_vocabulary_size():
    cells = [
        (0, r"$V = X W_v$, with $Q, K, V$; the output $A V$, a head's $A_h V_h$, $\operatorname{softmax}(Z) V$"),
        (1, r"$V$ tokens, $\ln V$, $V^T$ outputs, $b \cdot V$, $(m, V)$, $z_1, \dots, z_V$, $V = 256 + M + 2$"),
        (2, r"$(N, L, V)$ logits, $|V|$ is flagged elsewhere, $W_v$ and $d_v$ are the values' own symbols, $V_{kv}$"),
    ]
    found = [f.split(":")[0] for f in values_written_v(cells)]
    assert found == ["markdown cell 0"] * 5, found  # A_h V_h once, as V_h


def test_the_notation_table_defines_the_sequence_models_letters():
    table = GLOSSARY.read_text(encoding="utf-8").split("\n## Notation\n")[1].split("\n## ")[0]
    for symbol in ("F", "N", "V", "b", "E", "M", "P", r"\tau", "T", r"\lvert y \rvert"):
        assert f"\n| ${symbol}$ |" in table, f"the Notation table has no row for ${symbol}$"
    v_row = re.search(r"\n\| \$V\$ \|([^\n]*)", table)[1]
    both = "vocabulary" in v_row and "values" in v_row and V_IS_VOCABULARY_FROM in v_row
    assert both, "the $V$ row states both senses, and from which notebook on $V$ is only a vocabulary's size"
