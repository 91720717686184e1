"""intensity (hidden): matmul intensities against PyTorch's FLOP counter and the bytes of
real tensors, roofline edge cases, and seeded random cases against the reference."""

import random

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tests.checks import ROUNDING, call_text, case, check_cases, raises

DTYPES = (torch.float64, torch.float32, torch.bfloat16, torch.float16, torch.float8_e4m3fn)
HARDWARE = [(989e12, 3.35e12), (312e12, 2.039e12), (19.5e12, 1.555e12), (1979e12, 3.35e12), (2.25e15, 8e12)]
BAD = raises("ValueError")
RIDGE_EDGES = [case(i, peak, bw, want=i > peak / bw)
               for peak, bw in [(1000.0, 4.0), (989e12, 2.0**41), (2**50, 2.0**40), (312e12, 2.0**30)]
               for i in (peak / bw, peak / bw * (1 + 1e-9), peak / bw * (1 - 1e-9), 0.0, peak / bw * 2, peak / bw / 2)]

EDGES = {  # zero sizes, non-positive hardware numbers, negative counts, no traffic; and valid neighbours
    "matmul_intensity": [case(0, 4, 4, 2, want=BAD), case(4, -1, 4, 2, want=BAD), case(4, 4, 0, 2, want=BAD),
                         case(4, 4, 4, 0, want=BAD), case(4, 4, 4, -2, want=BAD), case(1, 1, 1, 4, want=2 / 12)],
    "elementwise_intensity": [case(1, 0, 0, want=BAD), case(-1, 4, 4, want=BAD), case(1, -4, 8, want=BAD),
                              case(1, 8, -4, want=BAD),
                              case(float("nan"), 4, 4, want=BAD), case(0, 4, 4, want=0.0), case(1, 0, 4, want=0.25),
                              case(1, 4, 0, want=0.25)],
    "ridge_point": [case(0.0, 3.35e12, want=BAD), case(989e12, 0.0, want=BAD), case(989e12, -1.0, want=BAD),
                    case(1000.0, 4.0, want=250.0)],
    "is_compute_bound": [case(-1.0, 989e12, 3.35e12, want=BAD), case(10.0, 989e12, 0.0, want=BAD),
                         case(0.0, 989e12, 3.35e12, want=False)],
    "roofline_seconds": [case(-1, 10, 989e12, 3.35e12, want=BAD), case(10, -1, 989e12, 3.35e12, want=BAD),
                         case(10, 10, 0.0, 3.35e12, want=BAD), case(10, 10, 989e12, 0.0, want=BAD),
                         case(10, 10, 989e12, float("inf"), want=BAD),
                         case(0, 0, 989e12, 3.35e12, want=0.0), case(10, 0, 10.0, 1.0, want=1.0)],
}


def torch_matmul_traffic(b: int, d: int, f: int, dtype: torch.dtype) -> tuple[int, int]:
    """(FLOPs, bytes) of Y = X @ W from PyTorch: FlopCounterMode on the product, and the nbytes of
    real X (b×d), W (d×f) and Y (b×f) tensors of ``dtype`` (read X, read W, write Y)."""
    with torch.device("meta"):
        with FlopCounterMode(display=False) as counter:
            torch.empty(b, d) @ torch.empty(d, f)
        x, w, y = torch.empty(b, d, dtype=dtype), torch.empty(d, f, dtype=dtype), torch.empty(b, f, dtype=dtype)
    return counter.get_total_flops(), x.nbytes + w.nbytes + y.nbytes


def random_shapes(rng: random.Random, n: int):
    return [tuple(rng.choice([1, rng.randint(1, 64), rng.randint(1, 100_000)]) for _ in range(3)) for _ in range(n)]


def shapes_past_64_bits(seed: int, n: int):
    """(b, d, f, bytes) with sizes of 2**40 .. 2**80 beside small ones: matmuls no tensor (64-bit
    sizes) can hold, so no FLOP counter has one to count; the reference's answers."""
    rng = random.Random(seed)
    return [(*(rng.choice([1, rng.randint(1, 4096), 2 ** rng.randint(40, 80) + rng.randint(0, 10**6)])
               for _ in range(3)), rng.choice([1, 2, 4, 0.5])) for _ in range(n)] + [(2**64, 2**64, 2**64, 4)]


def matmul_cases(rng: random.Random, shapes, hardware: bool = False) -> list:
    """Real matmuls of a random dtype (and hardware): matmul_intensity = FLOPs / bytes, or
    roofline_seconds = max(FLOPs / peak, bytes / bandwidth), from PyTorch's counts."""
    cases = []
    for b, d, f in shapes:
        dt = rng.choice(DTYPES)
        flops, nbytes = torch_matmul_traffic(b, d, f, dt)
        if hardware:
            peak, bw = rng.choice(HARDWARE)
            args, want, target = (flops, nbytes, peak, bw), max(flops / peak, nbytes / bw), "roofline_seconds"
        else:
            args, want, target = (b, d, f, torch.empty((), dtype=dt).element_size()), flops / nbytes, "matmul_intensity"
        cases.append(case(*args, want=want, what=f"{call_text(f'intensity.{target}', args)} [({b}×{d}) @ ({d}×{f}) {dt}]"))
    return cases


