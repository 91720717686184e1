"""scaling — compute-optimal allocation, power-law fits, μP learning rates.

Honest solution, object style: a `LossSurface` dataclass (the parametric fit) with its optimum
as a method, NamedTuples for the answers, numpy for the least squares.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Callable, NamedTuple, Protocol

import numpy as np

logger = logging.getLogger(__name__)

CHINCHILLA_TOKENS_PER_PARAM = 20


def _positive_finite(v: object) -> bool:
    return isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) \
        and math.isfinite(v) and v > 0


def positive_finite(*names: str) -> Callable[[Callable], Callable]:
    """ValueError unless the first len(names) positional (or keyword) arguments are positive and finite."""

    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        def wrapper(*args, **kwargs):
            values = dict(zip(names, args)) | {k: kwargs[k] for k in names if k in kwargs}
            for name, value in values.items():
                if not _positive_finite(value):
                    raise ValueError(f"{fn.__name__}: {name} must be positive and finite, got {value!r}")
            return fn(*args, **kwargs)

        return wrapper

    return decorate


class Allocation(NamedTuple):
    n_params: float
    n_tokens: float


class Optimum(NamedTuple):
    n_params: float
    n_tokens: float
    loss: float


class PowerLaw(NamedTuple):
    coefficient: float
    exponent: float

    def __call__(self, x: float) -> float:
        return self.coefficient * x**self.exponent


class Surface(Protocol):
    def loss(self, n: float, d: float) -> float: ...


@dataclass(frozen=True, slots=True)
class LossSurface:
    """L(N, D) = E + A / N^alpha + B / D^beta."""

    E: float
    A: float
    B: float
    alpha: float
    beta: float

    def __post_init__(self) -> None:
        for name in ("A", "B", "alpha", "beta"):
            if not _positive_finite(getattr(self, name)):
                raise ValueError(f"{name} must be positive and finite, got {getattr(self, name)!r}")
        e = self.E
        if isinstance(e, bool) or not isinstance(e, (int, float, np.number)) or not math.isfinite(e) or e < 0:
            raise ValueError(f"E must be non-negative and finite, got {e!r}")

    def loss(self, n: float, d: float) -> float:
        return self.E + self.A / n**self.alpha + self.B / d**self.beta

    def optimum(self, compute: float) -> Optimum:
        """Minimise along 6·N·D = compute: alpha·A/N^alpha = beta·B/D^beta."""
        s = self.alpha + self.beta
        g = (self.alpha * self.A / (self.beta * self.B)) ** (1 / s)
        n = g * (compute / 6) ** (self.beta / s)
        d = compute / (6 * n)
        return Optimum(float(n), float(d), float(self.loss(n, d)))

    def __repr__(self) -> str:
        return f"L(N, D) = {self.E} + {self.A}/N^{self.alpha} + {self.B}/D^{self.beta}"


@positive_finite("compute", "tokens_per_param")
def chinchilla_allocation(
    compute: int | float, tokens_per_param: int | float = 20
) -> tuple[float, float]:
    n = math.sqrt(compute / (6 * tokens_per_param))
    return Allocation(float(n), float(tokens_per_param * n))


@positive_finite("compute")
def optimal_allocation(
    compute: int | float,
    E: int | float,
    A: int | float,
    B: int | float,
    alpha: int | float,
    beta: int | float,
) -> tuple[float, float, float]:
    surface = LossSurface(E, A, B, alpha, beta)
    best = surface.optimum(compute)
    logger.debug("%r at C=%g: %s", surface, compute, best)
    return best


def _as_points(values: object, name: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        array = values
    elif isinstance(values, (list, tuple)):
        if not all(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in values):
            raise ValueError(f"{name} must hold numbers")
        array = np.asarray(values, dtype=np.float64)
    else:
        raise ValueError(f"{name} must be a list, tuple or 1-D numpy array")
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must hold numbers")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)) or not np.all(array > 0):
        raise ValueError(f"{name} must be positive and finite")
    return array


def fit_power_law(
    x: Sequence[int | float] | np.ndarray, y: Sequence[int | float] | np.ndarray
) -> tuple[float, float]:
    xs, ys = _as_points(x, "x"), _as_points(y, "y")
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length ({xs.size} vs {ys.size})")
    if xs.size < 2:
        raise ValueError("need at least 2 points")
    if np.all(xs == xs[0]):
        raise ValueError("all x are equal: the slope is undefined")
    if xs.size == 2:
        warnings.warn("two points: the line passes through both, nothing is averaged", stacklevel=2)
    design = np.stack([np.ones_like(xs), np.log(xs)], axis=1)
    (intercept, slope), *_ = np.linalg.lstsq(design, np.log(ys), rcond=None)
    return PowerLaw(float(np.exp(intercept)), float(slope))


@positive_finite("base_lr")
def mup_learning_rate(base_lr: int | float, base_width: int, width: int) -> float:
    for name, w in (("base_width", base_width), ("width", width)):
        if isinstance(w, bool) or not isinstance(w, int) or w <= 0:
            raise ValueError(f"{name} must be a positive int, got {w!r}")
    return float(base_lr * base_width / width)
