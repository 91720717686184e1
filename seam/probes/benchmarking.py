"""Probes for benchmarking: time_matmul and matmul_mfu under a recorded, fake clock.

What the timing contract says (reference docstring): allocate, run `warmup` products, synchronise
(CUDA), read the clock, run `trials` products, synchronise (CUDA), read the clock, return
(t1 - t0) / trials. To check that without a GPU and without real time, ``trace`` replaces for the
duration of one call
  * the clock: time.perf_counter and timeit.default_timer (the notes use the latter; both are the
    same function), also where the student's module imported them by name and where timeit's
    functions hold it as their default timer (``timeit.timeit(fn, number=n)``). The fake clock starts
    at 1000 s and advances by STEP seconds whenever a matrix product runs, and only then;
  * torch.cuda.synchronize: it logs "sync" (on the fake CUDA path it does nothing else; on the CPU
    path it then calls the real one, so code that synchronises on a CPU-only machine fails as it
    would for real);
and records every matrix product (torch.matmul / mm / @ / einsum / ...) through a
TorchFunctionMode. With ``fake_cuda`` the code is made to believe it runs on CUDA:
torch.cuda.is_available() is True, and the same TorchFunctionMode rewrites device="cuda"
(or torch.device("cuda"), "cuda:0", 0) in factory calls and in .to(...), and makes .cuda() a
no-op, so every tensor really lives on the CPU (while tensor.is_cuda and tensor.device, read by the
code under test, say cuda:0). torch.cuda.get_device_name returns a chosen name.
The probe returns the event log: ["mm", shape_a, shape_b, dtype], ["sync"], ["clock", t].
"""

import contextlib
import time
import timeit

import torch
from torch.overrides import TorchFunctionMode

from ..honest import entered

from . import probe

STEP = 0.125          # seconds per product on the fake clock (a power of 2: sums stay exact)
START = 1000.0

PRODUCTS = {"matmul", "mm", "__matmul__", "__rmatmul__", "bmm", "addmm", "einsum", "linear",
            "mv", "dot", "tensordot", "baddbmm", "addbmm", "chain_matmul", "multi_dot"}


_IS_CUDA, _DEVICE = torch.Tensor.is_cuda, torch.Tensor.device   # the property descriptors


def _is_cuda(device) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.strip().lower().startswith("cuda")
    return type(device) is int and device >= 0


class _Trace(TorchFunctionMode):
    def __init__(self, log: list, clock: "_Clock", fake_cuda: bool):
        super().__init__()
        self.log, self.clock, self.fake_cuda = log, clock, fake_cuda

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if self.fake_cuda:
            if name == "__get__":  # tensor properties: report the device the code asked for
                owner = getattr(func, "__self__", None)
                if owner is _IS_CUDA:
                    return True
                if owner is _DEVICE:
                    return torch.device("cuda", 0)
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if name == "to":
                args = tuple("cpu" if i > 0 and not isinstance(a, torch.Tensor) and _is_cuda(a) else a
                             for i, a in enumerate(args))
            if name == "cuda":
                return args[0]
        if name in PRODUCTS:
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            if name == "einsum" or name == "multi_dot" or name == "chain_matmul":
                tensors = [a for a in (args[1:] if name == "einsum" else args)
                           for a in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(a, torch.Tensor)]
            shapes = [tuple(t.shape) for t in tensors]
            dtype = tensors[0].dtype if tensors else None
            self.log.append(["mm", shapes, dtype])
            self.clock.advance()
        return func(*args, **kwargs)


class _Clock:
    def __init__(self, log: list):
        self.now, self.log = START, log

    def advance(self) -> None:
        self.now += STEP

    def __call__(self) -> float:
        self.log.append(["clock", self.now])
        return self.now


@contextlib.contextmanager
def _patched(pairs):
    """Temporarily set attributes: pairs of (object, name, value)."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in pairs]
    try:
        for obj, name, value in pairs:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


@contextlib.contextmanager
def trace(mod, log: list, fake_cuda: bool, device_name: str = "NVIDIA H100 80GB HBM3"):
    clock = _Clock(log)
    real_perf_counter, real_default_timer = time.perf_counter, timeit.default_timer
    real_sync, real_is_available = torch.cuda.synchronize, torch.cuda.is_available
    real_name = torch.cuda.get_device_name

    def synchronize(*args, **kwargs):
        log.append(["sync"])
        if not fake_cuda:
            return real_sync(*args, **kwargs)
        return None

    def get_device_name(*args, **kwargs):
        log.append(["device_name"])
        return device_name if fake_cuda else real_name(*args, **kwargs)

    pairs = [(time, "perf_counter", clock), (timeit, "default_timer", clock),
             (torch.cuda, "synchronize", synchronize), (torch.cuda, "get_device_name", get_device_name)]
    if fake_cuda:
        pairs.append((torch.cuda, "is_available", lambda: True))
    # timeit.timeit / repeat / Timer took the real clock as a default when timeit was imported
    for fn in (timeit.Timer.__init__, timeit.timeit, timeit.repeat):
        defaults = fn.__defaults__ or ()
        if any(d is real_default_timer for d in defaults):
            pairs.append((fn, "__defaults__", tuple(clock if d is real_default_timer else d for d in defaults)))
    # Names the module imported directly: `from time import perf_counter`, `from torch.cuda import
    # synchronize`, ...
    replacements = {id(real_perf_counter): clock, id(real_default_timer): clock, id(real_sync): synchronize,
                    id(real_name): get_device_name}
    if fake_cuda:
        replacements[id(real_is_available)] = lambda: True
    for name, value in list(vars(mod).items()):
        if id(value) in replacements and not name.startswith("__"):
            pairs.append((mod, name, replacements[id(value)]))
    with _patched(pairs), entered(_Trace(log, clock, fake_cuda)):
        yield


@probe("benchmarking", calls="time_matmul", how="time_matmul synchronizes before each clock read, warms up, times the right calls")
def time_matmul_trace(c, m: int, k: int, n: int, dtype: torch.dtype, device: str, warmup: int | None,
                      trials: int | None, fake_cuda: bool = False) -> dict:
    """time_matmul under the fake clock; warmup/trials None: the defaults (not passed)."""
    mod = c.module("benchmarking")
    log: list = []
    kwargs = {k_: v for k_, v in (("warmup", warmup), ("trials", trials)) if v is not None}
    with trace(mod, log, fake_cuda):
        result = mod.time_matmul(m, k, n, dtype, device, **kwargs)
    return {"result": result, "log": log}


@probe("benchmarking", calls="matmul_mfu / time_matmul", how="matmul_mfu times with a synchronized clock")
def matmul_mfu_trace(c, m: int, k: int, n: int, dtype: torch.dtype, device_name: str) -> dict:
    """matmul_mfu on a fake CUDA device called ``device_name``; records what time_matmul returned
    (when matmul_mfu calls the module's time_matmul)."""
    mod = c.module("benchmarking")
    log: list = []
    timed: list = []
    real_time_matmul = getattr(mod, "time_matmul", None)

    def recorded_time_matmul(*args, **kwargs):
        seconds = real_time_matmul(*args, **kwargs)
        timed.append(seconds)
        return seconds

    pairs = [(mod, "time_matmul", recorded_time_matmul)] if callable(real_time_matmul) else []
    with _patched(pairs), trace(mod, log, True, device_name):
        try:
            result = mod.matmul_mfu(m, k, n, dtype, "cuda")
        except ValueError as e:
            result = f"ValueError: {e}"
    return {"result": result, "log": log, "time_matmul_returned": timed}
