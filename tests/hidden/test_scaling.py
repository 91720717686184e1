"""scaling (hidden): power-law fits that must recover known exponents, the optimum of
optimal_allocation checked numerically, and seeded random cases against the reference."""

import math
import random

import numpy as np
import pytest

from tests.checks import CONDITIONED, ROUNDING, case, check_cases, expect_equal, fail, raises
from tests.common.scaling import BESIROGLU_2024, HOFFMANN_2022, mistakes

# Exact power laws y = c·x^k: least squares on (log x, log y) recovers k up to the rounding of the
# logs, amplified by 1 / the spread of log x (at least 0.1 here): under 1e-12, so 1e-9 leaves 1000x;
# a fit in linear space or a swapped coefficient is off by percent. (The coefficient: CONDITIONED.)
EXACT_EXPONENT = dict(atol=1e-9)
# The same least squares as the reference's or np.polyfit(log x, log y, 1), solved another way
# (closed form, lstsq, other summation orders) on up to 30 points: they agree to ~1e-12 relative;
# 1e-8 leaves 1e4, and atol covers an exponent that is nearly 0.
FIT = dict(rtol=1e-8)
POLYFIT = dict(rtol=1e-8, atol=1e-10)


def random_xs(rng: random.Random, n: int) -> list[float]:
    """n positive x values spanning at least a factor 2 (so the slope is well conditioned)."""
    lo = 10 ** rng.uniform(-3, 6)
    hi = lo * 10 ** rng.uniform(math.log10(2), 6)
    xs = [lo, hi] + [math.exp(rng.uniform(math.log(lo), math.log(hi))) for _ in range(n - 2)]
    rng.shuffle(xs)
    return xs


def as_container(rng: random.Random, values: list[float]):
    return rng.choice([list, tuple, lambda v: np.array(v, dtype=np.float64)])(values)


def random_coefficients(rng: random.Random):
    return (rng.uniform(0, 3), 10 ** rng.uniform(0, 4), 10 ** rng.uniform(0, 4), rng.uniform(0.05, 0.9),
            rng.uniform(0.05, 0.9))


def exact_fit(got, due, what):
    if not (type(got) is tuple and len(got) == 2 and all(type(v) is float for v in got)):
        fail(what, got, due, "expected a tuple of two floats (coefficient, exponent)")
    expect_equal(got[0], due[0], f"coefficient of {what}", **CONDITIONED)
    expect_equal(got[1], due[1], f"exponent of {what}", **EXACT_EXPONENT)


class Due(tuple):
    """What a case is due when no one value is: (the text a failure shows, the numbers its compare needs...)."""
    def __repr__(self):
        return self[0]


def noisy_fit(got, due, what):  # due: the truth (c, k), the 6σ bands of k and log c, np.polyfit's (c, k)
    _, c, k, k_band, logc_band, *polyfit = due
    if not (type(got) is tuple and len(got) == 2 and all(type(v) is float for v in got) and got[0] > 0):
        fail(what, got, (c, k), "expected a tuple of two floats (coefficient > 0, exponent)")
    expect_equal(got[1], k, f"exponent of {what} (true k)", atol=k_band, note="6σ band of least squares")
    expect_equal(math.log(got[0]), math.log(c), f"log coefficient of {what} (true log c)", atol=logc_band,
                 note="6σ band of least squares")
    expect_equal(got, tuple(polyfit), what, **POLYFIT, note="oracle: np.polyfit(log x, log y, 1)")


def is_optimum(got, due, what):  # due: (text, the case's C, E, A, B, alpha, beta)
    if not (type(got) is tuple and len(got) == 3 and all(type(v) is float for v in got) and got[0] > 0 < got[1]):
        fail(what, got, due, "expected a tuple of three floats, N and D > 0")
    (n, d, loss), (_, C, E, A, B, alpha, beta) = got, due
    expect_equal(6 * n * d, C, f"6·N·D of {what}", **CONDITIONED)
    expect_equal(loss, E + A / n**alpha + B / d**beta, f"loss of {what} vs E + A/N^α + B/D^β", **CONDITIONED)

    def reducible(n_):  # the loss minus E, on the budget (D = C / 6N)
        return A / n_**alpha + B / (C / (6 * n_)) ** beta

    # L is convex in log N along the budget, so beating both 1% neighbours means the optimum;
    # there the loss changes by ~1e-5 relative, far above float rounding (1e-12 slack).
    for factor in (0.99, 1.01):
        if reducible(n) > reducible(n * factor) * (1 + 1e-12):
            fail(f"{what}: N·{factor} on the same budget has a lower loss", reducible(n) + E,
                 reducible(n * factor) + E, "the returned N is not the minimiser of L under C = 6ND")


