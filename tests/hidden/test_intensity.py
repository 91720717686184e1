"""Problem 4 · intensity (hidden): matmul intensities against PyTorch's FLOP counter and the bytes of
real tensors, roofline edge cases, and seeded random cases against the reference."""

import random

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from tests.seam.checks import call_text, expect_agree, expect_equal, expect_error

DTYPES = (torch.float64, torch.float32, torch.bfloat16, torch.float16, torch.float8_e4m3fn)
HARDWARE = [(989e12, 3.35e12), (312e12, 2.039e12), (19.5e12, 1.555e12), (1979e12, 3.35e12), (2.25e15, 8e12)]


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


@pytest.mark.points(2)
def test_matmul_intensity_matches_torch(impl):
    """matmul_intensity equals FlopCounterMode FLOPs / bytes of real X, W, Y tensors (rtol 1e-12), 5 dtypes"""
    rng = random.Random(401)
    cases = []
    for b, d, f in random_shapes(rng, 60) + [(64, 64, 64), (1, 4096, 4096), (4096, 1, 1)]:
        dtype = rng.choice(DTYPES)
        cases.append((b, d, f, dtype))
    got = impl.map("intensity.matmul_intensity", [(b, d, f, torch.empty((), dtype=dt).element_size())
                                                  for b, d, f, dt in cases])
    for (b, d, f, dt), g in zip(cases, got):
        flops, nbytes = torch_matmul_traffic(b, d, f, dt)
        args = (b, d, f, torch.empty((), dtype=dt).element_size())
        expect_equal(g, flops / nbytes, call_text("intensity.matmul_intensity", args), rtol=1e-12,
                     note=f"oracle: FlopCounterMode / (X.nbytes + W.nbytes + Y.nbytes) for {dt}")


@pytest.mark.points(2)
def test_intensities_random(impl, ref):
    """matmul_intensity, elementwise_intensity and ridge_point equal the reference on random inputs (rtol 1e-12)"""
    rng = random.Random(402)
    expect_agree(impl, ref, "intensity.matmul_intensity",
          [(*s, rng.choice([1, 2, 4, 8, 0.5, rng.uniform(0.1, 16)])) for s in random_shapes(rng, 400)], rtol=1e-12)
    calls = [(rng.choice([0, 1, 2, rng.randint(0, 100), rng.uniform(0, 100)]),
              rng.choice([0, 1, 2, 4, 8, rng.uniform(0, 64)]), rng.choice([0, 1, 2, 4, 8, rng.uniform(0, 64)]))
             for _ in range(400)]
    expect_agree(impl, ref, "intensity.elementwise_intensity", [c for c in calls if c[1] + c[2] > 0], rtol=1e-12)
    expect_agree(impl, ref, "intensity.ridge_point",
          [(10 ** rng.uniform(9, 16), 10 ** rng.uniform(9, 14)) for _ in range(200)] + HARDWARE, rtol=1e-12)


@pytest.mark.points(1)
def test_compute_bound_edges(impl, ref):
    """is_compute_bound: strictly above the ridge point is compute-bound, at or below it is not"""
    # Exactly representable ridges (powers-of-two bandwidths): intensity > peak/bw and
    # intensity·bw > peak give the same verdict, so any correct formulation agrees.
    calls = []
    for peak, bw in [(1000.0, 4.0), (989e12, 2.0**41), (2**50, 2.0**40), (312e12, 2.0**30)]:
        ridge = peak / bw
        calls += [(ridge, peak, bw), (ridge * (1 + 1e-9), peak, bw), (ridge * (1 - 1e-9), peak, bw),
                  (0.0, peak, bw), (ridge * 2, peak, bw), (ridge / 2, peak, bw)]
    want = [i > p / b for i, p, b in calls]
    got = impl.map("intensity.is_compute_bound", calls)
    for args, g, w in zip(calls, got, want):
        expect_equal(g, w, call_text("intensity.is_compute_bound", args))
    rng = random.Random(403)
    calls = []
    for _ in range(300):
        peak, bw = rng.choice(HARDWARE)
        calls.append((peak / bw * rng.choice([rng.uniform(0.01, 0.999), rng.uniform(1.001, 100)]), peak, bw))
    expect_agree(impl, ref, "intensity.is_compute_bound", calls)


@pytest.mark.points(1)
def test_roofline_seconds(impl, ref):
    """roofline_seconds is the larger of compute time and traffic time: real matmuls, and random cases vs the reference"""
    rng = random.Random(404)
    for b, d, f in random_shapes(rng, 30):
        dt = rng.choice(DTYPES)
        peak, bw = rng.choice(HARDWARE)
        flops, nbytes = torch_matmul_traffic(b, d, f, dt)
        expect_equal(impl.intensity.roofline_seconds(flops, nbytes, peak, bw), max(flops / peak, nbytes / bw),
                     call_text("intensity.roofline_seconds", (flops, nbytes, peak, bw)), rtol=1e-12,
                     note=f"a ({b}×{d}) @ ({d}×{f}) {dt} matmul: max(FLOPs / peak, bytes / bandwidth)")
    calls = [(rng.choice([0, rng.randint(0, 10**18), 10 ** rng.uniform(0, 20)]),
              rng.choice([0, rng.randint(0, 10**15), 10 ** rng.uniform(0, 16)]), *rng.choice(HARDWARE))
             for _ in range(400)]
    expect_agree(impl, ref, "intensity.roofline_seconds", calls, rtol=1e-12)


@pytest.mark.points(1)
def test_bad_input(impl):
    """zero sizes, non-positive hardware numbers, negative counts and no traffic raise ValueError; neighbours work"""
    bad = [("matmul_intensity", (0, 4, 4, 2)), ("matmul_intensity", (4, -1, 4, 2)), ("matmul_intensity", (4, 4, 4, 0)),
           ("matmul_intensity", (4, 4, 4, -2)), ("elementwise_intensity", (1, 0, 0)),
           ("elementwise_intensity", (-1, 4, 4)), ("elementwise_intensity", (1, -4, 8)),
           ("elementwise_intensity", (float("nan"), 4, 4)),
           ("ridge_point", (0.0, 3.35e12)), ("ridge_point", (989e12, 0.0)), ("ridge_point", (989e12, -1.0)),
           ("is_compute_bound", (-1.0, 989e12, 3.35e12)), ("is_compute_bound", (10.0, 989e12, 0.0)),
           ("roofline_seconds", (-1, 10, 989e12, 3.35e12)), ("roofline_seconds", (10, -1, 989e12, 3.35e12)),
           ("roofline_seconds", (10, 10, 0.0, 3.35e12)), ("roofline_seconds", (10, 10, 989e12, float("inf")))]
    for name, args in bad:
        got = impl.map(f"intensity.{name}", [args])[0]
        expect_error(got, ValueError, call_text(f"intensity.{name}", args))
    good = [("matmul_intensity", (1, 1, 1, 4), 2 / 12), ("elementwise_intensity", (0, 4, 4), 0.0),
            ("elementwise_intensity", (1, 0, 4), 0.25), ("elementwise_intensity", (1, 4, 0), 0.25),
            ("ridge_point", (1000.0, 4.0), 250.0), ("is_compute_bound", (0.0, 989e12, 3.35e12), False),
            ("roofline_seconds", (0, 0, 989e12, 3.35e12), 0.0), ("roofline_seconds", (10, 0, 10.0, 1.0), 1.0)]
    for name, args, want in good:
        expect_equal(impl.call(f"intensity.{name}", *args), want, call_text(f"intensity.{name}", args), rtol=1e-12)
