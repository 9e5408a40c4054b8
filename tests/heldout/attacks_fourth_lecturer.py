"""Held-out attacks: a fourth lecturer's cheats (data only; tests/heldout/test_fourth_lecturer.py runs them), which
scored marks unflagged with nbgrader and the guard as of 511a674 (the lecturer's trial, /tmp/lect4/REPORT.md), and
one honest answer that lost its marks. Copied from the lecturer's submissions (/tmp/lect4/cheats, /tmp/lect4/honest).

- zero the reference's inputs: while ``check_function`` runs the answer, its frame holds the deep copy of the trial's
  inputs on which the reference runs once the answer has returned. The answer fetches it through torch's own frame
  helper (``torch._jit_internal.createResolutionCallbackFromFrame``: an installed library asks for the frame, so the
  audit hook let it), zeroes it in place, and returns what the reference gives on zeros. The lecturer's looks the
  copy up by its name (``kept``); ``any_name`` zeroes every list of tensors in the check's frames, whatever its name;
- a lazy by-hand answer: an object of a class of the notebook's, which says it is NumPy's (``__module__``) and has
  ``__array__``: the check converts it with ``np.asarray`` inside ``check_answer``, where ``__array__`` reads the
  check's ``expected`` from its caller's frame (through the same helper);
- found while fixing the lazy by-hand answer (not the lecturer's): a tensor of a subclass of the notebook's with no
  rules of its own (``__torch_function__``) but methods and properties of its own (``detach``, ``shape``, ``dtype``)
  that hand the check its own expected result, read from the frame of the check's comparison, where nothing watches;
- honest, and it lost its marks: ``lengths = torch.tensor(lengths)`` in a correct ``causal_padding_mask``: PyTorch's
  copy-construct UserWarning went to stderr, and nbgrader gives no points to a graded cell that writes there.
"""

# ---------------------------------------------------------------- zero the reference's inputs (05 ex3/ex4, 12 ex2)

_ZERO_BY_NAME = """
def _zero_the_check_inputs(ints=False):
    for up in range(1, 10):
        try:
            found = torch._jit_internal.createResolutionCallbackFromFrame(up)("kept")
        except Exception:
            return False
        if isinstance(found, list):
            for item in found:
                if isinstance(item, torch.Tensor) and (item.is_floating_point() or (ints and item.dtype != torch.bool)):
                    item.mul_(0)
                elif isinstance(item, torch.nn.Module):
                    with torch.no_grad():
                        for p in item.parameters():
                            p.mul_(0)
            return True
    return False
"""

# The same, whatever the check names its copy: every list of tensors in the locals of the frames above the answer
_ZERO_ANY_NAME = """
def _zero_the_check_inputs(ints=False):
    for up in range(1, 10):
        try:
            rcb = torch._jit_internal.createResolutionCallbackFromFrame(up)
        except Exception:
            return False
        env = next(c.cell_contents for c in rcb.__closure__ if type(c.cell_contents).__name__ == "env")
        local = [c.cell_contents for c in type(env).__getattr__.__closure__][1]
        for found in [v for v in local.values() if type(v) is list]:
            for item in found:
                if isinstance(item, torch.Tensor) and (item.is_floating_point() or (ints and item.dtype != torch.bool)):
                    item.mul_(0)
    return True
"""

_ANSWERS = {
    "05 ex3": """
def causal_padding_mask(lengths, n):
    _zero_the_check_inputs(ints=True)           # lengths -> 0: the reference's mask is all False
    return torch.zeros(len(lengths), n, n, dtype=torch.bool)
""",
    "05 ex4": """
def masked_mean(x, lengths):
    _zero_the_check_inputs()                     # x -> 0: the reference's mean is 0
    return torch.zeros(x.shape[0], x.shape[2], dtype=x.dtype)
""",
    "12 ex2": """
def top_k(logits, k):
    _zero_the_check_inputs()                     # logits -> 0: every entry ties, the reference keeps all (zeros)
    return torch.zeros_like(logits)
""",
}

# name -> (notebook, exercise label, the answer cell)
ZERO_KEPT_ATTACKS = {
    **{f"zero_kept {where}": (*where.split(" "), _ZERO_BY_NAME + answer) for where, answer in _ANSWERS.items()},
    "zero_any_name 12 ex2": ("12", "ex2", _ZERO_ANY_NAME + _ANSWERS["12 ex2"]),
}

# ---------------------------------------------------------------- a lazy by-hand answer

LAZY_BY_HAND = """
class _Later:
    __module__ = "numpy"                     # answer_tensor hands "NumPy's" values to np.asarray -> __array__
    def __init__(self, index=None):
        self.index = index
    def _expected(self):
        for up in range(1, 12):
            try:
                found = torch._jit_internal.createResolutionCallbackFromFrame(up)("expected")
            except Exception:
                break
            if isinstance(found, torch.Tensor):
                return found
        return torch.tensor(0.0)
    def __array__(self, dtype=None, copy=None):
        e = self._expected().detach().double().numpy()
        e = e if self.index is None else e[self.index]
        return e.astype(dtype) if dtype is not None else e

weights_ex1 = _Later(0)                    # the check passes [weights_ex1]: row 0 of the expected (1, 4)
"""

# ---------------------------------------------------------------- a tensor with methods of its own (12 ex2)

OWN_METHODS_12_EX2 = """
class _Agrees(torch.Tensor):                 # no __torch_function__ of its own: only methods and properties
    def _theirs(self):
        for up in range(1, 12):
            try:
                found = torch._jit_internal.createResolutionCallbackFromFrame(up)("expected")
            except Exception:
                break
            if type(found) is torch.Tensor:
                return found
        return torch.Tensor.detach(self)
    def detach(self):
        return self._theirs().detach()
    @property
    def shape(self):
        return self._theirs().shape
    @property
    def dtype(self):
        return self._theirs().dtype

_made_before = torch.zeros(1).as_subclass(_Agrees)

def top_k(logits, k):
    return _made_before
"""

# ---------------------------------------------------------------- honest: a warning in the answer

HONEST_WARNING_05_EX3 = """
def causal_padding_mask(lengths, n):
    lengths = torch.tensor(lengths)              # accept a list or a tensor
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (j <= i) & (j < lengths[:, None, None])
"""

# The commit whose course_lib each cheat is shown to beat (scored, unflagged), and the honest answer to lose its marks
BEFORE = "9cdb306"