def spends_budget(got, due, what):  # due: (text, the case's C, r); a named mistake's answer: its (N, D)
    if not isinstance(due, Due):
        return expect_equal(got, due, what, **ROUNDING)
    if not (type(got) is tuple and len(got) == 2 and all(type(v) is float for v in got)):
        fail(what, got, due, "expected a tuple of two floats")
    expect_equal(6 * got[0] * got[1], due[1], f"6·N·D of {what}", **ROUNDING)
    expect_equal(got[1] / got[0], float(due[2]), f"D/N of {what}", **ROUNDING)


@pytest.mark.points(2)
def test_fit_recovers_exact_power_laws(impl):
    """fit_power_law returns (c, k) of exact power laws y = c·x^k (c rtol 1e-9, k atol 1e-9); lists, tuples, arrays"""
    rng = random.Random(1101)
    cases = []
    for _ in range(80):
        c, k = 10 ** rng.uniform(-3, 3), rng.uniform(-2.5, 2.5)
        xs = random_xs(rng, rng.randint(2, 40))
        cases.append(case(as_container(rng, xs), as_container(rng, [c * x**k for x in xs]), want=(c, k)))
    cases.append(case([1, 2, 4, 8, 16], [3, 6, 12, 24, 48], want=(3.0, 1.0)))  # ints: c = 3, k = 1
    check_cases(impl, "scaling.fit_power_law", cases, compare=exact_fit)


@pytest.mark.points(2)
def test_fit_noisy_power_laws(impl):
    """on noisy power laws fit_power_law is least squares in log-log space: within 6σ of the truth, and equal to np.polyfit"""
    # y = c·x^k·exp(σ·z), z ~ N(0, 1) iid. Least squares on (log x, log y) is unbiased with
    # sd(k̂) = σ / sqrt(Sxx) and sd(log ĉ) = σ·sqrt(1/n + mean(log x)² / Sxx), Sxx = Σ(log x - mean)².
    # A 6-sd band fails with probability 2e-9 per estimate, so < 1e-6 over these 2×60 estimates —
    # and since the data are fixed by the seed, a correct fit lands where the reference's does.
    # A fit in linear space, or of log y on x, lands far outside the band.
    rng = random.Random(1102)
    nrng = np.random.default_rng(1102)
    cases = []
    for _ in range(60):
        c, k, sigma = 10 ** rng.uniform(-2, 3), rng.uniform(-1.5, 1.5), rng.choice([0.02, 0.1, 0.3])
        n = rng.randint(20, 60)
        xs = np.exp(nrng.uniform(0, math.log(10) * rng.uniform(2, 8), size=n))
        ys = c * xs**k * np.exp(sigma * nrng.standard_normal(n))
        lx = np.log(xs)
        sxx = float(((lx - lx.mean()) ** 2).sum())
        slope, intercept = np.polyfit(lx, np.log(ys), 1)
        cases.append(case(xs.tolist(), ys.tolist(), want=Due((repr((c, k)), c, k, 6 * sigma / math.sqrt(sxx),
                          6 * sigma * math.sqrt(1 / n + lx.mean() ** 2 / sxx), math.exp(intercept), float(slope)))))
    check_cases(impl, "scaling.fit_power_law", cases, compare=noisy_fit)


@pytest.mark.points(2)
def test_optimal_allocation_is_the_optimum(impl):
    """optimal_allocation: C = 6ND, the loss is L(N, D), and no N·(1±1%) on the budget does better"""
    rng = random.Random(1103)
    cases = [(10 ** rng.uniform(15, 28), *random_coefficients(rng)) for _ in range(150)]
    cases += [(c, *p) for p in (HOFFMANN_2022, BESIROGLU_2024) for c in (1e21, 5.76e23, 1e25)]
    check_cases(impl, "scaling.optimal_allocation", cases, compare=is_optimum,
                oracle=lambda *args: Due(("(n_params, n_tokens, loss)", *args)))


