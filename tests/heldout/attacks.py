"""Held-out attacks on the grading guards of issue 30, written from outside the course's own test lists (data only).

SHORTCUT_ATTACKS: implement-it answers that get a library to do the exercise's work. The key's prefix names the
exercise the answer is for (tests/heldout/test_heldout.py holds, per prefix, its reference, inputs and blocked names):

- ``softmax:``  ``answer(s)`` = softmax over the last axis, checked ``without=cl.SOFTMAX_FUNCTIONS``
  (notebook 00's ``my_softmax``, notebook 04's ``stable_log_softmax`` up to a log);
- ``attention:``  ``answer(q, k, v)`` = ``cl.scaled_dot_product_attention(q, k, v)``, checked
  ``without=cl.ATTENTION_FUNCTIONS`` (notebook 03's ``attend_one`` / ``self_attention``, notebook 05);
- ``mha:``  ``answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads)``, notebook 06's ``multi_head_attention``, checked
  without its ``MHA_LAYERS``;
- ``backward:``  ``answer(a, grad_a)``, notebook 04's ``softmax_backward``, checked without its ``BACKWARD_SHORTCUTS``;
- ``split:`` / ``merge:``  notebook 06's ``split_heads(x, num_heads)`` / ``merge_heads(x)``, without
  its ``SPLIT_MERGE``;
- ``rope:``  notebook 07's ``rope(x)``, without its ``POSITION_FUNCTIONS``;
- ``top_k:``  notebook 12's ``top_k(logits, k)``; ``top_p:``  ``answer(logits, p)`` = ``cl.top_p_filter``, both without
  12's ``SAMPLING_FUNCTIONS``;
- ``sdpa:``  ``answer(q, k, v)`` checked without ``course_lib.scaled_dot_product_attention`` alone.

The names each check blocks are read from the notebooks where a notebook has the exercise (``split``, ``merge``,
``rope``, ``top_k``, ``top_p``).

Each source runs in a namespace like a notebook's (``torch``, ``math``, ``F``, ``nn``, ``np``, ``cl``) and defines
``answer``. TAMPERING_ATTACKS: cells a student could hand in that change what the checks see; each would, when run
after the locked cells, make a junk answer pass (or change a check's input). CAUGHT names the attacks the guards catch
today: a shortcut raises ShortcutError while blocked, a tampering cell is flagged by ``guard.tampering``. Every
attack not in CAUGHT is a hole (see HOLES for why each one gets through).
"""

