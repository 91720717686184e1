"""Shortcuts that switch the honest-work watch off from inside, graded through `batch` in every
isolation mode this machine offers. The watch runs in the student's process, so these routes blind
it; the points rest on absence (torch's Adam and the FLOP counter are not in the sandbox under any
name) and behaviour (the layouts' tests hold cases torch will not build). Each upload scores on
each attacked problem no more than the same upload with the forbidden route deleted (the functions
as the stub leaves them), and each blinding construct is a note for review naming the student.

The routes, as an attacker who reads the seam would write them:
- a helper thread started through ``logging.threading.Thread`` and parked in ``os.read`` between
  jobs (no frame of it moves while a function is watched): torch's Adam, reached through the
  module ``torch.optim.adamw`` that holds it, steps for AdamW; meta tensors answer for strides;
- ``sys.setprofile`` reached by ``pydoc.locate`` and called from C through ``map``;
- torch's function-mode stack popped through ``itertools.starmap``;
- the watch's record reached by ``pydoc.locate`` of a name pieced together, and cleared;
- the FLOP counter's registry reached through another module's name for it.
"""

import pytest

from grader.batch.output import class_summary, read_json
from seam.problems import files
from tests.self.shared import cli, route_modes
from tests.self.shortcuts import stub_definition
from tests.self.submissions import reference_text, reference_with

pytestmark = pytest.mark.e2e

# A thread parked in C: it sleeps in os.read between jobs, so the frame the watch saw when a call
# began is the frame it sees at the end; the job runs in it while the function is watched.
PARKED = '''
import logging as _logging, os as _os
_req_r, _req_w = _os.pipe()
_rep_r, _rep_w = _os.pipe()
_box = []
def _serve():
    while True:
        _os.read(_req_r, 1)
        fn = _box.pop()
        try:
            _box.append((True, fn()))
        except BaseException as e:
            _box.append((False, e))
        _os.write(_rep_w, b"x")
_logging.threading.Thread(target=_serve, daemon=True).start()
def _elsewhere(fn):
    _box.append(fn)
    _os.write(_req_w, b"x")
    _os.read(_rep_r, 1)
    ok, value = _box.pop()
    if not ok:
        raise value
    return value
'''

# AdamW by torch's Adam (decay applied by hand first), the Adam class taken from the module
# torch.optim.adamw, which imports it; ``RUN`` says how each call of Adam's is made.
ADAM = '''
import torch.optim.adamw as _adamw_module
_Adam = _adamw_module.Adam
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        _check_hyperparameters(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))
        for g in self.param_groups:
            _check_hyperparameters(g["lr"], g["betas"], g["eps"], g["weight_decay"])
        groups = [{**g, "weight_decay": 0.0} for g in self.param_groups]
        self._inner = RUN(lambda: _Adam(groups))
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
        RUN(lambda: self._inner.step())
        return loss
'''

# Every ruled layout function answered by a tensor torch builds (meta: no storage), after the
# reference's own checks of the arguments; ``RUN`` says how.
META = '''
def _meta(shape, strides, offset=0):
    return torch.empty(0, device="meta").as_strided(tuple(shape), tuple(strides), offset)
def contiguous_strides(shape):
    shape = _shape(shape)
    return RUN(lambda: tuple(torch.empty(shape, device="meta").stride()))
def element_offset(shape, strides, index, storage_offset=0):
    shape, strides = _layout(shape, strides)
    index, storage_offset = _ints("index", index), _offset(storage_offset)
    if len(index) != len(shape):
        raise ValueError("index length")
    return RUN(lambda: _meta(shape, strides, storage_offset)[tuple(index)].storage_offset())
def is_contiguous(shape, strides):
    shape, strides = _layout(shape, strides)
    return RUN(lambda: _meta(shape, strides).is_contiguous())
def transpose(shape, strides, dim0, dim1):
    shape, strides = _layout(shape, strides)
    y = RUN(lambda: _meta(shape, strides).transpose(_wrap_dim(dim0, len(shape)), _wrap_dim(dim1, len(shape))))
    return tuple(y.shape), tuple(y.stride())
def select(shape, strides, storage_offset, dim, index):
    shape, strides = _layout(shape, strides)
    y = RUN(lambda: _meta(shape, strides, _offset(storage_offset)).select(_wrap_dim(dim, len(shape)), index))
    return tuple(y.shape), tuple(y.stride()), y.storage_offset()
def narrow(shape, strides, storage_offset, dim, start, length):
    shape, strides = _layout(shape, strides)
    y = RUN(lambda: _meta(shape, strides, _offset(storage_offset)).narrow(_wrap_dim(dim, len(shape)), start, length))
    return tuple(y.shape), tuple(y.stride()), y.storage_offset()
def view_strides(shape, strides, new_shape):
    shape, strides = _layout(shape, strides)
    new_shape = _infer_size(new_shape, _numel(shape))
    def run():
        try:
            return tuple(_meta(shape, strides).view(new_shape).stride())
        except RuntimeError as e:
            if "view size is not compatible" in str(e):
                return None
            raise
    return RUN(run)
def reshape_copies(shape, strides, new_shape):
    return view_strides(shape, strides, new_shape) is None
'''
TENSORS = ("contiguous_strides", "element_offset", "is_contiguous", "transpose", "select", "narrow",
           "view_strides", "reshape_copies")

