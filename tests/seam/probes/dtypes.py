"""Probes for problem 2 · dtypes: run the implementation's round_to while watching for PyTorch's own
casts to a narrow floating-point dtype. No expected answers live here.

round_to must do the rounding itself (integer/float arithmetic), not call ``x.to(torch.float16)``
and friends. Two modes watch the call: a TorchFunctionMode (every torch function and Tensor method
called from Python, whatever name or alias the submission used: ``Tensor.to``, ``.half()``,
``.type(...)``, ``copy_`` into a float16 tensor, ``torch.tensor(..., dtype=...)``,
``torch.ops.aten._to_copy``) and a TorchDispatchMode (every ATen operator, also those reached from
C++). A "cast" is any operation that produces a tensor of a narrow floating dtype (float16,
bfloat16, the float8 and float4 types) other than ``Tensor.view(dtype)``, which only reinterprets
bits, or that is handed such a dtype as an argument. The reference does all its work in
float64/int64, so it trips neither.
"""

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from . import probe

NARROW = frozenset(getattr(torch, name) for name in (
    "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2") if hasattr(torch, name))

# Reinterpreting bits is not rounding: x.view(torch.float16) (and its ATen op) is allowed.
BIT_VIEWS = frozenset({"view", "view.dtype"})


def _narrow_dtypes(values) -> list:
    found = []
    for leaf in tree_leaves(values):
        if isinstance(leaf, torch.Tensor):
            if leaf.dtype in NARROW:
                found.append(leaf.dtype)
        elif isinstance(leaf, torch.dtype) and leaf in NARROW:
            found.append(leaf)
        elif isinstance(leaf, type) and leaf.__name__ in ("HalfTensor", "BFloat16Tensor"):
            found.append(leaf.__name__)
    return found


def _record(seen: list, func, args, kwargs, result) -> None:
    name = str(getattr(func, "__name__", None) or func)
    if name in BIT_VIEWS:
        return
    hits = _narrow_dtypes(result) + _narrow_dtypes((args, kwargs or {}))
    if hits and len(seen) < 20:
        seen.append(f"{name} ({hits[0]})")


class _CastWatch(TorchFunctionMode):
    def __init__(self, seen: list):
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        _record(self.seen, func, args, kwargs, result)
        return result


class _CastWatchATen(TorchDispatchMode):
    def __init__(self, seen: list):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        _record(self.seen, func, args, kwargs, result)
        return result


@probe("dtypes")
def round_to_watched(c, x, fmt):
    """``round_to(x, fmt)`` with PyTorch's casts watched. Returns (result, used_cast, casts):
    the result as returned, whether any cast to a narrow float dtype happened, and the names of
    the operations that did it (at most 20)."""
    mod = c.module("dtypes")
    seen: list = []
    with _CastWatch(seen), _CastWatchATen(seen):
        result = mod.round_to(x, fmt)
    return result, bool(seen), seen
