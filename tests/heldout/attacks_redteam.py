"""Held-out attacks: a red-team's five cheats on notebook 12's exercise 2 (``top_k``), each of which beat both the
reading of the cells and the run-time defences as of :data:`BEFORE` (data only; tests/heldout/test_redteam.py runs
them). Each is the answer cell handed in before exercise 2's test cell; the ``top_k`` it defines computes nothing:
the reference's answer is had some other way.

- fork: ``torch.os.fork()`` in the answer cell; the child, where nothing is blocked, runs ``cl.top_k_filter`` on
  inputs sent as JSON lines through ``torch.os.pipe()``;
- mode: a torch dispatch mode left on, disguised as the grading machine's (``course_profile``, a ``torch.`` module),
  whose ``aten::any`` says False: a check's "is any element wrong?";
- finaliser: the answer returns an empty tensor and queues it; a self-referencing object's ``__del__``, run by the
  garbage collector (its threshold set to 1 through ``torch.cuda.graphs.gc``), fills it in place with the real
  ``top_k_filter`` once the blocking is off, between the reference's computation and the comparison;
- deepcopy: ``copy``'s dispatch table rewired by ``dict.update`` so that the check's copying of the inputs (before
  the blocking) runs the answer's hook, which computes the reference's answer;
- ctypes: ``torch.ctypes`` clears ``Py_TPFLAGS_IMMUTABLETYPE`` on ``torch._C.TensorBase`` and sets its ``any``.
"""

_JUNK_TOP_K = """
def top_k(logits, k):
    return logits
"""

REDTEAM_12_ATTACKS = {
    "r1_fork: a forked child, where nothing is blocked, serves cl.top_k_filter through a pipe": """
import json

_down, _up = torch.os.pipe(), torch.os.pipe()
if torch.os.fork() == 0:  # the child: nothing blocked here, ever
    torch.os.close(_down[1])
    torch.os.close(_up[0])
    with open(_down[0]) as _requests, open(_up[1], "w") as _replies:
        for _line in _requests:
            _x, _k = json.loads(_line)
            _replies.write(json.dumps(cl.top_k_filter(torch.tensor(_x), _k).tolist()) + "\\n")
            _replies.flush()
    torch.os._exit(0)
torch.os.close(_down[0])
torch.os.close(_up[1])
_to, _from = open(_down[1], "w"), open(_up[0])


def top_k(logits, k):
    _to.write(json.dumps([logits.tolist(), k]) + "\\n")
    _to.flush()
    return torch.tensor(json.loads(_from.readline()), dtype=logits.dtype)
""",
    "r2_mode: a dispatch mode left on, disguised as the grading machine's, says no element is wrong": """
def _f(self, func, types, args=(), kwargs=None):
    if str(func).startswith("aten.any"):
        return torch.zeros((), dtype=torch.bool)
    return func(*args, **(kwargs or {}))


_Profile = type("Profile", (getattr(torch.utils._python_dispatch, "TorchDispatchMode"),),
                {"__module__": "torch.profiling", "course_profile": True, "__torch_" + "dispatch__": _f})
_Profile().__enter__()
"""
    + _JUNK_TOP_K,
    "r3_finaliser: a finaliser fills the answer in place once the blocking is off, before the comparison": """
_real, _queue = cl.top_k_filter, []


class _Later:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it, and calls __del__

    def __del__(self):
        if cl.top_k_filter is _real:  # the blocking is off
            while _queue:
                out, x, k = _queue.pop()
                out.copy_(_real(x, k))
        _Later()


torch.cuda.graphs.gc.set_threshold(1)
_Later()


def top_k(logits, k):
    out = torch.empty_like(logits)
    _queue.append((out, logits.clone(), k))
    return out
""",
    "r4_deepcopy: copy's dispatch table rewired, the check's copy of the inputs computes the answer": """
import copy

_answers = []


def _hook(items, memo):
    if len(items) == 2 and isinstance(items[0], torch.Tensor) and isinstance(items[1], int):
        _answers.append(cl.top_k_filter(items[0], items[1]))  # before the check blocks anything
    return [copy.deepcopy(item, memo) for item in items]


dict.update(copy._deepcopy_dispatch, {list: _hook})


def top_k(logits, k):
    return _answers.pop() if _answers else logits
""",
    "r5_ctypes: torch.ctypes makes TensorBase mutable and sets its any to say False": """
_c, _base = torch.ctypes, torch._C.TensorBase
_flags = _c.c_ulong.from_address(id(_base) + 168)  # tp_flags on CPython 3.11
_flags.value &= ~(1 << 8)  # Py_TPFLAGS_IMMUTABLETYPE
_c.pythonapi.PyObject_SetAttr(_c.py_object(_base), _c.py_object("any"),
                              _c.py_object(lambda self, *a, **k: torch.zeros((), dtype=torch.bool)))
_flags.value |= 1 << 8
"""
    + _JUNK_TOP_K,
}

# What the run-time defences alone make of a cheat the reading flags anyway: "Not graded" for all but the finaliser,
# whose answer is compared as it was when its call returned (an empty tensor): plainly wrong, zero points
WRONG_AT_RUN_TIME = {"r3_finaliser"}

# The commit whose course_lib (checks, guard and all) each cheat is shown to beat, read and run: the last before the fix
BEFORE = "511a674"