SHORTCUT_ATTACKS = {
    # ------------------------------------------------------------------ softmax: holes
    "softmax: torch._refs.softmax (primTorch's Python softmax)": """
import torch._refs
def answer(s):
    return torch._refs.softmax(s, -1)
""",
    "softmax: torch._decomp's Python decomposition of _softmax": """
from torch._decomp import decompositions
def answer(s):
    return decompositions._softmax(s, -1, False)
""",
    "softmax: torch.sparse.softmax on a sparse copy": """
def answer(s):
    return torch.sparse.softmax(s.to_sparse(), -1).to_dense()
""",
    "softmax: aten._masked_softmax with nothing masked": """
def answer(s):
    return torch.ops.aten._masked_softmax(s, torch.zeros_like(s, dtype=torch.bool), -1, None)
""",
    "softmax: torch.logcumsumexp as the log-normaliser": """
def answer(s):
    return (s - torch.logcumsumexp(s, -1)[..., -1:]).exp()
""",
    "softmax: the gradient of logcumsumexp's last entry": """
def answer(s):
    s = s.detach().requires_grad_()
    (g,) = torch.autograd.grad(torch.logcumsumexp(s, -1)[..., -1].sum(), s)
    return g
""",
    "softmax: fused CPU attention with identity keys and values": """
def answer(s):
    n = s.shape[-1]
    eye = torch.eye(n, dtype=s.dtype)[None, None]
    q = s.reshape(1, 1, -1, n)
    return F.scaled_dot_product_attention(q, eye, eye, scale=1.0).reshape(s.shape)
""",
    "softmax: the dispatcher's modes switched off (DisableTorchDispatch)": """
def answer(s):
    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        return torch.ops.aten._softmax(s, -1, False)
""",
    "softmax: run in another thread (the modes are thread-local)": """
import concurrent.futures
def answer(s):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(torch.ops.aten._softmax, s, -1, False).result()
""",
    "softmax: computed later, when the checker reads the result (lazy Tensor subclass)": """
class _Later(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args = [torch.ops.aten._softmax(a.as_subclass(torch.Tensor), -1, False) if type(a) is _Later else a
                for a in args]
        with torch._C.DisableTorchFunction():
            return func(*args, **(kwargs or {}))
def answer(s):
    return s.as_subclass(_Later)
""",
    "softmax: numpy's logaddexp.reduce as logsumexp": """
def answer(s):
    lse = np.logaddexp.reduce(s.detach().numpy(), axis=-1, keepdims=True)
    return (s - torch.from_numpy(lse)).exp()
""",
    # ------------------------------------------------------------------ softmax: caught
    "softmax: getattr(torch, 'soft' + 'max')": """
def answer(s):
    return getattr(torch, "soft" + "max")(s, -1)
""",
    "softmax: functools.partial(F.softmax)": """
import functools
_sm = functools.partial(F.softmax, dim=-1)
def answer(s):
    return _sm(s)
""",
    "softmax: kept in a list before the check": """
_box = [torch.softmax]
def answer(s):
    return _box[0](s, -1)
""",
    "softmax: nn.Softmax subclass with forward copied": """
class _Mine(nn.Softmax):
    forward = nn.Softmax.forward
def answer(s):
    return _Mine(-1)(s)
""",
    "softmax: F.softmin of the negated scores": """
def answer(s):
    return F.softmin(-s, -1)
""",
    "softmax: torch.distributions.Categorical(logits).probs": """
def answer(s):
    return torch.distributions.Categorical(logits=s).probs
""",
    "softmax: torch.func.vmap over rows of _VariableFunctions.softmax": """
def answer(s):
    rows = s.reshape(-1, s.shape[-1])
    return torch.func.vmap(lambda r: torch._C._VariableFunctions.softmax(r, 0))(rows).reshape(s.shape)
""",
    "softmax: the gradient of cross_entropy with one-hot targets": """
def answer(s):
    rows = s.detach().reshape(-1, s.shape[-1]).requires_grad_()
    target = torch.zeros_like(rows)
    target[:, 0] = 1
    (g,) = torch.autograd.grad(F.cross_entropy(rows, target, reduction="sum"), rows)
    return (g + target).reshape(s.shape)
""",
    "softmax: the modes popped by _disable_current_modes, aten._softmax": """
from torch.utils._python_dispatch import _disable_current_modes
def answer(s):
    with _disable_current_modes():
        return torch.ops.aten._softmax(s, -1, False)
""",
    "softmax: torch.jit.trace of x.softmax": """
_traced = torch.jit.trace(lambda t: t.softmax(-1), (torch.randn(2, 3),))
def answer(s):
    return _traced(s)
""",
    "softmax: cl.scaled_dot_product_attention with identity keys and values": """
def answer(s):
    eye = torch.eye(s.shape[-1], dtype=s.dtype)
    return cl.scaled_dot_product_attention(s, eye, eye, scale=1.0)
""",
    # ------------------------------------------------------------------ attention: holes
    "attention: course_lib.attention.attend (the unblocked arithmetic)": """
def answer(q, k, v):
    return cl.attention.attend(q, k, v)[0]
""",
    "attention: course_lib.kernels.launch.attention_reference": """
from course_lib.kernels.launch import attention_reference
def answer(q, k, v):
    return attention_reference(q, k, v).to(q.dtype)
""",
    "attention: cl.scaled_dot_product_attention kept in a list": """
_box = [cl.scaled_dot_product_attention]
def answer(q, k, v):
    return _box[0](q, k, v)
""",
    "attention: cl.scaled_dot_product_attention as a staticmethod of a class": """
class _Tools:
    attend = staticmethod(cl.scaled_dot_product_attention)
def answer(q, k, v):
    return _Tools.attend(q, k, v)
""",
    "attention: a fresh copy of course_lib.attention by runpy": """
import runpy
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _fresh = runpy.run_module("course_lib.attention")["scaled_dot_product_attention"]
def answer(q, k, v):
    return _fresh(q, k, v)
""",
    "attention: torch._decomp's Python flash-attention-for-CPU": """
from torch._decomp import decompositions
def answer(q, k, v):
    d = max(q.shape[-1], v.shape[-1])  # the kernel wants one head size: pad with zeros, scale by the true d_k
    def pad(t):
        return F.pad(t, (0, d - t.shape[-1]))[None, None]
    out = decompositions.scaled_dot_product_flash_attention_for_cpu(pad(q), pad(k), pad(v), scale=q.shape[-1] ** -0.5)
    return out[0][0, 0, :, : v.shape[-1]]
""",
    "attention: F.scaled_dot_product_attention in another thread": """
import concurrent.futures
def answer(q, k, v):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(torch._C._nn.scaled_dot_product_attention, q, k, v).result()
""",
    "attention: the dispatcher's modes switched off (DisableTorchDispatch)": """
def answer(q, k, v):
    with torch._C._DisableTorchDispatch(), torch._C.DisableTorchFunction():
        return torch._C._nn.scaled_dot_product_attention(q, k, v)
""",
    # ------------------------------------------------------------------ attention: caught
    "attention: course_lib.efficient.chunked_attention_reference": """
from course_lib.efficient import chunked_attention_reference
def answer(q, k, v):
    return chunked_attention_reference(q, k, v)
""",
    "attention: getattr(torch.ops.aten, ...) of the math kernel": """
def answer(q, k, v):
    return getattr(torch.ops.aten, "_scaled_dot_product_" + "attention_math")(q, k, v)[0]
""",
    "attention: functools.partial(F.scaled_dot_product_attention)": """
import functools
_sdpa = functools.partial(F.scaled_dot_product_attention, dropout_p=0.0)
def answer(q, k, v):
    return _sdpa(q, k, v)
""",
    "attention: a default argument holding cl.scaled_dot_product_attention": """
def answer(q, k, v, f=cl.scaled_dot_product_attention):
    return f(q, k, v)
""",
    # ------------------------------------------------------------------ multi-head attention (notebook 06)
    "mha: a subclass of cl.MultiHeadAttention with forward copied": """
class _Mine(cl.MultiHeadAttention):
    forward = cl.MultiHeadAttention.forward
def answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    layer = _Mine(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer(x_q, x_kv)
""",
    "mha: a fresh copy of course_lib.multihead by runpy": """
import runpy
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _MHA = runpy.run_module("course_lib.multihead")["MultiHeadAttention"]
def answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    layer = _MHA(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer(x_q, x_kv)
""",
    "mha: cl.MultiHeadAttention itself": """
def answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    layer = cl.MultiHeadAttention(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer(x_q, x_kv)
""",
    "mha: nn.MultiheadAttention with the weights packed": """
def answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    D = x_q.shape[-1]
    layer = nn.MultiheadAttention(D, num_heads, bias=False, batch_first=True)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
        layer.out_proj.weight.copy_(W_o.T)
        return layer(x_q, x_kv, x_kv, need_weights=False)[0]
""",
    "mha: the layer's unchecked twin, MultiHeadAttention._forward": """
def answer(x_q, x_kv, W_q, W_k, W_v, W_o, num_heads):
    layer = cl.MultiHeadAttention(x_q.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for lin, W in zip((layer.w_q, layer.w_k, layer.w_v, layer.w_o), (W_q, W_k, W_v, W_o)):
            lin.weight.copy_(W.T)
        return layer._forward(x_q, x_kv, x_kv, None)[0]
""",
    # ------------------------------------------------------------------ the unchecked twins of course functions
    "split: course_lib.multihead._split (split_heads unchecked)": """
def answer(x, num_heads):
    return cl.multihead._split(x, num_heads)
""",
    "split: _split imported under another name": """
from course_lib.multihead import _split as cut
def answer(x, num_heads):
    return cut(x, num_heads)
""",
    "merge: course_lib.multihead._merge (merge_heads unchecked)": """
def answer(x):
    return cl.multihead._merge(x)
""",
    "rope: course_lib.positional._rope (apply_rope unchecked)": """
def answer(x):
    return cl.positional._rope(x, torch.arange(x.shape[-2]), 10000.0)
""",
    "top_k: course_lib.generation._top_k (top_k_filter unchecked)": """
def answer(logits, k):
    return cl.generation._top_k(logits, k)
""",
    "top_p: course_lib.generation._top_p (top_p_filter unchecked)": """
def answer(logits, p):
    return cl.generation._top_p(logits, p)
""",
    "sdpa: course_lib.attention.attend (scaled_dot_product_attention unchecked)": """
def answer(q, k, v):
    return cl.attention.attend(q, k, v)[0]
""",
    "sdpa: course_lib.attention._weights, then the values": """
def answer(q, k, v):
    return cl.attention._weights(q, k, None, None) @ v
""",
    # ------------------------------------------------------------------ softmax backward (notebook 04)
    "backward: torch._decomp's Python _softmax_backward_data": """
from torch._decomp import decompositions
def answer(a, grad_a):
    return decompositions._softmax_backward_data(grad_a, a, -1, a.dtype)
""",
    "backward: torch.autograd.backward through a softmax by hand": """
def answer(a, grad_a):
    s = a.log().detach().requires_grad_()
    e = s.exp()
    torch.autograd.backward(e / e.sum(-1, keepdim=True), grad_a)
    return s.grad
""",
    "backward: torch.func.vjp through a softmax by hand": """
def answer(a, grad_a):
    def soft(s):
        e = s.exp()
        return e / e.sum(-1, keepdim=True)
    return torch.func.vjp(soft, a.log())[1](grad_a)[0]
""",
    "backward: torch.autograd.functional.vjp through a softmax by hand": """
def answer(a, grad_a):
    def soft(s):
        e = s.exp()
        return e / e.sum(-1, keepdim=True)
    return torch.autograd.functional.vjp(soft, a.log(), grad_a)[1]
""",
    "backward: the backward kernel called forward": """
def answer(a, grad_a):
    return torch.ops.aten._softmax_backward_data(grad_a, a, -1, a.dtype)
""",
    "backward: cl.softmax_jacobian under another name": """
from course_lib.attention import softmax_jacobian as jac
def answer(a, grad_a):
    return (jac(a) @ grad_a[..., None])[..., 0]
""",
}

