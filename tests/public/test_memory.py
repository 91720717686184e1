"""memory (public). The notes' numbers (notes 000, 001, 004), and snapshots."""

import pytest

from tests.checks import ROUNDING, case, check_cases, expect_equal
from tests.common.memory import BF16_MIXED_ADAMW, BF16_MIXED_ADAMW_BF16_GRADS, FP32_ADAMW, mistakes
from tests.snapshot import check_snapshot

ODD = [("int8 weights", 1, "params"), ("fp32 moments", 8, "optimizer")]
LLAMA2_7B = (4096, 1, 4096, 32, 32)  # s, b, h, a, layers (notes 004)

SNAPSHOT_INPUTS = {
    "memory.bytes_per_param": [(FP32_ADAMW,), (BF16_MIXED_ADAMW,), (BF16_MIXED_ADAMW_BF16_GRADS,), (ODD,),
                               ([("x", 3, "grads")],), ([],), ([("x", 0, "params")],),
                               ([("x", 4, "moments")],)],
    "memory.model_state_bytes": [
        (6_700_000_000, BF16_MIXED_ADAMW_BF16_GRADS), (6_700_000_000, BF16_MIXED_ADAMW_BF16_GRADS, 8, 1),
        (1_000_000, FP32_ADAMW, 4, 0), (1_000_000, FP32_ADAMW, 4, 1), (1_000_000, FP32_ADAMW, 4, 2),
        (1_000_000, FP32_ADAMW, 4, 3), (1_000_003, BF16_MIXED_ADAMW, 7, 1), (1_000_003, BF16_MIXED_ADAMW, 7, 2),
        (1_000_003, BF16_MIXED_ADAMW, 7, 3), (5, ODD, 3, 3), (0, FP32_ADAMW, 2, 3), (10, FP32_ADAMW, 1, 3),
        (-1, FP32_ADAMW), (10, FP32_ADAMW, 0, 1), (10, FP32_ADAMW, 2, 4)],
    "memory.max_trainable_params": [(8 * 80e9, 18), (80e9, 16), (8 * 80 * 2**30, 16), (1, 3.5), (0.0, 16)],
    "memory.megatron_activation_bytes": [LLAMA2_7B, (*LLAMA2_7B, False), (1024, 8, 1600, 25, 48),
                                         (2048, 4, 768, 12, 12, False), (1, 1, 1, 1, 1), (3, 5, 7, 7, 2),
                                         (4096, 1, 4096, 30, 32), (0, 1, 4096, 32, 32)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "memory.max_trainable_params": ROUNDING,
}


@pytest.mark.points(1)
def test_notes_recipes(impl):
    """fp32 AdamW keeps 16 B/param, bf16 mixed precision 18 (notes 001) or 16 with bf16 grads (notes 004)"""
    for name, recipe, want in [("FP32_ADAMW", FP32_ADAMW, 16), ("BF16_MIXED_ADAMW", BF16_MIXED_ADAMW, 18),
                               ("BF16_MIXED_ADAMW_BF16_GRADS", BF16_MIXED_ADAMW_BF16_GRADS, 16)]:
        expect_equal(impl.memory.bytes_per_param(recipe), want, f"bytes_per_param({name})")
        expect_equal(impl.memory.bytes_per_param(impl.get(f"memory.{name}")), want,
                     f"bytes_per_param(memory.{name}) (the module's own recipe)")


@pytest.mark.points(1)
def test_notes_max_params(impl):
    """8 × 80 GB of HBM at 18 B/param holds at most ≈ 35.6B parameters (notes 001)"""
    def billions(got, due, what):  # the notes print one decimal of billions
        expect_equal(f"{got / 1e9:.1f}", f"{due / 1e9:.1f}", what)
    check_cases(impl, "memory.max_trainable_params", [case(8 * 80 * 10**9, 18, want=35.6e9,
                what="max_trainable_params(8 * 80 * 10**9, 18) in billions")], compare=billions,
                mistakes=mistakes("max_trainable_params"))


@pytest.mark.points(1)
def test_notes_llama2_model_state(impl):
    """LLaMA 2 7B in bf16 mixed precision with bf16 grads: 16 B/param, 99.8 GiB of model state (notes 004)"""
    got = impl.memory.model_state_bytes(6_700_000_000, BF16_MIXED_ADAMW_BF16_GRADS)
    what = "model_state_bytes(6_700_000_000, BF16_MIXED_ADAMW_BF16_GRADS)"
    expect_equal(got["total"], 16 * 6_700_000_000, f"{what}['total']")
    expect_equal(f"{got['total'] / 2**30:.1f}", "99.8", f"{what}['total'] in GiB")
    # params: bf16 weights (2) + fp32 master (4); grads: bf16 (2, "12.5 GiB"); optimizer: m and v (4 + 4)
    n = 6_700_000_000
    expect_equal([got[k] for k in ("params", "grads", "optimizer")], [6 * n, 2 * n, 8 * n],
                 f"{what}: params, grads, optimizer")
    expect_equal(f"{got['grads'] / 2**30:.1f}", "12.5", f"{what}['grads'] in GiB")


@pytest.mark.points(1)
def test_notes_megatron_activations(impl):
    """LLaMA 2 7B shape at s=4096: 97.0 GiB of activations, 17.0 GiB without the attention matrix (notes 004)"""
    full = impl.memory.megatron_activation_bytes(*LLAMA2_7B)
    flash = impl.memory.megatron_activation_bytes(*LLAMA2_7B, store_attention_matrix=False)
    expect_equal(f"{full / 2**30:.1f}", "97.0", "megatron_activation_bytes(4096, 1, 4096, 32, 32) in GiB")
    expect_equal(f"{flash / 2**30:.1f}", "17.0",
                 "megatron_activation_bytes(4096, 1, 4096, 32, 32, store_attention_matrix=False) in GiB")


@pytest.mark.points(2)
def test_ledger_and_zero(impl):
    """bytes_per_param and model_state_bytes (ZeRO stages 0-3, ceil division) match the snapshots"""
    check_snapshot(impl, "memory.bytes_per_param")
    check_snapshot(impl, "memory.model_state_bytes")


@pytest.mark.points(1)
def test_capacity_and_activations(impl):
    """max_trainable_params and megatron_activation_bytes match the snapshots"""
    check_snapshot(impl, "memory.max_trainable_params")
    check_snapshot(impl, "memory.megatron_activation_bytes")
