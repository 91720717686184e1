"""einops (public). The notes' examples (notes 001, "einops"; notes 004 for the QKᵀ count), and
snapshots. PyTorch's own ops are the second opinion: the notes' "traditional" lines."""

import pytest
import torch

from tests.checks import EXACT, case, check_cases, raises
from tests.common.einops import MEAN32, SCORES, seeded
from tests.snapshot import check_snapshot

SNAPSHOT_INPUTS = {
    "einops.attention_scores": [(seeded(2, 3, 2, 4, seed=1), seeded(2, 5, 2, 4, seed=2)),
                                (seeded(1, 1, 1, 1, seed=3), seeded(1, 2, 1, 1, seed=4)),
                                (seeded(3, 4, 1, 2, seed=5, dtype=torch.float64), seeded(3, 1, 1, 2, seed=6,
                                                                                         dtype=torch.float64))],
    "einops.split_heads": [(seeded(2, 3, 12, seed=9), 4), (seeded(1, 5, 6, seed=10), 1), (seeded(1, 5, 6, seed=11), 6),
                           (seeded(2, 3, 12, seed=12), 5), (seeded(2, 3, 12, seed=13), 0)],
    "einops.merge_heads": [(seeded(2, 4, 3, 3, seed=14),), (seeded(1, 1, 2, 5, seed=15),)],
    "einops.mean_over": [(seeded(2, 3, 4, seed=17), "batch"), (seeded(2, 3, 4, seed=18), "seq"),
                         (seeded(2, 3, 4, seed=19), "hidden"), (seeded(2, 3, 4, seed=20), "heads")],
    "einops.attention_scores_flops": [(1, 1024, 1024, 25, 64), (2, 3, 5, 4, 8), (0, 7, 7, 2, 2), (1, 1, 1, -1, 1),
                                      # sizes are Python ints of any size: past the 64 bits of any tensor's
                                      (2**64, 3, 5, 4, 8), (1, 2**40, 2**40, 25, 64)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "einops.attention_scores": SCORES,
    "einops.split_heads": EXACT,
    "einops.merge_heads": EXACT,
    "einops.mean_over": MEAN32,
}


@pytest.mark.points(1)
def test_notes_attention_scores(impl):
    """attention_scores equals the notes' traditional query @ key.transpose(-2, -1) with heads in front (notes 001)"""
    q, k = seeded(2, 5, 4, 8, seed=30), seeded(2, 7, 4, 8, seed=31)
    want = q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)  # (batch, head, seq1, seq2)
    check_cases(impl, "einops.attention_scores", [case(q, k, want=want, what="attention_scores(query "
                "(2, 5, 4, 8), key (2, 7, 4, 8)) against query.transpose(1, 2) @ key.permute(0, 2, 3, 1)")],
                **SCORES)


@pytest.mark.points(1)
def test_notes_heads_round_trip(impl):
    """split_heads with heads=8 is x.view(b, s, 8, -1).transpose(1, 2); merge_heads undoes it (notes 001)"""
    x = seeded(2, 3, 8 * 64, seed=32)
    split = x.view(2, 3, 8, -1).transpose(1, 2)
    check_cases(impl, "einops.split_heads", [case(x, 8, want=split)])
    check_cases(impl, "einops.merge_heads", [case(split, want=x, what="merge_heads(split_heads(x, 8)), "
                                                                      "x of shape (2, 3, 512)")])


@pytest.mark.points(1)
def test_notes_qk_flops(impl):
    """QKᵀ of GPT-2 XL at T = 1024 (25 heads of 64) costs 2·T²·d_model per layer (notes 004's L·2·2·T²·d counts QKᵀ and AV)"""
    check_cases(impl, "einops.attention_scores_flops",
                [case(1, 1024, 1024, 25, 64, want=2 * 1024**2 * 1600), case(1, 16384, 16384, 25, 64,
                                                                             want=2 * 16384**2 * 1600),
                 # the same count at T = 2**64 (more than any tensor holds)
                 case(1, 2**64, 2**64, 25, 64, want=2 * 2**128 * 1600)])


@pytest.mark.points(1)
def test_scores_and_flops(impl):
    """attention_scores and attention_scores_flops match the snapshots (mismatched shapes raise ValueError)"""
    check_snapshot(impl, "einops.attention_scores")
    check_snapshot(impl, "einops.attention_scores_flops")
    # shapes that contradict the jaxtyping annotations: the reference's ValueError (a snapshot
    # would record the run-time type checker's complaint instead)
    check_cases(impl, "einops.attention_scores", [case(seeded(2, 3, 2, 4, seed=5), seeded(2, 5, 3, 4, seed=6),
                                                       want=raises(ValueError), what="attention_scores(query "
                                                       "(2, 3, 2, 4), key (2, 5, 3, 4)): heads differ"),
                                                  case(seeded(3, 2, 4, seed=7), seeded(3, 2, 4, seed=8),
                                                       want=raises(ValueError), what="attention_scores(query "
                                                       "(3, 2, 4), key (3, 2, 4)): not 4-d")])


@pytest.mark.points(1)
def test_heads_and_mean(impl):
    """split_heads, merge_heads and mean_over match the snapshots (indivisible heads, an unknown axis raise ValueError)"""
    check_snapshot(impl, "einops.split_heads")
    check_snapshot(impl, "einops.merge_heads")
    check_snapshot(impl, "einops.mean_over")
    check_cases(impl, "einops.mean_over", [case(seeded(2, 3, 4, seed=21), "Batch", want=raises(ValueError))])
    check_cases(impl, "einops.merge_heads", [case(seeded(2, 3, 4, seed=16), want=raises(ValueError),
                                                  what="merge_heads(x of shape (2, 3, 4)): not 4-d")])
