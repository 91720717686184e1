"""benchmarking (public). The notes' MFU example, the dense peak table of the spec,
and time_matmul's procedure checked under a recorded fake clock (no GPU, no real time needed)."""

import pytest
import torch

from tests.checks import EXACT, ROUNDING, call_text, expect_equal, expect_raises
from tests.common.benchmarking import DENSE_PEAKS, H100, check_timing_log, timing_due
from tests.snapshot import check_snapshot

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
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "benchmarking.mfu": ROUNDING,
    "benchmarking.peak_flops": EXACT,
}


# ----------------------------------------------------------------------------- tests


@pytest.mark.points(1)
def test_mfu_llama2(impl):
    """LLaMA 2 7B: 6·6.7e9·2e12 FLOPs in 184,320 A100 hours at 312 TFLOP/s is MFU ≈ 39% (notes 004)"""
    args = (8.04e22, 184_320 * 3600, 312e12)
    got = impl.benchmarking.mfu(*args)
    expect_equal(got, 8.04e22 / (184_320 * 3600) / 312e12, call_text("benchmarking.mfu", args), **ROUNDING)
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
    check_snapshot(impl, "benchmarking.mfu")
    check_snapshot(impl, "benchmarking.peak_flops")


@pytest.mark.points(1)
@pytest.mark.how
def test_time_matmul_procedure_cpu(impl):
    """time_matmul on the CPU: warm-up untimed, then `trials` products between two clock reads, averaged"""
    args = dict(m=32, k=16, n=8, dtype=torch.float32, device="cpu", warmup=3, trials=10)
    got = impl.probes.time_matmul_trace(**args)
    what = call_text("benchmarking.time_matmul", tuple(args.values())) + " under a fake clock"
    check_timing_log(got, timing_due(**args), what)


@pytest.mark.points(1)
def test_matmul_mfu_cpu_raises(impl):
    """matmul_mfu on the CPU raises ValueError: the CPU has no peak in the table"""
    args = (64, 64, 64, torch.float32, "cpu")
    expect_raises(ValueError, lambda: impl.benchmarking.matmul_mfu(*args), call_text("benchmarking.matmul_mfu", args))
