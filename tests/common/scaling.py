"""scaling: what its public and hidden tests share: the notes' coefficients, and the named mistakes
(tests.checks.Mistake) its tests recognise in an answer."""

import math

from tests.checks import Mistake

HOFFMANN_2022 = (1.69, 406.4, 410.7, 0.34, 0.28)  # E, A, B, alpha, beta (notes 004)
BESIROGLU_2024 = (1.8172, 482.01, 2085.43, 0.3478, 0.3658)


# ---- named mistakes: chinchilla_allocation with exactly one slip in solving C = 6·N·D, D = r·N ------
SOLVE = "Solve C = 6·N·D together with D = r·N for N (mind the square root)"
WHY_SOLVE = "D = r·N turns C = 6·N·D into C = 6·r·N², so N = sqrt(C / (6·r)): N = sqrt(C/120) at r = 20."


def _chinchilla(n_params):
    """An allocation with N = n_params(C, r) and D = r·N, as the submission returns it."""
    def answer(compute, tokens_per_param=20):
        n = n_params(compute, tokens_per_param)
        return float(n), float(tokens_per_param * n)
    return answer


MISTAKES = {
    "chinchilla_allocation": [
        Mistake("N = C / (6·r) without the square root (the notes' N = sqrt(C/120) read as C/120)",
                _chinchilla(lambda c, r: c / (6 * r)), WHY_SOLVE, "scaling", SOLVE),
        Mistake("N = sqrt(C / r), the 6 of C = 6·N·D forgotten", _chinchilla(lambda c, r: math.sqrt(c / r)),
                "Training costs 6 FLOPs per parameter per token: " + WHY_SOLVE, "scaling", SOLVE),
    ],
}


def mistakes(function: str) -> list[Mistake]:
    """The named mistakes that show in ``function``'s answers (``scaling.<function>``)."""
    return MISTAKES.get(function.removeprefix("scaling."), [])
