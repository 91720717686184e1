"""Probes for modules: build the implementation's Linear / Cruncher, drive them, and
hand back plain data (tensors, numbers, shapes). No expected answers live here.

The "no torch.nn.Linear, no F.linear" rule is checked with a TorchFunctionMode that records every
torch function called while the submission's forward runs. Every way of reaching the linear
kernel from Python (``F.linear``, an alias such as ``from torch.nn.functional import linear``
bound at import time, ``torch._C._nn.linear``, ``torch.ops.aten.linear``, ``nn.Linear.forward``)
goes through the torch-function dispatch of the C++ binding, so the mode sees it whatever name
the submission used; patching ``torch.nn.functional.linear`` would miss an alias taken at import
time, and scanning source text misses ``getattr`` tricks. An ``nn.Linear`` held as a submodule is
caught separately by ``isinstance`` over ``module.modules()``.

Helper modules used as *inputs* to count_parameters / parameter_bytes are torch's own
(``build_torch_module``), so the tests can rebuild exactly the same module locally and count
its parameters themselves.
"""

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from ..honest import entered

from . import manual_seed, probe

LINEAR_NAMES = frozenset({"linear", "linear.default"})


class _LinearCalls(TorchFunctionMode):
    """Counts calls to the linear kernel (any spelling) while active; changes nothing."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", None) in LINEAR_NAMES:
            self.count += 1
        return func(*args, **(kwargs or {}))


def _nn_linear_submodules(module: nn.Module) -> int:
    return sum(isinstance(m, nn.Linear) for m in module.modules())


# ---- torch modules as inputs to count_parameters / parameter_bytes ---------------------------

TORCH_MODULE_KINDS = ("mlp", "tied", "buffers", "mixed_dtypes", "frozen", "no_params", "bf16_embedding",
                      "nested")


class _Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 12)
        self.head = nn.Linear(12, 50, bias=False)
        self.head.weight = self.embed.weight  # one tensor, reachable twice


def build_torch_module(kind: str) -> nn.Module:
    """A small torch module of the named kind (seeded, CPU). Used by probes and by the tests."""
    manual_seed(0)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    if kind == "tied":
        return _Tied()
    if kind == "buffers":  # running stats are buffers, not parameters
        return nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.LayerNorm(6))
    if kind == "mixed_dtypes":
        return nn.Sequential(nn.Linear(7, 5, dtype=torch.float64), nn.Linear(5, 3, dtype=torch.bfloat16),
                             nn.Linear(3, 2, bias=False, dtype=torch.float16))
    if kind == "frozen":  # requires_grad=False parameters are still parameters
        m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
        m[0].requires_grad_(False)
        return m
    if kind == "no_params":
        return nn.Sequential(nn.ReLU(), nn.Dropout(0.1))
    if kind == "bf16_embedding":
        return nn.Embedding(1000, 64, dtype=torch.bfloat16)
    if kind == "nested":
        inner = nn.Sequential(nn.Linear(8, 8, bias=False), nn.GELU(), nn.Linear(8, 8))
        return nn.ModuleDict({"a": inner, "b": nn.ModuleList([inner, nn.Linear(8, 3)])})  # inner shared
    raise ValueError(f"unknown module kind {kind!r}")


@probe("modules", calls="count_parameters / parameter_bytes")
def count_torch_module(c, kind: str):
    """(count_parameters(m), parameter_bytes(m)) for the torch module ``build_torch_module(kind)``."""
    mod = c.module("modules")
    m = build_torch_module(kind)
    return (mod.count_parameters(m), mod.parameter_bytes(m))


# ---- Linear -----------------------------------------------------------------------------------

@probe("modules", calls="Linear", how="Linear calls no nn.Linear / F.linear")
def linear_forward(c, weight, xs):
    """Linear(d_in, d_out, dtype=weight.dtype) with ``weight`` copied in; forward on each x.

    Returns the weight's shape as built, the outputs, the number of linear-kernel calls seen
    during the forwards, and weight.grad after ``ys[0].sum().backward()``.
    """
    mod = c.module("modules")
    d_in, d_out = weight.shape
    lin = mod.Linear(d_in, d_out, dtype=weight.dtype)
    w = getattr(lin, "weight", None)
    shape = tuple(w.shape) if isinstance(w, torch.Tensor) else None
    out = {"weight_shape": shape, "ys": None, "linear_calls": 0, "nn_linear_submodules": _nn_linear_submodules(lin),
           "grad": None}
    if shape != (d_in, d_out):
        return out
    with torch.no_grad():
        w.copy_(weight)
    calls = _LinearCalls()
    with entered(calls):
        ys = [lin(x) for x in xs]
    out["linear_calls"] = calls.count
    out["ys"] = [y.detach().clone() if isinstance(y, torch.Tensor) else repr(type(y)) for y in ys]
    if ys and isinstance(ys[0], torch.Tensor) and ys[0].requires_grad:
        ys[0].sum().backward()
        out["grad"] = None if w.grad is None else w.grad.detach().clone()
    return out


@probe("modules", calls="Linear")
def linear_structure(c, input_dim: int, output_dim: int, dtype=None, device=None):
    """What Linear(input_dim, output_dim[, dtype=..., device=...]) holds (kwargs passed only if given)."""
    mod = c.module("modules")
    kwargs = {k: v for k, v in (("dtype", dtype), ("device", device)) if v is not None}
    lin = mod.Linear(input_dim, output_dim, **kwargs)
    w = getattr(lin, "weight", None)
    return {
        "params": [(name, tuple(p.shape), p.dtype, p.device.type, p.requires_grad)
                   for name, p in lin.named_parameters()],
        "buffers": [name for name, _ in lin.named_buffers()],
        "weight_is_parameter": isinstance(w, nn.Parameter),
        "nn_linear_submodules": _nn_linear_submodules(lin),
    }


@probe("modules", calls="Linear")
def linear_init_stats(c, input_dim: int, output_dim: int, seed: int):
    """Sums over a freshly initialised Linear's weight, in float64: n, sum, sum of squares, max |w|."""
    mod = c.module("modules")
    manual_seed(seed)
    lin = mod.Linear(input_dim, output_dim)
    w = lin.weight.detach().to(torch.float64)
    return {"n": w.numel(), "dtype": lin.weight.dtype, "sum": float(w.sum()), "sum_sq": float((w * w).sum()),
            "max_abs": float(w.abs().max()) if w.numel() else 0.0}


