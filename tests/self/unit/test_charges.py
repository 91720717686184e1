"""A rule broken is charged to the function that broke it: the ruled function
whose code, or whose instance, is at work on the stack; never a function of theirs that no rule
here covers, nor a ruled one the request names while torch's own code does the work. In process
(the watch is the same in the sandbox's worker)."""

import pytest
import torch

from seam import InProcess, probes
from tests.self.submissions import reference_text, reference_with

MEMORY = dict(in_dim=8, out_dim=4, layers=1, batch=2, dtype=torch.float32, seed=0)


def _impl(tmp_path, problem: str, appended: str = "") -> InProcess:
    folder = reference_with(tmp_path / "s", {problem: reference_text(problem) + "\nimport torch\n" + appended})
    return InProcess(folder, package=f"charges_{tmp_path.name}")


@pytest.fixture
def adamw_named(monkeypatch):
    """The memory probe names their AdamW as well (as the AdamW probes do): it is then one of
    the functions the request calls, which the watch charges when no frame says whose work it was."""
    monkeypatch.setitem(probes.CALLS, "memory_stages", "optim.memory_by_stage / optim.AdamW")


HELPER = '''
_own_memory_by_stage = memory_by_stage
def _measure(model, optimizer, x, y):  # a helper of memory_by_stage's, at module level
    return _own_memory_by_stage(model, optimizer, x, y)
def memory_by_stage(model, optimizer, x, y):
    return _measure(model, optimizer, x, y)
'''


@pytest.mark.parametrize("code", ["", HELPER], ids=["memory_by_stage", "a helper of memory_by_stage"])
def test_the_probes_optimizer_stepped_by_their_memory_by_stage_charges_nobody(tmp_path, adamw_named, code):
    """memory_by_stage may step the optimizer a probe hands over (AdamW's state, another update;
    no rule covers it): that is not their AdamW's work, even in a request that names AdamW. (A
    watch that charged by the request alone would charge AdamW: a frame of theirs is on the stack, and AdamW is among the
    request's functions.)"""
    impl = _impl(tmp_path, "optim", code)
    stages = impl.probes.memory_stages(kind="adamw_layout", **MEMORY)["stages"]
    assert stages["after_step"]["optimizer"] > 0
    assert impl.violations() == {}


BOUND = '''
from torch.optim.adamw import adamw as _torch_adamw
_OwnAdamW = AdamW
@torch.no_grad()
def _step(this, closure=None):  # a module-level function bound as the method: no "AdamW" in its name
    for g in this.param_groups:
        params = [p for p in g["params"] if p.grad is not None]
        for p in params:
            st = this.state[p]
            if not st:
                st["step"] = torch.tensor(0.0)
                st["exp_avg"], st["exp_avg_sq"] = torch.zeros_like(p), torch.zeros_like(p)
        _torch_adamw(params, [p.grad for p in params], [this.state[p]["exp_avg"] for p in params],
                                [this.state[p]["exp_avg_sq"] for p in params], [],
                                [this.state[p]["step"] for p in params], amsgrad=False, beta1=g["betas"][0],
                                beta2=g["betas"][1], lr=g["lr"], weight_decay=g["weight_decay"], eps=g["eps"],
                                maximize=False)
class AdamW(_OwnAdamW):
    step = _step
'''


def test_torchs_adamw_inside_their_adamw_is_charged_to_adamw_under_memory_by_stage(tmp_path):
    """Their AdamW's step, a module-level function that calls torch's functional AdamW, run by
    their memory_by_stage (the probe hands over their AdamW): AdamW's, by the instance its first
    parameter is, though the request does not name AdamW."""
    impl = _impl(tmp_path, "optim", BOUND)
    impl.probes.memory_stages(kind="adamw", **MEMORY)
    assert list(impl.violations()) == ["optim.AdamW"], impl.violations()
    assert "torch.optim.adamw" in impl.violations()["optim.AdamW"]


DELEGATES = '''
def _cast(x, dtype):  # a helper of theirs, which no rule covers
    return x.float().to(dtype).float()
_own_round_to = round_to
def round_to(x, fmt):
    _own_round_to(x, fmt)
    return _cast(x, torch.float16)
'''


def test_a_ruled_function_that_hands_the_forbidden_work_to_a_helper_is_charged(tmp_path):
    impl = _impl(tmp_path, "dtypes", DELEGATES)
    impl.dtypes.round_to(torch.tensor([1.0, 2.5]), impl.get("dtypes.FP16"))
    assert list(impl.violations()) == ["dtypes.round_to"]


@pytest.mark.parametrize("code", ["AdamW = torch.optim.AdamW", "import functools\nAdamW = functools.partial(torch.optim.AdamW)"],
                         ids=["torch's class", "a partial of it"])
def test_adamw_bound_to_torchs_own_is_the_rule_broken_at_import(tmp_path, code):
    """A red team's route: no frame of theirs ever runs, in their own pytest (the sandbox's
    stand-in refuses torch's AdamW): the name bound to torch's class is the breach, seen when
    the module is imported."""
    impl = _impl(tmp_path, "optim", code + "\n")
    impl.probes.adamw_construct({"lr": 1e-3})
    assert impl.violations() == {"optim.AdamW": "torch.optim.AdamW as the class itself"}


KEPT = '''
_KEPT = []
_own_memory_by_stage = memory_by_stage
def memory_by_stage(model, optimizer, x, y):
    _KEPT.append(type(optimizer))  # the probe's optimizer: AdamW's state, not AdamW's update
    return _own_memory_by_stage(model, optimizer, x, y)
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        params = list(params)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self._inner = _KEPT[0](params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.state = self._inner.state
    def step(self, closure=None):
        return self._inner.step(closure)
'''


def test_the_probes_optimizer_kept_and_driven_by_their_adamw_is_charged_to_adamw(tmp_path):
    """The optimizer a probe hands over (seam/adamw_shaped.py: AdamW's state, not its update): their
    AdamW that keeps its class and delegates to it is charged by the watch, by that file."""
    impl = _impl(tmp_path, "optim", KEPT)
    impl.probes.memory_stages(kind="adamw_layout", **MEMORY)
    assert impl.violations() == {}
    impl.probes.memory_stages(kind="adamw", **MEMORY)
    assert list(impl.violations()) == ["optim.AdamW"], impl.violations()
    assert "seam.adamw_shaped" in impl.violations()["optim.AdamW"]
