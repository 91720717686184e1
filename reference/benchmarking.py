"""benchmarking — peak FLOP/s tables, timing a matmul correctly, and MFU.

Handout: assignment/problems/benchmarking.md. Notes (assignment/notes/): 001 (MFU = achieved
FLOP/s / peak FLOP/s for the dtype, dense not sparse; warm up, synchronise, then time), 004
(LLaMA 2 7B: 184,320 A100 hours at 312e12 -> MFU ≈ 39%).
"""

import math
import time

import torch

# Dense (NOT 2:4-sparse) peak FLOP/s per device and dtype. The datasheets print the sparse
# tensor-core figure for bf16/fp16 ("* with sparsity"); the dense one is half of it (H100 SXM:
# 1979e12 / 2). float32 is the non-tensor-core (CUDA core) peak: PyTorch's default keeps TF32
# off for matmuls, so an fp32 matmul runs on the CUDA cores.
# Sources (NVIDIA's product pages / datasheets; bf16 sparse -> dense, fp32):
#   A100 (40GB/80GB, SXM4 and PCIe alike): nvidia.com/en-us/data-center/a100 — BF16 312 dense
#     (624 sparse), FP32 19.5 TFLOPS.
#   H100 SXM / PCIe / NVL: nvidia.com/en-us/data-center/h100 — BF16 1,979* / 1,513* / 1,671*,
#     FP32 67 / 51 / 60 TFLOPS.
#   H200 SXM / NVL: nvidia.com/en-us/data-center/h200 — BF16 1,979* / 1,671*, FP32 67 / 60.
#   GH200 (the Hopper GPU of the Grace Hopper superchip, 96 GB HBM3 or 144 GB HBM3e):
#     nvidia.com/en-us/data-center/grace-hopper-superchip — BF16 1,979*, FP32 67: the H100 SXM's.
#   Cross-check: PyTorch's torchtitan (torchtitan/tools/utils.py, get_peak_flops) uses the same
#   dense bf16 figures, rounded down to whole TFLOP/s (A100 312, H100 SXM/H200 989, PCIe 756,
#   NVL 835).
# The SXM fp32 entry stays 67.5e12 as the course spec fixes it (the datasheet rounds to 67).
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


# dtypes torch.randn and a @ b support on both CPU and CUDA (not the fp8 formats).
_MATMUL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _name_tokens(name: str) -> set[str]:
    # "NVIDIA A100-SXM4-80GB" -> {"NVIDIA", "A100", "SXM4", "80GB"}
    return set(name.upper().replace("-", " ").replace("_", " ").split())


def mfu(flops: int | float, seconds: int | float, peak_flops: int | float) -> float:
    """Model FLOPs utilisation, as a float: (flops / seconds) / peak_flops.

    flops is the work the model needs by the agreed count (e.g. 2mkn for a matmul), seconds
    the measured wall-clock time, peak_flops the device's dense peak FLOP/s for the dtype.
    Raises ValueError for negative or non-finite flops, and for seconds or peak_flops that are
    not positive and finite (0, negative, inf or NaN).
    The result is not clipped: a value > 1 means the FLOP count or the peak is wrong.

    Example (notes 004): LLaMA 2 7B, 6 · 6.7e9 · 2e12 FLOPs in 184,320 A100-hours at 312e12:
    mfu(8.04e22, 184_320 * 3600, 312e12) ≈ 0.388 (≈ 39%).
    """
    for name, value in (("flops", flops), ("seconds", seconds), ("peak_flops", peak_flops)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
    if flops < 0:
        raise ValueError(f"flops must be non-negative, got {flops!r}")
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds!r}")
    if peak_flops <= 0:
        raise ValueError(f"peak_flops must be positive, got {peak_flops!r}")
    return float(flops / seconds / peak_flops)


def peak_flops(device_name: str, dtype: torch.dtype) -> float:
    """Dense peak FLOP/s of a device for a dtype, from PEAK_FLOPS, as a float.

    Matching rule for device_name (as torch.cuda.get_device_name() spells it): upper-case it
    and split it into tokens at spaces, '-' and '_' ("NVIDIA A100-SXM4-80GB" -> NVIDIA, A100,
    SXM4, 80GB). Walk DEVICE_NAME_RULES in order; a rule (pattern, key) matches when every
    space-separated token of pattern is among the name's tokens; the first match gives the
    PEAK_FLOPS key. So "NVIDIA H100 PCIe" -> "H100 PCIe", "NVIDIA H100 NVL" -> "H100 NVL",
    "NVIDIA H100 80GB HBM3" -> "H100 SXM", "NVIDIA H200" -> "H200", "NVIDIA GH200 480GB" ->
    "GH200", "NVIDIA A100-PCIE-40GB" -> "A100". A canonical key itself ("H100 SXM", "A100",
    ...) also matches. Tokens are whole words: "A10", "A100X" or "H20" match no rule.

    Raises ValueError for a device no rule matches (including the CPU) and for a dtype that
    is not in that device's entry (only torch.bfloat16, torch.float16, torch.float32).

    Examples: peak_flops("NVIDIA H100 80GB HBM3", torch.bfloat16) == 989.5e12;
    peak_flops("NVIDIA A100-SXM4-80GB", torch.float32) == 19.5e12.
    """
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a str, got {device_name!r}")
    tokens = _name_tokens(device_name)
    key = None
    for pattern, canonical in DEVICE_NAME_RULES:
        if set(pattern.split()) <= tokens:
            key = canonical
            break
    if key is None:
        raise ValueError(
            f"no peak FLOP/s known for device {device_name!r}; known: {sorted(PEAK_FLOPS)}"
        )
    table = PEAK_FLOPS[key]
    if dtype not in table:
        raise ValueError(
            f"no peak FLOP/s known for dtype {dtype!r} on {key}; known: {sorted(map(str, table))}"
        )
    return float(table[dtype])


