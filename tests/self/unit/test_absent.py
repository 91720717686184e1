"""seam/absent.py: what a rule forbids is not in the worker's Python. Run in a forked child (the
removal is for the life of a process, and this one runs oracles), which reports what it saw."""

import json
import os

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
    real = probes.TORCH_ADAMW([p])  # the probes' own, taken at import
    real.step()

    class Theirs(torch.optim.AdamW):  # a class of theirs on a stand-in imports ...
        pass
    fused = lambda: torch._fused_adamw_([p], [p.grad], [torch.zeros(2)], [torch.zeros(2)], [],  # noqa: E731
                                        [torch.tensor(1.0)], lr=1e-3, beta1=0.9, beta2=0.99,
                                        weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    return {"AdamW": _refused(lambda: torch.optim.AdamW([p])), "Adam": _refused(lambda: torch.optim.Adam([p])),
            "functional": _refused(lambda: torch.optim._functional.adamw([p], [p.grad], [], [], [], [])),
            "module": _refused(lambda: adamw_module.AdamW([p])), "subclass": _refused(lambda: Theirs([p])),
            "base": Theirs.__mro__[1].__module__, "flops": _refused(lambda: FlopCounterMode()),
            "fused": _refused(fused), "fused_by_torch": _refused(lambda: probes.TORCH_ADAMW([p], fused=True).step()),
            "isinstance": isinstance(real, torch.optim.AdamW) and isinstance(real, torch.optim.Optimizer),
            "sgd": bool(torch.optim.SGD([p]).step() is None), "foreach": torch._foreach_mul([p.grad], 2.0)[0].tolist(),
            "gone": kept["gone"]}


def test_torchs_adamw_its_kernels_and_the_flop_counter_are_not_in_the_worker():
    seen = _in_a_child(_look)
    for key in ("AdamW", "Adam", "functional", "module", "subclass"):
        assert "forbidden by the honest-work rule 'AdamW written by hand' of optim" in seen[key], (key, seen[key])
    assert "'FLOPs counted from the shapes' of flops" in seen["flops"]
    assert "torch's _fused_adamw_" in seen["fused"] and "torch's _fused_adamw_" in seen["fused_by_torch"]
    assert seen["gone"] == ["torch.optim.adam", "torch.optim.adamw", "torch.utils.flop_counter"]
    assert seen["base"] == "torch.optim.adamw"  # so the watch names it as a base class
    assert seen["isinstance"] and seen["sgd"] and seen["foreach"] == [2.0, 2.0]  # what is allowed works
    assert isinstance(torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))]), torch.optim.Optimizer)  # here: untouched
