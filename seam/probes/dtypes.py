"""Probes for dtypes: run the implementation's round_to while watching for PyTorch's own
casts to a narrow floating-point dtype. No expected answers live here.

round_to must do the rounding itself (integer/float arithmetic), not call ``x.to(torch.float16)``
and friends. Two modes watch the call: a TorchFunctionMode (every torch function and Tensor method
called from Python, whatever name or alias the submission used: ``Tensor.to``, ``.half()``,
``.type(...)``, ``copy_`` into a float16 tensor, ``torch.tensor(..., dtype=...)``,
``torch.ops.aten._to_copy``) and a TorchDispatchMode (every ATen operator, also those reached from
C++). A "cast" is an operation that returns a tensor of a narrow floating dtype (float16,
bfloat16, the float8 and float4 types) whose values came from elsewhere: from Python data, from a
wider floating tensor, or from an integer tensor through a conversion (see ``seam.honest.cast_in``, which the honest-work rule of dtypes uses too).
``Tensor.view(dtype)`` only reinterprets bits and is allowed, and so is widening a narrow tensor
back to float32. A cast done by another library (numpy's ``astype``) is not seen. The reference
does all its work in float64/int64, so it trips neither mode.
"""

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from ..honest import entered

from . import probe
from ..honest import cast_in

def _record(seen: list, func, args, kwargs, result) -> None:
    name = str(getattr(func, "__name__", None) or func)
    dtype = cast_in(name, args, kwargs, result)
    if dtype is not None and len(seen) < 20:
        seen.append(f"{name} -> {dtype}")


class _CastWatch(TorchFunctionMode):
    def __init__(self, seen: list):
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        _record(self.seen, func, args, kwargs, result)
        return result


class _CastWatchATen(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Nothing here is compiled; without this, torch wraps __torch_dispatch__ in
        # torch._disable_dynamo, whose first call imports torch._dynamo (about a second).
        return False

    def __init__(self, seen: list):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        _record(self.seen, func, args, kwargs, result)
        return result


@probe("dtypes", calls="round_to", how="no PyTorch cast to a narrow float format in round_to")
def round_to_watched(c, x, fmt):
    """``round_to(x, fmt)`` with PyTorch's casts watched. Returns (result, used_cast, casts):
    the result as returned, whether any cast to a narrow float dtype happened, and the names of
    the operations that did it (at most 20)."""
    mod = c.module("dtypes")
    seen: list = []
    with entered(_CastWatch(seen), _CastWatchATen(seen)):
        result = mod.round_to(x, fmt)
    return result, bool(seen), seen
