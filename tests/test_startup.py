"""What a notebook pays once, before it has learned or checked anything: neither the first training step nor the
first exercise check may import PyTorch's compiler, ``torch._dynamo`` (about 1.5 s of CPU in every new process, on a
course whose notebooks each have a minute).

Two places of torch import it on first use: ``torch.optim``'s optimizers (so ``fit`` writes Adam out,
``course_lib.train.adam_step``) and a ``TorchDispatchMode`` subclass that does not opt out of torch's wrapper (so the
checker's kernel door opts out). Each call runs in a fresh interpreter, where nothing has imported it yet.
"""

import pytest
from conftest import run_after_importing_torch
from torch.utils._python_dispatch import TorchDispatchMode

from course_lib.paths import ROOT

FIRST_CALLS = {
    "fit": "from course_lib.train import fit; "
    "fit(torch.nn.Linear(2, 2), (torch.randn(8, 2), torch.zeros(8, dtype=torch.long)), epochs=1, progress=False)",
    "fit_many": "from course_lib.train_many import fit_many; "
    "fit_many([torch.nn.Linear(2, 2) for _ in range(2)], [(torch.randn(8, 2), torch.zeros(8, dtype=torch.long))] * 2, "
    "epochs=1, batch_size=4, progress=False)",
    "check_function": "import course_lib as cl; "
    "cl.check_function(lambda s: s.exp() / s.exp().sum(-1, keepdim=True), lambda s: s.softmax(-1), "
    "lambda g: (torch.randn(3, 5, generator=g),), without=cl.SOFTMAX_FUNCTIONS)",
}


@pytest.fixture(scope="module")
def first_calls():
    """{call: (returncode, stdout, stderr)}: each call, then whether torch._dynamo is imported, as the first thing
    after `import torch` in a fresh interpreter, where nothing has imported it yet (conftest's
    run_after_importing_torch: one interpreter imports torch once, a child forked from it makes each call)."""
    snippets = {
        call: f"import sys, torch; {code}; print('torch._dynamo' in sys.modules)" for call, code in FIRST_CALLS.items()
    }
    snippets["probe"] = "import sys, torch._dynamo; print('torch._dynamo' in sys.modules)"
    return run_after_importing_torch(snippets, cwd=ROOT)


@pytest.mark.parametrize("call", sorted(FIRST_CALLS))
def test_the_first_call_does_not_import_the_compiler(call, first_calls):
    if call == "check_function" and not hasattr(TorchDispatchMode, "_should_skip_dynamo"):
        pytest.skip(
            "this torch has no _should_skip_dynamo switch: the checker may pay the import (a cost, not an error)"
        )
    returncode, stdout, stderr = first_calls[call]
    assert returncode == 0, stderr
    assert stdout.strip().splitlines()[-1] == "False", f"{call} imported torch._dynamo"


def test_the_probe_sees_the_import(first_calls):
    returncode, stdout, stderr = first_calls["probe"]
    assert stdout.strip() == "True", stderr
