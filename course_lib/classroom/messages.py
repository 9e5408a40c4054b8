"""What a check says, in its reader's language: English, or Chinese for the Chinese edition.

The checkers (:mod:`course_lib.classroom.checks`, with the hints of :mod:`course_lib.classroom.hints`) write their
messages in English, which the English notebooks' stored outputs show and the tests read. :func:`say` gives a
message to the student in the language of the edition they work in: unchanged in English, and in Chinese each of the
checks' phrases (``ZH``, in order) replaced by its Chinese, the numbers, shapes and names kept. A phrase the table
does not know stays English, and a "Not graded" message (the lecturer's: the class report flags it by those words)
is never translated.

The language is ``COURSE_LANGUAGE`` (``en`` or ``zh``) where it is set, else Chinese where the kernel's working
directory, when course_lib was imported, is a folder named ``zh`` (the Chinese notebooks: ``notebooks/zh``, a
student version's ``student/zh``, the release's ``zh``) or a Chinese nbgrader assignment's (``a04zh``, as ``make
assignment`` names one: nbgrader runs a submission in ``autograded/<student>/a04zh``), else English.
"""

from __future__ import annotations

import os
import re

from .integrity import NOT_GRADED

# The start of a refused NumPy's message in Chinese (the class report, classroom.flags, reads it as English's)
NUMPY_ZH_START = "这次检查中不能用 NumPy"
NUMPY_ZH = (
    NUMPY_ZH_START
    + r"：\1 把张量交给了 NumPy（Tensor.numpy；对张量调用 np.asarray 或 np.exp 也会调用它）。这道练习只允许用 "
    "PyTorch 的张量运算：检查会监视答案运行的每一个 PyTorch 运算，以拒绝那些会替它完成工作的库函数，却看不到 NumPy 算了"
    "什么。请让数值始终是张量，改用 torch 的函数（torch.exp、torch.where、.sum(dim=...)、@）；笔记本 00 第 6 节列出了有"
    "这条规则的练习"
)
# (an English phrase as a regular expression, its Chinese): applied in this order, each to the whole message
ZH: tuple[tuple[str, str], ...] = (
    # checks.explain_difference and checks.check_close / check_function / check_answer
    (r"^✓ (.*) agrees with the reference on (\d+) random inputs", r"✓ \1 在 \2 组随机输入上与参考实现一致"),
    (r", without calling ", "，且没有调用 "),
    (r" and (\d+) more$", r" 等（另有 \1 个）"),
    (r"^✓ (.*) is correct$", r"✓ \1 正确"),
    (r" is wrong on trial (\d+) \(inputs: (\[.*?\])\): ", r" 在第 \1 次试验中出错（输入：\2）："),
    (r" raised (\w+): (.*) \(inputs: (\[.*\])\)$", r" 抛出了 \1：\2（输入：\3）"),
    (r": cannot be read as numbers \((.*)\)$", r"：无法读成数字（\1）"),
    (r"expected a torch\.Tensor, got (\w+)", r"应为 torch.Tensor，得到的是 \1"),
    (r" of (\d+) items", r"（共 \1 项）"),
    (r" \(return one tensor, not several\)", "（请只返回一个张量，而不是多个）"),
    (r"shape is ", "形状是 "),
    (r"dtype is ", "dtype 是 "),
    (r" \(its last two dimensions look swapped: a transpose\?\)", "（最后两个维度似乎对调了：漏了或多了转置？）"),
    (
        r" \(the same numbers of elements up to dimensions of size 1: a missing or extra unsqueeze/squeeze\?\)",
        "（元素个数相同，只差大小为 1 的维度：是不是少了或多了一次 unsqueeze/squeeze？）",
    ),
    (
        r" \(the same number of elements in another arrangement: a reshape or view in the wrong order\?\)",
        "（元素个数相同，排列不同：是不是 reshape 或 view 的顺序错了？）",
    ),
    (
        r" \(integers where floats are expected: write 2\.0 rather than 2, or convert with \.float\(\)\)",
        "（应为浮点数却得到了整数：写 2.0 而不是 2，或用 .float() 转换）",
    ),
    (r"(\d+) of (\d+) elements differ; the first is at ", r"\2 个元素中有 \1 个不同；第一个位于 "),
    (r": yours, (.*), is too large$", r"：你的值 \1 偏大"),
    (r": yours, (.*), is too small$", r"：你的值 \1 偏小"),
    (r": yours, (.*), is not a number \(NaN\)$", r"：你的值 \1 不是一个数（NaN）"),
    (r": yours, (.*), is not the expected value$", r"：你的值 \1 不是应有的值"),
    (r": got (\S+), expected (\S+)", r"：得到 \1，应为 \2"),
    (r", expected ", "，应为 "),
    # the size of a difference (hints.difference_size): "(largest absolute difference 0.5; 3 are -inf in yours ...)"
    (r"largest absolute difference ", "最大绝对误差 "),
    (
        r"(\d+) (?:is|are) (a finite value|-inf|inf|NaN) in yours where the reference has "
        r"(a finite value|-inf|inf|NaN)",
        r"有 \1 个元素你的是 \2、参考实现的是 \3",
    ),
    (r"(?<=你的是) a finite value|(?<=参考实现的是) a finite value", "有限值"),
    (r"; (?=有 \d+ 个元素)", "；"),
    (r" \(((?:最大绝对误差|有 \d+ 个元素)[^()]*)\)", r"（\1）"),
    # hints.hint_at_cause (each follows the description after a full stop)
    (
        r"\. You have NaN at (\[[\d, ]*\]) where the expected result is finite: a softmax over a row whose scores are "
        r"all -inf \(every key masked\), or a division by zero\?",
        r"。你的结果在 \1 处是 NaN，而应有的结果是有限值：是不是对分数全为 -inf 的一行"
        r"（每个键都被掩码）做了 softmax，或者除以了零？",
    ),
    (
        r"\. Yours is -inf at (\[[\d, ]*\]) where the reference keeps the value, and each value you set to -inf there "
        r"equals one you kept in the same row: ties broken, where the reference keeps every tied value\?",
        r"。你的结果在 \1 处是 -inf，参考实现保留了那里的值，而你设为 -inf 的每个值都等于你在同一行保留的某个值："
        r"是不是把并列的值拆开了？参考实现会保留所有并列的值。",
    ),
    (
        r"\. Your result is all zeros: did the function return before computing anything\?",
        "。你的结果全是零：函数是不是还没算就返回了？",
    ),
    (
        r"\. Every element of yours is (\S+)((?: \(= [^)]*\))?) times the expected one: a missing, extra or wrong "
        r"scale factor \(such as 1/√d_k\)\?",
        r"。你的每个元素都是应有值的 \1\2 倍：是不是少了、多了或用错了缩放因子（例如 1/√d_k）？",
    ),
    (
        r"\. Yours equals the expected result transposed: rows and columns swapped \(K Qᵀ instead of Q Kᵀ\?\)\.",
        "。你的结果等于应有结果的转置：行和列对调了（写成了 K Qᵀ 而不是 Q Kᵀ？）。",
    ),
    (
        r"\. The expected rows sum to 1 over the last axis \(the keys\) but yours do not, while your columns do: a "
        r"softmax over the wrong axis\? Normalise over dim=-1\.",
        "。应有结果的每一行沿最后一个轴（键）求和为 1，你的却不是，而你的每一列是：softmax 是不是沿错了轴？"
        "请沿 dim=-1 归一化。",
    ),
    (
        r"\. The expected rows sum to 1 over the last axis \(the keys\) but yours do not \(your first row sums to "
        r"(\S+)\)\.",
        r"。应有结果的每一行沿最后一个轴（键）求和为 1，你的却不是（你的第一行之和为 \1）。",
    ),
    (
        r"\. Yours is 0 where the expected value is not \(first at (\[[\d, ]*\])\) and nonzero where it is exactly 0 "
        r"\(first at (\[[\d, ]*\])\): a mask inverted\? Remember True = may attend\.",
        r"。应有值不为 0 的地方你的是 0（第一个在 \1），应有值恰为 0 的地方你的不是 0（第一个在 \2）："
        r"掩码是不是取反了？记住 True = 可以关注。",
    ),
    (
        r"\. The expected value is exactly 0 at (\[[\d, ]*\]) but yours is not: a position that should be masked out "
        r"\(padding, or a future token\) is visible\? Remember True = may attend\.",
        r"。应有值在 \1 处恰为 0，你的却不是：是不是本该被掩码遮住的位置（填充，或未来的词元）可见了？"
        r"记住 True = 可以关注。",
    ),
    (
        r"\. Yours is exactly 0 at (\[[\d, ]*\]) where the expected value is not: a position hidden that should be "
        r"visible \(a mask inverted\? True = may attend\)\?",
        r"。你的值在 \1 处恰为 0，应有值却不是：是不是把本该可见的位置遮住了（掩码取反了？True = 可以关注）？",
    ),
    # a refusal (classroom.reach) inside a check's message, and an answer not given yet (classroom.exercises)
    (
        r" is not available in this check: the exercise asks (\S+) to do its work without it",
        r" 在这次检查中不可用：这道练习要求 \1 不借助它完成自己的工作",
    ),
    (r" \(the check's reference\) ?", "（检查的参考实现）"),
    (r" \(a function of the check\) ?", "（检查所用的函数）"),
    (r" \(the work of ([^()]+)\) ?", r"（即 \1 的工作）"),
    (
        r"NumPy is not available in this check: (\S+) handed a tensor to NumPy \(Tensor\.numpy, which np\.asarray or "
        r"np\.exp of a tensor call too\)\. This exercise asks for PyTorch tensor operations only: its check watches "
        r"every PyTorch operation the answer runs, to refuse the library functions that would do its work, and cannot "
        r"see what NumPy computes\. Keep your values as tensors and use torch's functions \(torch\.exp, torch\.where, "
        r"\.sum\(dim=\.\.\.\), @\) instead; notebook 00, section 6, lists the exercises with this rule",
        NUMPY_ZH,
    ),
    (
        r" is not answered yet: replace `unanswered\(\.\.\.\)` in the exercise cell with your answer",
        " 还没有作答：请把练习单元格中的 `unanswered(...)` 换成你的答案",
    ),
    (r"^your answer", "你的答案"),
    (r"^your function", "你的函数"),
)
_RULES = tuple((re.compile(english), chinese) for english, chinese in ZH)


def language() -> str:
    """``en`` or ``zh``: ``COURSE_LANGUAGE`` where it is one of them, else ``zh`` in a folder named ``zh`` or
    ``a<number>zh`` (a Chinese assignment's)."""
    chosen = os.environ.get("COURSE_LANGUAGE", "").strip().lower()
    if chosen in ("en", "zh"):
        return chosen
    try:
        return "zh" if re.fullmatch(r"zh|a\d+zh", os.path.basename(os.getcwd())) else "en"
    except OSError:  # a working directory removed under the kernel
        return "en"


LANGUAGE = language()  # once, when the checks are imported (a notebook's first cell): its folder decides


def say(message: str, lang: str | None = None) -> str:
    """``message``, a check's English message, as the reader of ``lang`` (default :data:`LANGUAGE`) reads it."""
    if (lang or LANGUAGE) != "zh" or NOT_GRADED in message:
        return message
    for rule, chinese in _RULES:
        message = rule.sub(chinese, message)
    return message
