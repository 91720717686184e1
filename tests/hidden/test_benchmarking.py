"""Problem 10 · benchmarking (hidden): mfu and peak_flops against the reference and the spec's
table; time_matmul and matmul_mfu under a recorded fake clock, on the CPU and on a fake CUDA
device (synchronisation); on a CUDA runner, a real 8192³ bf16 measurement against the reference's."""

import math
import random
import statistics

import pytest
import torch

from tests.public.test_benchmarking import DENSE_PEAKS, check_timing_log
from tests.seam.checks import call_text, expect_agree, expect_equal, fail, expect_error, expect_outcome


# Every spelling of torch.cuda.get_device_name() the table covers, with its peaks (bf16, fp32).
SPELLINGS = {
    "NVIDIA A100-SXM4-80GB": (312e12, 19.5e12), "NVIDIA A100-SXM4-40GB": (312e12, 19.5e12),
    "NVIDIA A100-PCIE-40GB": (312e12, 19.5e12), "NVIDIA A100 80GB PCIe": (312e12, 19.5e12),
    "NVIDIA H100 80GB HBM3": (989.5e12, 67.5e12), "NVIDIA H100": (989.5e12, 67.5e12),
    "NVIDIA H100 PCIe": (756.5e12, 51e12), "NVIDIA H100 NVL": (835.5e12, 60e12),
    "NVIDIA H200": (989.5e12, 67.5e12), "NVIDIA H200 NVL": (835.5e12, 60e12),
    "NVIDIA GH200 480GB": (989.5e12, 67.5e12), "NVIDIA GH200 144G HBM3e": (989.5e12, 67.5e12),
    "A100": (312e12, 19.5e12), "H100 SXM": (989.5e12, 67.5e12), "H100 PCIe": (756.5e12, 51e12),
    "H100 NVL": (835.5e12, 60e12), "H200": (989.5e12, 67.5e12), "H200 NVL": (835.5e12, 60e12),
    "GH200": (989.5e12, 67.5e12),
}
UNKNOWN = ["NVIDIA A10", "NVIDIA A10G", "NVIDIA A100X", "NVIDIA H20", "NVIDIA H800", "NVIDIA L4",
           "NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-16GB", "cpu", "", "NVIDIA B200", "NVIDIA GB200",
           "AMD Instinct MI300X", "NVL", "NVIDIA NVL"]


@pytest.mark.points(1)
def test_mfu_random(impl, ref):
    """mfu on 300 random inputs equals (flops / seconds) / peak; bad inputs raise ValueError"""
    rng = random.Random(1001)
    calls = []
    for _ in range(300):
        flops = rng.choice([rng.randint(0, 10**24), rng.uniform(0, 1e24)])
        calls.append((flops, rng.uniform(1e-6, 1e7), rng.choice([19.5e12, 312e12, 989.5e12, rng.uniform(1, 1e16)])))
    got = impl.map("benchmarking.mfu", calls)
    for args, g in zip(calls, got):
        flops, seconds, peak = args
        expect_equal(g, flops / seconds / peak, call_text("benchmarking.mfu", args), rtol=1e-12)
    bad = [(-1.0, 1.0, 1.0), (-5, 2, 3), (1.0, 0.0, 1.0), (1.0, -1.0, 1.0), (1.0, 1.0, 0), (1.0, 1.0, -1e12),
           (math.inf, 1.0, 1.0), (math.nan, 1.0, 1.0), (1.0, math.inf, 1.0), (1.0, 1.0, math.nan)]
    good = [(0, 1.0, 1.0), (1.0, 1e-9, 1.0), (3, 2, 1), (1e30, 1.0, 1e-3)]
    expect_agree(impl, ref, "benchmarking.mfu", bad + good, rtol=1e-12)
    for args, g in zip(bad, impl.map("benchmarking.mfu", bad)):
        expect_error(g, ValueError, call_text("benchmarking.mfu", args))


@pytest.mark.points(2)
def test_peak_flops_spellings(impl, ref):
    """peak_flops for every spelling of A100/H100/H200/GH200 (NVL too) and each dtype; A10, H20, unknown: ValueError"""
    calls = []
    for name, (bf16, fp32) in SPELLINGS.items():
        for dtype, peak in ((torch.bfloat16, bf16), (torch.float16, bf16), (torch.float32, fp32)):
            expect_equal(impl.benchmarking.peak_flops(name, dtype), peak,
                         call_text("benchmarking.peak_flops", (name, dtype)),
                         note="dense (not 2:4 sparse) peak, fp32 without TF32")
        calls += [(name, torch.float64), (name, torch.int8), (name, torch.float8_e4m3fn), (name.lower(), torch.bfloat16)]
    for (name, dtype), peak in DENSE_PEAKS.items():
        expect_equal(impl.benchmarking.peak_flops(name, dtype), peak, call_text("benchmarking.peak_flops", (name, dtype)))
    calls += [(name, dtype) for name in UNKNOWN for dtype in (torch.bfloat16, torch.float32)]
    expect_agree(impl, ref, "benchmarking.peak_flops", calls)


