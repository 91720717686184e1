"""scaling (public). The notes' numbers (notes 004), and snapshots."""

import numpy as np
import pytest

from tests.checks import CONDITIONED, ROUNDING, case, check_cases, expect_equal
from tests.common.scaling import BESIROGLU_2024, HOFFMANN_2022, mistakes
from tests.snapshot import check_snapshot

SNAPSHOT_INPUTS = {
    "scaling.chinchilla_allocation": [(5.76e23,), (1e21, 20), (6.3e24, 1900), (120, 20), (1e25, 7.5), (0.0,),
                                      (1e21, -20)],
    "scaling.optimal_allocation": [(c, *p) for p in (HOFFMANN_2022, BESIROGLU_2024) for c in (1e18, 3e22, 1e27)]
                                  + [(1e20, 0, 100, 100, 0.5, 0.5), (1e20, 1.69, 406.4, 410.7, 0.0, 0.28)],
    "scaling.fit_power_law": [([1, 10, 100, 1000], [2.0, 1.0, 0.5, 0.25]), ([1.0, 2.0], [3.0, 12.0]),
                              ((1e6, 1e7, 1e8, 1e9, 1e10), (4.1, 3.5, 3.2, 2.8, 2.6)),
                              (np.array([2.0, 3.0, 5.0, 7.0, 11.0]), np.array([1.0, 2.5, 2.0, 6.0, 4.5])),
                              ([3, 3, 5], [1.0, 2.0, 4.0]), ([1.0], [2.0]), ([1, 2, 3], [1.0, 2.0]),
                              ([1, 2, 3], [1.0, -2.0, 3.0]), ([4, 4, 4], [1.0, 2.0, 3.0])],
    "scaling.mup_learning_rate": [(1e-3, 256, 4096), (1e-3, 256, 1024), (3e-4, 1024, 256), (6e-4, 768, 768),
                                  (1e-3, 256, 0), (0.0, 256, 512)],
}


def row(n_params: float, n_tokens: float, loss: float) -> str:
    """One row of the notes' table, printed with the notes' digits."""
    return f"N={n_params / 1e9:.1f}B D={n_tokens / 1e12:.2f}T D/N={n_tokens / n_params:.1f} L={loss:.3f}"


@pytest.mark.points(1)
def test_notes_chinchilla(impl):
    """Gopher's budget 5.76e23 FLOPs at 20 tokens/param: N = 69.3B, D = 1.39T (notes 004)"""
    def as_printed(got, due, what):  # the notes print N in billions, D in trillions
        (n, d), (n_due, d_due) = got, due
        expect_equal([f"{n / 1e9:.1f}", f"{d / 1e12:.2f}"], [f"{n_due / 1e9:.1f}", f"{d_due / 1e12:.2f}"], what)
    (n, d), = check_cases(impl, "scaling.chinchilla_allocation", [case(5.76e23, want=(69.3e9, 1.39e12),
                          what="chinchilla_allocation(5.76e23): N in billions, D in trillions")],
                          compare=as_printed, mistakes=mistakes("chinchilla_allocation"))
    expect_equal(d / n, 20.0, "D / N for chinchilla_allocation(5.76e23) (default 20 tokens/param)", **ROUNDING)


@pytest.mark.points(1)
def test_notes_hoffmann_table(impl):
    """Hoffmann 2022 coefficients at C = 1e21, 5.76e23, 1e25: the notes' N, D, D/N and loss (notes 004)"""
    want = ["N=1.8B D=0.09T D/N=50.1 L=2.329", "N=32.2B D=2.98T D/N=92.6 L=1.931",
            "N=116.8B D=14.27T D/N=122.1 L=1.845"]
    got = [row(*impl.scaling.optimal_allocation(c, *HOFFMANN_2022)) for c in (1e21, 5.76e23, 1e25)]
    expect_equal(got, want, "optimal_allocation(C, 1.69, 406.4, 410.7, 0.34, 0.28) for C = 1e21, 5.76e23, 1e25")


@pytest.mark.points(1)
def test_notes_besiroglu_table(impl):
    """Besiroglu 2024 coefficients at C = 1e21, 5.76e23, 1e25: the notes' N, D, D/N and loss (notes 004)"""
    want = ["N=2.8B D=0.06T D/N=21.6 L=2.306", "N=72.2B D=1.33T D/N=18.4 L=1.974",
            "N=312.1B D=5.34T D/N=17.1 L=1.912"]
    got = [row(*impl.scaling.optimal_allocation(c, *BESIROGLU_2024)) for c in (1e21, 5.76e23, 1e25)]
    expect_equal(got, want,
                 "optimal_allocation(C, 1.8172, 482.01, 2085.43, 0.3478, 0.3658) for C = 1e21, 5.76e23, 1e25")


@pytest.mark.points(1)
def test_notes_mup(impl):
    """μP: a learning rate tuned at width 256 scales by 256/n: 1e-3 → 6.25e-05 at width 4096 (notes 004)"""
    expect_equal(impl.scaling.mup_learning_rate(1e-3, 256, 4096), 6.25e-05, "mup_learning_rate(1e-3, 256, 4096)",
                 **ROUNDING)
    expect_equal(impl.scaling.mup_learning_rate(1e-3, 256, 1024), 2.5e-04, "mup_learning_rate(1e-3, 256, 1024)",
                 **ROUNDING)


@pytest.mark.points(1)
def test_fit_power_law_decades(impl):
    """fit_power_law fits a straight line in log-log space: y halving every decade gives (2.0, -log10 2)"""
    got = impl.scaling.fit_power_law([1, 10, 100, 1000], [2.0, 1.0, 0.5, 0.25])
    expect_equal(got, (2.0, -0.3010299956639812), "fit_power_law([1, 10, 100, 1000], [2.0, 1.0, 0.5, 0.25])",
                 **CONDITIONED)


@pytest.mark.points(2)
def test_snapshots(impl):
    """chinchilla_allocation, optimal_allocation, fit_power_law and mup_learning_rate match the snapshots"""
    for name in SNAPSHOT_INPUTS:
        check_snapshot(impl, name)
