"""intensity — alternative: reciprocal forms, explicit branches and prints.

The matmul intensity is rewritten as 2 / (bytes · (1/b + 1/d + 1/f)) (divide numerator and
denominator by b·d·f), compute-boundness is an explicit if/else against the ridge point, the
roofline picks the bottleneck with an if/else instead of max(), and each step can print a
short explanation (VERBOSE). Validation raises from small assert-style helpers with try/except.
"""

import math

VERBOSE = False


def _say(*args) -> None:
    if VERBOSE:
        print("[intensity]", *args)


def _number(name, value):
    if isinstance(value, bool):
        raise ValueError(f"{name}: a bool is not a number")
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be an int or float, got {type(value).__name__}")
    if math.isnan(as_float) or math.isinf(as_float):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def _nonneg(name, value):
    value = _number(name, value)
    if value < 0:
        raise ValueError(f"{name} cannot be negative: {value!r}")
    return value


def _pos(name, value):
    value = _number(name, value)
    if not value > 0:
        raise ValueError(f"{name} must be strictly positive: {value!r}")
    return value


def matmul_intensity(b: int, d: int, f: int, bytes_per_element: int | float) -> float:
    """2·b·d·f / (bytes_per_element · (b·d + d·f + b·f)), computed as
    2 / (bytes_per_element · (1/b + 1/d + 1/f))."""
    for name, v in (("b", b), ("d", d), ("f", f)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"matrix size {name} must be a positive int, got {v!r}")
    bpe = _pos("bytes_per_element", bytes_per_element)
    inverse_sum = 1.0 / b + 1.0 / d + 1.0 / f
    result = 2.0 / (bpe * inverse_sum)
    _say(f"({b}x{d}) @ ({d}x{f}) at {bpe} B/elem: {result:.3f} FLOP/B")
    return float(result)


def elementwise_intensity(
    flops_per_element: int | float,
    bytes_read_per_element: int | float,
    bytes_written_per_element: int | float,
) -> float:
    """flops per element / (bytes read + bytes written per element)."""
    flops = _nonneg("flops_per_element", flops_per_element)
    total_bytes = _nonneg("bytes_read_per_element", bytes_read_per_element)
    total_bytes += _nonneg("bytes_written_per_element", bytes_written_per_element)
    if total_bytes == 0:
        raise ValueError("no bytes read or written")
    return flops / total_bytes * 1.0


def ridge_point(peak_flops: int | float, bandwidth: int | float) -> float:
    """Peak FLOP/s over bandwidth in bytes/s."""
    return float(_pos("peak_flops", peak_flops)) / _pos("bandwidth", bandwidth)


def is_compute_bound(
    intensity: int | float, peak_flops: int | float, bandwidth: int | float
) -> bool:
    """True only if strictly above the ridge point."""
    value = _nonneg("intensity", intensity)
    ridge = ridge_point(peak_flops, bandwidth)
    if value > ridge:
        _say(f"{value} > ridge {ridge}: compute-bound")
        return True
    _say(f"{value} <= ridge {ridge}: memory-bound")
    return False


def roofline_seconds(
    flops: int | float, bytes_moved: int | float, peak_flops: int | float, bandwidth: int | float
) -> float:
    """The slower of compute time and memory time."""
    flops = _nonneg("flops", flops)
    bytes_moved = _nonneg("bytes_moved", bytes_moved)
    peak = _pos("peak_flops", peak_flops)
    bw = _pos("bandwidth", bandwidth)
    t_math = flops / peak
    t_mem = bytes_moved / bw
    if t_math > t_mem:
        _say("compute-bound", t_math)
        return float(t_math)
    _say("memory-bound", t_mem)
    return float(t_mem)
