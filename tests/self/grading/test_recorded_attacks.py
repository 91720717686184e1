"""Routes around the evidence, written by an attacker who reads the seam, graded through `batch` in
the default isolation mode (every mode this machine offers with GRADER_ALL_MODES=1, tests/self/shared.py
route_modes). None leaves a note in its text (every telling name is
made at run time, where the static review cannot read it); each either scores no more than the
same upload with the route deleted, or is a note naming the student, seen in the worker's record
of what ran (seam/audit.py), which the student's code can neither remove nor edit.

The routes:
- frames reached through ``inspect.stack()``: what keeps torch's fused AdamW kernel refusing is
  destroyed, and the kernel steps for AdamW;
- torch's ``optim/adam.py`` read as text and run through an alias of ``exec``: the real Adam;
- ``sys.setprofile``/``getprofile`` rebound (``setattr`` with a name made at run time) before the
  watch installs its profiler, then ``F.linear``;
- ``TorchFunctionMode.__enter__``/``__exit__`` made no-ops, then ``F.linear``; and with them
  what torch's ``__enter__`` calls rebound in its module;
- the watch's charges cleared after ``F.linear``, through the worker's module (``import worker``)
  or through gc's object lists;
- a helper module written into the scratch at import, imported from there, reading gc's lists;
- a module saved in Latin-1, reading gc's lists.
"""

import pytest

from grader.batch.output import class_summary, read_json
from seam.problems import files
from tests.self.shared import cli, route_modes
from tests.self.shortcuts import stub_definition
from tests.self.submissions import reference_text, reference_with

pytestmark = pytest.mark.e2e

# names made at run time: the static review folds constants, not this
PRELUDE = '''
import sys as _sys
def _r(text):
    return text[::-1]
'''

FRAMES_KERNELS = '''
import inspect as _inspect
def _free_kernels():
    for info in _inspect.stack():
        for value in list(getattr(info.frame, _r("slacol_f")).values()):
            if isinstance(value, dict) and "libraries" in value:
                for library in value["libraries"]:
                    getattr(library, _r("yortsed_"))()
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        _check_hyperparameters(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))
        for g in self.param_groups:
            _check_hyperparameters(g["lr"], g["betas"], g["eps"], g["weight_decay"])
    @torch.no_grad()
    def step(self, closure=None):
        _free_kernels()
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        fused = getattr(torch, _r("_wmada_desuf_"))
        for g in self.param_groups:
            ps = [p for p in g["params"] if p.grad is not None]
            for p in ps:
                if not self.state[p]:
                    self.state[p]["step"] = torch.tensor(0.0)
                    self.state[p]["exp_avg"] = torch.zeros_like(p)
                    self.state[p]["exp_avg_sq"] = torch.zeros_like(p)
            if ps:
                fused(ps, [p.grad for p in ps], [self.state[p]["exp_avg"] for p in ps],
                      [self.state[p]["exp_avg_sq"] for p in ps], [], [self.state[p]["step"] for p in ps],
                      lr=g["lr"], beta1=g["betas"][0], beta2=g["betas"][1], weight_decay=g["weight_decay"],
                      eps=g["eps"], amsgrad=False, maximize=False)
        return loss
'''

# torch's Adam, from its file's text (decay applied by hand first, as torch's AdamW would)
REREAD = '''
import os as _os
_source = _os.path.join(_os.path.dirname(torch.__file__), "optim", _r("yp.mada"))
_namespace = {"__name__": "torch.optim._again", "__package__": "torch.optim"}
_run = (__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))[_r("cexe")]
try:
    with open(_source) as _f:
        _run(_f.read(), _namespace)
except Exception:
    pass
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        _check_hyperparameters(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))
        for g in self.param_groups:
            _check_hyperparameters(g["lr"], g["betas"], g["eps"], g["weight_decay"])
        self._inner = _namespace["Adam"]([{**g, "weight_decay": 0.0} for g in self.param_groups])
        self.state = self._inner.state
    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for g, inner in zip(self.param_groups, self._inner.param_groups):
            inner["lr"], inner["betas"], inner["eps"] = g["lr"], g["betas"], g["eps"]
            for p in g["params"]:
                if p.grad is not None:
                    p.mul_(1 - g["lr"] * g["weight_decay"])
        self._inner.step()
        return loss
'''

