"""training (public). get_batch windows, the notes' training step, resuming from a
checkpoint, bf16 autocast. Oracles: the same loop (torch's F.mse_loss, the probes' optimizer with
AdamW's state: seam/adamw_shaped.py), rebuilt here from the same seeds as the probes use."""

import numpy as np
import pytest

from tests.checks import EXACT, call_text, expect_equal, expect_raises
from tests.common.training import (Windows, bf16_due, expect_batch_tensors, expect_bf16_step, expect_memmap_batch,
                                   expect_resume_exact, expect_train_step_run, fp32_oracle, resume_due,
                                   window_starts)
from seam.probes.training import token_data
from tests.snapshot import check_snapshot

# Deterministic cases only: with len(data) == T + 1 there is a single window (start 0).
SNAPSHOT_INPUTS = {
    "training.get_batch": [
        (np.arange(9, dtype=np.int64), 3, 8, "cpu"),
        (np.array([7, 3, 9, 1, 4], dtype=np.uint16), 2, 4, "cpu"),
        (np.array([5, 6], dtype=np.int32), 1, 1, "cpu"),
        (np.arange(8, dtype=np.int64), 2, 8, "cpu"),              # no room for a target
        (np.zeros((4, 5), dtype=np.int64), 2, 2, "cpu"),           # not 1-D
        (np.arange(20, dtype=np.float32), 2, 4, "cpu"),            # not integer token ids
        (np.arange(20, dtype=np.int64), 0, 4, "cpu"),              # batch_size 0
    ],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "training.get_batch": EXACT,
}


# ----------------------------------------------------------------------------- tests


@pytest.mark.points(1)
def test_get_batch_docstring_example(impl):
    """get_batch(np.arange(100), 16, 8): int64 (16, 8) windows s..s+7, 0 <= s <= 91, y = x + 1"""
    data = np.arange(100, dtype=np.int64)
    what = call_text("training.get_batch", (data, 16, 8, "cpu"))
    out = impl.training.get_batch(data, 16, 8, "cpu")
    expect_equal(type(out), tuple, f"{what}: returns a tuple (x, y)")
    x, y = out
    expect_batch_tensors(x, y, 16, 8, what)
    window_starts(x, y, data, what)
    expect_equal(y, x + 1, f"{what}: y == x + 1 on np.arange data")


@pytest.mark.points(1)
def test_get_batch_single_window_and_errors(impl):
    """one possible window (len(data) == T + 1), and bad shapes, dtypes and sizes (snapshots)"""
    check_snapshot(impl, "training.get_batch")
    expect_raises(ValueError, lambda: impl.training.get_batch(np.arange(20), 2, 4, "nodevice"),
                  call_text("training.get_batch", (np.arange(20), 2, 4, "nodevice")))


@pytest.mark.points(1)
def test_get_batch_memmap(impl):
    """get_batch on an np.load(..., mmap_mode='r') token file: int64 windows on the CPU"""
    got = impl.probes.get_batch_memmap(n=1000, dtype="uint16", batch_size=8, context_length=16, seed=0, fmt="npy")
    expect_memmap_batch(got, Windows(token_data(1000, "uint16"), 8, 16),
                        "get_batch(np.load('tokens.npy', mmap_mode='r') of 1000 uint16 ids, 8, 16, 'cpu')")


@pytest.mark.points(1)
def test_train_step_matches_pytorch_loop(impl):
    """train_step: the MSE loss before the update, one optimizer step, gradients cleared (3 steps)"""
    got = impl.probes.train_step_run(seed=0, steps=3, batch=32)
    expect_train_step_run(got, fp32_oracle(0, 3, 32), "3 × train_step(mlp, optimizer, x, y)")


@pytest.mark.points(1)
def test_checkpoint_resume_is_exact(impl):
    """6 steps equal 3 steps + save_checkpoint + load_checkpoint (fresh objects) + 3 steps, bit for bit"""
    got = impl.probes.checkpoint_resume(seed=0, total_steps=6, save_at=3, batch=16)
    expect_resume_exact(got, resume_due(3), "train 3, save, load into a fresh model and optimizer, train 3")


@pytest.mark.points(1)
@pytest.mark.how
def test_bf16_step(impl):
    """bf16_train_step: bf16 matmuls in the forward, float32 weights and optimizer state, no GradScaler"""
    got = impl.probes.bf16_step_run(seed=0, batch=32)
    expect_bf16_step(got, bf16_due(0, 32), "bf16_train_step(mlp, optimizer, x, y, 'cpu')")