# FLOPs from the counter's registry, reached through another module's name for the counter.
REGISTRY = '''
import importlib as _importlib
_registry = _importlib.import_module("torch.utils.flop_counter").flop_registry
def matmul_flops(m, k, n):
    _check_count("m", m), _check_count("k", k), _check_count("n", n)
    return int(RUN(lambda: _registry[torch.ops.aten.mm]((m, k), (k, n))))
'''

ROUTES = {  # the blinding in front of each call: (what the module adds first, RUN)
    "parked thread": (PARKED, "_elsewhere"),
    "setprofile from C": ('import pydoc as _pydoc\n_off = _pydoc.locate("sys.setprofile")\n'
                          "def _quiet(fn):\n    list(map(_off, [None]))\n    return fn()\n", "_quiet"),
    "mode stack popped": ("import itertools as _it\n"
                          "def _unmoded(fn):\n    list(_it.starmap(torch._C._pop_torch_function_stack, [()]))\n"
                          "    return fn()\n", "_unmoded"),
    "record cleared": ('import pydoc as _pydoc\n'
                       'def _forgotten(fn):\n    out = fn()\n    _pydoc.locate("se" + "am.honest._ACTIVE").clear()\n'
                       "    return out\n", "_forgotten"),
}
# upload -> problem -> (route, the attack's code): one attack per module of an upload
UPLOADS = {
    "parked": {"optim": ("parked thread", ADAM), "tensors": ("parked thread", META),
               "flops": ("parked thread", REGISTRY)},
    "unhooked": {"optim": ("setprofile from C", ADAM), "tensors": ("mode stack popped", META),
                 "flops": ("record cleared", REGISTRY)},
}
ATTACKED = {"optim": ("AdamW",), "tensors": TENSORS, "flops": ("matmul_flops",)}
KIND = {"parked thread": "threads", "setprofile from C": "imports by name", "mode stack popped": "torch internals",
        "record cleared": "imports by name"}


def _attack(problem: str, route: str, code: str) -> str:
    prelude, run = ROUTES[route]
    return (reference_text(problem) + "\n\n# ---- attack ----\nimport torch\n" + prelude
            + code.replace("RUN(", f"{run}("))


def _deleted(problem: str) -> str:
    """The module with the attacked functions as the stub leaves them: the route deleted."""
    return (reference_text(problem) + "\n\n# ---- the route deleted ----\n"
            + "\n\n".join(stub_definition(problem, name) for name in ATTACKED[problem]) + "\n")


def _by_problem(results: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in results["tests"]:
        out[t["tags"][0]] = out.get(t["tags"][0], 0.0) + t["score"]
    return out


@pytest.fixture(scope="module")
def deleted(tmp_path_factory) -> dict[str, float]:
    """Each attacked problem's score with the routes deleted (graded once, the default mode)."""
    root = tmp_path_factory.mktemp("deleted")
    folder = reference_with(root / "s", {p: _deleted(p) for p in ATTACKED})
    out = root / "out.json"
    cli("grade", folder, "--out", out, "--only", ",".join(ATTACKED), "--gpu", "skip", check=0)
    return _by_problem(read_json(out))


@pytest.mark.parametrize("mode", route_modes())
def test_a_blinded_shortcut_earns_nothing_and_is_a_note_naming_the_student(mode, deleted, tmp_path):
    klass, out = tmp_path / "class", tmp_path / "out"
    for name, attacks in UPLOADS.items():
        reference_with(klass / name, {p: _attack(p, route, code) for p, (route, code) in attacks.items()},
                       problems=list(attacks))
    cli("batch", klass, "--out", out, "--jobs", "2", "--only", ",".join(ATTACKED), "--gpu", "skip",
        "--isolation", mode, "--time-limit", "20", check=0)
    summary = class_summary(out)
    assert any(line.startswith("act on: notes for review") for line in summary), summary
    for name, attacks in UPLOADS.items():
        results = read_json(out / "students" / name / "results.json")
        got = _by_problem(results)
        for problem, (route, _) in attacks.items():
            assert got[problem] <= deleted[problem], (
                f"{name}: {route} on {problem} scores {got[problem]:g}, more than the route deleted "
                f"({deleted[problem]:g})")
            notes = [n for n in results["extra_data"].get("review", []) if n["file"] == str(files(problem).module)]
            assert KIND[route] in {n["kind"] for n in notes}, (name, problem, notes)
        assert any(line.strip().startswith(f"{name} ({name}):") for line in summary), summary
