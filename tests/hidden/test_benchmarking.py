"""benchmarking (hidden): mfu and peak_flops against the reference and the spec's
table; time_matmul and matmul_mfu under a recorded fake clock, on the CPU and on a fake CUDA
device (synchronisation); on a CUDA runner, a real 8192³ bf16 measurement against the reference's."""

import math
import random
import statistics

import pytest
import torch

from tests.checks import CONDITIONED, ROUNDING, call_text, case, check_cases, expect_equal, fail, raises
from tests.common.benchmarking import DENSE_PEAKS, check_timing_log, sparse_peak, timing_due


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
MFU_BAD = [(-1.0, 1.0, 1.0), (-5, 2, 3), (1.0, 0.0, 1.0), (1.0, -1.0, 1.0), (1.0, 1.0, 0), (1.0, 1.0, -1e12),
           (math.inf, 1.0, 1.0), (math.nan, 1.0, 1.0), (1.0, math.inf, 1.0), (1.0, 1.0, math.nan)]
MFU_GOOD = [(0, 1.0, 1.0), (1.0, 1e-9, 1.0), (3, 2, 1), (1e30, 1.0, 1e-3)]


def mfu_cases(seed: int, count: int) -> list:
    rng = random.Random(seed)  # flops, seconds, peak
    return [case(rng.choice([rng.randint(0, 10**24), rng.uniform(0, 1e24)]), rng.uniform(1e-6, 1e7),
                 rng.choice([19.5e12, 312e12, 989.5e12, rng.uniform(1, 1e16)])) for _ in range(count)]


@pytest.mark.points(1)
def test_mfu_random(impl, ref):
    """mfu on 300 random inputs equals (flops / seconds) / peak; bad inputs raise ValueError"""
    check_cases(impl, "benchmarking.mfu", mfu_cases(1001, 300), ref=ref,
                oracle=lambda flops, seconds, peak: flops / seconds / peak, **ROUNDING)
    check_cases(impl, "benchmarking.mfu", [case(*a, want=raises("ValueError")) for a in MFU_BAD]
                + [case(*a) for a in MFU_GOOD], ref=ref, **ROUNDING)


@pytest.mark.points(2)
def test_peak_flops_spellings(impl, ref):
    """peak_flops for every spelling of A100/H100/H200/GH200 (NVL too) and each dtype; A10, H20, unknown: ValueError"""
    check_cases(impl, "benchmarking.peak_flops", [
        case(name, dtype, want=peak) for name, (bf16, fp32) in SPELLINGS.items()
        for dtype, peak in ((torch.bfloat16, bf16), (torch.float16, bf16), (torch.float32, fp32))],
        ref=ref, note="dense (not 2:4 sparse) peak, fp32 without TF32", mistakes=[sparse_peak(SPELLINGS)])
    others = [case(*args) for name in SPELLINGS for args in (
        (name, torch.float64), (name, torch.int8), (name, torch.float8_e4m3fn), (name.lower(), torch.bfloat16))]
    others += [case(name, dtype) for name in UNKNOWN for dtype in (torch.bfloat16, torch.float32)]
    check_cases(impl, "benchmarking.peak_flops", [case(*a, want=p) for a, p in DENSE_PEAKS.items()] + others, ref=ref)


def timing_case(m, k, n, dtype, warmup, trials, device: str, fake_cuda: bool):  # warmup, trials None: not passed
    shown = (m, k, n, dtype, device) + (() if warmup is None else (warmup, trials))
    what = f"{call_text('benchmarking.time_matmul', shown)} under a fake clock" + (
        " (made to believe it is on CUDA)" if fake_cuda else "")
    return case(m=m, k=k, n=n, dtype=dtype, device=device, warmup=warmup, trials=trials, fake_cuda=fake_cuda, what=what)


def timing_cases(seed: int, count: int, device: str, fake_cuda: bool) -> list:
    rng = random.Random(seed)
    return [timing_case(8, 8, 8, torch.float32, None, None, device, fake_cuda)] + [  # the defaults: warmup=3, trials=10
        timing_case(rng.randint(1, 48), rng.randint(1, 48), rng.randint(1, 48),
                    rng.choice([torch.float32, torch.float64, torch.bfloat16, torch.float16]),
                    rng.randint(0, 5), rng.randint(1, 12), device, fake_cuda) for _ in range(count - 1)]