@probe("modules", calls="Linear")
def linear_weight(c, input_dim: int, output_dim: int, seed: int):
    """The weight of Linear(input_dim, output_dim) built right after torch.manual_seed(seed)."""
    mod = c.module("modules")
    manual_seed(seed)
    return mod.Linear(input_dim, output_dim).weight.detach().clone()


@probe("modules", calls="Linear / Cruncher")
def construct(c, cls: str, args: tuple, x_shape=None):
    """Build ``Linear(*args)`` or ``Cruncher(*args)``; return its parameter count (numel sum), and
    with ``x_shape`` the shape of ``module(zeros(x_shape))`` instead."""
    mod = c.module("modules")
    if cls not in ("Linear", "Cruncher"):
        raise AssertionError(f"construct: unknown class {cls}")
    m = getattr(mod, cls)(*args)
    if x_shape is None:
        return sum(p.numel() for p in m.parameters())
    with torch.no_grad():
        return tuple(m(torch.zeros(x_shape)).shape)


# ---- Cruncher -----------------------------------------------------------------------------------

@probe("modules", calls="Cruncher", how="Cruncher calls no nn.Linear / F.linear")
def cruncher_run(c, dim: int, num_layers: int, seed: int, xs):
    """Cruncher(dim, num_layers) after torch.manual_seed(seed): its parameters by name, and
    its outputs on each x (no grad)."""
    mod = c.module("modules")
    manual_seed(seed)
    model = mod.Cruncher(dim, num_layers)
    calls = _LinearCalls()
    with torch.no_grad(), entered(calls):
        outs = [model(x) for x in xs]
    return {
        "names": [name for name, _ in model.named_parameters()],
        "weights": [p.detach().clone() for _, p in model.named_parameters()],
        "outs": [y.clone() if isinstance(y, torch.Tensor) else repr(type(y)) for y in outs],
        "linear_calls": calls.count,
        "nn_linear_submodules": _nn_linear_submodules(model),
    }


@probe("modules", calls="count_parameters / parameter_bytes / Linear / Cruncher")
def count_own_module(c, cls: str, args: tuple):
    """(count_parameters(m), parameter_bytes(m)) for the implementation's own ``cls(*args)``."""
    mod = c.module("modules")
    if cls not in ("Linear", "Cruncher"):
        raise AssertionError(f"count_own_module: unknown class {cls}")
    m = getattr(mod, cls)(*args)
    return (mod.count_parameters(m), mod.parameter_bytes(m))


@probe("modules", calls="Linear")
def linear_on_device(c, device: str):
    """Linear(8, 4, device=device) in float32 and bfloat16; forward of a float32 x on that device."""
    mod = c.module("modules")
    manual_seed(0)
    lin = mod.Linear(8, 4, device=device)
    lin16 = mod.Linear(8, 4, device=device, dtype=torch.bfloat16)
    x = torch.randn(3, 8, device=device)
    with torch.no_grad():
        y = lin(x)
    return {"devices": [lin.weight.device.type, lin16.weight.device.type, y.device.type],
            "bf16_dtype": lin16.weight.dtype, "x": x.cpu(), "w": lin.weight.detach().cpu(), "y": y.cpu()}
