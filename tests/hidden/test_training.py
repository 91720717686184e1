"""Problem 9 · training (hidden): get_batch on many memmaps (windows, uniform starts, lazy reads,
seeded reproducibility), train_step / checkpoints / bf16 against PyTorch's own loop on many seeds,
and bad input next to valid neighbours."""

import math
import random

import numpy as np
import pytest
import torch

from tests.public.test_training import (expect_batch_tensors, expect_bf16_step, expect_resume_exact,
                                        expect_train_step_run, window_starts)
from tests.seam.checks import call_text, expect_equal, fail, expect_outcome
from tests.seam.probes.training import token_data


def raised(value, what: str):
    if isinstance(value, Exception):
        fail(what, value, "a result")
    return value


@pytest.mark.points(2)
def test_get_batch_random_memmaps(impl):
    """get_batch on 40 random memmaps (uint8/uint16/int32/int64, raw and .npy): int64 windows, y shifted"""
    rng = random.Random(901)
    calls = []
    for i in range(40):
        dtype = rng.choice(["uint8", "uint16", "int32", "int64"])
        T = rng.randint(1, 64)
        n = rng.randint(T + 1, 251 if dtype == "uint8" else 5000)
        T = min(T, n - 1)
        calls.append((n, dtype, rng.randint(1, 24), T, rng.randint(0, 10**6), rng.choice(["bin", "npy"])))
    calls.append((17, "uint16", 5, 16, 3, "bin"))   # a single window
    calls.append((18, "int64", 64, 16, 4, "npy"))   # two windows, many rows
    for args, got in zip(calls, impl.map("probes.get_batch_memmap", calls)):
        n, dtype, B, T, seed, fmt = args
        what = (f"get_batch(np.memmap of {n} {dtype} token ids ({fmt}), batch_size={B}, "
                f"context_length={T}, 'cpu', seeded generator)")
        got = raised(got, what)
        expect_equal(got["returned"], "tuple", f"{what} returns")
        expect_batch_tensors(got["x"], got["y"], B, T, what)
        window_starts(got["x"], got["y"], token_data(n, dtype), what)
        expect_equal((got["x_device"], got["y_device"]), ("cpu", "cpu"), f"{what}: devices of x and y")


def binomial_bounds(n: int, p: float, alpha: float) -> tuple[int, int]:
    """(lo, hi) with P(X < lo) <= alpha and P(X > hi) <= alpha for X ~ Binomial(n, p), from the
    exact probability mass function (summed in log space, no normal approximation)."""
    log_pmf = [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
               + k * math.log(p) + (n - k) * math.log1p(-p) for k in range(n + 1)]
    pmf = [math.exp(v) for v in log_pmf]
    lo, tail = 0, 0.0
    while tail + pmf[lo] <= alpha:
        tail += pmf[lo]
        lo += 1
    hi, tail = n, 0.0
    while tail + pmf[hi] <= alpha:
        tail += pmf[hi]
        hi -= 1
    return lo, hi


@pytest.mark.points(2)
@pytest.mark.time_limit(60)
def test_get_batch_starts_uniform(impl):
    """40,000 starts are uniform over every valid start 0..len-T-1, both extremes included"""
    T, S, calls_n, rows = 5, 40, 4, 10_000
    n = T + S                                            # valid starts: 0 .. S - 1 = n - T - 1
    calls = [(n, "int32", rows, T, 7000 + i, "bin") for i in range(calls_n)]
    counts = np.zeros(S, dtype=np.int64)
    for args, got in zip(calls, impl.map("probes.get_batch_memmap", calls)):
        what = f"get_batch(np.memmap of {n} tokens, batch_size={rows}, context_length={T}, seeded generator)"
        got = raised(got, what)
        expect_batch_tensors(got["x"], got["y"], rows, T, what)
        starts = window_starts(got["x"], got["y"], token_data(n, "int32"), what)
        counts += np.bincount(starts, minlength=S)
    draws = calls_n * rows
    # Each count is Binomial(40,000, 1/40) for ANY correct get_batch (the starts are independent
    # and uniform over the S = 40 valid starts; the seeds are fixed, but nothing about them favours
    # a start). A false alarm needs one of the 2·S = 80 tails to happen; each tail has probability
    # <= 1e-6 / 80 by binomial_bounds (exact pmf), so by the union bound the false-alarm rate is
    # <= 1e-6. The bounds come out as [831, 1179] around the mean 1000: a start that is never
    # drawn (the range's last start left out) or drawn twice as often fails by a wide margin.
    lo, hi = binomial_bounds(draws, 1 / S, 1e-6 / (2 * S))
    for s, label in ((0, "first start 0"), (S - 1, f"last start len(data) - T - 1 = {S - 1}")):
        if counts[s] == 0:
            fail(f"get_batch never drew the {label} in {draws} draws (len(data) = {n}, T = {T})",
                 0, f"about {draws // S}", "starts are uniform over 0 .. len(data) - T - 1 inclusive")
    for s in range(S):
        if not lo <= counts[s] <= hi:
            fail(f"start {s} was drawn {int(counts[s])} times in {draws} draws over {S} valid starts "
                 f"(len(data) = {n}, T = {T})", int(counts[s]), f"between {lo} and {hi}",
                 "starts must be uniform over 0 .. len(data) - T - 1; false-alarm rate <= 1e-6")