@pytest.mark.points(1)
@pytest.mark.how
def test_time_matmul_cpu_random(impl):
    """time_matmul on the CPU, 12 shapes/dtypes/warm-ups/trials: untimed warm-up, exact average"""
    check_cases(impl, "probes.time_matmul_trace", timing_cases(1002, 12, "cpu", False), oracle=timing_due,
                compare=check_timing_log)


@pytest.mark.points(2)
@pytest.mark.how
def test_time_matmul_cuda_synchronises(impl):
    """time_matmul on (fake) CUDA: torch.cuda.synchronize() right before each clock read"""
    cases = timing_cases(1003, 8, "cuda", True) + [timing_case(16, 8, 4, torch.bfloat16, 2, 5, "cuda:0", True)]
    check_cases(impl, "probes.time_matmul_trace", cases, oracle=timing_due, compare=check_timing_log)


def positive_seconds(got, due: str, what: str) -> None:
    expect_equal(type(got), float, f"{what}: type of the result")
    if not got > 0:
        fail(f"{what}: seconds per product", got, "> 0")


@pytest.mark.points(1)
def test_time_matmul_bad_input(impl):
    """non-positive sizes, warmup < 0, trials < 1, an unsupported dtype: ValueError; neighbours work"""
    bad, ok = raises("ValueError"), "returns (a valid input): seconds per product, a float > 0"
    cases = [
        case(0, 4, 4, torch.float32, "cpu", want=bad), case(1, 4, 4, torch.float32, "cpu", want=ok),
        case(4, 1, 4, torch.float32, "cpu", want=ok), case(4, 4, 1, torch.float32, "cpu", want=ok),  # 1 is positive
        case(4, -1, 4, torch.float32, "cpu", want=bad), case(4, 4, 0, torch.float32, "cpu", want=bad),
        case(4, 4, 4, torch.float32, "cpu", -1, 2, want=bad), case(4, 4, 4, torch.float32, "cpu", 0, 2, want=ok),
        case(4, 4, 4, torch.float32, "cpu", 1, 0, want=bad), case(4, 4, 4, torch.float32, "cpu", 1, 1, want=ok),
        case(4, 4, 4, torch.int64, "cpu", want=bad), case(4, 4, 4, torch.bool, "cpu", want=bad),
        case(4, 4, 4, torch.float8_e4m3fn, "cpu", want=bad), case(4, 4, 4, torch.float64, "cpu", want=ok),
    ]
    check_cases(impl, "benchmarking.time_matmul", cases, compare=positive_seconds)


def mfu_trace_case(m: int, k: int, n: int, dtype: torch.dtype, name: str):
    """matmul_mfu on a fake CUDA device named ``name``: due 2·m·k·n FLOPs over the device's dense peak."""
    what = (call_text("benchmarking.matmul_mfu", (m, k, n, dtype, "cuda"))
            + f" on a fake CUDA device named {name!r} under a fake clock")
    peak = SPELLINGS[name][0 if dtype == torch.bfloat16 else 1]
    return case(m=m, k=k, n=n, dtype=dtype, device_name=name, want={"flops": 2 * m * k * n, "peak": peak}, what=what)


def expect_mfu_of_timing(got: dict, due: dict, what: str) -> None:
    """The result is due["flops"] / the seconds (time_matmul's, else from the clock log) / due["peak"]."""
    result, log, timed = got["result"], got["log"], got["time_matmul_returned"]
    if type(result) is str:
        fail(what, result, "a float")
    if len(timed) == 1:
        seconds, how = timed[0], "the seconds time_matmul returned"
    else:   # timed without calling the module's time_matmul: use the clock log
        reads = [i for i, e in enumerate(log) if e[0] == "clock"]
        between = sum(e[0] == "mm" for e in log[reads[0]:reads[-1]]) if len(reads) == 2 else 0
        if between == 0:
            fail(f"{what}: timing", log, "time_matmul's procedure (see its docstring)")
        seconds, how = (log[reads[1]][1] - log[reads[0]][1]) / between, "(t1 - t0) / products timed"
    expect_equal(result, due["flops"] / seconds / due["peak"], what, **CONDITIONED,
                 note=f"expected 2·m·k·n / seconds / peak with seconds = {how} = {seconds}, peak = {due['peak']:g}")


