"""seam/absent.py: what a rule forbids is not in the worker's Python. Run in a forked child, or a
fresh process that starts as the worker does (the removal is for the life of a process, and this
one runs oracles), which reports what it saw."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch


def _in_a_child(body) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, json.dumps(body()).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _refused(call) -> str:
    from seam.absent import Forbidden
    try:
        call()
    except Forbidden as e:
        return str(e)
    return ""


def _look() -> dict:
    import torch.utils.flop_counter  # noqa: F401  (the zygote imports it: its classes get stand-ins)
    import seam.probes.optim as probes
    from seam import absent
    kept = absent.remove()  # (its kernels refuse while it lives)
    import torch.optim.adamw as adamw_module
    from torch.utils.flop_counter import FlopCounterMode
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.ones(2)
    handed = probes.make_optimizer("adamw_layout", [p])  # what a probe hands over: AdamW's state, not its update
    handed.step()

    class Theirs(torch.optim.AdamW):  # a class of theirs on a stand-in imports ...
        """(and is refused when made)"""
    fused = lambda: torch._fused_adamw_([p], [p.grad], [torch.zeros(2)], [torch.zeros(2)], [],  # noqa: E731
                                        [torch.tensor(1.0)], lr=1e-3, beta1=0.9, beta2=0.99,
                                        weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    return {"AdamW": _refused(lambda: torch.optim.AdamW([p])), "Adam": _refused(lambda: torch.optim.Adam([p])),
            "functional": _refused(lambda: torch.optim._functional.adamw([p], [p.grad], [], [], [], [])),
            "module": _refused(lambda: adamw_module.AdamW([p])), "subclass": _refused(lambda: Theirs([p])),
            "base": Theirs.__mro__[1].__module__, "flops": _refused(lambda: FlopCounterMode()),
            "fused": _refused(fused), "fused_op": _refused(lambda: torch.ops.aten._fused_adam_.default(
                [p], [p.grad], [torch.zeros(2)], [torch.zeros(2)], [], [torch.tensor(1.0)], lr=1e-3, beta1=0.9,
                beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)),
            "isinstance": [isinstance(handed, c) for c in (torch.optim.AdamW, torch.optim.Adam, torch.optim.Optimizer)]
            + [issubclass(type(handed), torch.optim.Adam), isinstance(torch.optim.SGD([p]), torch.optim.Adam)],
            "sgd": bool(torch.optim.SGD([p]).step() is None), "foreach": torch._foreach_mul([p.grad], 2.0)[0].tolist(),
            "gone": kept["gone"]}


def test_torchs_adamw_its_kernels_and_the_flop_counter_are_not_in_the_worker():
    from seam.problems import RULED
    seen = _in_a_child(_look)
    for key, rule in [*((k, RULED["optim.AdamW"]) for k in ("AdamW", "Adam", "functional", "module", "subclass",
                                                              "fused", "fused_op")),
                      ("flops", RULED["flops.matmul_flops"])]:
        # the one line a stand-in raises names the rule and quotes its handout (seam/absent.py: message)
        assert f"honest-work rule '{rule.name}'" in seen[key] and rule.quote in seen[key], (key, seen[key])
    assert "torch's _fused_adamw_" in seen["fused"] and "torch's _fused_adam_" in seen["fused_op"]
    assert seen["gone"] == sorted({m for r in RULED.values() for m in r.absent if not m.startswith("aten.")})
    assert seen["base"] == "torch.optim.adamw"  # so the watch names it as a base class
    assert seen["isinstance"] == [False, False, True, False, False]  # what a probe hands over is no Adam
    assert seen["sgd"] and seen["foreach"] == [2.0, 2.0]  # what is allowed works
    assert isinstance(torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))]), torch.optim.Optimizer)  # here: untouched


# A process started as the worker is: the zygote's warm-up, then its imports and absent.remove()
# before it forks (grader/sandbox/zygote_server.py, its own functions). It then looks for the removed
# modules' code as a student could: every object the garbage collector tracks and what each refers
# to, and the names a student would try. It prints what it found, as JSON.
_WORKER_LIKE = r'''
import gc, importlib, importlib.util, json, os, pydoc, sys, types, warnings
sys.path.insert(0, os.path.dirname(sys.argv[1]))                   # its lib: worker.py beside it
spec = importlib.util.spec_from_file_location("zygote_server", sys.argv[1])
zygote = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zygote)
zygote.warm(True)                                                  # the zygote: torch warmed, frozen
import torch
from seam.problems import RULED
REMOVED = tuple(sorted({m for r in RULED.values() for m in r.absent if not m.startswith("aten.")}))
FILES = {sys.modules[m].__file__ for m in REMOVED}
kept = zygote.ready_to_fork()                                      # before it forks any worker
from seam import absent
warnings.simplefilter("ignore")  # (touching every object wakes torch's deprecation warnings)


def real(obj) -> bool:
    """Made from a removed module's file (a stand-in is made in seam/absent.py)."""
    kind = type(obj)
    if kind is types.CodeType:
        return obj.co_filename in FILES
    if kind is types.FunctionType:
        return obj.__code__.co_filename in FILES
    if issubclass(kind, type):
        return kind.__module__ != "seam.absent" and (type.__getattribute__(obj, "__module__") in REMOVED or any(
            type(f) is types.FunctionType and real(f) for v in type.__getattribute__(obj, "__dict__").values()
            for f in (v, getattr(v, "__func__", None))))
    return False