@pytest.mark.points(1)
def test_get_batch_reads_only_windows(impl):
    """on a 32 MiB memmap, get_batch maps only its windows into memory, never the whole file"""
    n, B, T = 8 * 2**20, 2, 64
    got = impl.probes.get_batch_pages_touched(n, B, T, 11)
    what = f"get_batch(np.memmap of {n} uint32 tokens (32 MiB), {B}, {T}, 'cpu')"
    expect_batch_tensors(got["x"], got["y"], B, T, what)
    window_starts(got["x"], got["y"], np.arange(n, dtype=np.uint32), what)
    if got["after"] is None:
        fail(f"{what}: could not read /proc/self/smaps", None, "a Linux grader",
             "this check measures the memmap's resident pages; it runs on the (Linux) grader")
    touched = got["after"] - got["before"]
    # The file's resident pages in this process, from /proc/self/smaps, before and after the
    # call. Reading B windows of T + 1 tokens touches at most 2 pages per window; a page here is
    # at most one 2 MiB folio (large page-cache folios / huge pages on x86-64), so a correct
    # get_batch maps <= 2 · B · 2 MiB = 8 MiB. Converting the whole memmap (np.asarray(data,
    # dtype=np.int64), torch.tensor(data), data.astype(...)) maps all 32 MiB. Threshold: half.
    if touched > got["file_bytes"] // 2:
        fail(f"{what} mapped {touched / 2**20:.1f} MiB of the 32 MiB file into memory", touched,
             f"at most {got['file_bytes'] // 2} bytes (only the sampled windows)",
             "index the memmap with the (B, T + 1) window indices; never convert the whole array")


@pytest.mark.points(1)
def test_get_batch_reproducible(impl):
    """same seeded generator → same batch; other seed or next call → another; global RNG when None"""
    got = impl.probes.get_batch_reproducibility(100_000, 8, 16, 5)
    what = "get_batch(np.memmap of 100,000 tokens, 8, 16, 'cpu', generator=...)"
    a, b = got["same_seed"]
    expect_equal(b, a, f"{what}: two generators seeded 5 give the same x")
    # 8 starts out of 99,984: a correct get_batch repeats a batch with probability ~1e-40.
    if torch.equal(got["other_seed"], a):
        fail(f"{what}: seeds 5 and 6 gave the same batch", got["other_seed"], "a different batch",
             "draw the starts with torch.randint(..., generator=generator)")
    first, second = got["consecutive"]
    if torch.equal(first, second):
        fail(f"{what}: two calls with one generator gave the same batch", second, "a different batch",
             "the generator's state must advance")
    g1, g2 = got["global_seed"]
    expect_equal(g2, g1, f"{what.replace('generator=...', 'generator=None')}: after torch.manual_seed(5) twice",
                 note="generator=None uses torch's global RNG")


@pytest.mark.points(1)
def test_get_batch_bad_input(impl):
    """non-positive sizes, 2-D or float data, len(data) <= T, a bad device: ValueError; neighbours work"""
    ints = np.arange(20, dtype=np.int64)
    cases = [  # (args, expected outcome)
        ((ints, 0, 4, "cpu"), "ValueError"), ((ints, 1, 4, "cpu"), "ok"),
        ((ints, -3, 4, "cpu"), "ValueError"),
        ((ints, 2, 0, "cpu"), "ValueError"), ((ints, 2, 1, "cpu"), "ok"),
        ((ints, 2, 19, "cpu"), "ok"), ((ints, 2, 20, "cpu"), "ValueError"), ((ints, 2, 25, "cpu"), "ValueError"),
        ((np.zeros((4, 5), dtype=np.int64), 2, 2, "cpu"), "ValueError"),
        ((np.zeros((20,), dtype=np.int64), 2, 2, "cpu"), "ok"),
        ((np.arange(20, dtype=np.float32), 2, 4, "cpu"), "ValueError"),
        ((np.arange(20, dtype=np.float64), 2, 4, "cpu"), "ValueError"),
        ((np.arange(20, dtype=np.uint16), 2, 4, "cpu"), "ok"),
        ((ints, 2, 4, "nodevice"), "ValueError"), ((ints, 2, 4, "cpu"), "ok"),
    ]
    calls = [args for args, _ in cases]
    for (args, want), got in zip(cases, impl.map("training.get_batch", calls)):
        expect_outcome(got, want, call_text("training.get_batch", args))