def timing_cases(seed: int, n: int) -> list[tuple]:
    rng = random.Random(seed)
    cases = [(8, 8, 8, torch.float32, None, None)]  # the defaults: warmup=3, trials=10
    for _ in range(n - 1):
        cases.append((rng.randint(1, 48), rng.randint(1, 48), rng.randint(1, 48),
                      rng.choice([torch.float32, torch.float64, torch.bfloat16, torch.float16]),
                      rng.randint(0, 5), rng.randint(1, 12)))
    return cases


def _check_cases(impl, cases, device, fake_cuda):
    calls = [(m, k, n, dtype, device, warmup, trials, fake_cuda) for m, k, n, dtype, warmup, trials in cases]
    for args, got in zip(calls, impl.map("probes.time_matmul_trace", calls)):
        m, k, n, dtype, _, warmup, trials, _ = args
        shown = (m, k, n, dtype, device) + (() if warmup is None else (warmup, trials))
        what = call_text("benchmarking.time_matmul", shown) + " under a fake clock" + (
            " (made to believe it is on CUDA)" if fake_cuda else "")
        if isinstance(got, Exception):
            fail(what, got, "a result")
        check_timing_log(got, m, k, n, dtype, 3 if warmup is None else warmup,
                         10 if trials is None else trials, fake_cuda, what)


@pytest.mark.points(1)
def test_time_matmul_cpu_random(impl):
    """time_matmul on the CPU, 12 shapes/dtypes/warm-ups/trials: untimed warm-up, exact average"""
    _check_cases(impl, timing_cases(1002, 12), "cpu", False)


@pytest.mark.points(2)
def test_time_matmul_cuda_synchronises(impl):
    """time_matmul on (fake) CUDA: torch.cuda.synchronize() right before each clock read"""
    cases = timing_cases(1003, 8)
    _check_cases(impl, cases, "cuda", True)
    _check_cases(impl, [(16, 8, 4, torch.bfloat16, 2, 5)], "cuda:0", True)


@pytest.mark.points(1)
def test_time_matmul_bad_input(impl):
    """non-positive sizes, warmup < 0, trials < 1, an unsupported dtype: ValueError; neighbours work"""
    cases = [
        ((0, 4, 4, torch.float32, "cpu"), "ValueError"), ((1, 4, 4, torch.float32, "cpu"), "ok"),
        ((4, -1, 4, torch.float32, "cpu"), "ValueError"), ((4, 4, 0, torch.float32, "cpu"), "ValueError"),
        ((4, 4, 4, torch.float32, "cpu", -1, 2), "ValueError"), ((4, 4, 4, torch.float32, "cpu", 0, 2), "ok"),
        ((4, 4, 4, torch.float32, "cpu", 1, 0), "ValueError"), ((4, 4, 4, torch.float32, "cpu", 1, 1), "ok"),
        ((4, 4, 4, torch.int64, "cpu"), "ValueError"), ((4, 4, 4, torch.bool, "cpu"), "ValueError"),
        ((4, 4, 4, torch.float8_e4m3fn, "cpu"), "ValueError"), ((4, 4, 4, torch.float64, "cpu"), "ok"),
    ]
    for (args, want), got in zip(cases, impl.map("benchmarking.time_matmul", [a for a, _ in cases])):
        what = call_text("benchmarking.time_matmul", args)
        expect_outcome(got, want, what)
        if want == "ok":
            expect_equal(type(got), float, f"{what}: type of the result")
            if not got > 0:
                fail(f"{what}: seconds per product", got, "> 0")


@pytest.mark.points(2)
def test_matmul_mfu_flops_and_peak(impl):
    """matmul_mfu on fake CUDA devices: 2·m·k·n FLOPs / time_matmul's seconds / the device's dense peak"""
    rng = random.Random(1004)
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA A100 80GB PCIe",
                 "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB"):
        for dtype in (torch.bfloat16, torch.float32):
            m, k, n = rng.randint(1, 40), rng.randint(1, 40), rng.randint(1, 40)
            got = impl.probes.matmul_mfu_trace(m, k, n, dtype, name)
            what = call_text("benchmarking.matmul_mfu", (m, k, n, dtype, "cuda")) + \
                f" on a fake CUDA device named {name!r} under a fake clock"
            result, log, timed = got["result"], got["log"], got["time_matmul_returned"]
            if type(result) is str:
                fail(what, result, "a float")
            peak = SPELLINGS[name][0 if dtype == torch.bfloat16 else 1]
            if len(timed) == 1:
                seconds, how = timed[0], "the seconds time_matmul returned"
            else:   # timed without calling the module's time_matmul: use the clock log
                reads = [i for i, e in enumerate(log) if e[0] == "clock"]
                between = sum(e[0] == "mm" for e in log[reads[0]:reads[-1]]) if len(reads) == 2 else 0
                if between == 0:
                    fail(f"{what}: timing", log, "time_matmul's procedure (see its docstring)")
                seconds, how = (log[reads[1]][1] - log[reads[0]][1]) / between, "(t1 - t0) / products timed"
            expect_equal(result, 2 * m * k * n / seconds / peak, what, rtol=1e-9,
                         note=f"expected 2·m·k·n / seconds / peak with seconds = {how} = {seconds}, "
                              f"peak = {peak:g}")


