"""The grading machine's GPU as the grader sees it: its name, and whether the reference's peak
table knows it.

The MFU tests (marker ``gpu_peak``) divide by the GPU's peak FLOP/s, taken from the reference's
table. On a GPU the table lacks, the reference itself cannot compute an MFU, so those tests say
nothing about the student: they are reported "not run: unknown GPU '<name>'" and left out of the
total, never charged to every student. ``--gpu require`` (the TA asked for a full GPU grade)
refuses to start on such a GPU instead.

``device_name`` is the one place the grader reads the GPU: the self-tests monkeypatch it to
grade "on" a GPU this machine does not have.

``device_uuid`` names the card for the lock graders sharing it take (gpulock.py).

torch is imported only where a GPU driver could answer: a machine with no GPU device node is
told "no CUDA" without it, so a `batch` command (whose jobs import torch themselves) starts in a
second instead of three.
"""

import glob
import importlib
import os
import re

from .paths import REFERENCE


# The self-tests' fake CUDA device: with this set the grader believes it runs on a GPU of that
# name (its GPU tests then run, and fail for want of CUDA; the report says it was faked). It is
# how two real grader processes take the device lock, and how a GPU pass is made on a CPU.
FAKE = "GRADER_FAKE_GPU"


def fake() -> str | None:
    return os.environ.get(FAKE, "").strip() or None


# Device nodes one of which a GPU torch can use needs: NVIDIA's driver, ROCm's (torch.cuda on
# AMD) and WSL2's GPU paravirtualisation. With none of them torch.cuda.is_available() is False.
DRIVER_NODES = ("/dev/nvidiactl", "/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dxg")


def _cuda():
    """torch.cuda, or None where no GPU driver is present (torch not imported then)."""
    if not any(glob.glob(pattern) for pattern in DRIVER_NODES):
        return None
    import torch
    return torch.cuda if torch.cuda.is_available() else None


def device_name() -> str | None:
    """torch.cuda.get_device_name() of the current CUDA device, or None without CUDA."""
    if fake():
        return fake()
    cuda = _cuda()
    return cuda.get_device_name() if cuda else None


def device_uuid() -> str | None:
    """The current CUDA device's UUID ('GPU-6f1c...'), None without CUDA."""
    if fake():
        return "GPU-fake-" + re.sub(r"[^A-Za-z0-9]+", "-", fake())
    cuda = _cuda()
    if cuda is None:
        return None
    uuid = str(cuda.get_device_properties(cuda.current_device()).uuid)
    return uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"


def has_peak(name: str) -> bool:
    """True if the reference's peak table has a bf16 peak for ``name`` (the MFU tests measure
    bf16 products)."""
    import torch
    from seam.callee import load_package     # (imports torch: only where a GPU is named)
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
