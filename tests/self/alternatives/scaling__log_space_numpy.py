"""scaling — alternative: everything in log space, with numpy's least-squares solver.

Differences from the reference: fit_power_law solves the 2-column design matrix [1, log x]
with np.linalg.lstsq; optimal_allocation works with logarithms (log N from the log of the
optimality condition) and exponentiates at the end; mup_learning_rate uses exact fractions;
validation is collected into one table-driven checker with prints of what was computed.
"""

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

VERBOSE = False


def _say(*args):
    if VERBOSE:
        print("[scaling]", *args)


def _check(values: dict, allow_zero: tuple = ()) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name}={v!r} is not a number")
        if math.isnan(v) or math.isinf(v):
            raise ValueError(f"{name}={v!r} is not finite")
        if name in allow_zero:
            if v < 0:
                raise ValueError(f"{name}={v!r} is negative")
        elif v <= 0:
            raise ValueError(f"{name}={v!r} is not positive")


def chinchilla_allocation(
    compute: int | float, tokens_per_param: int | float = 20
) -> tuple[float, float]:
    """Compute-optimal (n_params, n_tokens) at a fixed tokens-per-parameter ratio r, as floats."""
    _check({"compute": compute, "tokens_per_param": tokens_per_param})
    n = (compute / 6 / tokens_per_param) ** 0.5
    d = n * tokens_per_param
    _say(f"C={compute:.3g}: N={n:.4g}, D={d:.4g}")
    return float(n), float(d)


def optimal_allocation(
    compute: int | float,
    E: int | float,
    A: int | float,
    B: int | float,
    alpha: int | float,
    beta: int | float,
) -> tuple[float, float, float]:
    """Closed-form minimiser of L(N, D) = E + A/N^α + B/D^β subject to C = 6·N·D."""
    _check({"compute": compute, "E": E, "A": A, "B": B, "alpha": alpha, "beta": beta},
           allow_zero=("E",))
    # log of alpha*A*N^-alpha = beta*B*D^-beta with log D = log(C/6) - log N:
    # log(alpha A) - alpha log N = log(beta B) - beta (log(C/6) - log N)
    # => (alpha + beta) log N = log(alpha A) - log(beta B) + beta log(C/6)
    log_budget = math.log(compute) - math.log(6)
    log_n = (math.log(alpha * A) - math.log(beta * B) + beta * log_budget) / (alpha + beta)
    log_d = log_budget - log_n
    n, d = math.exp(log_n), math.exp(log_d)
    loss = E + A * math.exp(-alpha * log_n) + B * math.exp(-beta * log_d)
    _say(f"C={compute:.3g}: N={n:.4g}, D={d:.4g}, D/N={d / n:.1f}, L={loss:.4f}")
    return float(n), float(d), float(loss)


def fit_power_law(
    x: Sequence[int | float] | np.ndarray, y: Sequence[int | float] | np.ndarray
) -> tuple[float, float]:
    """Fit y ≈ c · x^k by ordinary least squares on log y = log c + k · log x."""
    try:
        xs = np.array(x, dtype=np.float64)
        ys = np.array(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x and y must be 1-D sequences of numbers: {exc}") from None
    if xs.ndim != 1 or ys.ndim != 1:
        raise ValueError("x and y must be 1-D")
    if len(xs) != len(ys):
        raise ValueError("x and y must have the same length")
    if len(xs) < 2:
        raise ValueError("need at least 2 points")
    both = np.concatenate([xs, ys])
    if not np.isfinite(both).all() or (both <= 0).any():
        raise ValueError("x and y must be positive and finite")
    if np.all(xs == xs[0]):
        raise ValueError("all x are equal: the exponent is undefined")
    design = np.stack([np.ones_like(xs), np.log(xs)], axis=1)  # (n, 2)
    (intercept, slope), *_ = np.linalg.lstsq(design, np.log(ys), rcond=None)
    _say(f"fit: c={math.exp(intercept):.4g}, k={slope:.4f}")
    return float(math.exp(intercept)), float(slope)


def mup_learning_rate(base_lr: int | float, base_width: int, width: int) -> float:
    """μP learning rate of a hidden-layer weight under Adam: base_lr · base_width / width."""
    _check({"base_lr": base_lr})
    for name, w in (("base_width", base_width), ("width", width)):
        if not (isinstance(w, int) and not isinstance(w, bool)) or w <= 0:
            raise ValueError(f"{name}={w!r} must be a positive int")
    return float(Fraction(base_lr) * Fraction(base_width, width))
