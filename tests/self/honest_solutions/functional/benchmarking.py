"""benchmarking — peak FLOP/s tables, timing a matmul correctly, and MFU.

Honest solution, functional style: the name rules as token sets, the clock of the notes
(timeit.default_timer), a synchronise only on CUDA.
"""

import math
import re
import timeit

import torch

# Dense (NOT 2:4-sparse) peak FLOP/s per device and dtype. The datasheets print the sparse
# tensor-core figure for bf16/fp16 ("* with sparsity"); the dense one is half of it (H100 SXM:
# 1979e12 / 2). float32 is the non-tensor-core (CUDA core) peak: PyTorch's default keeps TF32
# off for matmuls, so an fp32 matmul runs on the CUDA cores.
# (Sources: NVIDIA's A100, H100, H200 and GH200 datasheets; see the handout.)
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

_TIMED_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _positive_finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _tokens(name: str) -> frozenset[str]:
    return frozenset(t for t in re.split(r"[ \-_]+", name.upper()) if t)


def mfu(flops: int | float, seconds: int | float, peak_flops: int | float) -> float:
    if isinstance(flops, bool) or not isinstance(flops, (int, float)) or not math.isfinite(flops) or flops < 0:
        raise ValueError(f"flops must be non-negative and finite, got {flops!r}")
    if not _positive_finite(seconds):
        raise ValueError(f"seconds must be positive and finite, got {seconds!r}")
    if not _positive_finite(peak_flops):
        raise ValueError(f"peak_flops must be positive and finite, got {peak_flops!r}")
    return float(flops / seconds / peak_flops)


def peak_flops(device_name: str, dtype: torch.dtype) -> float:
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a string, got {device_name!r}")
    have = _tokens(device_name)
    key = next((key for pattern, key in DEVICE_NAME_RULES if _tokens(pattern) <= have), None)
    if key is None:
        raise ValueError(f"no peak FLOP/s known for device {device_name!r}")
    table = PEAK_FLOPS[key]
    if dtype not in table:
        raise ValueError(f"no peak FLOP/s known for {dtype} on {key}")
    return float(table[dtype])


def _check_timing_args(m: int, k: int, n: int, dtype: torch.dtype, warmup: int, trials: int) -> None:
    is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    if not all(is_int(s) and s > 0 for s in (m, k, n)):
        raise ValueError(f"sizes must be positive ints, got {(m, k, n)!r}")
    if not is_int(warmup) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if not is_int(trials) or trials < 1:
        raise ValueError(f"trials must be an int >= 1, got {trials!r}")
    if dtype not in _TIMED_DTYPES:
        raise ValueError(f"dtype must be one of {_TIMED_DTYPES}, got {dtype!r}")


def _device(device: str | torch.device) -> torch.device:
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(f"not a torch device: {device!r} ({e})") from None


def time_matmul(
    m: int,
    k: int,
    n: int,
    dtype: torch.dtype,
    device: str | torch.device,
    warmup: int = 3,
    trials: int = 10,
) -> float:
    _check_timing_args(m, k, n, dtype, warmup, trials)
    on_cuda = _device(device).type == "cuda"

    def settle() -> None:
        if on_cuda:
            torch.cuda.synchronize(device)

    a = torch.randn(m, k, dtype=dtype, device=device)
    b = torch.randn(k, n, dtype=dtype, device=device)
    for _ in range(warmup):
        a @ b
    settle()
    t0 = timeit.default_timer()
    for _ in range(trials):
        a @ b
    settle()
    t1 = timeit.default_timer()
    return (t1 - t0) / trials


def matmul_mfu(m: int, k: int, n: int, dtype: torch.dtype, device: str | torch.device) -> float:
    where = _device(device)
    if where.type == "cpu":
        raise ValueError("no peak FLOP/s known for the CPU")
    if where.type != "cuda":
        raise ValueError(f"no peak FLOP/s known for device type {where.type!r}")
    peak = peak_flops(torch.cuda.get_device_name(device), dtype)
    seconds = time_matmul(m, k, n, dtype, device)
    return mfu(2 * m * k * n, seconds, peak)

