"""intensity — arithmetic intensity, the ridge point and the roofline.

Handout: assignment/problems/intensity.md. Notes (assignment/notes/): 001 (matmul intensity
2BDF / (2BD + 2DF + 2BF) in bf16, H100 ridge point 989.5e12 / 3.35e12 ≈ 295), 004 (fp32 square
matmuls 10.7 … 341.3 FLOP/B, `x * 2.0` at 0.125 FLOP/B).

Units: intensity in FLOPs per byte of memory traffic, peak in FLOP/s, bandwidth in bytes/s,
times in seconds. All results are Python floats (bool for is_compute_bound).
"""

import math


def _check_real(name: str, value: int | float, *, positive: bool) -> None:
    # Hardware numbers must be > 0; counts of FLOPs / bytes must be >= 0; all finite.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    if not positive and value < 0:
        raise ValueError(f"{name} must be non-negative, got {value!r}")


def _check_size(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def matmul_intensity(b: int, d: int, f: int, bytes_per_element: int | float) -> float:
    """Arithmetic intensity (FLOPs per byte) of Y = X @ W with X: (b×d), W: (d×f), as a float:

        2·b·d·f / (bytes_per_element · (b·d + d·f + b·f))

    Traffic model: read X and W once, write Y once, all in the same dtype of
    bytes_per_element bytes (fp32 4, bf16 2, fp8 1, ...). When d, f >> b it is ≈ b
    (bf16) — batching raises intensity.

    Raises ValueError if b, d or f is not a positive int or bytes_per_element <= 0.

    Example (notes 004), fp32 square n×n (b = d = f = n, bytes 4, intensity n/6):
    n = 64, 256, 1024, 2048 -> 10.67, 42.67, 170.67, 341.33.
    """
    _check_size("b", b)
    _check_size("d", d)
    _check_size("f", f)
    _check_real("bytes_per_element", bytes_per_element, positive=True)
    flops = 2 * b * d * f
    bytes_moved = bytes_per_element * (b * d + d * f + b * f)  # read X, read W, write Y
    return float(flops / bytes_moved)


def elementwise_intensity(
    flops_per_element: int | float,
    bytes_read_per_element: int | float,
    bytes_written_per_element: int | float,
) -> float:
    """Arithmetic intensity of an elementwise op, as a float:

        flops_per_element / (bytes_read_per_element + bytes_written_per_element)

    Raises ValueError if any argument is negative or non-finite, or if no bytes are moved
    (read + written == 0).

    Example (notes 004): `x * 2.0` in fp32 reads 4 bytes, writes 4 bytes and does 1 FLOP per
    element: elementwise_intensity(1, 4, 4) == 0.125.
    """
    _check_real("flops_per_element", flops_per_element, positive=False)
    _check_real("bytes_read_per_element", bytes_read_per_element, positive=False)
    _check_real("bytes_written_per_element", bytes_written_per_element, positive=False)
    bytes_moved = bytes_read_per_element + bytes_written_per_element
    if bytes_moved <= 0:
        raise ValueError("an elementwise op must read or write at least some bytes")
    return float(flops_per_element / bytes_moved)


def ridge_point(peak_flops: int | float, bandwidth: int | float) -> float:
    """The roofline's ridge point in FLOPs per byte, as a float: peak_flops / bandwidth.

    peak_flops in FLOP/s, bandwidth in bytes/s; both must be positive and finite, else
    ValueError.

    Example (notes 001/004): H100, ridge_point(989.5e12, 3.35e12) ≈ 295.4 (the notes round
    the H100's dense bf16 peak, 1979e12 / 2, down to 989 and get ≈ 295 too).
    """
    _check_real("peak_flops", peak_flops, positive=True)
    _check_real("bandwidth", bandwidth, positive=True)
    return float(peak_flops / bandwidth)


def is_compute_bound(
    intensity: int | float, peak_flops: int | float, bandwidth: int | float
) -> bool:
    """Whether an op of this intensity is compute-bound in the simple roofline, as a bool:

        intensity > ridge_point(peak_flops, bandwidth)

    Strictly greater: an op exactly at the ridge point counts as NOT compute-bound
    (returns False). Raises ValueError for a negative or non-finite intensity, or a
    peak_flops or bandwidth that is not positive and finite.

    Example: on an H100 (989.5e12, 3.35e12, ridge ≈ 295) an fp32 2048² matmul (341.3) is
    compute-bound, a 1024² one (170.7) and `x * 2.0` (0.125) are memory-bound.
    """
    _check_real("intensity", intensity, positive=False)
    return bool(intensity > ridge_point(peak_flops, bandwidth))


def roofline_seconds(
    flops: int | float, bytes_moved: int | float, peak_flops: int | float, bandwidth: int | float
) -> float:
    """Roofline lower bound on an op's run time in seconds, as a float:

        max(flops / peak_flops, bytes_moved / bandwidth)

    (compute and memory traffic overlap perfectly; whichever takes longer sets the time).
    Raises ValueError for negative or non-finite flops or bytes_moved, or a peak_flops or
    bandwidth that is not positive and finite.

    Example: a bf16 4096³ matmul on an H100 (989.5e12 FLOP/s, 3.35e12 B/s):
    roofline_seconds(2 * 4096**3, 2 * 3 * 4096**2, 989.5e12, 3.35e12) ≈ 1.39e-4 s
    (compute-bound: 1.39e-4 s of math vs 3.0e-5 s of traffic).
    """
    _check_real("flops", flops, positive=False)
    _check_real("bytes_moved", bytes_moved, positive=False)
    _check_real("peak_flops", peak_flops, positive=True)
    _check_real("bandwidth", bandwidth, positive=True)
    return float(max(flops / peak_flops, bytes_moved / bandwidth))
