"""flops (public). The notes' numbers (notes 000, 001, 004), and snapshots."""

import pytest

from tests.checks import ROUNDING, expect_equal, expect_raises
from tests.common.adamw_accounting import config  # a TransformerConfig, passed by value
from tests.snapshot import check_snapshot


# GPT-2 XL's shape with a SwiGLU FFN (notes 004): 48 layers, d_model 1600, 25 heads, d_ff 6400.
GPT2_XL = config(50257, 1024, 48, 1600, 25, 6400)
TINY = config(100, 16, 2, 32, 4, 64)
SMALL = config(50257, 1024, 12, 768, 12, 3072)
ODD = config(7, 3, 3, 15, 5, 11)
# Sizes are Python ints of any size (the handout): shapes past the 64 bits of any tensor's, whose
# counts only the arithmetic gives (no FLOP counter has a tensor to count).
BIG = 2**64

SNAPSHOT_INPUTS = {
    "flops.matmul_flops": [(100, 256, 512), (1, 1, 1), (3, 5, 7), (0, 4, 4), (8192, 8192, 8192),
                           (-1, 2, 3), (BIG, 4096, 3), (7, BIG + 1, 2**70), (0, BIG, BIG)],
    "flops.linear_flops": [(100, 256, 512), (1, 3, 5), (4096, 4096, 11008), (7, 0, 3), (10, -2, 3),
                           (BIG, 4096, 11008), (3, BIG + 1, 5)],
    "flops.transformer_forward_flops": [(TINY, 16), (TINY, 1), (TINY, 100), (SMALL, 1024), (ODD, 9),
                                        (GPT2_XL, 2048), (TINY, 0),
                                        (config(100, 16, 2, 30, 4, 64), 16), (GPT2_XL, BIG),
                                        (config(BIG, 16, 2, 4 * BIG, 4, BIG + 3), 1024)],
    "flops.training_flops": [(70e9, 15e12), (6.7e9, 2e12), (124_000_000, 10**9), (0, 5.0), (-1.0, 5.0)],
    "flops.training_seconds": [(6.3e24, 1024, 989e12, 0.5), (8.04e22, 1024, 989e12, 0.4),
                               (1e18, 8, 312e12, 1.0), (0.0, 1, 1e12, 0.3), (1e18, 0, 989e12, 0.5),
                               (1e18, 8, 989e12, 0.0), (1e18, 8, 989e12, 1.5)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "flops.training_flops": ROUNDING,
    "flops.training_seconds": ROUNDING,
}


def share(parts: dict, key: str) -> int:
    """A term's share of the total in whole percent, as the notes print it (f"{x:.0%}")."""
    return int(f"{parts[key] / parts['total']:.0%}".rstrip("%"))


def scaled(impl, parts: dict, seq_len: int) -> None:
    """The same model at 2**64 times the sequence (past any tensor's size): the terms of notes 004
    grow as their shapes say, QKᵀ and AV with T² (2**128 times), the others with T (2**64 times)."""
    big = impl.flops.transformer_forward_flops(GPT2_XL, seq_len * BIG)
    want = {k: parts[k] * (BIG * BIG if k == "attn_scores" else BIG) for k in ("attn_proj", "attn_scores", "ffn", "lm_head")}
    want["total"] = sum(want.values())
    expect_equal(big, want, f"transformer_forward_flops(GPT2_XL, {seq_len} * 2**64)",
                 note=f"its terms at T = {seq_len}, the attention products times 2**128, the others times 2**64")


@pytest.mark.points(1)
def test_notes_linear_layer(impl):
    """a Linear 100×256 @ 256×512: 26,214,400 FLOPs forward, dX and dW each (notes 001)"""
    expect_equal(impl.flops.matmul_flops(100, 256, 512), 26_214_400, "matmul_flops(100, 256, 512)")
    expect_equal(impl.flops.linear_flops(100, 256, 512),
                 {"forward": 26_214_400, "backward_input": 26_214_400, "backward_weight": 26_214_400,
                  "total": 78_643_200}, "linear_flops(100, 256, 512)")
    # FLOPs grow with each size: 2**64 times the tokens (more than any tensor holds), 2**64 times the FLOPs
    expect_equal(impl.flops.matmul_flops(100 * BIG, 256, 512), 26_214_400 * BIG, "matmul_flops(100 * 2**64, 256, 512)")
    expect_equal(impl.flops.linear_flops(100 * BIG, 256, 512),
                 {"forward": 26_214_400 * BIG, "backward_input": 26_214_400 * BIG, "backward_weight": 26_214_400 * BIG,
                  "total": 78_643_200 * BIG}, "linear_flops(100 * 2**64, 256, 512)")


@pytest.mark.points(1)
def test_notes_gpt2_xl_short_context(impl):
    """GPT-2 XL with SwiGLU at T=1024: 4.51 TFLOPs, attn proj 22%, QKᵀ+AV 7%, FFN 67%, lm_head 4% (notes 004)"""
    parts = impl.flops.transformer_forward_flops(GPT2_XL, 1024)
    what = "transformer_forward_flops(GPT2_XL, 1024)"
    expect_equal(sorted(parts), ["attn_proj", "attn_scores", "ffn", "lm_head", "total"], f"keys of {what}")
    expect_equal(f"{parts['total'] / 1e12:.2f}", "4.51", f"{what}['total'] in TFLOPs")
    expect_equal([share(parts, k) for k in ("attn_proj", "attn_scores", "ffn", "lm_head")], [22, 7, 67, 4],
                 f"{what}: shares of attn_proj, attn_scores, ffn, lm_head in %")
    scaled(impl, parts, 1024)


@pytest.mark.points(1)
def test_notes_gpt2_xl_long_context(impl):
    """GPT-2 XL with SwiGLU at T=16384: 149.52 TFLOPs, QKᵀ+AV 55% (notes 004)"""
    parts = impl.flops.transformer_forward_flops(GPT2_XL, 16384)
    what = "transformer_forward_flops(GPT2_XL, 16384)"
    expect_equal(f"{parts['total'] / 1e12:.2f}", "149.52", f"{what}['total'] in TFLOPs")
    expect_equal([share(parts, k) for k in ("attn_proj", "attn_scores", "ffn", "lm_head")], [11, 55, 32, 2],
                 f"{what}: shares of attn_proj, attn_scores, ffn, lm_head in %")
    scaled(impl, parts, 16384)


@pytest.mark.points(1)
def test_notes_training_time(impl):
    """70B params on 15T tokens: 6.3e24 FLOPs, ≈144 days on 1024 H100 at 50% MFU (notes 000, 001)"""
    c = impl.flops.training_flops(70e9, 15e12)
    expect_equal(c, 6.3e24, "training_flops(70e9, 15e12)", **ROUNDING)
    seconds = impl.flops.training_seconds(6.3e24, 1024, 989e12, 0.5)
    expect_equal(round(seconds / 86400), 144, "training_seconds(6.3e24, 1024, 989e12, 0.5) in days")
    # notes 004: LLaMA 2 7B, 6 · 6.7e9 · 2e12 FLOPs on 1024 H100 at 40% MFU ≈ 2.3 days
    days = impl.flops.training_seconds(impl.flops.training_flops(6.7e9, 2e12), 1024, 989e12, 0.4) / 86400
    expect_equal(round(days, 1), 2.3, "LLaMA 2 7B: training_seconds(6·6.7e9·2e12, 1024, 989e12, 0.4) in days")


@pytest.mark.points(1)
def test_matmul_and_linear(impl):
    """matmul_flops and linear_flops match the snapshots (empty products cost 0, negatives raise)"""
    check_snapshot(impl, "flops.matmul_flops")
    check_snapshot(impl, "flops.linear_flops")


@pytest.mark.points(2)
def test_transformer_forward(impl):
    """transformer_forward_flops matches the snapshots on other shapes (seq_len may exceed context_length)"""
    check_snapshot(impl, "flops.transformer_forward_flops")


@pytest.mark.points(1)
def test_training_compute_and_time(impl):
    """training_flops and training_seconds match the snapshots (floats; bad MFU / GPU count raise)"""
    check_snapshot(impl, "flops.training_flops")
    check_snapshot(impl, "flops.training_seconds")
    expect_raises(ValueError, lambda: impl.flops.training_flops(float("nan"), 1e9), "training_flops(nan, 1e9)")