# Answers that call what the check itself decides with (issue 44): run against the check cells of notebook 14, read
# from the notebook (tests/heldout/test_heldout.py). Both the check (ShortcutError: the check's own) and the guard's
# reading (a name only the graded test cells bind) must refuse each.
REFERENCE_ATTACKS = {
    "14 Exercise 1: decoder_mask returns the check's translator_mask": """
def decoder_mask(tgt, pad):
    return translator_mask(tgt, pad)
""",
    "14 Exercise 2: beam_step returns the check's sorted_extensions": """
def beam_step(scores, log_probs, beam_width):
    return sorted_extensions(scores, log_probs, beam_width)
""",
    "14 Exercise 2: sorted_extensions bound into a partial when the check calls": """
import functools
def beam_step(scores, log_probs, beam_width):
    return functools.partial(sorted_extensions, scores)(log_probs, beam_width)
""",
    "14 Exercise 1: translator_mask behind a lambda kept in a list": """
def decoder_mask(tgt, pad):
    box = [lambda *args: translator_mask(*args)]
    return box[0](tgt, pad)
""",
    "14 Exercise 1: the check's mask_inputs and translator_mask on other inputs": """
def decoder_mask(tgt, pad):
    mask_inputs(torch.Generator().manual_seed(0))
    return translator_mask(tgt, pad)
""",
}

