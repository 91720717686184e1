"""scaling — alternative: pure-Python loops and math.fsum instead of numpy vectors.

Differences from the reference: fit_power_law computes the least-squares line with explicit
loops over the points (math.fsum for the sums, no numpy arithmetic); chinchilla_allocation
solves for the token count D first (D = sqrt(r·C/6), N = D/r); optimal_allocation solves the
optimality condition for D first and gets N from the budget; validation goes through a small
helper that returns the float.
"""

import math
from collections.abc import Sequence

import numpy as np


def _positive(name, value):
    ok = (not isinstance(value, bool)) and isinstance(value, (int, float))
    if ok:
        ok = math.isfinite(value) and value > 0
    if not ok:
        raise ValueError(f"{name}: expected a positive finite number, got {value!r}")
    return float(value)


def chinchilla_allocation(
    compute: int | float, tokens_per_param: int | float = 20
) -> tuple[float, float]:
    """Compute-optimal (n_params, n_tokens) at a fixed tokens-per-parameter ratio r, as floats.

    From C = 6·N·D and D = r·N: N = sqrt(C / (6·r)), D = r·N (for r = 20, N = sqrt(C / 120)).
    """
    c = _positive("compute", compute)
    r = _positive("tokens_per_param", tokens_per_param)
    # C = 6 N D = 6 D^2 / r  ->  D = sqrt(r C / 6)
    n_tokens = math.sqrt(r * c / 6.0)
    n_params = n_tokens / r
    return n_params, n_tokens


def optimal_allocation(
    compute: int | float,
    E: int | float,
    A: int | float,
    B: int | float,
    alpha: int | float,
    beta: int | float,
) -> tuple[float, float, float]:
    """Closed-form minimiser of L(N, D) = E + A/N^α + B/D^β subject to C = 6·N·D."""
    c = _positive("compute", compute)
    a_coef = _positive("A", A)
    b_coef = _positive("B", B)
    a = _positive("alpha", alpha)
    b = _positive("beta", beta)
    if isinstance(E, bool) or not isinstance(E, (int, float)):
        raise ValueError(f"E: expected a number, got {E!r}")
    if not (math.isfinite(E) and E >= 0):
        raise ValueError(f"E: expected a non-negative finite number, got {E!r}")
    # alpha*A/N^alpha = beta*B/D^beta with N = C/(6D); solved for D:
    # D = (beta*B / (alpha*A))^(1/(alpha+beta)) * (C/6)^(alpha/(alpha+beta))
    s = a + b
    n_tokens = (b * b_coef / (a * a_coef)) ** (1.0 / s) * (c / 6.0) ** (a / s)
    n_params = c / (6.0 * n_tokens)
    loss = float(E) + a_coef / n_params**a + b_coef / n_tokens**b
    return float(n_params), float(n_tokens), float(loss)


def _as_list(name, values):
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
        values = values.tolist()
    out = []
    for v in values:
        if isinstance(v, (list, tuple, np.ndarray)):
            raise ValueError(f"{name} must be 1-D")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{name} contains a non-number: {v!r}") from None
        if not (math.isfinite(f) and f > 0):
            raise ValueError(f"{name} values must be positive and finite, got {v!r}")
        out.append(f)
    return out


def fit_power_law(
    x: Sequence[int | float] | np.ndarray, y: Sequence[int | float] | np.ndarray
) -> tuple[float, float]:
    """Fit y ≈ c · x^k by ordinary least squares on log y = log c + k · log x."""
    xs = _as_list("x", x)
    ys = _as_list("y", y)
    if len(xs) != len(ys):
        raise ValueError(f"x and y lengths differ: {len(xs)} vs {len(ys)}")
    n = len(xs)
    if n < 2:
        raise ValueError(f"need at least 2 points, got {n}")
    lx = [math.log(v) for v in xs]
    ly = [math.log(v) for v in ys]
    if all(v == lx[0] for v in lx):
        raise ValueError("all x values are equal: the exponent is undefined")
    mean_x = math.fsum(lx) / n
    mean_y = math.fsum(ly) / n
    sxy = math.fsum((u - mean_x) * (w - mean_y) for u, w in zip(lx, ly))
    sxx = math.fsum((u - mean_x) ** 2 for u in lx)
    if sxx == 0.0:
        raise ValueError("all x values are equal: the exponent is undefined")
    k = sxy / sxx
    log_c = mean_y - k * mean_x
    return math.exp(log_c), k


def mup_learning_rate(base_lr: int | float, base_width: int, width: int) -> float:
    """μP learning rate of a hidden-layer weight under Adam: base_lr · base_width / width."""
    lr = _positive("base_lr", base_lr)
    for name, w in (("base_width", base_width), ("width", width)):
        if type(w) is bool or not isinstance(w, int) or w < 1:
            raise ValueError(f"{name} must be a positive int, got {w!r}")
    ratio = base_width / width
    return lr * ratio