@pytest.mark.points(1)
def test_train_step_random(impl):
    """train_step on 6 seeds and batch sizes: losses, parameters, one step, cleared grads vs PyTorch"""
    rng = random.Random(902)
    calls = [(seed, rng.randint(1, 5), rng.choice([1, 3, 16, 64])) for seed in range(1, 7)]
    for args, got in zip(calls, impl.map("probes.train_step_run", calls)):
        seed, steps, batch = args
        what = f"{steps} × train_step(mlp seed {seed}, AdamW, x (batch {batch}), y)"
        expect_train_step_run(raised(got, what), seed, steps, batch, what)


@pytest.mark.points(2)
def test_checkpoint_resume_random(impl):
    """resuming at steps 0..N (str and PathLike paths) continues bit for bit like the uninterrupted run"""
    calls = [(1, 5, 1, 8, False), (2, 7, 4, 32, True), (3, 4, 0, 16, False), (4, 3, 3, 4, True),
             (5, 8, 6, 1, False)]
    for args, got in zip(calls, impl.map("probes.checkpoint_resume", calls)):
        seed, total, save_at, batch, pathlike = args
        kind = "pathlib.Path" if pathlike else "str"
        what = (f"train {save_at}, save_checkpoint, load_checkpoint ({kind} path) into a fresh model "
                f"and AdamW, train {total - save_at} (seed {seed}, batch {batch})")
        expect_resume_exact(raised(got, what), save_at, what)


@pytest.mark.points(1)
def test_bf16_step_random(impl):
    """bf16_train_step on 6 seeds and batches: bf16 matmuls, float32 master weights and state, loss within 1%"""
    calls = [(seed, batch) for seed, batch in zip(range(1, 7), (8, 16, 32, 48, 64, 128))]
    for args, got in zip(calls, impl.map("probes.bf16_step_run", calls)):
        seed, batch = args
        what = f"bf16_train_step(mlp seed {seed}, AdamW, x (batch {batch}), y, 'cpu')"
        expect_bf16_step(raised(got, what), seed, batch, what)


@pytest.mark.points(1)
def test_steps_bad_input(impl):
    """a target shaped unlike the output, a bad device_type, a negative step: ValueError; neighbours work"""
    B = 8
    cases = [
        ("probes.train_step_shape_mismatch", (0, B, (B, 1)), "ValueError",
         "train_step with model output (8,) and target (8, 1)"),
        ("probes.train_step_shape_mismatch", (0, B, (1,)), "ValueError",
         "train_step with model output (8,) and target (1,)"),
        ("probes.train_step_shape_mismatch", (0, B, (B,)), "ok",
         "train_step with model output (8,) and target (8,)"),
        ("probes.bf16_step_bad", (0, B, "cuda"), "ValueError", "bf16_train_step(..., CPU tensors, device_type='cuda')"),
        ("probes.bf16_step_bad", (0, B, "mps"), "ValueError", "bf16_train_step(..., device_type='mps')"),
        ("probes.bf16_step_bad", (0, B, "gpu"), "ValueError", "bf16_train_step(..., device_type='gpu')"),
        ("probes.bf16_step_bad", (0, B, "cpu", (B, 1)), "ValueError",
         "bf16_train_step with model output (8,) and target (8, 1)"),
        ("probes.bf16_step_bad", (0, B, "cpu"), "ok", "bf16_train_step(..., CPU tensors, device_type='cpu')"),
        ("probes.save_checkpoint_bad_step", (-1,), "ValueError", "save_checkpoint(model, optimizer, step=-1, path)"),
        ("probes.save_checkpoint_bad_step", (0,), "ok", "save_checkpoint(model, optimizer, step=0, path)"),
    ]
    for target, args, want, what in cases:
        got = impl.map(target, [args])[0]
        expect_outcome(got, want, what)
        if want == "ok" and target != "probes.save_checkpoint_bad_step":
            expect_equal(type(got), float, f"{what}: type of the returned loss")


@pytest.mark.points(1)
@pytest.mark.gpu
@pytest.mark.time_limit(60)
def test_training_on_cuda(impl):
    """on the GPU: get_batch returns CUDA tensors; bf16_train_step runs bf16 matmuls under CUDA autocast"""
    data = token_data(3000, "uint16")
    what = "get_batch(np.memmap of 3000 uint16 ids, 8, 32, 'cuda', seeded generator)"
    got = impl.probes.get_batch_memmap(3000, "uint16", 8, 32, 1, "bin", "cuda")
    expect_equal(got["returned"], "tuple", f"{what} returns")
    expect_batch_tensors(got["x"], got["y"], 8, 32, what)
    window_starts(got["x"], got["y"], data, what)
    expect_equal((got["x_device"], got["y_device"]), ("cuda:0", "cuda:0"), f"{what}: devices of x and y")
    got = impl.probes.bf16_step_run(3, 64, "cuda")
    expect_bf16_step(got, 3, 64, "bf16_train_step(mlp on CUDA, AdamW, x, y, 'cuda')", device="cuda")
