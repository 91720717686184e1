"""intensity — arithmetic intensity, the ridge point and the roofline.

Honest solution, object style: a `Device` dataclass with the ridge point as a property, a
`Bound` enum for the verdict, and a validating decorator.
"""

from __future__ import annotations

import inspect
import logging
import math
from dataclasses import dataclass
from enum import Enum
from functools import wraps
from typing import Callable

logger = logging.getLogger(__name__)


class Check(Enum):
    POSITIVE_INT = "a positive int"
    NON_NEGATIVE = "non-negative and finite"
    POSITIVE = "positive and finite"

    def __call__(self, name: str, value: object) -> None:
        ok = not isinstance(value, bool) and isinstance(value, (int, float))
        if self is Check.POSITIVE_INT:
            ok = ok and isinstance(value, int) and value > 0
        else:
            ok = ok and math.isfinite(value) and (value > 0 if self is Check.POSITIVE else value >= 0)
        if not ok:
            raise ValueError(f"{name} must be {self.value}, got {value!r}")


def checks(**wanted: Check) -> Callable[[Callable], Callable]:
    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for name, check in wanted.items():
                check(name, bound.arguments[name])
            return fn(*args, **kwargs)

        return wrapper

    return decorate


class Bound(Enum):
    COMPUTE = "compute-bound"
    MEMORY = "memory-bound"


@dataclass(frozen=True, slots=True)
class Device:
    peak_flops: float   # FLOP/s
    bandwidth: float    # bytes/s

    @property
    def ridge(self) -> float:
        return self.peak_flops / self.bandwidth

    def bound(self, intensity: float) -> Bound:
        return Bound.COMPUTE if intensity > self.ridge else Bound.MEMORY

    def seconds(self, flops: float, bytes_moved: float) -> float:
        return max(flops / self.peak_flops, bytes_moved / self.bandwidth)

    def __repr__(self) -> str:
        return f"Device({self.peak_flops:.3g} FLOP/s, {self.bandwidth:.3g} B/s, ridge {self.ridge:.1f} FLOP/B)"


@checks(b=Check.POSITIVE_INT, d=Check.POSITIVE_INT, f=Check.POSITIVE_INT, bytes_per_element=Check.POSITIVE)
def matmul_intensity(b: int, d: int, f: int, bytes_per_element: int | float) -> float:
    flops = 2 * b * d * f
    elements_moved = b * d + d * f + b * f
    return flops / elements_moved / bytes_per_element


@checks(flops_per_element=Check.NON_NEGATIVE, bytes_read_per_element=Check.NON_NEGATIVE,
        bytes_written_per_element=Check.NON_NEGATIVE)
def elementwise_intensity(
    flops_per_element: int | float,
    bytes_read_per_element: int | float,
    bytes_written_per_element: int | float,
) -> float:
    moved = bytes_read_per_element + bytes_written_per_element
    if moved == 0:
        raise ValueError("the op moves no bytes: its intensity is undefined")
    return float(flops_per_element / moved)


@checks(peak_flops=Check.POSITIVE, bandwidth=Check.POSITIVE)
def ridge_point(peak_flops: int | float, bandwidth: int | float) -> float:
    return float(Device(peak_flops, bandwidth).ridge)


@checks(intensity=Check.NON_NEGATIVE, peak_flops=Check.POSITIVE, bandwidth=Check.POSITIVE)
def is_compute_bound(
    intensity: int | float, peak_flops: int | float, bandwidth: int | float
) -> bool:
    device = Device(peak_flops, bandwidth)
    verdict = device.bound(intensity)
    logger.debug("%s at %s FLOP/B on %r", verdict.value, intensity, device)
    return verdict is Bound.COMPUTE


@checks(flops=Check.NON_NEGATIVE, bytes_moved=Check.NON_NEGATIVE, peak_flops=Check.POSITIVE,
        bandwidth=Check.POSITIVE)
def roofline_seconds(
    flops: int | float, bytes_moved: int | float, peak_flops: int | float, bandwidth: int | float
) -> float:
    return float(Device(peak_flops, bandwidth).seconds(flops, bytes_moved))
