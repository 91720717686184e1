"""The grading machine's GPU as the grader sees it: its name, and whether the reference's peak
table knows it.

The MFU tests (marker ``gpu_peak``) divide by the GPU's peak FLOP/s, taken from the reference's
table. On a GPU the table lacks, the reference itself cannot compute an MFU, so those tests say
nothing about the student: they are reported "not run: unknown GPU '<name>'" and left out of the
total, never charged to every student. ``--gpu require`` (the TA asked for a full GPU grade)
refuses to start on such a GPU instead.

``device_name`` is the one place the grader reads the GPU: the self-tests monkeypatch it to
grade "on" a GPU this machine does not have.

Graders that share a GPU (``batch --jobs 2`` on a one-GPU node, two grades side by side) take
``device_lock`` around each GPU-marked test, so an MFU test never times its matmuls while
another grader's run on the same device. The lock is an ``flock`` on a file named by the GPU's
UUID (the same card whatever CUDA_VISIBLE_DEVICES numbers it) in LOCK_DIR, a root-only folder
(0700) no student process can reach; graders in separate containers have separate /tmp and
do not see each other's locks: give each container its own GPU.
"""

import contextlib
import fcntl
import importlib
import os
import re
import time
from pathlib import Path

import torch

from .paths import REFERENCE
from seam.callee import load_package


# The self-tests' fake CUDA device: with this set the grader believes it runs on a GPU of that
# name (its GPU tests then run, and fail for want of CUDA; the report says it was faked). It is
# how two real grader processes take the device lock, and how a GPU pass is made on a CPU.
FAKE = "GRADER_FAKE_GPU"


def fake() -> str | None:
    return os.environ.get(FAKE, "").strip() or None


def device_name() -> str | None:
    """torch.cuda.get_device_name() of the current CUDA device, or None without CUDA."""
    if fake():
        return fake()
    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_name()


def device_uuid() -> str | None:
    """The current CUDA device's UUID ('GPU-6f1c...'), None without CUDA."""
    if fake():
        return "GPU-fake-" + re.sub(r"[^A-Za-z0-9]+", "-", fake())
    if not torch.cuda.is_available():
        return None
    uuid = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    return uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"


LOCK_DIR = Path("/tmp/cs336-grader-gpu-locks")


@contextlib.contextmanager
def device_lock(uuid: str):
    """Hold the GPU ``uuid`` alone (among graders on this machine); yields the seconds waited."""
    LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9-]", "_", uuid)
    fd = os.open(LOCK_DIR / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        start = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - start
    finally:
        os.close(fd)  # closing drops the lock


def has_peak(name: str) -> bool:
    """True if the reference's peak table has a bf16 peak for ``name`` (the MFU tests measure
    bf16 products)."""
    load_package(REFERENCE, "grader_reference")   # the trusted reference, never the submission
    reference = importlib.import_module("grader_reference.benchmarking")
    try:
        reference.peak_flops(name, torch.bfloat16)
    except ValueError:
        return False
    return True


def unknown_gpu_message(name: str) -> str:
    return (f"not run: unknown GPU '{name}' (reference/benchmarking.py has no peak FLOP/s for it, "
            f"so no MFU can be graded on it; not counted)")
