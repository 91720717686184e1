"""The sandbox's limits and their defaults: the one place each is set (the CLI's --time-limit
default, grade's and batch's defaults and the handout's "30 s per test" all read Limits).
No heavy imports here: batch's parent process reads the defaults without importing torch."""

import dataclasses

GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class Limits:
    time_per_test: float = 30.0        # wall seconds for all the calls of one test: the default of
                                       # --time-limit (this is the one place it is set)
    startup: float = 60.0              # wall seconds for the worker to import torch and say ready
    # Address space the tests may use beyond what importing torch mapped (CPU torch maps ~0.75
    # GiB, CUDA torch ~3.1 GiB, so this is the old 4 GiB cap on CPU torch). None when CUDA is
    # in use: it reserves terabytes of virtual memory; the container's memory limit applies.
    memory_bytes: int | None = 13 * GIB // 4
    cpu_seconds: int = 1800            # CPU time over the worker's whole life
    file_bytes: int = 64 << 20         # largest file it may write, its output log included
    disk_bytes: int = 256 << 20        # its scratch tmpfs
    processes: int = 256               # processes + threads of the worker uid
    threads: int = 2
    strikes_per_function: int = 2      # a student function that timed out, crashed the worker or ran
                                       # out of memory this often is not called again: the tests
                                       # that call it fail at once, every other test runs
    timeouts_per_submission: int = 36  # the whole submission's time budget, in timeouts of
                                       # time_per_test: then every remaining test fails without
                                       # running (a submission that hangs every call holds a job
                                       # minutes, not an hour: startup + 36 x 30 s = 19 min)

    def describe_memory(self) -> str:
        return (f"{self.memory_bytes / GIB:g} GiB beyond torch's own" if self.memory_bytes
                else "none set")