gc.unfreeze()
gc.collect()
found = {}
for obj in gc.get_objects():
    for o in (obj, *gc.get_referents(obj)):
        if real(o):
            found[id(o)] = repr(o)[:100]
c = {}


def keep(name):
    def record(*args, **kwargs):
        c.setdefault(name, args[1] if name in ("memory_by_stage", "train_step") else args[0])
        return 0
    return record


student = types.SimpleNamespace(AdamW=torch.optim.SGD, optimizer_state_bytes=keep("optimizer_state_bytes"),
                                memory_by_stage=keep("memory_by_stage"), train_step=keep("train_step"))
callee = types.SimpleNamespace(module=lambda name: student)
import seam.probes.optim as po, seam.probes.training as pt
po.state_bytes(callee, "amsgrad_layout", torch.float32, 1)
po.memory_stages(callee, "adamw_layout", 3, 2, 1, 2, torch.float32, 0)
pt.train_step_run(callee, 0, 1, 2)
from torch.optim.adamw import Adam
named = {  # where a student would look: each a stand-in
    "torch.optim.adamw.Adam": Adam, "torch.optim.Adam": torch.optim.Adam,
    "torch.optim.AdamW": torch.optim.AdamW, "torch.optim._functional.adam": torch.optim._functional.adam,
    "sys.modules adam.Adam": sys.modules["torch.optim.adam"].Adam,
    "pydoc.locate AdamW": pydoc.locate("torch.optim.AdamW"),
    "pydoc.locate FlopCounterMode": pydoc.locate("torch.utils.flop_counter.FlopCounterMode"),
    "import_module adamw.AdamW": importlib.import_module("torch.optim.adamw").AdamW,
    "FlopCounterMode": importlib.import_module("torch.utils.flop_counter").FlopCounterMode,
    **{f"flop_registry[{k}]": v for k, v in torch.utils.flop_counter.flop_registry.items()}}
more = {  # what the seam's modules hold and the probes hand over: none of it made in a removed module
    **{f"{n}.{k}": v for n, m in list(sys.modules.items()) if n.split(".")[0] == "seam" for k, v in vars(m).items()},
    **{f"type({k}).__mro__[{i}]": t for k, o in c.items() for i, t in enumerate(type(o).__mro__)},
    **{f"type({k}).__mro__[{i}].{name}": v for k, o in c.items() for i, t in enumerate(type(o).__mro__)
       for name, v in vars(t).items()}}


def stand_in(v) -> bool:
    code = getattr(v, "__code__", None)
    return type(v).__module__ == "seam.absent" or getattr(code, "co_filename", "") == absent.__file__


print(json.dumps({"found": sorted(found.values()),
                  "real": sorted(k for k, v in {**named, **more}.items() if real(v) or real(getattr(v, "__func__", None))),
                  "not stand-ins": sorted(k for k, v in named.items() if not stand_in(v)),
                  "flop formulas": sum(k.startswith("flop_registry") for k in named),
                  "handed over": sorted(f"{k}: {type(o).__module__}.{type(o).__qualname__}" for k, o in c.items())}))
'''


@pytest.mark.e2e  # a worker's start run for real (torch warmed) and every live object walked: not in the fast loop
def test_nothing_made_in_a_removed_module_is_left_in_the_worker():
    """No live function, class or code object made from torch/optim/adam.py, adamw.py or
    torch/utils/flop_counter.py, under any name: modules' globals (the probes' included), the
    stand-ins, flop_counter's registry, the optimizers the probes hand over and their classes."""
    root = Path(__file__).resolve().parents[3]
    run = subprocess.run([sys.executable, "-c", _WORKER_LIKE, str(root / "grader/sandbox/zygote_server.py")],
                         cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["found"] == [], seen["found"][:20]
    assert seen["real"] == [], seen["real"]
    assert seen["not stand-ins"] == [] and seen["flop formulas"] > 20, seen
    assert seen["handed over"] == ["memory_by_stage: seam.adamw_shaped.AdamWShaped",
                                   "optimizer_state_bytes: seam.adamw_shaped.AdamWShaped",
                                   "train_step: seam.adamw_shaped.AdamWShaped"]
