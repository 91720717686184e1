"""Problem 10 · benchmarking (public). The notes' MFU example, the dense peak table of the spec,
and time_matmul's procedure checked under a recorded fake clock (no GPU, no real time needed)."""

import pytest
import torch

from tests.seam.checks import call_text, expect_equal, expect_raises, fail
from tests.seam.snapshot import check_snapshot

# Dense peaks the handout prints (spec §10): bf16 tensor-core peaks without 2:4 sparsity,
# fp32 without TF32. H200 has the H100 SXM's compute.
A100, H100, H200 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"
DENSE_PEAKS = {
    (A100, torch.bfloat16): 312e12, (A100, torch.float32): 19.5e12,
    (H100, torch.bfloat16): 989.5e12, (H100, torch.float32): 67.5e12,
    (H200, torch.bfloat16): 989.5e12, (H200, torch.float32): 67.5e12,
}

SNAPSHOT_INPUTS = {
    "benchmarking.mfu": [
        (8.04e22, 184_320 * 3600, 312e12), (2 * 8192**3, 1.5e-3, 989.5e12), (0, 1.0, 1.0),
        (10**15, 2, 10**15), (1e12, 0.0, 1e12), (-1.0, 1.0, 1.0), (1.0, 1.0, 0.0), (1.0, -2.0, 1.0),
    ],
    "benchmarking.peak_flops": [
        ("NVIDIA A100-PCIE-40GB", torch.bfloat16), ("NVIDIA A100 80GB PCIe", torch.float32),
        ("NVIDIA H100 PCIe", torch.bfloat16), ("NVIDIA H100 PCIe", torch.float32),
        ("NVIDIA H100 80GB HBM3", torch.float16), ("NVIDIA H200", torch.float16), ("H100 SXM", torch.bfloat16),
        ("NVIDIA H100 NVL", torch.bfloat16), ("NVIDIA H200 NVL", torch.float32),
        ("NVIDIA GH200 480GB", torch.bfloat16), ("NVIDIA A100-SXM4-40GB", torch.float16),
        ("NVIDIA A10", torch.float32), ("NVIDIA GeForce RTX 4090", torch.bfloat16),
        ("NVIDIA H100 80GB HBM3", torch.float64), ("NVIDIA A100-SXM4-80GB", torch.int8),
    ],
}


# ----------------------------------------------------------------------------- helpers


def check_timing_log(got: dict, m: int, k: int, n: int, dtype: torch.dtype, warmup: int, trials: int,
                     cuda: bool, what: str) -> None:
    """The event log of one time_matmul call under the fake clock (probes/benchmarking.py): the
    clock advances by a fixed step per matrix product and only then, so a correct call returns
    exactly (t1 - t0) / trials with `trials` products between the two clock reads."""
    log, result = got["log"], got["result"]
    clocks = [i for i, e in enumerate(log) if e[0] == "clock"]
    if len(clocks) != 2:
        fail(f"{what}: clock reads (time.perf_counter() / timeit.default_timer())", len(clocks), 2,
             "read the clock once before and once after the timed products")
    first, second = clocks
    products = [i for i, e in enumerate(log) if e[0] == "mm"]
    for i in products:
        expect_equal(log[i][1:], [[(m, k), (k, n)], dtype],
                     f"{what}: operands of each product (shapes, dtype)", note="a: (m, k), b: (k, n)")
    before = sum(i < first for i in products)
    between = sum(first < i < second for i in products)
    expect_equal(before, warmup, f"{what}: warm-up products before the first clock read",
                 note="warm up first, untimed")
    expect_equal(between, trials, f"{what}: products between the two clock reads",
                 note="time exactly `trials` products; the warm-up is not timed")
    if cuda:
        for i, label in ((first, "first"), (second, "second")):
            if i == 0 or log[i - 1] != ["sync"]:
                fail(f"{what}: on CUDA, torch.cuda.synchronize() right before the {label} clock read",
                     log[i - 1] if i else "nothing", ["sync"],
                     "CUDA kernels run asynchronously: without it you time the launches, not the work")
    expect_equal(type(result), float, f"{what}: type of the result")
    elapsed = log[second][1] - log[first][1]
    expect_equal(result, elapsed / trials, f"{what}: result vs (t1 - t0) / trials on the fake clock",
                 rtol=1e-12, note=f"t0 = {log[first][1]}, t1 = {log[second][1]}, trials = {trials}")


# ----------------------------------------------------------------------------- tests


@pytest.mark.points(1)
def test_mfu_llama2(impl):
    """LLaMA 2 7B: 6·6.7e9·2e12 FLOPs in 184,320 A100 hours at 312 TFLOP/s is MFU ≈ 39% (notes 004)"""
    args = (8.04e22, 184_320 * 3600, 312e12)
    got = impl.benchmarking.mfu(*args)
    expect_equal(got, 8.04e22 / (184_320 * 3600) / 312e12, call_text("benchmarking.mfu", args), rtol=1e-12)
    expect_equal(round(100 * got), 39, "MFU in percent, rounded")


@pytest.mark.points(1)
def test_dense_peak_table(impl):
    """peak_flops: A100 312 / 19.5, H100 SXM 989.5 / 67.5, H200 989.5 / 67.5 TFLOP/s (bf16 / fp32, dense)"""
    for (name, dtype), peak in DENSE_PEAKS.items():
        expect_equal(impl.benchmarking.peak_flops(name, dtype), peak,
                     call_text("benchmarking.peak_flops", (name, dtype)),
                     note="dense peaks: the datasheets' bf16 figure with sparsity is twice this")


@pytest.mark.points(1)
def test_peak_flops_unknown(impl):
    """an unknown device (or the CPU) or a dtype without a peak raises ValueError"""
    for args in (("NVIDIA GeForce RTX 4090", torch.bfloat16), ("cpu", torch.float32),
                 (H100, torch.float64), ("", torch.bfloat16)):
        expect_raises(ValueError, lambda: impl.benchmarking.peak_flops(*args),
                      call_text("benchmarking.peak_flops", args))
    expect_equal(impl.benchmarking.peak_flops(H100, torch.float32), 67.5e12,
                 call_text("benchmarking.peak_flops", (H100, torch.float32)))


@pytest.mark.points(1)
def test_mfu_and_peak_snapshots(impl):
    """mfu and peak_flops match the snapshots (other spellings, float16, NVL and GH200; A10 rejected)"""
    check_snapshot(impl, "benchmarking.mfu", rtol=1e-12)
    check_snapshot(impl, "benchmarking.peak_flops", rtol=0.0)


@pytest.mark.points(1)
def test_time_matmul_procedure_cpu(impl):
    """time_matmul on the CPU: warm-up untimed, then `trials` products between two clock reads, averaged"""
    args = (32, 16, 8, torch.float32, "cpu", 3, 10)
    got = impl.probes.time_matmul_trace(*args)
    check_timing_log(got, 32, 16, 8, torch.float32, 3, 10, False,
                     call_text("benchmarking.time_matmul", args) + " under a fake clock")


@pytest.mark.points(1)
def test_matmul_mfu_cpu_raises(impl):
    """matmul_mfu on the CPU raises ValueError: the CPU has no peak in the table"""
    args = (64, 64, 64, torch.float32, "cpu")
    expect_raises(ValueError, lambda: impl.benchmarking.matmul_mfu(*args), call_text("benchmarking.matmul_mfu", args))
