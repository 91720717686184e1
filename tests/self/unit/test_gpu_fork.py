"""CUDA and the zygote's fork: what a GPU machine showed (benchmarks/gpu_check.py on an H200), kept
checkable on the CPU. A zygote that initialised the CUDA driver hands every forked worker a
dead GPU (and CPU tests that step a torch optimizer fail too), so a GPU grade's zygote takes no
optimizer step, and a zygote that finds the driver mapped refuses to start."""

import mmap
import subprocess
import sys

from grader.paths import ROOT
from grader.sandbox.zygote import STEPS_AN_OPTIMIZER, warms_optimizers


def test_a_gpu_grade_s_zygote_never_steps_an_optimizer():
    for problems in (None, sorted(STEPS_AN_OPTIMIZER)):
        assert warms_optimizers(problems) and not warms_optimizers(problems, cuda=True)


def test_the_zygote_sees_the_driver_mapped(tmp_path):
    """driver_loaded reads /proc/self/maps: false here (a CPU torch never loads libcuda), true once
    a file of that name is mapped, as the CUDA runtime maps the driver at its first call."""
    fake = tmp_path / "libcuda.so.1"
    fake.write_bytes(b"\0" * mmap.PAGESIZE)
    code = ("import mmap, sys\nsys.path.insert(0, 'grader/sandbox')\nfrom zygote_server import driver_loaded\n"
            "before = driver_loaded()\n"
            f"f = open({str(fake)!r}, 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
            "print(before, driver_loaded())\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["False", "True"]
