"""benchmarking — alternative: timeit.default_timer, regex tokens, flops / (seconds * peak).

Differences from the reference: the clock is timeit.default_timer (the notes' clock, the same
as time.perf_counter); device names are tokenised with re.split and matched with all(...);
mfu divides once by the product seconds * peak; the matmuls are written torch.matmul(a, b);
the CUDA synchronise goes through a small helper chosen once; validation is a loop over
(name, value, minimum) in time_matmul and explicit checks in mfu.
"""

import math
import re
import time
import timeit

import torch

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
# this order (most specific first: "H100 NVL" before "H100"), see peak_flops for the matching
# rule. Spellings seen: "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA
# A100-PCIE-40GB", "NVIDIA A100 80GB PCIe" (all A100s share the same peak), "NVIDIA H100 80GB
# HBM3" (the SXM card), "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA H200
# NVL", "NVIDIA GH200 480GB".
DEVICE_NAME_RULES: tuple[tuple[str, str], ...] = (
    ("H100 NVL", "H100 NVL"),
    ("H100 PCIE", "H100 PCIe"),
    ("H100", "H100 SXM"),
    ("H200 NVL", "H200 NVL"),
    ("H200", "H200"),
    ("GH200", "GH200"),
    ("A100", "A100"),
)


_ALLOWED = {torch.float16, torch.bfloat16, torch.float32, torch.float64}


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def mfu(flops: int | float, seconds: int | float, peak_flops: int | float) -> float:
    """Model FLOPs utilisation, as a float: (flops / seconds) / peak_flops."""
    if _real("flops", flops) < 0:
        raise ValueError(f"flops must be >= 0, got {flops!r}")
    if _real("seconds", seconds) <= 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    if _real("peak_flops", peak_flops) <= 0:
        raise ValueError(f"peak_flops must be > 0, got {peak_flops!r}")
    return float(flops) / (float(seconds) * float(peak_flops))


def peak_flops(device_name: str, dtype: torch.dtype) -> float:
    """Dense peak FLOP/s of a device for a dtype, from PEAK_FLOPS, as a float."""
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a string, got {device_name!r}")
    words = [w for w in re.split(r"[ \-_]+", device_name.upper()) if w]
    for pattern, key in DEVICE_NAME_RULES:
        if all(part in words for part in pattern.split(" ")):
            break
    else:
        raise ValueError(f"unknown device {device_name!r}")
    try:
        return float(PEAK_FLOPS[key][dtype])
    except (KeyError, TypeError):
        raise ValueError(f"no dense peak for {dtype!r} on {key}") from None


def time_matmul(
    m: int,
    k: int,
    n: int,
    dtype: torch.dtype,
    device: str | torch.device,
    warmup: int = 3,
    trials: int = 10,
) -> float:
    """Mean wall-clock seconds of one (m×k) @ (k×n) product on device, as a float."""
    for name, value, least in (("m", m, 1), ("k", k, 1), ("n", n, 1), ("warmup", warmup, 0), ("trials", trials, 1)):
        if type(value) is bool or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, got {value!r}")
        if value < least:
            raise ValueError(f"{name} must be >= {least}, got {value}")
    if dtype not in _ALLOWED:
        raise ValueError(f"unsupported dtype {dtype!r}")
    dev = torch.device(device)
    if dev.type == "cuda":
        def sync():
            torch.cuda.synchronize(dev)
    else:
        def sync():
            pass

    a = torch.randn(m, k, dtype=dtype, device=dev)
    b = torch.randn(k, n, dtype=dtype, device=dev)
    for _ in range(warmup):
        torch.matmul(a, b)
    sync()
    start = timeit.default_timer()
    for _ in range(trials):
        torch.matmul(a, b)
    sync()
    stop = timeit.default_timer()
    elapsed = stop - start
    return elapsed / trials


def matmul_mfu(m: int, k: int, n: int, dtype: torch.dtype, device: str | torch.device) -> float:
    """MFU of one (m×k) @ (k×n) product on a CUDA device, as a float."""
    dev = torch.device(device)
    if dev.type != "cuda":
        raise ValueError(f"no peak FLOP/s known for the {dev.type.upper() if dev.type == 'cpu' else dev.type} device")
    peak = peak_flops(torch.cuda.get_device_name(dev), dtype)
    flops = 2 * m * k * n
    return mfu(flops, time_matmul(m, k, n, dtype, dev), peak)