@pytest.mark.points(2)
def test_matmul_intensity_matches_torch(impl, ref):
    """matmul_intensity equals FlopCounterMode FLOPs / bytes of real X, W, Y tensors (rtol 1e-12), 5 dtypes, and the reference past 64 bits"""
    rng = random.Random(401)
    cases = matmul_cases(rng, random_shapes(rng, 60) + [(64, 64, 64), (1, 4096, 4096), (4096, 1, 1)])
    check_cases(impl, "intensity.matmul_intensity", cases, **ROUNDING,
                note="oracle: FlopCounterMode / (X.nbytes + W.nbytes + Y.nbytes) for the matmul in brackets")
    check_cases(impl, "intensity.matmul_intensity", shapes_past_64_bits(405, 40), ref=ref, **ROUNDING)


@pytest.mark.points(2)
def test_intensities_random(impl, ref):
    """matmul_intensity, elementwise_intensity and ridge_point equal the reference on random inputs (rtol 1e-12), sizes past 64 bits too"""
    rng = random.Random(402)
    check_cases(impl, "intensity.matmul_intensity",
                [(*s, rng.choice([1, 2, 4, 8, 0.5, rng.uniform(0.1, 16)])) for s in random_shapes(rng, 400)],
                ref=ref, **ROUNDING)
    check_cases(impl, "intensity.matmul_intensity", shapes_past_64_bits(406, 100), ref=ref, **ROUNDING)
    calls = [(rng.choice([0, 1, 2, rng.randint(0, 100), rng.uniform(0, 100)]),
              rng.choice([0, 1, 2, 4, 8, rng.uniform(0, 64)]), rng.choice([0, 1, 2, 4, 8, rng.uniform(0, 64)]))
             for _ in range(400)]
    check_cases(impl, "intensity.elementwise_intensity", [c for c in calls if c[1] + c[2] > 0], ref=ref, **ROUNDING)
    check_cases(impl, "intensity.ridge_point",
                [(10 ** rng.uniform(9, 16), 10 ** rng.uniform(9, 14)) for _ in range(200)] + HARDWARE,
                ref=ref, **ROUNDING)


@pytest.mark.points(1)
def test_compute_bound_edges(impl, ref):
    """is_compute_bound: strictly above the ridge point is compute-bound, at or below it is not"""
    # At, just above and below, and far from exactly representable ridges (powers-of-two bandwidths):
    # intensity > peak/bw and intensity·bw > peak give the same verdict, so any correct formulation agrees.
    check_cases(impl, "intensity.is_compute_bound", RIDGE_EDGES)
    rng = random.Random(403)
    calls = [(peak / bw * rng.choice([rng.uniform(0.01, 0.999), rng.uniform(1.001, 100)]), peak, bw)
             for peak, bw in (rng.choice(HARDWARE) for _ in range(300))]
    check_cases(impl, "intensity.is_compute_bound", calls, ref=ref)


@pytest.mark.points(1)
def test_roofline_seconds(impl, ref):
    """roofline_seconds is the larger of compute time and traffic time: real matmuls, and random cases vs the reference"""
    rng = random.Random(404)
    check_cases(impl, "intensity.roofline_seconds", matmul_cases(rng, random_shapes(rng, 30), hardware=True),
                **ROUNDING, note="the matmul in brackets: max(FLOPs / peak, bytes / bandwidth)")
    calls = [(rng.choice([0, rng.randint(0, 10**18), 10 ** rng.uniform(0, 20)]),
              rng.choice([0, rng.randint(0, 10**15), 10 ** rng.uniform(0, 16)]), *rng.choice(HARDWARE))
             for _ in range(400)]
    check_cases(impl, "intensity.roofline_seconds", calls, ref=ref, **ROUNDING)


@pytest.mark.points(1)
def test_bad_input(impl, ref):
    """zero sizes, non-positive hardware numbers, negative counts and no traffic raise ValueError; neighbours work"""
    for name, cases in EDGES.items():
        check_cases(impl, f"intensity.{name}", cases, **ROUNDING)
    # the same past 64 bits, which no tensor holds: the reference's answer for the valid neighbour
    check_cases(impl, "intensity.matmul_intensity", [case(2**64, 0, 4, 2, want=BAD), case(2**64, 2**64, -1, 2, want=BAD),
                                                     case(2**64, 2**64, 3, 2)], ref=ref, **ROUNDING)