@pytest.mark.points(1)
def test_chinchilla_budget(impl):
    """chinchilla_allocation spends the budget (6ND = C) at the given ratio (D = r·N)"""
    rng = random.Random(1104)
    cases = [(10 ** rng.uniform(10, 28), rng.choice([20, 1900, 0.5, rng.uniform(1, 500)])) for _ in range(200)]
    check_cases(impl, "scaling.chinchilla_allocation", cases, compare=spends_budget,
                oracle=lambda *args: Due(("(n_params, n_tokens)", *args)),
                mistakes=mistakes("chinchilla_allocation"))
    check_cases(impl, "scaling.chinchilla_allocation", [case(1.2e21, want=(math.sqrt(1e19), 20 * math.sqrt(1e19)),
                what="chinchilla_allocation(1.2e21) (default r = 20)")], **ROUNDING,
                mistakes=mistakes("chinchilla_allocation"))


@pytest.mark.points(2)
def test_random_against_reference(impl, ref):
    """every scaling function equals the reference on random inputs (rtol 1e-9)"""
    rng = random.Random(1105)
    check_cases(impl, "scaling.chinchilla_allocation",
                [(10 ** rng.uniform(0, 30), rng.choice([20, rng.randint(1, 3000), rng.uniform(0.1, 100)]))
                 for _ in range(300)], ref=ref, **CONDITIONED, mistakes=mistakes("chinchilla_allocation"))
    check_cases(impl, "scaling.optimal_allocation",
                [(10 ** rng.uniform(10, 30), *random_coefficients(rng)) for _ in range(300)], ref=ref, **CONDITIONED)
    check_cases(impl, "scaling.fit_power_law",
                [(as_container(rng, xs), as_container(rng, [10 ** rng.uniform(-3, 3) for _ in xs]))
                 for xs in (random_xs(rng, rng.randint(2, 30)) for _ in range(150))], ref=ref, **FIT)
    check_cases(impl, "scaling.mup_learning_rate", [(10 ** rng.uniform(-6, -1), rng.randint(1, 8192),
                rng.randint(1, 65536)) for _ in range(300)], ref=ref, **ROUNDING)


@pytest.mark.points(1)
def test_bad_input(impl):
    """non-positive budgets and coefficients, bad fit data and widths raise ValueError; neighbours work"""
    bad = raises(ValueError)
    check_cases(impl, "scaling.chinchilla_allocation", [case(0.0, want=bad), case(-1e21, want=bad),
                case(1e21, 0, want=bad), case(float("nan"), want=bad), case(120.0, 20, want=(1.0, 20.0))],
                **ROUNDING, mistakes=mistakes("chinchilla_allocation"))
    check_cases(impl, "scaling.optimal_allocation",
                [case(0.0, *HOFFMANN_2022, want=bad), case(1e21, -0.1, 406.4, 410.7, 0.34, 0.28, want=bad),
                 case(1e21, 1.69, 0.0, 410.7, 0.34, 0.28, want=bad), case(1e21, 1.69, 406.4, 410.7, 0.34, -0.28, want=bad),
                 case(6.0, 0.0, 1.0, 1.0, 0.5, 0.5, want=(1.0, 1.0, 2.0))], **ROUNDING)
    check_cases(impl, "scaling.fit_power_law",
                [case([1.0], [2.0], want=bad), case([1.0, 2.0, 3.0], [2.0, 1.0], want=bad),
                 case([1.0, 0.0], [2.0, 1.0], want=bad), case([1.0, 2.0], [2.0, -1.0], want=bad),
                 case([5.0, 5.0, 5.0], [1.0, 2.0, 3.0], want=bad), case([1.0, float("inf")], [1.0, 2.0], want=bad),
                 case(np.ones((2, 2)), np.ones((2, 2)), want=bad), case([1.0, 2.0], [3.0, 12.0], want=(3.0, 2.0)),
                 # one input 1-D, the other 2-D with as many rows: not "1-D of the same length"
                 case([1.0, 2.0, 3.0], [[1.0], [2.0], [3.0]], want=bad),
                 case([[1.0], [2.0], [3.0]], [1.0, 2.0, 3.0], want=bad),
                 case([5.0, 5.0, 10.0], [1.0, 1.0, 2.0], want=(0.2, 1.0))], **ROUNDING)
    check_cases(impl, "scaling.mup_learning_rate", [case(0.0, 256, 4096, want=bad), case(1e-3, 0, 4096, want=bad),
                case(1e-3, 256, -4096, want=bad), case(1e-3, 256, 256, want=1e-3),
                # width 1 is a positive int: the smallest valid width on either side
                case(1e-3, 1, 4, want=2.5e-4), case(1e-3, 4, 1, want=4e-3)], **ROUNDING)
