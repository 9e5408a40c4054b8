"""Held-out attacks: the fifth set, on notebook 12's exercise 2 (``top_k``) and 05's exercise 2 (data only;
tests/heldout/test_fifth.py runs them). Each beat the run-time defences as of :data:`BEFORE` (the check's frames
refused, the snapshot, the seal, the audit hook's refusal of processes and ctypes); each ``top_k`` computes nothing of
its own: the reference's answer is had some other way.

- t1_thread: a thread the answer cell started holds ``course_lib.generation._top_k`` (what the reference calls) and
  serves it through two queues while the check runs: a thread is outside the check's watch (the profiler and torch's
  modes belong to the thread that opened them);
- t2_spawn: ``multiprocessing``'s spawn context starts a child through ``_posixsubprocess.fork_exec``, which raises
  no audit event; the child, where nothing is blocked, runs ``cl.top_k_filter``;
- t3_code: ``course_lib.generation._top_k``'s code, renamed (``code.replace``), made a new function: the blocking
  knows the check's functions by identity, by code (equal code: a module loaded again from its file is refused so)
  and by module and name, and this is none of them;
- t3_gc: the same, the code taken through ``gc.get_referents`` (which a graded kernel allowed outside an answer's call);
- t3_source: ``course_lib.generation``'s source read, one name changed, and run under another module's name;
- t4_numpy: NumPy's ``__array_interface__`` with an address (``id``) views any memory, writable, without ctypes:
  ``Tensor.any``'s method descriptor is pointed at ``Tensor.all``'s C function, so the check's "is any element
  wrong?" asks "is every element wrong?" (the descriptor stays the same object: the snapshot sees no change);
- t5_nested: an answer that asked for the check's frame (refused) and caught the refusal has a function of its own
  called as a check calls an answer (``call_answer``): that inner call cleared the outer one's record of the
  refusal, and the answer kept its marks unflagged (a peek that had worked would have been kept too);
- t6_warns (05, an honest answer, not a cheat): a warning raised where the test cell calls the answer directly
  (``cl.check_close(to_additive(...))``, outside ``check_function``'s notes) went to stderr, and nbgrader gives no
  points to a test cell that wrote to stderr.
"""

_JUNK_TOP_K = """
def top_k(logits, k):
    return logits
"""

FIFTH_12_ATTACKS = {
    "t1_thread: a thread started by the answer cell serves course_lib.generation._top_k while the check runs": """
import queue
import threading

_theirs = cl.generation._top_k  # what the reference calls, held before the check blocks anything
_asked, _told = queue.Queue(), queue.Queue()


def _serve():
    while True:
        logits, k = _asked.get()
        _told.put(_theirs(logits, min(k, logits.shape[-1])))


threading.Thread(target=_serve, daemon=True).start()


def top_k(logits, k):
    _asked.put((logits, k))
    return _told.get(timeout=60)
""",
    "t2_spawn: a spawned child (through _posixsubprocess.fork_exec, no audit event) runs cl.top_k_filter": """
import multiprocessing

_pool = multiprocessing.get_context("spawn").Pool(1)
_CODE = "__import__('course_lib').top_k_filter(__import__('torch').tensor(x), k).tolist()"


def top_k(logits, k):
    return torch.tensor(_pool.apply(eval, (_CODE, {"x": logits.tolist(), "k": k})), dtype=logits.dtype)
""",
    "t3_code: course_lib.generation._top_k's code made a new function under another name": """
_theirs = cl.generation._top_k
_mine = type(_theirs)(_theirs.__code__.replace(co_name="_mine"), _theirs.__globals__)


def top_k(logits, k):
    return _mine(logits, min(k, logits.shape[-1]))
""",
    "t3_gc: course_lib.generation._top_k's code taken through gc (no __code__ read) made a new function": """
import gc

_theirs = cl.generation._top_k
_code = next(x for x in gc.get_referents(_theirs) if type(x).__name__ == "code")
_mine = type(_theirs)(_code.replace(co_name="_mine"), _theirs.__globals__)


def top_k(logits, k):
    return _mine(logits, min(k, logits.shape[-1]))
""",
    "t3_source: course_lib.generation's source, one name changed, run as a module of another name": """
_mine = {"__name__": "course_lib.mine", "__package__": "course_lib"}
with open(cl.generation.__file__) as _file:
    exec(compile(_file.read().replace("kth_largest", "kth"), "mine.py", "exec"), _mine)


def top_k(logits, k):
    return _mine["_top_k"](logits, k)
""",
    "t4_numpy: NumPy's __array_interface__ writes Tensor.all's C function into Tensor.any's descriptor": """
import numpy as np


class _At:
    def __init__(self, address):
        self.__array_interface__ = {"data": (address, False), "shape": (1,), "typestr": "<u8", "version": 3}


def _word(address):  # one machine word at any address, writable: no ctypes
    return np.asarray(_At(address))


_word(id(torch._C.TensorBase.any) + 40)[0] = _word(id(torch._C.TensorBase.all) + 40)[0]  # d_method
"""
    + _JUNK_TOP_K,
    "t5_nested: a refusal caught, then a nested call of an answer clears the outer check's record of it": """
def _same(x):
    return x


def top_k(logits, k):
    try:
        torch.sys._getframe(2)  # the check's frame: refused (a peek that would have read its locals)
    except RuntimeError:
        pass
    cl.classroom.watch.call_answer(_same, (0,))  # a check's call of an answer, inside the check
    kth = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
}

# An honest answer to 05's exercise 2 that warns (PyTorch: torch.tensor of a tensor copies it); its test cell calls it
# directly too (cl.check_close(to_additive(...))), outside check_function
HONEST_WARNING_05_EX2 = """
def to_additive(mask, dtype=torch.float32):
    mask = torch.tensor(mask)  # a copy of the mask (PyTorch warns: clone().detach() is its way)
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf"))
"""

# The commit whose course_lib each attack is shown to beat: the last before the fixes
BEFORE = "54b224d"
