"""adamw_accounting (public). The notes' GPT-2 XL numbers, and snapshots."""

import pytest

from tests.checks import case, check_cases, expect_equal, expect_raises
from tests.common.adamw_accounting import config, mistakes
from tests.snapshot import check_snapshot

GPT2_XL = config(50257, 1024, 48, 1600, 25, 6400)
TINY = config(100, 16, 2, 32, 4, 64)
SMALL = config(50257, 1024, 12, 768, 12, 3072)

SNAPSHOT_INPUTS = {
    "adamw_accounting.parameter_count": [(TINY,), (SMALL,), (GPT2_XL,)],
    "adamw_accounting.activation_count": [(TINY, 1), (TINY, 3), (SMALL, 8), (GPT2_XL, 2)],
    "adamw_accounting.peak_memory_bytes": [(TINY, 4), (SMALL, 8), (GPT2_XL, 1)],
    "adamw_accounting.max_batch_size": [(TINY, 10**6), (SMALL, 24 * 10**9), (GPT2_XL, 40 * 10**9)],
    # batches are Python ints of any size: B·T·P past the 64 bits of any tensor's sizes
    "adamw_accounting.adamw_step_flops": [(TINY, 2), (SMALL, 512), (SMALL, 2**64), (config(2**40, 2**20, 3, 2**30, 8, 5), 3)],
    "adamw_accounting.training_days": [(SMALL, 512, 100_000, 312e12, 0.4), (SMALL, 2**64, 3, 312e12, 0.4)],
}


@pytest.mark.points(1)
def test_gpt2_xl_parameters(impl):
    """GPT-2 XL has P = 2,127,057,600 parameters (notes 000, 004)"""
    check_cases(impl, "adamw_accounting.parameter_count", [case(GPT2_XL, want=2_127_057_600, what="parameter_count(GPT2_XL)")],
                mistakes=mistakes("parameter_count"))


@pytest.mark.points(1)
def test_gpt2_xl_activations(impl):
    """GPT-2 XL at batch 1 has A = 3,879,438,336 activation elements (notes 000)"""
    check_cases(impl, "adamw_accounting.activation_count",
                [case(GPT2_XL, 1, want=3_879_438_336, what="activation_count(GPT2_XL, 1)")],
                mistakes=mistakes("activation_count"))


@pytest.mark.points(1)
def test_gpt2_xl_memory(impl):
    """16P ≈ 34.03 GB before any data; at most batch 2 fits in 80 GB (notes 000)"""
    p = impl.adamw_accounting.parameter_count(GPT2_XL)
    m1 = impl.adamw_accounting.peak_memory_bytes(GPT2_XL, 1)
    m2 = impl.adamw_accounting.peak_memory_bytes(GPT2_XL, 2)
    expect_equal(round(16 * p / 1e9, 2), 34.03, "16 * parameter_count(GPT2_XL) in GB")
    expect_equal(m2 - m1, 4 * 3_879_438_336, "peak_memory_bytes grows by 4·A(1) bytes per sample")
    check_cases(impl, "adamw_accounting.max_batch_size",
                [case(GPT2_XL, 80 * 10**9, want=2, what="max_batch_size(GPT2_XL, 80 GB)")],
                mistakes=mistakes("max_batch_size"))


@pytest.mark.points(1)
def test_gpt2_xl_flops_and_days(impl):
    """one AdamW step costs 6·B·T·P FLOPs; 400K steps on one A100 take ≈ 6354 days (notes 000)"""
    check_cases(impl, "adamw_accounting.adamw_step_flops",
                [case(GPT2_XL, 1024, want=6 * 1024 * 1024 * 2_127_057_600, what="adamw_step_flops(GPT2_XL, 1024)")],
                mistakes=mistakes("adamw_step_flops"))
    days = impl.adamw_accounting.training_days(GPT2_XL, 1024, 400_000, 19.5e12, 0.5)
    expect_equal(round(days), 6354, "round(training_days(GPT2_XL, 1024, 400_000, 19.5e12, 0.5))")
    # the same formula for 2**64 times the batch, past the 64 bits of any tensor's sizes
    check_cases(impl, "adamw_accounting.adamw_step_flops",
                [case(GPT2_XL, 1024 * 2**64, want=6 * 1024 * 2**64 * 1024 * 2_127_057_600,
                      what="adamw_step_flops(GPT2_XL, 1024 * 2**64)")])
    expect_equal(round(impl.adamw_accounting.training_days(GPT2_XL, 1024 * 2**64, 400_000, 19.5e12, 0.5) / 2**64), 6354,
                 "round(training_days(GPT2_XL, 1024 * 2**64, 400_000, 19.5e12, 0.5) / 2**64)")


@pytest.mark.points(2)
def test_small_configs(impl):
    """every function matches the snapshots on other configurations"""
    for name in SNAPSHOT_INPUTS:
        check_snapshot(impl, name)


@pytest.mark.points(1)
def test_bad_config(impl):
    """d_model not divisible by num_heads, or a batch of 0, is a ValueError"""
    expect_raises(ValueError, lambda: impl.adamw_accounting.parameter_count(config(100, 16, 2, 30, 4, 64)),
                  "parameter_count(d_model=30, num_heads=4)")
    expect_raises(ValueError, lambda: impl.adamw_accounting.activation_count(TINY, 0),
                  "activation_count(TINY, batch_size=0)")
