"""benchmarking: what the public and hidden tests share. The spec's dense peak table, and the check
of one time_matmul call's event log under the fake clock (seam/probes/benchmarking.py)."""

import dataclasses

import torch

from tests.checks import ROUNDING, Mistake, expect_equal, fail

# Dense peaks the handout prints (spec §10): bf16 tensor-core peaks without 2:4 sparsity,
# fp32 without TF32. H200 has the H100 SXM's compute.
A100, H100, H200 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"
DENSE_PEAKS = {
    (A100, torch.bfloat16): 312e12, (A100, torch.float32): 19.5e12,
    (H100, torch.bfloat16): 989.5e12, (H100, torch.float32): 67.5e12,
    (H200, torch.bfloat16): 989.5e12, (H200, torch.float32): 67.5e12,
}

SPARSE_PEAK = Mistake(
    "the 2:4-sparse peak (twice the dense one)",
    lambda name, dtype, *, dense: 2 * dense[name][0] if dtype in (torch.bfloat16, torch.float16) else None,
    "Datasheets print bf16/fp16 tensor-core peaks with 2:4 sparsity; dense matmuls reach half of that.",
    "benchmarking", "datasheets print the 2:4-sparse tensor-core figure, which is twice the dense one")
NO_SYNCHRONIZE = Mistake(
    "timing without torch.cuda.synchronize()", None,
    "CUDA kernels run asynchronously: without a synchronize right before each clock read you time the "
    "launches, not the work.", "benchmarking", "`torch.cuda.synchronize(device)` right before each of the two clock reads")


def sparse_peak(dense: dict[str, tuple[float, float]]) -> Mistake:
    """SPARSE_PEAK for peak_flops(name, dtype) cases, given each name's dense (bf16, fp32) peaks."""
    answer = SPARSE_PEAK.answer
    return dataclasses.replace(SPARSE_PEAK, answer=lambda name, dtype: answer(name, dtype, dense=dense))


def timing_due(m: int, k: int, n: int, dtype: torch.dtype, device: str, warmup: int | None = None,
               trials: int | None = None, fake_cuda: bool = False) -> dict:
    """What probes.time_matmul_trace (same arguments) is due: `warmup` untimed products of a (m, k)
    by a (k, n) `dtype` matrix, then `trials` timed ones (None: the defaults 3 and 10), with a
    torch.cuda.synchronize() before each clock read on (fake) CUDA."""
    return {"operands": [[(m, k), (k, n)], dtype], "warmup": 3 if warmup is None else warmup,
            "trials": 10 if trials is None else trials, "cuda": fake_cuda}


def check_timing_log(got: dict, due: dict, what: str) -> None:
    """The event log of one time_matmul call under the fake clock (probes/benchmarking.py): the
    clock advances by a fixed step per matrix product and only then, so a correct call returns
    exactly (t1 - t0) / trials with `trials` products between the two clock reads."""
    log, result, trials = got["log"], got["result"], due["trials"]
    clocks = [i for i, e in enumerate(log) if e[0] == "clock"]
    if len(clocks) != 2:
        fail(f"{what}: clock reads (time.perf_counter() / timeit.default_timer())", len(clocks), 2,
             "read the clock once before and once after the timed products")
    first, second = clocks
    products = [i for i, e in enumerate(log) if e[0] == "mm"]
    for i in products:
        expect_equal(log[i][1:], due["operands"],
                     f"{what}: operands of each product (shapes, dtype)", note="a: (m, k), b: (k, n)")
    before = sum(i < first for i in products)
    between = sum(first < i < second for i in products)
    expect_equal(before, due["warmup"], f"{what}: warm-up products before the first clock read",
                 note="warm up first, untimed")
    expect_equal(between, trials, f"{what}: products between the two clock reads",
                 note="time exactly `trials` products; the warm-up is not timed")
    if due["cuda"]:
        for i, label in ((first, "first"), (second, "second")):
            if i == 0 or log[i - 1] != ["sync"]:
                fail(f"{what}: on CUDA, torch.cuda.synchronize() right before the {label} clock read",
                     log[i - 1] if i else "nothing", ["sync"], NO_SYNCHRONIZE.hint().strip())
    expect_equal(type(result), float, f"{what}: type of the result")
    elapsed = log[second][1] - log[first][1]
    expect_equal(result, elapsed / trials, f"{what}: result vs (t1 - t0) / trials on the fake clock",
                 **ROUNDING, note=f"t0 = {log[first][1]}, t1 = {log[second][1]}, trials = {trials}")
