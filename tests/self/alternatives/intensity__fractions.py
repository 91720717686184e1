"""intensity — alternative: exact rational arithmetic.

Every quantity is turned into a fractions.Fraction (floats convert exactly), the formula is
evaluated without any intermediate rounding, and only the final answer is rounded to a float.
The roofline time compares the two candidate times exactly, and validation is one generic
helper driven by a "kind" string.
"""

import math
from fractions import Fraction


def _as_fraction(name: str, value, kind: str) -> Fraction:
    """Validate `value` and return it as an exact Fraction.

    kind: "size" (positive int), "count" (finite, >= 0) or "rate" (finite, > 0).
    """
    if kind == "size":
        if type(value) is bool or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
        return Fraction(value)
    if type(value) is bool or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if kind == "count" and value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    if kind == "rate" and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return Fraction(value)


def matmul_intensity(b: int, d: int, f: int, bytes_per_element: int | float) -> float:
    """Arithmetic intensity (FLOPs per byte) of Y = X @ W with X: (b×d), W: (d×f), as a float:

        2·b·d·f / (bytes_per_element · (b·d + d·f + b·f))
    """
    B = _as_fraction("b", b, "size")
    D = _as_fraction("d", d, "size")
    F = _as_fraction("f", f, "size")
    size = _as_fraction("bytes_per_element", bytes_per_element, "rate")
    elements_moved = B * D + D * F + B * F  # X read, W read, Y written
    return float(2 * B * D * F / (size * elements_moved))


def elementwise_intensity(
    flops_per_element: int | float,
    bytes_read_per_element: int | float,
    bytes_written_per_element: int | float,
) -> float:
    """flops_per_element / (bytes_read_per_element + bytes_written_per_element), as a float."""
    flops = _as_fraction("flops_per_element", flops_per_element, "count")
    read = _as_fraction("bytes_read_per_element", bytes_read_per_element, "count")
    written = _as_fraction("bytes_written_per_element", bytes_written_per_element, "count")
    if read + written == 0:
        raise ValueError("the op moves no bytes: its intensity is undefined")
    return float(flops / (read + written))


def ridge_point(peak_flops: int | float, bandwidth: int | float) -> float:
    """peak_flops / bandwidth in FLOPs per byte, as a float."""
    peak = _as_fraction("peak_flops", peak_flops, "rate")
    bw = _as_fraction("bandwidth", bandwidth, "rate")
    return float(peak / bw)


def is_compute_bound(
    intensity: int | float, peak_flops: int | float, bandwidth: int | float
) -> bool:
    """intensity > ridge_point(peak_flops, bandwidth), strictly."""
    value = _as_fraction("intensity", intensity, "count")
    ridge = Fraction(ridge_point(peak_flops, bandwidth))
    return value > ridge


def roofline_seconds(
    flops: int | float, bytes_moved: int | float, peak_flops: int | float, bandwidth: int | float
) -> float:
    """max(flops / peak_flops, bytes_moved / bandwidth) in seconds, as a float."""
    work = _as_fraction("flops", flops, "count")
    traffic = _as_fraction("bytes_moved", bytes_moved, "count")
    peak = _as_fraction("peak_flops", peak_flops, "rate")
    bw = _as_fraction("bandwidth", bandwidth, "rate")
    compute_time = work / peak
    memory_time = traffic / bw
    return float(compute_time if compute_time >= memory_time else memory_time)
