"""The sandbox worker: one submission's process, forked by the zygote (zygote_server.py) for each
submission and after each crash, in the zygote's sandbox (its root, namespaces and cgroup are
already in place). Copied into the sandbox's lib/ beside the zygote's script, which imports it by
this name; it runs no code of its own at import.

Trusted until the last lines of ``serve``: it narrows what the process can do (rlimits, its own
network namespace for a GPU worker, its uid, the syscall filter, Landlock's allow-list where it is
given one), then makes the seam's callee over its copy of the submission and only then touches
student code, answering requests on one pipe with responses on another (stdout and stderr go to
a log file). Frames are an 8-byte big-endian length followed by JSON (seam/codec.py). What the
honest-work rules forbid is already gone from the process: the zygote took it out before it
forked (seam/absent.py); the worker only tells the stand-ins whose record to charge.

It is told decisions, never a mode's name (grader/sandbox/isolation.py makes them): ``landlock``
(an allow-list, or None), ``uid`` (the leased uid to drop to, or None: it keeps the zygote's),
``pivot`` (the zygote built its root in namespaces of its own), ``cuda`` (it gets the GPU, which
it initialises itself: the zygote must not).
"""

import ctypes
import os
import resource
import signal
import sys


def _cap(which, value) -> None:
    if value is not None:
        resource.setrlimit(which, (value, value))


def address_space_bytes() -> int:
    """This process's mapped address space now (VmSize)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def set_memory_limit(headroom: int | None) -> None:
    """Cap the address space at what torch's import already mapped plus ``headroom``: the
    import alone maps ~0.75 GiB with CPU torch and ~3.1 GiB with CUDA torch, so a fixed cap
    would leave a test very different room on the two builds."""
    if headroom is not None:
        _cap(resource.RLIMIT_AS, address_space_bytes() + headroom)


def set_limits(limits: dict) -> None:
    """The rlimits, from the grader's Limits (grader/sandbox/limits.py: every value is set there)."""
    _cap(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _cap(resource.RLIMIT_FSIZE, limits["file_bytes"])
    _cap(resource.RLIMIT_NOFILE, limits["open_files"])
    _cap(resource.RLIMIT_CORE, 0)
    _cap(resource.RLIMIT_NPROC, limits["processes"])


def limited(callee_class, told):
    """The seam's Callee, whose failures also say which limit of the sandbox (``told``: the
    Limits the worker was sent) they met: "[Errno 24] ...; too many open files: the sandbox allows
    256 open files at once (Limits.open_files)" (limits.py ``explain``). Here, not in the seam:
    the students' own runs of the seam meet no sandbox."""
    from limits import explain     # grader/sandbox/limits.py, copied beside this script

    class Limited(callee_class):
        def _raised(self, e: BaseException) -> dict:
            out = super()._raised(e)
            try:
                note = explain(e, told)
            except Exception:  # noqa: BLE001 (a hostile errno or __str__: the message stays as raised)
                note = ""
            if note:
                out["raised"]["message"] += f"; {note}"
            return out
    return Limited


def drop_privileges(uid) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def own_network(cfg: dict) -> None:
    """A GPU worker may make Unix sockets (CUDA's driver makes one at start), and abstract ones are
    named per network namespace: where this is root outside a namespaced view, the worker gets a
    network namespace of its own, so two students graded at once never meet on one. Without the
    right to make one (a container without CAP_SYS_ADMIN) it goes on as before: there Landlock
    (ABI >= 6) scopes abstract sockets, and the README's mode table says what remains."""
    if not cfg["cuda"] or cfg["pivot"] or os.geteuid() != 0:
        return
    ctypes.CDLL(None, use_errno=True).unshare(0x40000000)  # CLONE_NEWNET; a failure leaves it as it was


class Charges:
    """Whom the stand-ins of what is forbidden tell when they are used (seam/absent.py's
    ``honest``): the zygote takes the forbidden code out once, before it forks, when no worker's
    record exists yet; each worker then names its own (``serve``). None: charge no one (an
    unwatched worker's, whose record is None too)."""

    honest = None

    def absent_used(self, rule, what: str, frame) -> None:
        if self.honest is not None:
            self.honest.absent_used(rule, what, frame)


CHARGES = Charges()  # what the zygote handed to absent.remove (zygote_server.py)


def record(cfg: dict, record_fd: int) -> None:
    """The record of what ran (seam/audit.py), added before any student module exists: the
    libraries are the folders of sys.path now, and the seam's."""
    from seam import audit
    roots = {q for p in sys.path if p and os.path.isdir(p) for q in (p, os.path.realpath(p))}
    roots.add(os.path.dirname(os.path.dirname(os.path.realpath(audit.__file__))))
    audit.install(record_fd, os.path.realpath(cfg["submission"]), sorted(roots, key=len, reverse=True),
                  cfg.get("removed", ()))


def serve(cfg: dict, req_fd: int, resp_fd: int, record_fd: int) -> None:
    """The worker proper, in a child forked for one submission: confine, then answer requests.
    ``record_fd``: where the record of what ran goes (seam/audit.py), guarded by the filter."""
    set_limits(cfg["limits"])
    own_network(cfg)
    drop_privileges(cfg["uid"])
    os.umask(0o077)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the zygote
    if os.getppid() != cfg["zygote_pid"]:
        os._exit(1)  # the zygote died before the line above
    # The walls go up while this is the process's only thread (torch starts its pool below):
    import seccomp                 # grader/sandbox/seccomp.py, copied beside this script
    seccomp.install(unix_sockets=cfg["cuda"],  # every mode: no chmod, keyrings, SysV IPC, sockets
                    guard=record_fd)           # (Unix ones for CUDA's driver alone), namespaces;
                                               # the record's descriptor stays as it is
    if cfg["landlock"] is not None:  # from here on: its allow-list only (no /proc of others, no TCP)
        import landlock            # grader/sandbox/landlock.py, copied beside this script
        landlock.restrict(cfg["landlock"]["read"] + [f"/proc/{os.getpid()}"], cfg["landlock"]["write"],
                          cfg["landlock"]["devices"])
    record(cfg, record_fd)
    import torch
    torch.set_num_threads(cfg["limits"]["threads"])
    set_memory_limit(cfg["limits"]["memory_bytes"])  # torch is mapped already: headroom for tests
    from seam import codec
    from seam.callee import Callee, answer
    from seam.frames import write_frame
    from limits import Limits      # grader/sandbox/limits.py, copied beside this script
    callee = limited(Callee, Limits(**cfg["limits"]))(cfg["submission"], "submission", filtered=True,
                                                      given=os.path.join(cfg["lib"], "given"),
                                                      watched=cfg.get("watched", True))
    CHARGES.honest = callee.honest  # before any student module is imported
    write_frame(resp_fd, codec.dumps({"ready": True}))
    answer(callee, req_fd, resp_fd)  # never returns: it exits when the grader closes the pipe