# Answers that get a course class or PyTorch to do a notebook's exercise, run against the notebook's own check cell
# (tests/heldout/test_heldout.py): notebook 14's decoder_mask read off the weights of a cl.Translator, as the check's
# reference does; a fourth lecturer's two (issue 44, /tmp/lect4/cheats), which scored full marks unflagged until the
# checks named them: 05's causal mask from PyTorch's nn.Transformer helper (the exercise says: from torch.arange
# comparisons) and 03's parameters counted on nn.Conv1d layers (the exercise says: work out the formula). The check
# must refuse each (ShortcutError, a library shortcut), and the class report flag it.
NOTEBOOK_SHORTCUTS = {
    "05 Exercise 3: PyTorch's causal mask, nn.Transformer.generate_square_subsequent_mask": """
def causal_padding_mask(lengths, n):
    causal = torch.nn.Transformer.generate_square_subsequent_mask(n) == 0      # PyTorch's causal mask, not cl's
    return causal[None] & (torch.arange(n)[None, None, :] < lengths[:, None, None])
""",
    "05 Exercise 3: PyTorch's causal mask, the function nn.Transformer's helper calls": """
from torch.nn.modules.transformer import _generate_square_subsequent_mask as square
def causal_padding_mask(lengths, n):
    return (square(n) == 0)[None] & (torch.arange(n)[None, None, :] < lengths[:, None, None])
""",
    "03 Exercise 4: parameters counted on nn.Conv1d layers": """
def qkv_parameter_count(d_model, d_k, d_v, bias=False):
    conv = torch.nn.Conv1d                        # not nn.Linear: count the parameters of 1x1 convolutions
    return sum(p.numel() for w in (d_k, d_k, d_v) for p in conv(d_model, w, 1, bias=bias).parameters())
""",
    "03 Exercise 4: parameters counted on a layer of the answer's own": """
class _Projections(torch.nn.Module):
    def __init__(self, d_model, widths, bias):
        super().__init__()
        self.weights = torch.nn.ParameterList(torch.nn.Parameter(torch.empty(w, d_model)) for w in widths)
        self.biases = torch.nn.ParameterList(torch.nn.Parameter(torch.empty(w)) for w in widths if bias)
def qkv_parameter_count(d_model, d_k, d_v, bias=False):
    return sum(p.numel() for p in _Projections(d_model, (d_k, d_k, d_v), bias).parameters())
""",
    "14 Exercise 1: decoder_mask read off a cl.Translator's weights, as the check's reference": """
def decoder_mask(tgt, pad):
    model = cl.Translator(2, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, pad_index=pad)
    with torch.no_grad():
        _, weights = model(torch.full((len(tgt), 1), 1 - pad), tgt, return_weights=True)
    return weights["decoder"][0][:, 0] > 0
""",
    "14 Exercise 1: a cl.Translator made before the check, its decode": """
_model = cl.Translator(2, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1)
def decoder_mask(tgt, pad):
    _model.pad_index = pad
    with torch.no_grad():
        memory, valid = _model.encode(torch.ones(len(tgt), 1, dtype=torch.long))
        return _model.decode(tgt, memory, valid, return_weights=True)[1]["decoder"][0][:, 0] > 0
""",
    "14 Exercise 1: a cl.Translator's unchecked _decode": """
_model = cl.Translator(2, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1)
def decoder_mask(tgt, pad):
    _model.pad_index = pad
    memory, valid = torch.zeros(len(tgt), 1, 8), torch.ones(len(tgt), 1, 1, 1, dtype=torch.bool)
    with torch.no_grad():
        return _model._decode(tgt, memory, valid)[1][0][:, 0] > 0
""",
}

