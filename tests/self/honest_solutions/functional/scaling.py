"""scaling — compute-optimal allocation, power-law fits, μP learning rates.

Honest solution, functional style: closed forms with math, the fit as least squares written out
on the logs with sums.
"""

import math
from collections.abc import Sequence

import numpy as np


def _real(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _require_positive(**named: int | float) -> None:
    for name, v in named.items():
        if not _real(v) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {v!r}")


def chinchilla_allocation(
    compute: int | float, tokens_per_param: int | float = 20
) -> tuple[float, float]:
    _require_positive(compute=compute, tokens_per_param=tokens_per_param)
    n = math.sqrt(compute / (6 * tokens_per_param))
    return float(n), float(tokens_per_param * n)


def optimal_allocation(
    compute: int | float,
    E: int | float,
    A: int | float,
    B: int | float,
    alpha: int | float,
    beta: int | float,
) -> tuple[float, float, float]:
    _require_positive(compute=compute, A=A, B=B, alpha=alpha, beta=beta)
    if not _real(E) or not math.isfinite(E) or E < 0:
        raise ValueError(f"E must be non-negative and finite, got {E!r}")
    g = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    n = g * (compute / 6) ** (beta / (alpha + beta))
    d = compute / (6 * n)
    loss = E + A / n**alpha + B / d**beta
    return float(n), float(d), float(loss)


def _points(values: Sequence[int | float] | np.ndarray, name: str) -> list[float]:
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"{name} must be a list, tuple or 1-D numpy array")
    if not all(_real(v) and math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"{name} must hold positive finite numbers")
    return [float(v) for v in values]


def fit_power_law(
    x: Sequence[int | float] | np.ndarray, y: Sequence[int | float] | np.ndarray
) -> tuple[float, float]:
    xs, ys = _points(x, "x"), _points(y, "y")
    if len(xs) != len(ys):
        raise ValueError(f"x and y differ in length: {len(xs)} vs {len(ys)}")
    if len(xs) < 2:
        raise ValueError("a fit needs at least 2 points")
    if len(set(xs)) == 1:
        raise ValueError("all x are equal: the slope is undefined")
    lx, ly = [math.log(v) for v in xs], [math.log(v) for v in ys]
    mx, my = math.fsum(lx) / len(lx), math.fsum(ly) / len(ly)
    sxx = math.fsum((a - mx) ** 2 for a in lx)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(lx, ly))
    k = sxy / sxx
    return float(math.exp(my - k * mx)), float(k)


def mup_learning_rate(base_lr: int | float, base_width: int, width: int) -> float:
    _require_positive(base_lr=base_lr)
    for name, w in (("base_width", base_width), ("width", width)):
        if not isinstance(w, int) or isinstance(w, bool) or w <= 0:
            raise ValueError(f"{name} must be a positive int, got {w!r}")
    return float(base_lr * base_width / width)
