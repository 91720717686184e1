"""scaling — compute-optimal allocation, power-law fits, μP learning rates.

Handout: assignment/problems/scaling.md. Notes (assignment/notes/): 004 (20 tokens/param,
N = sqrt(C / 120); the parametric loss L = E + A/N^α + B/D^β under C = 6ND with the Hoffmann
2022 and Besiroglu 2024 coefficients; power laws are straight lines in log-log; μP scales
the hidden-layer Adam learning rate by 1/width).
"""

import math
from collections.abc import Sequence

import numpy as np


def _check_positive(name: str, value: int | float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def chinchilla_allocation(
    compute: int | float, tokens_per_param: int | float = 20
) -> tuple[float, float]:
    """Compute-optimal (n_params, n_tokens) at a fixed tokens-per-parameter ratio r, as floats.

    From C = 6·N·D and D = r·N: N = sqrt(C / (6·r)), D = r·N (for r = 20, N = sqrt(C / 120)).
    compute is in FLOPs. Raises ValueError if compute or tokens_per_param is not positive
    and finite.

    Example (notes 004), Gopher's budget: chinchilla_allocation(5.76e23) ≈ (6.93e10, 1.39e12)
    (69.3B parameters, 1.39T tokens — Chinchilla was trained at 70B / 1.4T).
    """
    _check_positive("compute", compute)
    _check_positive("tokens_per_param", tokens_per_param)
    n_params = math.sqrt(compute / (6 * tokens_per_param))
    return float(n_params), float(tokens_per_param * n_params)


def optimal_allocation(
    compute: int | float,
    E: int | float,
    A: int | float,
    B: int | float,
    alpha: int | float,
    beta: int | float,
) -> tuple[float, float, float]:
    """Closed-form minimiser of L(N, D) = E + A/N^α + B/D^β subject to C = 6·N·D.

    Returns (n_params, n_tokens, loss) as floats, with C = compute and (notes 004)

        G = (α·A / (β·B)) ** (1 / (α + β))
        N = G · (C / 6) ** (β / (α + β))
        D = C / (6·N)
        loss = E + A / N**α + B / D**β

    (Substitute D = C/(6N) and set dL/dN = 0: α·A/N^α = β·B/D^β.)
    Raises ValueError if compute, A, B, alpha or beta is not positive and finite, or E is
    negative or non-finite.

    Examples (notes 004), printed as N in billions, D in trillions, D/N, loss:
      Hoffmann 2022 (E, A, B, α, β) = (1.69, 406.4, 410.7, 0.34, 0.28):
        C = 1e21:    1.8B,   0.09T, D/N  50.1, L 2.329
        C = 5.76e23: 32.2B,  2.98T, D/N  92.6, L 1.931
        C = 1e25:    116.8B, 14.27T, D/N 122.1, L 1.845
      Besiroglu 2024 (1.8172, 482.01, 2085.43, 0.3478, 0.3658):
        C = 1e21:    2.8B,   0.06T, D/N  21.6, L 2.306
        C = 5.76e23: 72.2B,  1.33T, D/N  18.4, L 1.974
        C = 1e25:    312.1B, 5.34T, D/N  17.1, L 1.912
    """
    for name, value in (("compute", compute), ("A", A), ("B", B), ("alpha", alpha), ("beta", beta)):
        _check_positive(name, value)
    if isinstance(E, bool) or not isinstance(E, (int, float)) or not math.isfinite(E) or E < 0:
        raise ValueError(f"E must be a non-negative finite number, got {E!r}")
    G = (alpha * A / (beta * B)) ** (1 / (alpha + beta))
    n_params = G * (compute / 6) ** (beta / (alpha + beta))
    n_tokens = compute / (6 * n_params)
    loss = E + A / n_params**alpha + B / n_tokens**beta
    return float(n_params), float(n_tokens), float(loss)


def fit_power_law(
    x: Sequence[int | float] | np.ndarray, y: Sequence[int | float] | np.ndarray
) -> tuple[float, float]:
    """Fit y ≈ c · x^k by ordinary least squares on log y = log c + k · log x.

    Returns (coefficient c, exponent k) as floats (natural logs; c = exp(intercept)).
    x and y are 1-D sequences (lists, tuples or 1-D numpy arrays) of positive finite numbers
    of the same length.

    Raises ValueError if the lengths differ, there are fewer than 2 points, a value is not
    positive and finite, an input is not 1-D, or all x are equal (the slope is undefined).

    Example: fit_power_law([1, 10, 100, 1000], [2.0, 1.0, 0.5, 0.25]) ≈ (2.0, -0.30103)
    (y halves every decade: k = -log10(2)).
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or ys.ndim != 1:
        raise ValueError(f"x and y must be 1-D, got shapes {xs.shape} and {ys.shape}")
    if xs.shape[0] != ys.shape[0]:
        raise ValueError(f"x and y must have the same length, got {xs.shape[0]} and {ys.shape[0]}")
    if xs.shape[0] < 2:
        raise ValueError(f"need at least 2 points to fit a power law, got {xs.shape[0]}")
    for name, arr in (("x", xs), ("y", ys)):
        if not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
            raise ValueError(f"all {name} values must be positive and finite")
    lx, ly = np.log(xs), np.log(ys)
    dx = lx - lx.mean()
    sxx = float(np.dot(dx, dx))
    if sxx == 0.0:
        raise ValueError("all x values are equal: the exponent is undefined")
    slope = float(np.dot(dx, ly - ly.mean())) / sxx  # least-squares slope in log-log space
    intercept = float(ly.mean()) - slope * float(lx.mean())
    return float(math.exp(intercept)), float(slope)


def mup_learning_rate(base_lr: int | float, base_width: int, width: int) -> float:
    """μP learning rate of a hidden-layer weight under Adam, as a float:
    base_lr · base_width / width.

    base_lr was tuned on a model of hidden width base_width; width is the new width. With
    Adam each weight moves ≈ lr per step and n aligned moves add up at the output, so the
    per-step change of a layer's output grows ∝ width unless lr ∝ 1/width (notes 004).

    Raises ValueError if base_lr is not positive and finite, or base_width / width is not a
    positive int.

    Example (notes 004): tuned 1e-3 at width 256 -> mup_learning_rate(1e-3, 256, 4096) ==
    6.25e-05.
    """
    _check_positive("base_lr", base_lr)
    for name, value in (("base_width", base_width), ("width", width)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return float(base_lr * base_width / width)
