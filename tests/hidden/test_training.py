"""training (hidden): get_batch on many memmaps (windows, uniform starts, lazy reads,
seeded reproducibility), train_step / checkpoints / bf16 against PyTorch's own loop on many seeds,
and bad input next to valid neighbours."""

import functools
import math
import random

import numpy as np
import pytest
import torch

from tests.checks import case, check_cases, expect_equal, fail, raises, returns
from tests.common.training import (Windows, bf16_due, expect_bf16_step, expect_memmap_batch, expect_resume_exact,
                                   expect_train_step_run, expect_windows, fp32_oracle, resume_due)
from seam.probes.training import token_data


def memmap_case(n: int, dtype: str, B: int, T: int, seed: int, fmt: str, device: str = "cpu"):
    what = (f"get_batch(np.memmap of {n} {dtype} token ids ({fmt}), batch_size={B}, "
            f"context_length={T}, '{device}', seeded generator)")
    return case(n=n, dtype=dtype, batch_size=B, context_length=T, seed=seed, fmt=fmt, device=device,
                want=Windows(token_data(n, dtype), B, T, "cuda:0" if device == "cuda" else device), what=what)


def random_memmaps(seed: int, count: int) -> list:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        dtype = rng.choice(["uint8", "uint16", "int32", "int64"])
        T = rng.randint(1, 64)
        n = rng.randint(T + 1, 251 if dtype == "uint8" else 5000)
        T = min(T, n - 1)
        cases.append(memmap_case(n, dtype, rng.randint(1, 24), T, rng.randint(0, 10**6), rng.choice(["bin", "npy"])))
    return cases


@pytest.mark.points(2)
def test_get_batch_random_memmaps(impl):
    """get_batch on 40 random memmaps (uint8/uint16/int32/int64, raw and .npy): int64 windows, y shifted"""
    cases = random_memmaps(901, 40) + [memmap_case(17, "uint16", 5, 16, 3, "bin"),   # a single window
                                       memmap_case(18, "int64", 64, 16, 4, "npy")]   # two windows, many rows
    check_cases(impl, "probes.get_batch_memmap", cases, compare=expect_memmap_batch)


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
    cases = [memmap_case(n, "int32", rows, T, 7000 + i, "bin") for i in range(calls_n)]
    starts = []  # each call's window starts, collected as its windows are checked
    check_cases(impl, "probes.get_batch_memmap", cases,
                compare=lambda got, due, what: starts.append(expect_windows(got, due, what)))
    counts = np.bincount(np.concatenate(starts), minlength=S)
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
@pytest.mark.how("caught")
def test_get_batch_reads_only_windows(impl):
    """on a 32 MiB memmap, get_batch maps only its windows into memory, never the whole file"""
    n, B, T = 8 * 2**20, 2, 64
    what = f"get_batch(np.memmap of {n} uint32 tokens (32 MiB), {B}, {T}, 'cpu')"
    [got] = check_cases(impl, "probes.get_batch_pages_touched", [case(
        n=n, batch_size=B, context_length=T, seed=11, want=Windows(np.arange(n, dtype=np.uint32), B, T), what=what)],
        compare=expect_windows)
    # The file's resident pages in the implementation's process, from /proc/<pid>/smaps: read by
    # the grader from outside where it may (nothing the student's code does can change that
    # reading; a fresh mapping starts at 0), else by the probe before and after the call.
    outside = impl.resident_bytes(*got["mapping"])
    if outside is None and got["after"] is None:
        fail(f"{what}: could not read /proc/self/smaps", None, "a Linux grader",
             "this check measures the memmap's resident pages; it runs on the (Linux) grader")
    touched = outside if outside is not None else got["after"] - got["before"]
    # Reading B windows of T + 1 tokens touches at most 2 pages per window; a page here is
    # at most one 2 MiB folio (large page-cache folios / huge pages on x86-64), so a correct
    # get_batch maps <= 2 · B · 2 MiB = 8 MiB. Converting the whole memmap (np.asarray(data,
    # dtype=np.int64), torch.tensor(data), data.astype(...)) maps all 32 MiB. Threshold: half.
    if touched > got["file_bytes"] // 2:
        fail(f"{what} mapped {touched / 2**20:.1f} MiB of the 32 MiB file into memory", touched,
             f"at most {got['file_bytes'] // 2} bytes (only the sampled windows)",
             "index the memmap with the (B, T + 1) window indices; never convert the whole array")


def expect_reproducible(got: dict, due: str, what: str) -> None:
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
def test_get_batch_reproducible(impl):
    """same seeded generator → same batch; other seed or next call → another; global RNG when None"""
    check_cases(impl, "probes.get_batch_reproducibility", [case(
        n=100_000, batch_size=8, context_length=16, seed=5, want="one batch per seed, another for the next call",
        what="get_batch(np.memmap of 100,000 tokens, 8, 16, 'cpu', generator=...)")], compare=expect_reproducible)


@pytest.mark.points(1)
def test_get_batch_bad_input(impl):
    """non-positive sizes, 2-D or float data, len(data) <= T, a bad device: ValueError; neighbours work"""
    ints, bad, ok = np.arange(20, dtype=np.int64), raises("ValueError"), returns()
    cases = [
        case(ints, 0, 4, "cpu", want=bad), case(ints, 1, 4, "cpu", want=ok), case(ints, -3, 4, "cpu", want=bad),
        case(ints, 2, 0, "cpu", want=bad), case(ints, 2, 1, "cpu", want=ok),
        case(ints, 2, 19, "cpu", want=ok), case(ints, 2, 20, "cpu", want=bad), case(ints, 2, 25, "cpu", want=bad),
        case(np.zeros((4, 5), dtype=np.int64), 2, 2, "cpu", want=bad),
        case(np.zeros((20,), dtype=np.int64), 2, 2, "cpu", want=ok),
        case(np.arange(20, dtype=np.float32), 2, 4, "cpu", want=bad),
        case(np.arange(20, dtype=np.float64), 2, 4, "cpu", want=bad),
        case(np.arange(20, dtype=np.uint16), 2, 4, "cpu", want=ok),
        case(ints, 2, 4, "nodevice", want=bad), case(ints, 2, 4, "cpu", want=ok),
    ]
    check_cases(impl, "training.get_batch", cases)


