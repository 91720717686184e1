"""The sandbox's limits and their defaults: the one place each is set (the CLI's --time-limit
default, grade's and batch's defaults and the handout's "30 s per test" all read Limits), and
what a student reads when a call meets one (``message``, ``explain``).

No imports beyond the standard library's smallest: batch's parent process reads the defaults
without importing torch, and the worker imports this file as it is (zygote.py copies it beside
worker.py), where neither the grader nor its packages exist."""

import dataclasses
import errno

GIB = 1 << 30
MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Limits:
    time_per_test: float = 30.0        # wall seconds for all the calls of one test: the default of
                                       # --time-limit (this is the one place it is set)
    startup: float = 60.0              # wall seconds for the worker to import torch and say ready
    # Address space the tests may use beyond what importing torch mapped (CPU torch maps ~0.75
    # GiB, CUDA torch ~3.1 GiB, so on CPU torch the whole is about 4 GiB). None when CUDA is
    # in use: it reserves terabytes of virtual memory; the container's memory limit applies.
    memory_bytes: int | None = 13 * GIB // 4
    cpu_seconds: int = 1800            # CPU time over the worker's whole life
    file_bytes: int = 64 << 20         # largest file it may write, its output log included
    disk_bytes: int = 256 << 20        # its scratch tmpfs; outside a namespace, its scratch folder
                                       # and what it wrote in the shared temporary folders together
    processes: int = 256               # processes + threads of the worker uid
    open_files: int = 256              # file descriptors open at once in each of its processes
    threads: int = 2
    strikes_per_function: int = 2      # a student function that timed out, crashed the worker or ran
                                       # out of memory this often is not called again: the tests
                                       # that call it fail at once, every other test runs
    timeouts_per_submission: int = 36  # the whole submission's time budget, in timeouts of
                                       # time_per_test: then every remaining test fails without
                                       # running (a submission that hangs every call holds a job
                                       # minutes, not an hour: startup + 36 x 30 s = 19 min)


# What each limit allows, as the student reads it: every field of Limits has its line (the fast
# loop's tests/self/unit/test_limit_messages.py fails for a new field without one).
SAID = {
    "time_per_test": lambda v: f"the sandbox allows {v:g} s per test",
    "startup": lambda v: f"the sandbox allows a worker {v:g} s to start",
    "memory_bytes": lambda v: (f"the sandbox allows {v / GIB:g} GiB of memory beyond torch's own" if v
                               else "the sandbox sets no memory limit of its own (the machine's applies)"),
    "cpu_seconds": lambda v: f"the sandbox allows {v} s of CPU time per worker",
    "file_bytes": lambda v: f"the sandbox allows files of at most {v / MIB:g} MiB, output included",
    "disk_bytes": lambda v: (f"the sandbox allows {v / MIB:g} MiB of files in all (scratch and "
                             "temporary folders together)"),
    "processes": lambda v: f"the sandbox allows {v} processes and threads",
    "open_files": lambda v: f"the sandbox allows {v} open files at once",
    "threads": lambda v: f"torch runs on {v} threads in the sandbox",
    "strikes_per_function": lambda v: f"the sandbox stops calling a function that hung or crashed {v} times",
    "timeouts_per_submission": lambda v: f"the sandbox runs no more tests after {v} timeouts",
}


def message(limit: str, limits: Limits) -> str:
    """What ``limit`` (a field of Limits) allows, with its value and its name."""
    return f"{SAID[limit](getattr(limits, limit))} (Limits.{limit})"


# What a call that met a limit sees: an error number (the rlimits: Python ignores SIGXFSZ, so a
# file past file_bytes is EFBIG, not a signal), a thread refused, or the signal that ended the
# worker; each with a hedge where the same failure has other causes.
ERRNOS = {errno.EMFILE: ("too many open files", "open_files"),
          errno.EFBIG: ("file too large", "file_bytes"),
          errno.ENOSPC: ("scratch space full", "disk_bytes"),
          errno.EAGAIN: ("if it was starting a process or thread", "processes")}
SIGNALS = {"SIGXCPU": ("CPU time", "cpu_seconds"),
           "SIGXFSZ": ("file too large", "file_bytes"),
           "SIGKILL": ("perhaps memory", "memory_bytes"),
           "SIGSEGV": ("a crash, often memory", "memory_bytes"),
           "SIGABRT": ("an abort, often memory", "memory_bytes")}
NO_THREAD = "can't start new thread"  # threading's RuntimeError when the process limit is met


def explain(failure: BaseException | str, limits: Limits) -> str:
    """The limit that ``failure`` may have met, said as "what happened: what the sandbox allows
    (Limits.name)"; "" for none, or for a limit not set (None: the worker was not given it).
    ``failure``: what a student's call raised in the worker (an error number, a thread refused),
    or the name of the signal that ended it. (What the grader itself decides, a deadline passed
    or a MemoryError replied, names its limit with ``message``.)"""
    if isinstance(failure, str):
        found = SIGNALS.get(failure)
    elif isinstance(failure, OSError) and type(failure.errno) is int:
        found = ERRNOS.get(failure.errno)
    elif isinstance(failure, RuntimeError) and NO_THREAD in str(failure):
        found = ("no new thread", "processes")
    else:
        found = None
    if found is None or (getattr(limits, found[1]) is None and found[1] != "memory_bytes"):
        return ""
    return f"{found[0]}: {message(found[1], limits)}"