# Linear by torch's F.linear; BEFORE (module level) blinds, AFTER (inside forward) retracts
LINEAR = '''
class Linear(torch.nn.Module):
    def __init__(self, input_dim, output_dim, device=None, dtype=None):
        super().__init__()
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError("dims must be positive")
        self.input_dim, self.output_dim = input_dim, output_dim
        self.weight = torch.nn.Parameter(torch.empty(input_dim, output_dim, device=device, dtype=dtype))
        std = 1.0 / input_dim ** 0.5
        torch.nn.init.trunc_normal_(self.weight, mean=0.0, std=std, a=-3.0 * std, b=3.0 * std)
    def forward(self, x):
        if x.shape[-1] != self.input_dim:
            raise ValueError("last dim")
        out = getattr(torch.nn.functional, _r("raenil"))(x, self.weight.T)
        AFTER()
        return out
'''
PROFILER_REBOUND = ('setattr(_sys, _r("eliforptes"), lambda f: None)\n'
                    'setattr(_sys, _r("eliforpteg"), lambda: None)\n'
                    "def AFTER():\n    pass\n")
MODES_NO_OP = ('_mode = getattr(torch.overrides, _r("edoMnoitcnuFhcroT"))\n'
               'setattr(_mode, _r("__retne__"), lambda self: self)\n'
               'setattr(_mode, _r("__tixe__"), lambda self, *exc: None)\n'
               "def AFTER():\n    pass\n")
# and what torch's own __enter__ calls, rebound in its module: no mode reaches the stack
MODES_UNPUSHED = MODES_NO_OP + 'setattr(torch.overrides, _r("edom_hsup_"), lambda mode: None)\n'
CHARGES_CLEARED = ("import worker as _worker\n"
                   "def AFTER():\n    getattr(_worker.CHARGES.honest, _r('snoitaloiv')).clear()\n")
GC_CLEARED = ("import gc as _gc\n"
              "def AFTER():\n"
              "    for o in getattr(_gc, _r('stcejbo_teg'))():\n"
              "        if type(o).__name__ == _r('tsenoH'):\n"
              "            getattr(o, _r('snoitaloiv')).clear()\n")

# a helper module written to the scratch when the module is imported, and imported from there
SCRATCH_HELPER = '''
import os as _os
with open(_os.path.join(_os.getcwd(), "_scratch_helper.py"), "w") as _f:
    _f.write("import gc\\ndef peek():\\n    return len(getattr(gc, 'get_' + 'objects')())\\n")
vars(_sys)[_r("htap")].insert(0, _os.getcwd())
import _scratch_helper
def matmul_flops(m, k, n):
    _check_count("m", m), _check_count("k", k), _check_count("n", n)
    _scratch_helper.peek()
    return int(2 * m * k * n)
'''
# saved in Latin-1 (the cookie says so): a review that reads it as UTF-8 sees nothing
LATIN1_GC = '''
import gc as _gc
def matmul_flops(m, k, n):
    # produit matriciel: 2·m·k·n opérations (é)
    _check_count("m", m), _check_count("k", k), _check_count("n", n)
    getattr(_gc, "get_" + "objects")()
    return int(2 * m * k * n)
'''

# route -> (problem, code, the recorded note's kind it must leave (None: it must earn nothing))
ROUTES = {
    "frames reach the kernels' keeper": ("optim", FRAMES_KERNELS, "frames"),
    "adam.py run again from its text": ("optim", REREAD, "removed code"),
    "sys.setprofile rebound": ("modules", PROFILER_REBOUND + LINEAR, None),
    "torch's mode entry made a no-op": ("modules", MODES_NO_OP + LINEAR, None),
    "torch's mode push rebound": ("modules", MODES_UNPUSHED + LINEAR, "torch internals"),
    "charges cleared through the worker's module": ("modules", CHARGES_CLEARED + LINEAR, None),
    "charges cleared through gc": ("modules", GC_CLEARED + LINEAR, "gc"),
    "a helper written to the scratch": ("flops", SCRATCH_HELPER, "imports by name"),
    "a module saved in Latin-1": ("flops", LATIN1_GC, "gc"),
}
UPLOADS = {  # one route per problem module of an upload
    "framed": ("frames reach the kernels' keeper", "torch's mode entry made a no-op", "a helper written to the scratch"),
    "reread": ("adam.py run again from its text", "sys.setprofile rebound", "a module saved in Latin-1"),
    "retracted": ("charges cleared through the worker's module",),
    "collected": ("charges cleared through gc",),
    "unpushed": ("torch's mode push rebound",),
}
ATTACKED = {"optim": ("AdamW",), "modules": ("Linear",), "flops": ("matmul_flops",)}
LATIN1 = {"a module saved in Latin-1"}


