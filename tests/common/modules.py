"""modules: the named mistakes (tests.checks.Mistake) its public and hidden tests recognise.

A Mistake's answer is what the probe reports for a Linear built with that misconception: for the
layout, the parameters (or the weight's shape) it holds; for the initialisation, which is random,
an ``UncutNormal`` that the init test's comparison checks the weight statistics against."""

import dataclasses
import math

import torch

from tests.checks import Mistake, fail


@dataclasses.dataclass(frozen=True)
class UncutNormal:
    """The weights of a Linear(input_dim, output_dim) drawn from N(0, σ²), σ = 1/sqrt(input_dim),
    and cut at ±3 absolute, that is not at all for σ < 1: the notes' ``trunc_normal_(w, std=σ,
    a=-3, b=3)``. As a due value of the init test (a Mistake's answer) it accepts statistics that
    look like that: mean ≈ 0 and mean(w²) ≈ σ² within 6 standard errors of a normal, some |w|
    beyond 4σ (a normal sample of n ≥ 2^20 has ~66 of them: none, with probability e^-66, means a
    cut), none beyond 3. It only names a failure the truncation bounds already found."""
    input_dim: int
    output_dim: int

    def check(self, stats: dict, what: str) -> None:
        n, sigma = self.input_dim * self.output_dim, 1 / math.sqrt(self.input_dim)
        if stats["n"] != n or stats["dtype"] != torch.float32:
            fail(what, (stats["n"], stats["dtype"]), (n, torch.float32), "numel, dtype")
        if abs(stats["sum"] / n / sigma) > 6 / math.sqrt(n):
            fail(f"{what}: mean / sigma", stats["sum"] / n / sigma, 0.0)
        if abs(stats["sum_sq"] / n / sigma**2 - 1) > 6 * math.sqrt(2 / n):  # Var[Z²] = 2 for Z ~ N(0, 1)
            fail(f"{what}: mean(w^2) / sigma^2", stats["sum_sq"] / n / sigma**2, 1.0)
        if not 4 * sigma < stats["max_abs"] <= 3 * (1 + 1e-6):
            fail(f"{what}: max |w|", stats["max_abs"], "in (4 sigma, 3]")

    def __repr__(self) -> str:
        return f"N(0, 1/{self.input_dim}) cut at ±3 absolute"


def _nn_linear_layout(answer) -> Mistake:
    return Mistake(
        "the weight stored as (output_dim, input_dim), torch.nn.Linear's layout", answer,
        "This Linear's weight is (input_dim, output_dim), the transpose of nn.Linear's, so that forward is a "
        "plain x @ weight with no transpose.", "modules",
        "input first, the transpose of `torch.nn.Linear`'s (out, in) layout")


ABSOLUTE_CUT = Mistake(
    "truncation at ±3 absolute instead of ±3σ (the notes' a=-3, b=3: for σ < 1 nothing is cut)",
    lambda input_dim, output_dim, seed: UncutNormal(input_dim, output_dim),
    "trunc_normal_'s a and b are bounds on the values, not multiples of std: pass a=-3σ, b=3σ. Cut at ±3, "
    "the weights are a plain normal, with about 0.27% of them beyond 3σ.", "modules",
    "`trunc_normal_`'s `a` and `b` are absolute cut-offs")


MISTAKES = {
    # probes.linear_structure: the parameters Linear holds, as (name, shape, dtype, device, requires_grad)
    "linear_structure": [_nn_linear_layout(lambda input_dim, output_dim, dtype=None, device=None: [
        ("weight", (output_dim, input_dim), dtype or torch.float32, device or "cpu", True)])],
    # probes.linear_forward: the probe stops at the weight's shape when it is not (d_in, d_out)
    "linear_forward": [_nn_linear_layout(lambda weight, xs: {"weight_shape": tuple(weight.shape)[::-1]})],
    "linear_init_stats": [ABSOLUTE_CUT],
}


def mistakes(probe: str) -> list[Mistake]:
    """The named mistakes that show in what ``probes.<probe>`` reports."""
    return MISTAKES.get(probe.removeprefix("probes."), [])
