"""benchmarking — alternative: a name-to-key lookup built once, a timing loop with a while.

Differences from the reference: peak_flops tokenises with str.translate and matches each rule
with set.issubset over a precomputed list of (token set, key); mfu computes the achieved
FLOP/s first and prints nothing; time_matmul validates with isinstance checks spelled out per
argument, imports perf_counter directly (`from time import perf_counter`), runs its loops as
while-loops with a counter, and returns the mean via a local helper; matmul_mfu counts the
FLOPs as an int product computed before looking anything up and reports the CPU explicitly.
"""

import math
import time
from time import perf_counter

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


_RULE_SETS = [(frozenset(pattern.split()), key) for pattern, key in DEVICE_NAME_RULES]
_SEPARATORS = str.maketrans({"-": " ", "_": " "})


def _is_num(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float))


def mfu(flops: int | float, seconds: int | float, peak_flops: int | float) -> float:
    """Model FLOPs utilisation, as a float: (flops / seconds) / peak_flops."""
    if not (_is_num(flops) and math.isfinite(flops) and flops >= 0):
        raise ValueError(f"flops must be non-negative and finite, got {flops!r}")
    if not (_is_num(seconds) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds must be positive and finite, got {seconds!r}")
    if not (_is_num(peak_flops) and math.isfinite(peak_flops) and peak_flops > 0):
        raise ValueError(f"peak_flops must be positive and finite, got {peak_flops!r}")
    achieved = flops / seconds
    return float(achieved / peak_flops)


def peak_flops(device_name: str, dtype: torch.dtype) -> float:
    """Dense peak FLOP/s of a device for a dtype, from PEAK_FLOPS, as a float."""
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a str, got {type(device_name).__name__}")
    tokens = set(device_name.upper().translate(_SEPARATORS).split())
    matches = [key for rule, key in _RULE_SETS if rule.issubset(tokens)]
    if not matches:
        raise ValueError(f"no peak FLOP/s for device {device_name!r}")
    entry = PEAK_FLOPS[matches[0]]
    if dtype not in entry:
        raise ValueError(f"{matches[0]} has no peak FLOP/s for {dtype}")
    return float(entry[dtype])


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
    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    if not (is_int(m) and is_int(k) and is_int(n)) or min(m, k, n) <= 0:
        raise ValueError(f"sizes must be positive ints, got m={m!r}, k={k!r}, n={n!r}")
    if not is_int(warmup) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if not is_int(trials) or trials < 1:
        raise ValueError(f"trials must be an int >= 1, got {trials!r}")
    if dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        raise ValueError(f"dtype {dtype!r} is not a float16/bfloat16/float32/float64")

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    a = torch.randn(m, k, dtype=dtype, device=dev)
    b = torch.randn(k, n, dtype=dtype, device=dev)

    i = 0
    while i < warmup:
        _ = a @ b
        i += 1
    if cuda:
        torch.cuda.synchronize(dev)
    t0 = perf_counter()
    i = 0
    while i < trials:
        _ = a @ b
        i += 1
    if cuda:
        torch.cuda.synchronize(dev)
    t1 = perf_counter()

    def mean(total, count):
        return float(total) / count

    return mean(t1 - t0, trials)


def matmul_mfu(m: int, k: int, n: int, dtype: torch.dtype, device: str | torch.device) -> float:
    """MFU of one (m×k) @ (k×n) product on a CUDA device, as a float."""
    kind = torch.device(device).type
    if kind == "cpu":
        raise ValueError("no peak FLOP/s known for the CPU")
    if kind != "cuda":
        raise ValueError(f"no peak FLOP/s known for a {kind!r} device")
    peak = peak_flops(torch.cuda.get_device_name(device), dtype)
    seconds = time_matmul(m, k, n, dtype, device)
    return mfu(2 * m * k * n, seconds, peak)