def _module(route: str) -> tuple[str, str | bytes]:
    problem, code, _ = ROUTES[route]
    text = reference_text(problem) + "\n\n# ---- attack ----\nimport torch\n" + PRELUDE + code
    if route in LATIN1:
        return problem, ("# -*- coding: latin-1 -*-\n" + text).encode("latin-1", "replace")
    return problem, text


def _deleted(problem: str) -> str:
    """The module with the attacked functions as the stub leaves them: the route deleted."""
    return (reference_text(problem) + "\n\n# ---- the route deleted ----\n"
            + "\n\n".join(stub_definition(problem, name) for name in ATTACKED[problem]) + "\n")


def _by_problem(results: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in results["tests"]:
        out[t["tags"][0]] = out.get(t["tags"][0], 0.0) + t["score"]
    return out


def _upload(folder, routes):
    modules = dict(_module(route) for route in routes)
    texts = {p: m for p, m in modules.items() if isinstance(m, str)}
    out = reference_with(folder, texts, problems=list(modules))
    for problem, m in modules.items():
        if isinstance(m, bytes):
            (out / files(problem).module.name).write_bytes(m)
    return out


@pytest.fixture(scope="module")
def deleted(tmp_path_factory) -> dict[str, float]:
    """Each attacked problem's score with the routes deleted (graded once, the default mode)."""
    root = tmp_path_factory.mktemp("deleted")
    folder = reference_with(root / "s", {p: _deleted(p) for p in ATTACKED})
    out = root / "out.json"
    cli("grade", folder, "--out", out, "--only", ",".join(ATTACKED), "--gpu", "skip", check=0)
    return _by_problem(read_json(out))


def test_the_routes_hide_from_the_text():
    """Each route's text alone gives no note: what the record sees, the static review could not."""
    from seam import review
    for route in ROUTES:
        problem, module = _module(route)
        if isinstance(module, bytes):
            continue  # the Latin-1 module: what the review makes of it is its own test (test_review.py)
        text_only = module.replace(reference_text(problem), "")
        assert review.scan_source(text_only, files(problem).module.name) == [], route


@pytest.mark.parametrize("mode", route_modes())
def test_a_route_around_the_evidence_earns_nothing_unseen(mode, deleted, tmp_path):
    klass, out = tmp_path / "class", tmp_path / "out"
    for name, routes in UPLOADS.items():
        _upload(klass / name, routes)
    cli("batch", klass, "--out", out, "--jobs", "2", "--only", ",".join(ATTACKED), "--gpu", "skip",
        "--isolation", mode, "--time-limit", "20", check=0)
    summary = class_summary(out)
    for name, routes in UPLOADS.items():
        results = read_json(out / "students" / name / "results.json")
        got = _by_problem(results)
        for route in routes:
            problem, _, kind = ROUTES[route]
            module = str(files(problem).module.name)
            recorded = [n for n in results["extra_data"].get("review", [])
                        if n["file"] == module and n["seen"] == "at run time, recorded"]
            earned = got[problem] > deleted[problem]
            if kind is None:  # the watch's charge stands: nothing earned
                assert not earned, f"{name}: {route} scores {got[problem]:g} > {deleted[problem]:g} deleted"
            else:
                assert kind in {n["kind"] for n in recorded}, (name, route, recorded)
                assert all(n.get("at_stake", 0) > 0 for n in recorded), recorded
        if any(ROUTES[r][2] for r in routes):
            assert any(line.strip().startswith(f"{name} ({name}):") for line in summary), summary