@pytest.mark.points(1)
def test_train_step_random(impl):
    """train_step on 6 seeds and batch sizes: losses, parameters, one step, cleared grads vs PyTorch"""
    rng = random.Random(902)
    calls = [(seed, rng.randint(1, 5), rng.choice([1, 3, 16, 64])) for seed in range(1, 7)]
    cases = [case(seed=seed, steps=steps, batch=batch,
                  what=f"{steps} × train_step(mlp seed {seed}, optimizer, x (batch {batch}), y)")
             for seed, steps, batch in calls]
    check_cases(impl, "probes.train_step_run", cases, oracle=fp32_oracle, compare=expect_train_step_run)


@pytest.mark.points(2)
@pytest.mark.how
def test_checkpoint_resume_random(impl):
    """resuming at steps 0..N (str and PathLike paths) continues bit for bit like the uninterrupted run"""
    calls = [(1, 5, 1, 8, False), (2, 7, 4, 32, True), (3, 4, 0, 16, False), (4, 3, 3, 4, True),
             (5, 8, 6, 1, False)]
    cases = [case(seed=seed, total_steps=total, save_at=save_at, batch=batch, pathlike=pathlike,
                  want=resume_due(save_at),
                  what=(f"train {save_at}, save_checkpoint, load_checkpoint ({'pathlib.Path' if pathlike else 'str'} "
                        f"path) into a fresh model and optimizer, train {total - save_at} (seed {seed}, batch {batch})"))
             for seed, total, save_at, batch, pathlike in calls]
    check_cases(impl, "probes.checkpoint_resume", cases, compare=expect_resume_exact)
    # load with weights_only=True (the handout): a checkpoint is never unpickled as arbitrary objects
    check_cases(impl, "probes.load_checkpoint_smuggled_object", [case(
        want=False, what="load_checkpoint(path, model, optimizer) of a file that also holds an arbitrary "
                         "pickled object: was the object unpickled (its code run)? "
                         "torch.load(..., weights_only=True) refuses it")])


@pytest.mark.points(1)
@pytest.mark.how
def test_bf16_step_random(impl):
    """bf16_train_step on 6 seeds and batches: bf16 matmuls, float32 master weights and state, loss within 1%"""
    cases = [case(seed=seed, batch=batch, what=f"bf16_train_step(mlp seed {seed}, optimizer, x (batch {batch}), y, 'cpu')")
             for seed, batch in zip(range(1, 7), (8, 16, 32, 48, 64, 128))]
    check_cases(impl, "probes.bf16_step_run", cases, oracle=bf16_due, compare=expect_bf16_step)


@pytest.mark.points(1)
def test_steps_bad_input(impl):
    """a target shaped unlike the output, a bad device_type, a negative step: ValueError; neighbours work"""
    B, bad, loss = 8, raises("ValueError"), returns(float)
    step = functools.partial(case, seed=0, batch=B)  # the model's output is (8,)
    check_cases(impl, "probes.train_step_shape_mismatch",
                [step(target_shape=shape, want=want, what=f"train_step with model output (8,) and target {shape}")
                 for shape, want in (((B, 1), bad), ((1,), bad), ((B,), loss))])
    check_cases(impl, "probes.bf16_step_bad", [
        step(device_type="cuda", want=bad, what="bf16_train_step(..., CPU tensors, device_type='cuda')"),
        step(device_type="mps", want=bad, what="bf16_train_step(..., device_type='mps')"),
        step(device_type="gpu", want=bad, what="bf16_train_step(..., device_type='gpu')"),
        # x's own device type, but neither "cpu" nor "cuda"
        step(device_type="meta", device="meta", want=bad,
             what="bf16_train_step(..., meta tensors, device_type='meta')"),
        step(device_type="cpu", target_shape=(B, 1), want=bad,
             what="bf16_train_step with model output (8,) and target (8, 1)"),
        step(device_type="cpu", want=loss, what="bf16_train_step(..., CPU tensors, device_type='cpu')")])
    check_cases(impl, "probes.save_checkpoint_bad_step", [
        case(step=-1, want=bad, what="save_checkpoint(model, optimizer, step=-1, path)"),
        case(step=0, want=returns(), what="save_checkpoint(model, optimizer, step=0, path)")])


@pytest.mark.points(1)
@pytest.mark.gpu
@pytest.mark.time_limit(60)
def test_training_on_cuda(impl):
    """on the GPU: get_batch returns CUDA tensors; bf16_train_step runs bf16 matmuls under CUDA autocast"""
    check_cases(impl, "probes.get_batch_memmap", [memmap_case(3000, "uint16", 8, 32, 1, "bin", "cuda")],
                compare=expect_memmap_batch)
    check_cases(impl, "probes.bf16_step_run",
                [case(seed=3, batch=64, device_type="cuda", what="bf16_train_step(mlp on CUDA, optimizer, x, y, 'cuda')")],
                oracle=bf16_due, compare=expect_bf16_step)