@pytest.mark.points(1)
def test_matmul_mfu_bad_device(impl):
    """matmul_mfu: an unknown GPU or dtype fails before timing; CPU and other devices raise ValueError"""
    for name, dtype in (("NVIDIA GeForce RTX 4090", torch.bfloat16), ("NVIDIA B200", torch.bfloat16),
                        ("NVIDIA H100 80GB HBM3", torch.float64)):
        got = impl.probes.matmul_mfu_trace(16, 16, 16, dtype, name)
        what = f"matmul_mfu(16, 16, 16, {dtype}, 'cuda') on a fake CUDA device named {name!r}"
        result = got["result"]
        expect_equal(result.split(":")[0] if type(result) is str else result, "ValueError", what)
        expect_equal(sum(e[0] == "mm" for e in got["log"]), 0, f"{what}: products run before failing",
                     note="look the peak up first: nothing is timed for an unknown device or dtype")
    for device in ("cpu", "meta"):
        args = (64, 64, 64, torch.float32, device)
        got = impl.map("benchmarking.matmul_mfu", [args])[0]
        expect_error(got, ValueError, call_text("benchmarking.matmul_mfu", args))


# --------------------------------------------------------------------------- on a CUDA runner

SIZE = 8192


def measure(impl, ref, rounds: int) -> tuple[list[float], list[float]]:
    """matmul_mfu(8192³, bf16) measured alternately by the submission and by the reference, after
    one discarded call each (CUDA context, cuBLAS handles, clocks)."""
    args = (SIZE, SIZE, SIZE, torch.bfloat16, "cuda")
    impl.benchmarking.matmul_mfu(*args)
    ref.benchmarking.matmul_mfu(*args)
    mine, theirs = [], []
    for _ in range(rounds):
        mine.append(impl.benchmarking.matmul_mfu(*args))
        theirs.append(ref.benchmarking.matmul_mfu(*args))
    return mine, theirs


@pytest.mark.points(2)
@pytest.mark.gpu
@pytest.mark.gpu_peak
@pytest.mark.time_limit(120)
def test_matmul_mfu_gpu_plausible(impl, ref):
    """on the GPU: matmul_mfu of an 8192³ bf16 product is a real utilisation, in (0.05, 1.0]"""
    mine, _ = measure(impl, ref, 3)
    what = f"matmul_mfu({SIZE}, {SIZE}, {SIZE}, torch.bfloat16, 'cuda') on {torch.cuda.get_device_name()}"
    for value in mine:
        expect_equal(type(value), float, f"{what}: type")
        if not 0.05 < value <= 1.0:
            fail(what, value, "in (0.05, 1.0]",
                 "> 1: a missing synchronize or a wrong FLOP count/peak; tiny: the wrong peak or timing")


@pytest.mark.points(2)
@pytest.mark.gpu
@pytest.mark.gpu_peak
@pytest.mark.time_limit(120)
def test_matmul_mfu_gpu_matches_reference(impl, ref):
    """on the GPU: matmul_mfu of an 8192³ bf16 product agrees with the reference's, measured alternately"""
    mine, theirs = measure(impl, ref, 5)
    for value in mine:
        expect_equal(type(value), float, f"type of matmul_mfu({SIZE}, {SIZE}, {SIZE}, torch.bfloat16, 'cuda')")
    got, want = statistics.median(mine), statistics.median(theirs)
    what = (f"median of 5 × matmul_mfu({SIZE}, {SIZE}, {SIZE}, torch.bfloat16, 'cuda') on "
            f"{torch.cuda.get_device_name()} vs the reference's median, measured alternately")
    # Same GPU, same product, same procedure, alternating calls after a discarded warm call each:
    # a correct submission's median lands within a few percent of the reference's. The band
    # [0.85, 1.15] × the reference accepts that and rejects a FLOP count off by 2 (× 0.5 or × 2),
    # a missing synchronize (launch time only: × 10 or more) and timing the 3 warm-up products
    # with the 10 trials (13 / 10 of the time: × 0.77).
    ratio = got / want
    if not 0.85 <= ratio <= 1.15:
        fail(what, got, f"within [0.85, 1.15] × the reference's {want:.4f}",
             f"ratio {ratio:.3f}; submission {[round(v, 4) for v in mine]}, "
             f"reference {[round(v, 4) for v in theirs]}")
