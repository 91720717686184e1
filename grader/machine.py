"""What the machine gives a run: ``check_options`` settles, once per run, what is the same for
every submission (the GPU, the isolation mode, the limits) after grader/options.py has checked
the Options themselves; a reason in one line where this machine cannot give what they ask.

Kept apart from grade.py, and free of torch and pytest, so that `batch` checks its options
before starting its jobs without importing either (its jobs import them to grade)."""

import dataclasses

from . import gpu as gpu_info
from .gpulock import lock_dir
from .options import Options
from .sandbox.isolation import Isolation, IsolationUnavailable
from .sandbox.limits import Limits


@dataclasses.dataclass(frozen=True)
class Setup:
    """What every submission of one run shares, settled once by ``check_options``."""
    options: Options           # what the run was asked for
    gpu_name: str | None       # this machine's CUDA device, None without CUDA
    gpu_uuid: str | None       # its UUID: the GPU tests hold its lock (gpu.device_lock)
    unknown_gpu: str | None    # gpu_name, when the reference's peak table lacks it
    isolation: Isolation

    @property
    def gpu(self) -> str:
        return self.options.gpu

    @property
    def problems(self) -> list[str] | None:
        return self.options.problems

    @property
    def time_limit(self) -> float:
        return self.options.time_limit

    @property
    def cuda(self) -> bool:
        return self.gpu_name is not None

    @property
    def uses_cuda(self) -> bool:
        return self.cuda and self.gpu != "skip"

    @property
    def limits(self) -> Limits:
        return Limits(time_per_test=self.time_limit,
                      memory_bytes=None if self.uses_cuda else Limits.memory_bytes)


def check_options(options: Options, batch: bool = False) -> tuple[Setup | None, str | None]:
    """(the run's Setup, None), or (None, the one-line reason) when this machine cannot give
    what ``options`` (already checked: grader/options.py) ask for: no report at all. ``batch``:
    for a class (``Isolation.detect``'s: no mode that leaves a student's files for the next)."""
    gpu = options.gpu
    gpu_name = gpu_info.device_name()
    if gpu in ("require", "only") and gpu_name is None:
        what = "runs only the GPU tests: it would grade nothing" if gpu == "only" else "needs them graded"
        return None, f"--gpu {gpu}, but CUDA is not available here ({what}); no report written"
    unknown_gpu = gpu_name if gpu_name and gpu != "skip" and not gpu_info.has_peak(gpu_name) else None
    if gpu == "require" and unknown_gpu:
        return None, (f"--gpu require, but this GPU, '{gpu_name}', has no peak FLOP/s in "
                      f"reference/benchmarking.py (PEAK_FLOPS, DEVICE_NAME_RULES), so its MFU tests "
                      f"cannot be graded; add it there, or use --gpu auto to leave them out; "
                      f"no report written")
    try:
        confinement = Isolation.detect(options.isolation, batch=batch)
    except IsolationUnavailable as e:
        return None, f"{e}; no report written"
    uuid = gpu_info.device_uuid() if gpu_name and gpu != "skip" else None
    if uuid:
        try:  # now, not in each GPU test: a lock folder that cannot be trusted would fail them all
            lock_dir()
        except (RuntimeError, OSError) as e:
            return None, f"{e}; no report written"
    return Setup(options, gpu_name, uuid, unknown_gpu, confinement), None
