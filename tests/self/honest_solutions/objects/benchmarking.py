"""benchmarking — peak FLOP/s tables, timing a matmul correctly, and MFU.

Honest solution, object style: a `DeviceName` value object that tokenises a name and finds its
rule, a `Stopwatch` that synchronises before each clock read on CUDA, and a validating decorator.
"""

from __future__ import annotations

import inspect
import logging
import math
import re
import time
import warnings
from dataclasses import dataclass
from functools import wraps
from typing import Callable

import torch

logger = logging.getLogger(__name__)

# Dense (NOT 2:4-sparse) peak FLOP/s per device and dtype. The datasheets print the sparse
# tensor-core figure for bf16/fp16 ("* with sparsity"); the dense one is half of it (H100 SXM:
# 1979e12 / 2). float32 is the non-tensor-core (CUDA core) peak: PyTorch's default keeps TF32
# off for matmuls, so an fp32 matmul runs on the CUDA cores.
PEAK_FLOPS: dict[str, dict[torch.dtype, float]] = {
    "A100": {torch.bfloat16: 312e12, torch.float16: 312e12, torch.float32: 19.5e12},
    "H100 SXM": {torch.bfloat16: 989.5e12, torch.float16: 989.5e12, torch.float32: 67.5e12},
    "H100 PCIe": {torch.bfloat16: 756.5e12, torch.float16: 756.5e12, torch.float32: 51e12},
    "H100 NVL": {torch.bfloat16: 835.5e12, torch.float16: 835.5e12, torch.float32: 60e12},
    "H200": {torch.bfloat16: 989.5e12, torch.float16: 989.5e12, torch.float32: 67.5e12},
    "H200 NVL": {torch.bfloat16: 835.5e12, torch.float16: 835.5e12, torch.float32: 60e12},
    "GH200": {torch.bfloat16: 989.5e12, torch.float16: 989.5e12, torch.float32: 67.5e12},
}

# How torch.cuda.get_device_name() spells these cards, mapped to keys of PEAK_FLOPS; tried in
# this order (most specific first: "H100 NVL" before "H100").
DEVICE_NAME_RULES: tuple[tuple[str, str], ...] = (
    ("H100 NVL", "H100 NVL"),
    ("H100 PCIE", "H100 PCIe"),
    ("H100", "H100 SXM"),
    ("H200 NVL", "H200 NVL"),
    ("H200", "H200"),
    ("GH200", "GH200"),
    ("A100", "A100"),
)

TIMED_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})


def _positive_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _positive_finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def requires(**tests: Callable[[object], bool]) -> Callable[[Callable], Callable]:
    """ValueError unless each named argument passes its test."""

    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, test in tests.items():
                if not test(bound.arguments[name]):
                    raise ValueError(f"{fn.__name__}: bad {name}: {bound.arguments[name]!r}")
            return fn(*args, **kwargs)

        return wrapper

    return decorate


@dataclass(frozen=True, slots=True)
class DeviceName:
    text: str

    @property
    def tokens(self) -> frozenset[str]:
        return frozenset(filter(None, re.split(r"[\s\-_]+", self.text.upper())))

    @property
    def table_key(self) -> str | None:
        for pattern, key in DEVICE_NAME_RULES:
            if set(pattern.split()) <= self.tokens:
                return key
        return None

    def __repr__(self) -> str:
        return f"DeviceName({self.text!r} -> {self.table_key})"


class Stopwatch:
    """perf_counter reads; on CUDA a synchronize right before each read."""

    __slots__ = ("device", "cuda", "reads")

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self.reads: list[float] = []

    def read(self) -> float:
        if self.cuda:
            torch.cuda.synchronize(self.device)
        now = time.perf_counter()
        self.reads.append(now)
        return now

    @property
    def elapsed(self) -> float:
        return self.reads[-1] - self.reads[0]

    def __repr__(self) -> str:
        return f"Stopwatch({self.device}, {len(self.reads)} reads)"


def _device(device: str | torch.device) -> torch.device:
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(f"not a device: {device!r} ({e})") from None


@requires(flops=lambda v: _positive_finite(v) or v == 0 and not isinstance(v, bool),
          seconds=_positive_finite, peak_flops=_positive_finite)
def mfu(flops: int | float, seconds: int | float, peak_flops: int | float) -> float:
    value = (flops / seconds) / peak_flops
    if value > 1:
        warnings.warn(f"MFU {value:.3f} > 1: the FLOP count or the peak is wrong", stacklevel=3)
    return float(value)


def peak_flops(device_name: str, dtype: torch.dtype) -> float:
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a str, got {device_name!r}")
    name = DeviceName(device_name)
    logger.debug("%r", name)
    if name.table_key is None:
        raise ValueError(f"no peak FLOP/s known for {device_name!r}")
    peaks = PEAK_FLOPS[name.table_key]
    if dtype not in peaks:
        raise ValueError(f"no {dtype} peak for {name.table_key}")
    return float(peaks[dtype])


@requires(m=_positive_int, k=_positive_int, n=_positive_int, dtype=lambda d: d in TIMED_DTYPES,
          warmup=lambda w: isinstance(w, int) and not isinstance(w, bool) and w >= 0,
          trials=_positive_int)
def time_matmul(
    m: int,
    k: int,
    n: int,
    dtype: torch.dtype,
    device: str | torch.device,
    warmup: int = 3,
    trials: int = 10,
) -> float:
    if warmup == 0:
        warnings.warn("no warm-up: the first product's set-up is timed", stacklevel=3)
    watch = Stopwatch(_device(device))
    a = torch.randn(m, k, dtype=dtype, device=device)
    b = torch.randn(k, n, dtype=dtype, device=device)
    for _ in range(warmup):
        _ = a @ b
    watch.read()
    for _ in range(trials):
        _ = a @ b
    watch.read()
    logger.debug("%r over %d trials", watch, trials)
    return watch.elapsed / trials


def matmul_mfu(m: int, k: int, n: int, dtype: torch.dtype, device: str | torch.device) -> float:
    dev = _device(device)
    if dev.type != "cuda":
        what = "the CPU" if dev.type == "cpu" else f"device type {dev.type!r}"
        raise ValueError(f"no peak FLOP/s known for {what}")
    peak = peak_flops(torch.cuda.get_device_name(device), dtype)
    return mfu(2 * m * k * n, time_matmul(m, k, n, dtype, device), peak)
