"""intensity — arithmetic intensity, the ridge point and the roofline.

Honest solution, functional style: exact fractions for the matmul, one validator per kind of
argument.
"""

import math
from fractions import Fraction


def _is_real(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite_at_least_zero(**named: int | float) -> None:
    for name, v in named.items():
        if not _is_real(v) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be non-negative and finite, got {v!r}")


def _positive_finite(**named: int | float) -> None:
    for name, v in named.items():
        if not _is_real(v) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {v!r}")


def matmul_intensity(b: int, d: int, f: int, bytes_per_element: int | float) -> float:
    sizes = {"b": b, "d": d, "f": f}
    bad = [k for k, v in sizes.items() if not (isinstance(v, int) and not isinstance(v, bool) and v > 0)]
    if bad:
        raise ValueError(f"matmul sizes must be positive ints: {', '.join(bad)}")
    _positive_finite(bytes_per_element=bytes_per_element)
    flops = 2 * b * d * f
    elements = b * d + d * f + b * f  # read X, read W, write Y
    return float(Fraction(flops) / (Fraction(bytes_per_element) * elements))


def elementwise_intensity(
    flops_per_element: int | float,
    bytes_read_per_element: int | float,
    bytes_written_per_element: int | float,
) -> float:
    _finite_at_least_zero(flops_per_element=flops_per_element, bytes_read_per_element=bytes_read_per_element,
                          bytes_written_per_element=bytes_written_per_element)
    moved = bytes_read_per_element + bytes_written_per_element
    if moved == 0:
        raise ValueError("an elementwise op that moves no bytes has no intensity")
    return float(flops_per_element / moved)


def ridge_point(peak_flops: int | float, bandwidth: int | float) -> float:
    _positive_finite(peak_flops=peak_flops, bandwidth=bandwidth)
    return float(peak_flops / bandwidth)


def is_compute_bound(
    intensity: int | float, peak_flops: int | float, bandwidth: int | float
) -> bool:
    _finite_at_least_zero(intensity=intensity)
    return bool(intensity > ridge_point(peak_flops, bandwidth))


def roofline_seconds(
    flops: int | float, bytes_moved: int | float, peak_flops: int | float, bandwidth: int | float
) -> float:
    _finite_at_least_zero(flops=flops, bytes_moved=bytes_moved)
    _positive_finite(peak_flops=peak_flops, bandwidth=bandwidth)
    return float(max(flops / peak_flops, bytes_moved / bandwidth))
