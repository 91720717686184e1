"""intensity (public). The notes' numbers (notes 001, 004), and snapshots."""

import pytest

from tests.checks import ROUNDING, expect_equal
from tests.snapshot import check_snapshot

H100 = (989e12, 3.35e12)  # bf16 dense peak FLOP/s, HBM bytes/s (notes 001, 004)
# Sizes are Python ints of any size (the handout): a matmul past the 64 bits of any tensor's
# sizes, whose FLOPs no counter has a tensor to count.
BIG = 2**64

SNAPSHOT_INPUTS = {
    "intensity.matmul_intensity": [(64, 64, 64, 4), (2048, 2048, 2048, 4), (1, 4096, 4096, 2),
                                   (512, 16384, 16384, 2), (3, 5, 7, 1), (8, 8, 8, 0.5),
                                   (0, 4, 4, 2), (4, 4, 4, 0), (BIG, BIG, BIG, 4), (1, BIG, 3 * BIG, 2),
                                   (512, BIG, BIG, 2)],
    "intensity.elementwise_intensity": [(1, 4, 4), (1, 2, 2), (2, 8, 4), (0, 4, 4), (3.5, 2.0, 0.0),
                                        (1, 0, 0), (-1, 4, 4)],
    "intensity.ridge_point": [H100, (312e12, 2.039e12), (1, 4), (19.5e12, 1.555e12), (0.0, 1e12)],
    "intensity.is_compute_bound": [(341.33, *H100), (170.67, *H100), (0.125, *H100), (250.0, 1000.0, 4.0),
                                   (250.5, 1000.0, 4.0), (249.5, 1000.0, 4.0), (-1.0, *H100)],
    "intensity.roofline_seconds": [(2 * 4096**3, 2 * 3 * 4096**2, *H100), (2 * 4096**2, 3 * 4 * 4096**2, *H100),
                                   (0, 0, *H100), (1e12, 1e12, 1e12, 1e12), (-1, 4, *H100)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "intensity.matmul_intensity": ROUNDING,
    "intensity.elementwise_intensity": ROUNDING,
    "intensity.ridge_point": ROUNDING,
    "intensity.roofline_seconds": ROUNDING,
}


@pytest.mark.points(1)
def test_notes_square_matmuls(impl):
    """fp32 n×n matmuls have intensity 10.7, 42.7, 170.7, 341.3 FLOP/B for n = 64 … 2048 (notes 004)"""
    got = [f"{impl.intensity.matmul_intensity(n, n, n, 4):.1f}" for n in (64, 256, 1024, 2048)]
    expect_equal(got, ["10.7", "42.7", "170.7", "341.3"],
                 "matmul_intensity(n, n, n, 4) for n = 64, 256, 1024, 2048, printed with .1f")
    # the same formula, 2n³ / (4 · 3n²) = n / 6, for n = 2**64: more elements than any tensor holds
    expect_equal(impl.intensity.matmul_intensity(BIG, BIG, BIG, 4), BIG / 6, "matmul_intensity(2**64, 2**64, 2**64, 4)",
                 **ROUNDING)


@pytest.mark.points(1)
def test_notes_elementwise_and_ridge(impl):
    """x * 2.0 in fp32 has intensity 0.125; the H100 ridge point is 989e12 / 3.35e12 ≈ 295 (notes 001, 004)"""
    expect_equal(impl.intensity.elementwise_intensity(1, 4, 4), 0.125, "elementwise_intensity(1, 4, 4)")
    expect_equal(round(impl.intensity.ridge_point(*H100)), 295, "round(ridge_point(989e12, 3.35e12))")


@pytest.mark.points(1)
def test_notes_roofline_verdicts(impl):
    """on an H100 the fp32 2048² matmul is compute-bound; 1024², x * 2.0 and bf16 batch 256 are not (notes 001, 004)"""
    for label, value, want in [("matmul 2048² fp32", impl.intensity.matmul_intensity(2048, 2048, 2048, 4), True),
                               ("matmul 1024² fp32", impl.intensity.matmul_intensity(1024, 1024, 1024, 4), False),
                               ("x * 2.0 fp32", impl.intensity.elementwise_intensity(1, 4, 4), False),
                               # notes 001: with D, F >> B the bf16 intensity is ≈ B; B > 295 crosses the ridge
                               ("bf16 B=256, D=F=16384", impl.intensity.matmul_intensity(256, 16384, 16384, 2), False),
                               ("bf16 B=512, D=F=16384", impl.intensity.matmul_intensity(512, 16384, 16384, 2), True),
                               # the same with D = F = 2**64, more than any tensor holds: still ≈ B
                               ("bf16 B=256, D=F=2**64", impl.intensity.matmul_intensity(256, BIG, BIG, 2), False),
                               ("bf16 B=512, D=F=2**64", impl.intensity.matmul_intensity(512, BIG, BIG, 2), True)]:
        expect_equal(impl.intensity.is_compute_bound(value, *H100), want,
                     f"is_compute_bound({label}: {value!r}, 989e12, 3.35e12)")


@pytest.mark.points(1)
def test_intensities(impl):
    """matmul_intensity and elementwise_intensity match the snapshots (bad sizes raise ValueError)"""
    check_snapshot(impl, "intensity.matmul_intensity")
    check_snapshot(impl, "intensity.elementwise_intensity")


@pytest.mark.points(1)
def test_roofline(impl):
    """ridge_point, is_compute_bound and roofline_seconds match the snapshots (exactly at the ridge is not compute-bound)"""
    check_snapshot(impl, "intensity.ridge_point")
    check_snapshot(impl, "intensity.is_compute_bound")
    check_snapshot(impl, "intensity.roofline_seconds")