def time_matmul(
    m: int,
    k: int,
    n: int,
    dtype: torch.dtype,
    device: str | torch.device,
    warmup: int = 3,
    trials: int = 10,
) -> float:
    """Mean wall-clock seconds of one (m×k) @ (k×n) product on device, as a float.

    Procedure (notes 001), in this order:
      1. allocate a = torch.randn(m, k) and b = torch.randn(k, n) with the given dtype on
         device;
      2. run `warmup` products a @ b (not timed: kernel selection, caches, clocks);
      3. synchronise, read the clock (t0);
      4. run `trials` products a @ b;
      5. synchronise, read the clock (t1);
      6. return (t1 - t0) / trials.
    Timing contract (what the tests check, with a recorded fake clock): the clock is read
    exactly twice, t0 and t1, through time.perf_counter() or timeit.default_timer() (the same
    clock; `from time import perf_counter`, or timeit.timeit(..., number=trials), which reads
    it twice, are the same); the `warmup` products run before t0 and exactly `trials` products
    between t0 and t1; on CUDA torch.cuda.synchronize(device) is called right before each of
    the two clock reads; on the CPU it does not synchronise (CPU ops are synchronous). Other
    clocks (time.time, time.monotonic, CUDA events) are not read by the tests and fail them.
    Without the synchronise a CUDA timing measures only the kernel launches.

    Raises ValueError if m, k or n is not a positive int, warmup < 0, trials < 1, or dtype
    is not one of torch.float16, torch.bfloat16, torch.float32, torch.float64.

    Example: time_matmul(1024, 1024, 1024, torch.float32, "cpu") takes from a few to a few
    tens of milliseconds depending on the CPU; an 8192³ bf16 product on an H100 takes about
    1.5–2 ms.
    """
    for name, value, minimum in (("m", m, 1), ("k", k, 1), ("n", n, 1),
                                 ("warmup", warmup, 0), ("trials", trials, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    if dtype not in _MATMUL_DTYPES:
        raise ValueError(f"dtype must be one of {_MATMUL_DTYPES}, got {dtype!r}")
    device = torch.device(device)
    on_cuda = device.type == "cuda"
    a = torch.randn(m, k, dtype=dtype, device=device)  # (m, k)
    b = torch.randn(k, n, dtype=dtype, device=device)  # (k, n)
    for _ in range(warmup):
        a @ b
    if on_cuda:
        torch.cuda.synchronize(device)  # the warm-up must be finished before t0
    t0 = time.perf_counter()
    for _ in range(trials):
        a @ b  # (m, n); launched asynchronously on CUDA
    if on_cuda:
        torch.cuda.synchronize(device)  # wait for the timed kernels, not just their launch
    t1 = time.perf_counter()
    return float((t1 - t0) / trials)


def matmul_mfu(m: int, k: int, n: int, dtype: torch.dtype, device: str | torch.device) -> float:
    """MFU of one (m×k) @ (k×n) product on a CUDA device, as a float:

        mfu(2·m·k·n, time_matmul(m, k, n, dtype, device),
            peak_flops(torch.cuda.get_device_name(device), dtype))

    with time_matmul's default warmup=3, trials=10. The peak is looked up first, so an
    unknown device or dtype fails before anything is timed.

    Only CUDA devices have a peak in the table: on the CPU this raises
    ValueError("no peak FLOP/s known for the CPU"); any other non-CUDA device type raises
    ValueError too. Also raises what time_matmul and peak_flops raise.

    Example: matmul_mfu(8192, 8192, 8192, torch.bfloat16, "cuda") on an H100/H200 is
    typically 0.6–0.8.
    """
    dev = torch.device(device)
    if dev.type == "cpu":
        raise ValueError("no peak FLOP/s known for the CPU")
    if dev.type != "cuda":
        raise ValueError(f"no peak FLOP/s known for device type {dev.type!r}")
    peak = peak_flops(torch.cuda.get_device_name(dev), dtype)
    seconds = time_matmul(m, k, n, dtype, dev)
    return mfu(2 * m * k * n, seconds, peak)
