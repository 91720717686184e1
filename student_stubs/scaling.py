"""scaling — compute-optimal allocation, power-law fits, μP learning rates.

Handout: assignment/problems/scaling.md. Notes (assignment/notes/): 004 (20 tokens/param,
N = sqrt(C / 120); the parametric loss L = E + A/N^α + B/D^β under C = 6ND with the Hoffmann
2022 and Besiroglu 2024 coefficients; power laws are straight lines in log-log; μP scales
the hidden-layer Adam learning rate by 1/width).
"""

import math
from collections.abc import Sequence

import numpy as np


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError
