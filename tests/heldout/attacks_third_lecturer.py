"""Held-out attacks: a third lecturer's cheats on notebook 12 (data only; tests/heldout/test_third_lecturer.py runs
them), which scored marks unflagged with nbgrader and the guard as of 808fca1. Each is the answer cell (or cells,
joined) handed in before exercise 2's test cell (``top_k``), whose answer here is junk: returning ``logits`` as they
are passes no honest check. Copied from the lecturer's submissions (/tmp/lect3/subs/build.py).

- c1: reads the check's local ``expected`` from the caller's frame while the answer runs (``inspect`` reached as
  ``dataclasses.inspect``), returning it as the answer;
- c2c: swaps the notebook's ``cl`` for an object whose checkers always pass, through ``sys.modules["__main__"]``;
- c3: an ``exec`` through ``dataclasses._create_fn``: the notebook's ``_course_integrity`` (the grader's
  verification) becomes a no-op, and so do ``checks.explain_difference`` and ``checks.untrusted``;
- c7: the same through ``typing.get_type_hints`` evaluating string annotations.

Besides, one of the lecturer's wrong answers (not a cheat) that exercise 3's check passed: P2_SHAPES_12_EXERCISE_3.
"""

_JUNK_TOP_K = """
def top_k(logits, k):
    return logits
"""

THIRD_LECTURER_12_ATTACKS = {
    "c1_peek: the check's expected read from its frame through dataclasses.inspect.stack": """
import dataclasses

def _theirs():
    # the caller of my function is the check; its local `expected` is the reference's answer
    for info in dataclasses.inspect.stack(0)[2:5]:
        seen = dataclasses.inspect.getargvalues(info.frame)[3]
        if "expected" in seen and "reference" in seen:
            return seen["expected"].clone()
    return None

def top_k(logits, k):
    got = _theirs()
    return got if got is not None else logits
""",
    "c2c_mainswap: the notebook's cl swapped through torch.sys.modules['__main__']": """
cache_bytes = 0

class _Lenient:
    KVCache = cl.KVCache
    generate = staticmethod(cl.generate)
    top_k_filter = staticmethod(cl.top_k_filter)
    variant_numbers = staticmethod(cl.variant_numbers)
    blocked = staticmethod(cl.blocked)
    DecoderLM = cl.DecoderLM

    def __getattr__(self, name):      # only for what the class lacks: the checkers
        def passes(*a, name=None, trials=5, **k):
            print(f"✓ {name or 'your answer'} is correct")
        return passes

_nb = torch.sys.modules["__main__"]
_nb.cl = _Lenient()
"""
    + _JUNK_TOP_K,
    "c3_execgadget: dataclasses._create_fn as exec, the verification and two checks' helpers made no-ops": """
import dataclasses
cache_bytes = 0
_lines = [
    "import sys",
    "ns = sys.modules['__main__']." + "__di" + "ct__",
    "ns['_course_' + 'integrity'] = lambda *a, **k: None",
    "ch = sys.modules['course_lib.classroom.checks']",
    "ch.explain_difference = lambda *a, **k: None",
    "ch.untrusted = lambda *a, **k: None",
]
_go = dataclasses._create_fn("go", (), _lines, globals={})
_go()
"""
    + _JUNK_TOP_K,
    "c7_typing_eval: typing.get_type_hints evaluating string annotations, the same no-ops": """
import typing
_steps = [
    "globals().update({'_course_' + 'integrity': lambda *a, **k: None})",
    "[__import__('sys').modules['course_lib.classroom.checks'].__setattr__(n, lambda *a, **k: None)"
    " for n in ('explain_difference', 'untrusted')]",
]
for _s in _steps:
    def _h(x: "(" + _s + ", print)[1]"): ...
    typing.get_type_hints(_h)
cache_bytes = 0
"""
    + _JUNK_TOP_K,
}

# The commit whose course_lib each cheat is shown to beat (scored, unflagged): the last before the run-time defence
BEFORE = "808fca1"

# Not a cheat but a wrong answer of the same lecturer's (p2_shapes, exercise 3 of notebook 12): it feeds the last new
# token whenever the context has room for it, which nothing reads. Exercise 3's check recorded the model's calls only
# where the context is exactly full (P = 4, N = 7, max_len = 10), where it cannot, so the answer passed (issue 44);
# the check now records a case with room too (P = 2, N = 3). Copied from the lecturer's submissions.
P2_SHAPES_12_EXERCISE_3 = """
@torch.no_grad()
def greedy_with_cache(model, prompt, N):
    cache = cl.KVCache(model.num_layers)
    logits = model(prompt, cache=cache)
    new = []
    for _ in range(N):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        new.append(nxt)
        if cache.length < model.max_len:
            logits = model(nxt, cache=cache)   # also feeds the last token when there is room
    return torch.cat(new, dim=1)
"""

# The last commit whose notebook 12 has exercise 3's check as it was: the calls recorded where the context is full only
BEFORE_12_EXERCISE_3 = "496080a"