TAMPERING_ATTACKS = {
    # ------------------------------------------------------------------ holes: not flagged
    "a module bound to a new name, then patched": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
checks = cl.classroom.checks
checks.explain_difference = lambda *args, **kwargs: None
""",
    "a module imported under a new name, then patched": """
from course_lib.classroom import checks
checks.explain_difference = lambda *args, **kwargs: None
""",
    "torch imported as T, then patched": """
import torch as T
T.isclose = lambda a, b, **kwargs: T.ones_like(a, dtype=T.bool)
""",
    "an assignment target that starts with an expression: [cl][0].x = ...": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
[cl][0].classroom.checks.explain_difference = lambda *args, **kwargs: None
""",
    "object.__setattr__ on the module": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
object.__setattr__(cl.classroom.checks, "explain_difference", lambda *args, **kwargs: None)
""",
    "type(cl).__setattr__": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
type(cl).__setattr__(cl.classroom.checks, "explain_difference", lambda *args, **kwargs: None)
""",
    "a decorator that installs the function": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
import functools
@functools.partial(object.__setattr__, cl.classroom.checks, "explain_difference")
def _nothing_wrong(*args, **kwargs):
    return None
""",
    "a lambda's default argument does the patching": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
_ = lambda done=object.__setattr__(cl.classroom.checks, "explain_difference", lambda *a, **k: None): done
""",
    "__globals__ read with getattr and a built string, then .update()": """
getattr(cl.check_close, "__glob" + "als__").update(explain_difference=lambda *args, **kwargs: None)
""",
    "operator.setitem on a checker's globals": """
import operator
operator.setitem(getattr(cl.check_close, "__glob" + "als__"), "explain_difference", lambda *a, **k: None)
""",
    "walrus rebinds a checker name": """
(cl := type("Fake", (), {"__getattr__": lambda self, name: lambda *args, **kwargs: None})())
""",
    "walrus rebinds a locked cell's input": """
(weights := [0.5, 0.5])
""",
    "global statement inside a function rebinds cl": """
def _swap():
    global cl
    cl = type("Fake", (), {"__getattr__": lambda self, name: lambda *args, **kwargs: None})()
_swap()
""",
    "a match statement's capture pattern rebinds cl": """
match type("Fake", (), {"__getattr__": lambda self, name: lambda *args, **kwargs: None})():
    case cl:
        pass
""",
    "a locked input changed in place by a method call": """
weights.__setitem__(0, 0.5)
weights.reverse()
""",
    "inspect.currentframe().f_globals (sys._getframe by another door)": """
import inspect
inspect.currentframe().f_globals["weights"] = [0.5, 0.5]
""",
    "gc.get_referrers finds the module dict": """
import gc
for _d in gc.get_referrers(cl.check_close):
    if isinstance(_d, dict) and "explain_difference" in _d:
        _d["explain_difference"] = lambda *args, **kwargs: None
""",
    "builtins reached as print.__self__, exec from a built string": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
getattr(print.__self__, "ex" + "ec")("cl.classroom.checks.explain_difference = lambda *a, **k: None")
""",
    "builtins imported under another name": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
import builtins as b
getattr(b, "ex" + "ec")("cl.classroom.checks.explain_difference = lambda *a, **k: None")
""",
    "importlib imported from under another name": """
from importlib import import_module as load
load("course_lib.classroom.checks").explain_difference = lambda *args, **kwargs: None
""",
    "sys.modules via from-import": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
from sys import modules as loaded
loaded["course_lib.classroom.checks"].explain_difference = lambda *args, **kwargs: None
""",
    "unittest.mock.patch.object(...).start()": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
from unittest import mock
mock.patch.object(cl.classroom.checks, "explain_difference", lambda *args, **kwargs: None).start()
""",
    "timeit runs a statement given as a string": """
import timeit
timeit.timeit("import course_lib.classroom.checks as c; c.explain_difference = lambda *a, **k: None", number=1)
""",
    "a %time magic (allowed as harmless) runs the patch": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
%time cl.classroom.checks.explain_difference = lambda *a, **k: None
""",
    "a %%timeit cell magic (allowed as harmless) runs the patch": """
%%timeit -n1 -r1
from course_lib.classroom import checks
checks.explain_difference = lambda *a, **k: None
""",
    "a file written and imported": """
with open("_helper_30.py", "w") as f:
    f.write("import course_lib.classroom.checks as c\\nc.explain_difference = lambda *a, **k: None\\n")
import _helper_30
""",
    "pickle payload calls the patching function": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
import pickle
def _nothing(*args, **kwargs):
    return None
pickle.loads(b"cbuiltins\\nsetattr\\n(ccourse_lib.classroom\\nchecks\\nVexplain_difference\\nc__main__\\n_nothing\\ntR.")
""",
    "ctypes writes the attribute": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
import ctypes
ctypes.pythonapi.PyObject_SetAttrString.argtypes = (ctypes.py_object, ctypes.c_char_p, ctypes.py_object)
ctypes.pythonapi.PyObject_SetAttrString(cl.classroom.checks, b"explain_difference", lambda *a, **k: None)
""",
    "a TorchFunctionMode entered and never left": """
from torch.overrides import TorchFunctionMode
class _Agree(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out | True if func is torch.isclose else out
_Agree().__enter__()
""",
    "torch.library overrides the CPU kernel of aten::isclose": """
_lib = torch.library.Library("aten", "IMPL")
_lib.impl("isclose", lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: torch.ones(a.shape, dtype=torch.bool), "CPU")
""",
    "an answer tensor that agrees with anything (Tensor subclass)": """
class _Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs)
        if func is torch.isclose:
            return out.as_subclass(torch.Tensor) | True
        return out
answer_value = torch.tensor([9.0, 9.0]).as_subclass(_Agreeable)
""",
    "__init_subclass__ runs the patch when a class is made": """
cl.check_close  # loads course_lib.classroom.checks, as any earlier check cell has
class _Base:
    def __init_subclass__(cls, **kwargs):
        object.__setattr__(cl.classroom.checks, "explain_difference", lambda *a, **k: None)
class _Child(_Base):
    pass
""",
    # ------------------------------------------------------------------ issue 44: aliases taken inside functions
    "getattr taken as a value inside an answer replaces check_function (issue 44)": """
def decoder_mask(tgt, pad):
    g = getattr
    g(cl, "__di" + "ct__")["check_function"] = lambda *args, **kwargs: None
    return torch.zeros(1)
decoder_mask(None, 0)
""",
    "functools.partial(getattr, cl) reads the package's namespace": """
import functools
_read = functools.partial(getattr, cl)
_read("__di" + "ct__")["check_answer"] = lambda *args, **kwargs: None
""",
    "the package handed to a function that patches it": """
def _install(package):
    package.check_function = lambda *args, **kwargs: None
_install(cl)
""",
    "a module alias by unpacking, then patched": """
_G, _H = F, None
_G.softmax = lambda x, dim=-1: x
""",
    "a locked input changed in place inside the answer, when the check calls it": """
def answer(x):
    weights.reverse()
    return x
""",
    # ------------------------------------------------------------------ caught: flagged
    "setattr with a name built at runtime": """
setattr(cl, "check_" + "answer", lambda *args, **kwargs: None)
""",
    "__import__ with a name built at runtime": """
__import__("course_lib.classroom." + "checks").check_close = print
""",
    "vars() of the package": """
vars(cl)["check_answer"] = lambda *args, **kwargs: None
""",
    "importlib.import_module by its own name": """
import importlib
importlib.import_module("course_lib.classroom.checks").check_close = print
""",
    "sys._getframe().f_globals": """
import sys
sys._getframe().f_globals["cl"] = None
""",
    "exec of a string built at runtime": """
exec("cl.check_" + "answer = print")
""",
    "a class body assigns to the package": """
class _Patch:
    cl.check_answer = print
""",
    "unicode (fullwidth) identifiers normalise to cl": """
ｃｌ.check_answer = lambda *args, **kwargs: None
""",
    "a function's __code__ swapped": """
def _nothing(*args, **kwargs):
    return None
cl.check_close.__code__ = _nothing.__code__
""",
    "atexit registers setattr": """
import atexit
atexit.register(setattr, cl, "check_answer", print)
""",
    "VARIANT rebound in an answer cell": """
VARIANT = "s7654321"
""",
    # ------------------------------------------------------------------ issue 44: a lecturer's grading of notebook 05
    "a by-hand answer of an int subclass whose == says True to anything (05 exercise 1)": """
class Index(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__


answer_value = Index(3)
""",
    "int shadowed by a class of the answer cell: the check's inputs come out empty (05 exercise 3)": """
class int(int):
    def __new__(cls, x=0, *args):
        return 0


def causal_padding_mask(lengths, n):
    return torch.zeros(len(lengths), n, n, dtype=torch.bool)
""",
}

# By-hand answers (bound to ``answer_value``) whose own comparisons answer the check: refused at run time by the test
# cell's verification (course_lib.classroom.snapshot.not_plain), whatever a reading of the cell finds, and flagged.
RUNTIME_ATTACKS = {
    "05 Exercise 1: an int subclass whose == says True, its class made by type() with a built name": """
answer_value = type("Index", (int,), {"__e" + "q__": lambda self, other: True, "__hash__": int.__hash__})(3)
""",
    "05 Exercise 1: trudy's Index(3), an int subclass whose == says True": """
class Index(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__


answer_value = Index(3)
""",
    "05 Exercise 1: weights as a list holding a float subclass that equals anything": """
answer_value = [0.0, type("W", (float,), {"__eq__": lambda s, o: True, "__hash__": float.__hash__})(0.5)]
""",
}

# Issue 44, a second lecturer's grading of notebook 05 with the guide's commands: four submissions scored full marks
# unflagged by changing what the checks rely on inside objects that stay the same (a function's code, a course table)
# or by an answer that reads the check's expected values when converted. The submissions were lost: these are rebuilt
# from the lecturer's account. Each is (answer cell, check cell) run after the locked cells: the check passes a junk or
# forbidden answer once the answer cell ran (the cheat is real), and the test cell's run-time verification
# (course_lib.classroom.snapshot) refuses it ("Not graded"), which the class report flags. READ_05: those that the
# guard's reading of the answer cell flags too; the others are holes of the reading (READ_HOLES: why), closed at run
# time only.
_JUNK_PASSES = """
cl.check_function(lambda x: x, lambda x: x + 1, lambda g: (torch.zeros(2),), name="junk")
cl.check_answer(torch.zeros(2), torch.ones(2), "junk by hand")
"""
LECTURER_05_ATTACKS = {
    "max: update_wrapper gives cl.check_function and explain_difference another function's __code__": (
        """
import functools


def _agree(*args, **kwargs):
    return None


functools.update_wrapper(cl.check_function, _agree, assigned=("__co" + "de__",))
functools.update_wrapper(cl.explain_difference, _agree, assigned=("__co" + "de__",))
""",
        _JUNK_PASSES,
    ),
    "olga: the same through the checks module, the names to copy held in a variable, updated=()": (
        """
import functools

_WHAT = ("__co" + "de__",)


def _agree(*args, **kwargs):
    return None


for _checker in (cl.check_function, cl.classroom.checks.explain_difference):
    functools.update_wrapper(_checker, _agree, assigned=_WHAT, updated=())
""",
        _JUNK_PASSES,
    ),
    "olga: functools.wraps(..., assigned=...) applied to the checkers": (
        """
from functools import wraps


def _agree(*args, **kwargs):
    return None


_copy_code = wraps(_agree, assigned=["".join(["__", "code", "__"])], updated=[])
_copy_code(cl.check_function)
_copy_code(cl.explain_difference)
""",
        _JUNK_PASSES,
    ),
    "kim2: reach.KERNELS emptied in place through a function, then an aten kernel does fixed_attention's work": (
        """
def _forget(table):
    for key in table:
        table[key] = ()


_forget(cl.classroom.reach.KERNELS)


def fixed_attention(q, k, v, mask=None):
    bias = None if mask is None else torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask=bias)
""",
        """
def masked_inputs(g):
    mask = torch.rand(2, 3, 5, generator=g) > 0.5
    mask[..., 0] = True
    return torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 4, generator=g), torch.randn(2, 5, 2, generator=g), mask


cl.check_function(lambda q, k, v, m: fixed_attention(q, k, v, m)[0], cl.scaled_dot_product_attention,
                  masked_inputs, name="fixed_attention", without=cl.ATTENTION_FUNCTIONS)
""",
    ),
    "ned: weights_ex1 a UserList of objects whose __float__ reads expected_ex1 by string.Formatter().get_field": (
        """
import collections
import string


class _Late:
    def __init__(self, i):
        self.i = i

    def __float__(self):
        expected = string.Formatter().get_field("0.__globals__[expected_ex1]", (_Late.__init__,), {})[0]
        return float(expected[0, self.i])


weights_ex1 = collections.UserList(_Late(i) for i in range(4))
""",
        """
expected_ex1 = torch.softmax(torch.randn(1, 4, dtype=torch.float64), -1)  # numbers the answer never saw
cl.check_answer([weights_ex1], expected_ex1, "masked weights", atol=5e-5)  # as notebook 05's check
""",
    ),
}
# read as tampering since the reading of strings handed to functools and string.Formatter (classroom.dunders)
READ_05 = {name for name in LECTURER_05_ATTACKS if not name.startswith("kim2")}
READ_HOLES = {
    "kim2: reach.KERNELS emptied in place through a function, then an aten kernel does fixed_attention's work": (
        "a course table handed to a function of the cell, which changes it in place: no reading follows a value"
    )
}

CAUGHT = {
    # closed on 2026-12: blocking a course function blocks its unchecked twins, read from its source
    # (classroom.delegates); the first seven passed their checks before, the two sdpa ones were caught by a table
    "mha: the layer's unchecked twin, MultiHeadAttention._forward",
    "split: course_lib.multihead._split (split_heads unchecked)",
    "split: _split imported under another name",
    "merge: course_lib.multihead._merge (merge_heads unchecked)",
    "rope: course_lib.positional._rope (apply_rope unchecked)",
    "top_k: course_lib.generation._top_k (top_k_filter unchecked)",
    "top_p: course_lib.generation._top_p (top_p_filter unchecked)",
    "sdpa: course_lib.attention.attend (scaled_dot_product_attention unchecked)",
    "sdpa: course_lib.attention._weights, then the values",
    # issue 44 (2026-12): getattr taken as a value and a module handed on are flagged wherever they are written;
    # changes of a locked value are read inside functions too (classroom.syntax's scopes)
    "getattr taken as a value inside an answer replaces check_function (issue 44)",
    "functools.partial(getattr, cl) reads the package's namespace",
    "the package handed to a function that patches it",
    "a module alias by unpacking, then patched",
    "a locked input changed in place inside the answer, when the check calls it",
    # closed on 2026-11-27: torch._C's switches refused while checking (classroom.reach); read as tampering: a module
    # alias by attribute chain, an import of a module an answer does not need, torch's modes, torch.library, a
    # class with its own __torch_function__ (classroom.tampering); at run time too: a mode left on, an answer
    # tensor with its own rules (classroom.integrity)
    "softmax: the dispatcher's modes switched off (DisableTorchDispatch)",
    "attention: the dispatcher's modes switched off (DisableTorchDispatch)",
    "a module bound to a new name, then patched",
    "a file written and imported",
    "a TorchFunctionMode entered and never left",
    "torch.library overrides the CPU kernel of aten::isclose",
    "an answer tensor that agrees with anything (Tensor subclass)",
    # shortcuts: ShortcutError under blocked(...); the first seven were holes until classroom.reach refused starting a
    # thread, handing a tensor to NumPy, calling torch's Python copies of operators, and the autograd engine
    "attention: course_lib.kernels.launch.attention_reference",  # blocked by its qualified name (needs triton)
    "softmax: computed later, when the checker reads the result (lazy Tensor subclass)",  # making one is refused
    "attention: F.scaled_dot_product_attention in another thread",
    "backward: torch._decomp's Python _softmax_backward_data",
    "backward: torch.autograd.backward through a softmax by hand",
    "softmax: numpy's logaddexp.reduce as logsumexp",
    "softmax: run in another thread (the modes are thread-local)",
    "softmax: torch._decomp's Python decomposition of _softmax",
    "softmax: torch._refs.softmax (primTorch's Python softmax)",
    "softmax: getattr(torch, 'soft' + 'max')",
    "softmax: functools.partial(F.softmax)",
    "softmax: kept in a list before the check",
    "softmax: nn.Softmax subclass with forward copied",
    "softmax: F.softmin of the negated scores",
    "softmax: torch.distributions.Categorical(logits).probs",
    "softmax: torch.func.vmap over rows of _VariableFunctions.softmax",
    "softmax: the gradient of cross_entropy with one-hot targets",
    "softmax: the modes popped by _disable_current_modes, aten._softmax",
    "softmax: torch.jit.trace of x.softmax",
    "softmax: cl.scaled_dot_product_attention with identity keys and values",
    "attention: getattr(torch.ops.aten, ...) of the math kernel",
    "attention: torch._decomp's Python flash-attention-for-CPU",
    "attention: functools.partial(F.scaled_dot_product_attention)",
    "attention: a default argument holding cl.scaled_dot_product_attention",
    "mha: cl.MultiHeadAttention itself",
    "mha: nn.MultiheadAttention with the weights packed",
    "backward: the backward kernel called forward",
    "backward: torch.func.vjp through a softmax by hand",
    "backward: torch.autograd.functional.vjp through a softmax by hand",
    "backward: cl.softmax_jacobian under another name",
    # tampering: flagged by guard.tampering
    "setattr with a name built at runtime",
    "__import__ with a name built at runtime",
    "vars() of the package",
    "importlib.import_module by its own name",
    "sys._getframe().f_globals",
    "exec of a string built at runtime",
    "a class body assigns to the package",
    "unicode (fullwidth) identifiers normalise to cl",
    "a function's __code__ swapped",
    "atexit registers setattr",
    "VARIANT rebound in an answer cell",
    # closed by classroom.reach: more softmax kernels, fused attention under the softmax names, blocked Python
    # functions (and the course's inner attention functions) refused by their code however they are held
    "attention: a fresh copy of course_lib.attention by runpy",
    "attention: cl.scaled_dot_product_attention as a staticmethod of a class",
    "attention: cl.scaled_dot_product_attention kept in a list",
    "attention: course_lib.attention.attend (the unblocked arithmetic)",
    "attention: course_lib.efficient.chunked_attention_reference",
    "softmax: aten._masked_softmax with nothing masked",
    "softmax: fused CPU attention with identity keys and values",
    "softmax: the gradient of logcumsumexp's last entry",
    "softmax: torch.logcumsumexp as the log-normaliser",
    "softmax: torch.sparse.softmax on a sparse copy",
    "mha: a fresh copy of course_lib.multihead by runpy",
    "mha: a subclass of cl.MultiHeadAttention with forward copied",
    # closed after the first held-out run (classroom.tampering: imports, walrus, match, global, in-place methods,
    # internals, computed getattr, the code given to %time, targets that start with an expression)
    "__globals__ read with getattr and a built string, then .update()",
    "__init_subclass__ runs the patch when a class is made",
    "a %%timeit cell magic (allowed as harmless) runs the patch",
    "a %time magic (allowed as harmless) runs the patch",
    "a decorator that installs the function",
    "a lambda's default argument does the patching",
    "a locked input changed in place by a method call",
    "a match statement's capture pattern rebinds cl",
    "a module imported under a new name, then patched",
    "an assignment target that starts with an expression: [cl][0].x = ...",
    "builtins imported under another name",
    "builtins reached as print.__self__, exec from a built string",
    "ctypes writes the attribute",
    "gc.get_referrers finds the module dict",
    "global statement inside a function rebinds cl",
    "importlib imported from under another name",
    "inspect.currentframe().f_globals (sys._getframe by another door)",
    "object.__setattr__ on the module",
    "operator.setitem on a checker's globals",
    "pickle payload calls the patching function",
    "sys.modules via from-import",
    "timeit runs a statement given as a string",
    "torch imported as T, then patched",
    "type(cl).__setattr__",
    "unittest.mock.patch.object(...).start()",
    "walrus rebinds a checker name",
    "walrus rebinds a locked cell's input",
    # issue 44 (a lecturer's grading of notebook 05): a class with its own ==, a builtin shadowed that a check reads
    "a by-hand answer of an int subclass whose == says True to anything (05 exercise 1)",
    "int shadowed by a class of the answer cell: the check's inputs come out empty (05 exercise 3)",
}

# Each hole: (why it gets through today, how the guard could close it). The "why" is its strict-xfail reason. The last
# seven were closed on 2026-11-27 (see CAUGHT).
HOLES: dict[str, tuple[str, str]] = {}
