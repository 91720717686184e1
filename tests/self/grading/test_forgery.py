"""Honest-work verdicts the student's own code cannot forge: each class of attack that
takes back a ruled point with one line, written as an attacker reading the seam would, graded
through the sandbox: it scores as the shortcut left unwritten on the functions it attacked, and as
the reference on every other test. Each class rests on no wall (the watch, the reply channel,
seam/absent.py and the record are the same in every mode), so the suite grades them in the mode
`auto` takes here, as the routes around the watch (tests/self/shared.py ``route_modes``);
`GRADER_ALL_MODES=1` grades them in every mode this machine offers.

- renaming: torch's Adam code is not in the sandbox under any name, and the watch names code by
  its file, never by ``__name__`` / ``__module__``;
- rebinding what the seam calls: the reply channel is bound before student code
  (tests/self/unit/test_reply_channel.py);
- stack depth (tests/self/unit/test_honest.py): an op buried under 600 frames is still theirs;
- torch's own frames: a method of their class applied by torch's machinery, no frame of theirs;
- another library asks for it: a tensor's strides read through numpy;
- absent: torch's AdamW, its fused kernels and the FLOP counter are not in the sandbox, and
  adamw.py run again from its file finds Adam's stand-in where it imports Adam.
"""

import json

import pytest

from grader.grade import grade
from tests.self.shared import route_modes
from tests.self.submissions import reference_text, reference_with

pytestmark = pytest.mark.e2e

# (problem, attacked functions, the module's text appended to the reference's)
ATTACKS = {
    "renaming: torch's AdamW kernel under a name of theirs": ("optim", ["optim.AdamW"], '''
import torch.optim.adam as _adam_module, torch.optim.adamw as _adamw_module
_adam_module.__name__ = _adamw_module.__name__ = "optim_helpers"
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self._inner = _adamw_module.AdamW(self.param_groups, lr=lr, betas=betas, eps=eps,
                                          weight_decay=weight_decay)
        self.state = self._inner.state
    def step(self, closure=None):
        return self._inner.step(closure)
'''),
    "renaming: the FLOP counter renamed": ("flops", ["flops.matmul_flops"], '''
import torch.utils.flop_counter as _fc
_fc.__name__ = "flops_helpers"
_reference_matmul_flops = matmul_flops
def matmul_flops(m, k, n):
    with _fc.FlopCounterMode(display=False) as counter:
        torch.zeros(m, k) @ torch.zeros(k, n)
    return counter.get_total_flops()
'''),
    "rebinding: the way out rewritten, a cast in round_to": ("dtypes", ["dtypes.round_to"], '''
import os as _os
_real_write = _os.write
def _forged_write(fd, data):  # the same length, the key renamed: the grader would read no violation
    return _real_write(fd, bytes(data).replace(b'"violations"', b'"violatiXns"'))
_os.write = _forged_write
_reference_round_to = round_to
def round_to(x, fmt):
    dtype = {(5, 10): torch.float16, (8, 7): torch.bfloat16}.get((fmt.exponent_bits, fmt.mantissa_bits))
    return _reference_round_to(x, fmt) if dtype is None else x.float().to(dtype).float()
'''),
    "another library: strides read through numpy": ("tensors", ["tensors.contiguous_strides"], '''
import numpy as _np
def contiguous_strides(shape):
    array = _np.asarray(torch.empty(tuple(shape)))
    return tuple(s // array.itemsize for s in array.strides)
'''),
    "torch's own frames: nn.Linear's forward on a class renamed": ("modules", ["modules.Linear"], '''
class Linear(torch.nn.Module):
    __module__ = "torch.nn.modules.container"  # (no file of theirs by name: torch's machinery runs it)
    def __init__(self, d_in, d_out, device=None, dtype=None):
        super().__init__()
        std = (2 / (d_in + d_out)) ** 0.5
        self.weight = torch.nn.Parameter(torch.nn.init.trunc_normal_(
            torch.empty(d_out, d_in, device=device, dtype=dtype), std=std, a=-3 * std, b=3 * std))
        self.bias = None
    forward = torch.nn.Linear.forward  # F.linear, called by torch's Module.__call__ for their object
'''),
    "absent: torch's fused AdamW kernel called by hand": ("optim", ["optim.AdamW"], '''
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.grad is not None]
            for p in ps:
                st = self.state[p]
                if not st:
                    st["step"], st["exp_avg"], st["exp_avg_sq"] = (torch.tensor(0.0), torch.zeros_like(p),
                                                                   torch.zeros_like(p))
            b1, b2 = group["betas"]
            torch._fused_adamw_(ps, [p.grad for p in ps], [self.state[p]["exp_avg"] for p in ps],
                                [self.state[p]["exp_avg_sq"] for p in ps], [],
                                [self.state[p]["step"] for p in ps], lr=group["lr"], beta1=b1, beta2=b2,
                                weight_decay=group["weight_decay"], eps=group["eps"], amsgrad=False,
                                maximize=False)
        return loss
'''),
    "absent: torch's AdamW loaded again from its file, under a new name": ("optim", ["optim.AdamW"], '''
import importlib.util as _util, os as _os
_spec = _util.spec_from_file_location("torch.optim._again",
                                      _os.path.join(_os.path.dirname(torch.optim.__file__), "adamw.py"))
_again = _util.module_from_spec(_spec)
_spec.loader.exec_module(_again)  # (the zygote took out the module's objects; its file is still read)
class AdamW(_again.AdamW):
    pass
'''),
}


def _graded(folder, out, problem, mode) -> dict:
    assert grade(folder, out, gpu="skip", quiet=True, problems=[problem], isolation=mode, time_limit=20) == 0
    return json.loads(out.read_text())


def _functions(test) -> list[str]:
    return (test.get("extra_data") or {}).get("functions", [])


@pytest.mark.parametrize("mode", route_modes())
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_forged_verdict_scores_as_the_shortcut_unwritten(attack, mode, tmp_path):
    problem, attacked, appended = ATTACKS[attack]
    folder = reference_with(tmp_path / "s", {problem: reference_text(problem) + "\nimport torch\n" + appended})
    got = _graded(folder, tmp_path / "got.json", problem, mode)
    charged = set(got["extra_data"]["honest_work"])
    # The attacked functions (and those that call them) are charged, in their problem only: the
    # tests graded here score 0 exactly where they call a charged function.
    assert set(attacked) <= charged, charged
    assert all(f.startswith(problem + ".") for f in charged), charged
    for test in got["tests"]:  # the reference scores full marks on every test (test_grade.py)
        # (a test that reached removed code through their class, e.g. memory_by_stage stepping
        # "your AdamW", fails with the stand-in's refusal: it too calls what is charged)
        refused = "is not in the grader's sandbox" in test.get("output", "")
        if refused or any(f == c or f.startswith(c + ".") for f in _functions(test) for c in charged):
            assert test["score"] == 0, (test["name"], test.get("output", "")[:300])
        else:
            assert test["score"] == test["max_score"], (test["name"], test.get("output", "")[:300])