@pytest.mark.points(2)
def test_matmul_mfu_flops_and_peak(impl):
    """matmul_mfu on fake CUDA devices: 2·m·k·n FLOPs / time_matmul's seconds / the device's dense peak"""
    rng = random.Random(1004)
    cases = [mfu_trace_case(rng.randint(1, 40), rng.randint(1, 40), rng.randint(1, 40), dtype, name)
             for name in ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H200", "NVIDIA A100 80GB PCIe",
                          "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA GH200 480GB")
             for dtype in (torch.bfloat16, torch.float32)]
    check_cases(impl, "probes.matmul_mfu_trace", cases, compare=expect_mfu_of_timing)


def fails_before_timing(got: dict, due: str, what: str) -> None:
    result = got["result"]
    expect_equal(result.split(":")[0] if type(result) is str else result, due, what)
    expect_equal(sum(e[0] == "mm" for e in got["log"]), 0, f"{what}: products run before failing",
                 note="look the peak up first: nothing is timed for an unknown device or dtype")


@pytest.mark.points(1)
def test_matmul_mfu_bad_device(impl):
    """matmul_mfu: an unknown GPU or dtype fails before timing; CPU and other devices raise ValueError"""
    check_cases(impl, "probes.matmul_mfu_trace", [
        case(m=16, k=16, n=16, dtype=dtype, device_name=name, want="ValueError",
             what=f"matmul_mfu(16, 16, 16, {dtype}, 'cuda') on a fake CUDA device named {name!r}")
        for name, dtype in (("NVIDIA GeForce RTX 4090", torch.bfloat16), ("NVIDIA B200", torch.bfloat16),
                            ("NVIDIA H100 80GB HBM3", torch.float64))], compare=fails_before_timing)
    check_cases(impl, "benchmarking.matmul_mfu",
                [case(64, 64, 64, torch.float32, device, want=raises("ValueError")) for device in ("cpu", "meta")])


# --------------------------------------------------------------------------- on a CUDA runner

SIZE, PLAUSIBLE = 8192, "a float in (0.05, 1.0]"  # the product's size; what test_matmul_mfu_gpu_plausible wants


def measure(impl, ref, rounds: int, want: str) -> tuple[list[float], list[float]]:
    """matmul_mfu(8192³, bf16) measured alternately by the submission (one check_cases per call, against
    ``want``) and by the reference, after one discarded call each (CUDA context, cuBLAS handles, clocks)."""
    args = (SIZE, SIZE, SIZE, torch.bfloat16, "cuda")
    what = f"{call_text('benchmarking.matmul_mfu', args)} on {torch.cuda.get_device_name()}"
    one = [case(*args, want=want, what=what)]
    check_cases(impl, "benchmarking.matmul_mfu", one, compare=lambda *_: None)  # discarded
    ref.benchmarking.matmul_mfu(*args)
    mine, theirs = [], []
    for _ in range(rounds):
        mine += check_cases(impl, "benchmarking.matmul_mfu", one, compare=expect_utilisation)
        theirs.append(ref.benchmarking.matmul_mfu(*args))
    return mine, theirs


def expect_utilisation(value, due: str, what: str) -> None:
    expect_equal(type(value), float, f"{what}: type")
    if due == PLAUSIBLE and not 0.05 < value <= 1.0:
        fail(what, value, "in (0.05, 1.0]",
             "> 1: a missing synchronize or a wrong FLOP count/peak; tiny: the wrong peak or timing")


@pytest.mark.points(2)
@pytest.mark.gpu
@pytest.mark.gpu_peak
@pytest.mark.time_limit(120)
def test_matmul_mfu_gpu_plausible(impl, ref):
    """on the GPU: matmul_mfu of an 8192³ bf16 product is a real utilisation, in (0.05, 1.0]"""
    measure(impl, ref, 3, PLAUSIBLE)


@pytest.mark.points(2)
@pytest.mark.gpu
@pytest.mark.gpu_peak
@pytest.mark.time_limit(120)
def test_matmul_mfu_gpu_matches_reference(impl, ref):
    """on the GPU: matmul_mfu of an 8192³ bf16 product agrees with the reference's, measured alternately"""
    mine, theirs = measure(impl, ref, 5, "a float")
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
