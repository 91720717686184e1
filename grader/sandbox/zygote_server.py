"""The zygote's own program: run as ``python -I zygote_server.py CONFIG_JSON`` by the grader
(zygote.py, under its isolation mode's launcher), or entered by a fork of a batch job's template
(spawn.py calls ``settle`` and ``serve_forks``). The grader's side of it is zygote.py.

Importing torch costs seconds; forking costs milliseconds. The zygote imports torch and the seam
once, takes out what the honest-work rules forbid (seam/absent.py: once here, not in every
worker), runs no student code, and forks a fresh worker (worker.py, copied beside this script)
for each submission and after each crash. Between two workers it kills every process the last
one left (it is their subreaper, and in a pid namespace kill(-1) reaches them all) and empties
the scratch folder, so nothing of one submission is left for the next. Control messages (JSON,
one per datagram, file descriptors attached with SCM_RIGHTS) travel on a SEQPACKET socket.

Told ``pivot`` (unshare gave it fresh namespaces), it first builds its own root holding only
Python, its lib (the seam, these scripts), the inbox of the current submission and a scratch
tmpfs, and pivot_root()s into it; bwrap has already done the same before it started. It is told
decisions, never a mode's name (grader/sandbox/isolation.py makes them): ``pivot``, ``pid_ns``
(kill(-1) reaches only the sandbox), ``uid`` (its workers' leased uid, whose leftovers it clears,
or None), ``shm`` (the sandbox's own /dev/shm to empty, or None).
"""

import ctypes
import gc
import importlib
import json
import os
import platform
import select
import signal
import socket
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
# statvfs f_flag bits -> mount flags a read-only remount must keep (a user namespace may not
# drop flags it inherited: EPERM otherwise)
KEPT = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
DEVICES = ("null", "zero", "full", "random", "urandom")


def _mount(libc, source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _bind(libc, src: str, dst: str, flags: int = MS_RDONLY) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    _mount(libc, src, dst, None, MS_BIND | MS_REC)
    if flags & MS_RDONLY:
        kept = sum(m for bit, m in KEPT.items() if os.statvfs(dst).f_flag & bit)
        _mount(libc, None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept)


def build_root(cfg: dict) -> None:
    """We are root of fresh mount and pid namespaces (unshare): make a tmpfs root holding only
    the view the sandbox computed (the same one bwrap gets), then pivot_root into it."""
    libc = ctypes.CDLL(None, use_errno=True)
    new = cfg["newroot"]
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    _mount(libc, "tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    for op, *args in cfg["view"]:
        if op == "ro-bind":
            _bind(libc, args[0], new + args[1])
        elif op == "dev-bind":
            _bind(libc, args[0], new + args[1], flags=0)
        elif op == "symlink":
            os.makedirs(os.path.dirname(new + args[1]), exist_ok=True)
            os.symlink(args[0], new + args[1])
        elif op == "tmpfs":
            path, size, perms = args
            os.makedirs(new + path, exist_ok=True)
            _mount(libc, "tmpfs", new + path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={perms}")
        else:
            raise ValueError(f"unknown view op {op!r}")
    for name in DEVICES:
        _bind(libc, f"/dev/{name}", f"{new}/dev/{name}", flags=0)
    os.makedirs(f"{new}/proc", exist_ok=True)
    _mount(libc, "proc", f"{new}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount(libc, None, new, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is not None and libc.syscall(number, b".", b".") == 0:  # old root stacks on top ...
        if libc.umount2(b".", MNT_DETACH) != 0:                        # ... and is detached here
            raise OSError(ctypes.get_errno(), "umount of the old root failed")
    elif cfg["uid"] is None:  # a worker keeping its capabilities could chroot back out
        raise OSError(ctypes.get_errno(), f"pivot_root failed on {platform.machine()}")
    else:
        # Docker's seccomp refuses pivot_root even with --cap-add SYS_ADMIN: chroot instead. The
        # old root stays mounted but out of reach: the zygote runs no student code, and each
        # worker drops every capability (its uid) before any, so none can chroot back out.
        os.chroot(".")
    os.chdir("/")



def warm_torch(optimizers: bool) -> None:
    """Pay torch's lazy imports once, here, not in every worker forked from the zygote.
    ``optimizers``: the grade's tests step an optimizer (zygote.STEPS_AN_OPTIMIZER), so take
    torch's first AdamW and SGD steps, which import torch._dynamo and sympy: ~1.5 s here against
    ~3 s in a worker under the honest watch's profiler, and ~70 MB of every worker's 3.25 GiB
    of address space (set_memory_limit). CPU tensors only: CUDA must not be initialised before
    a fork."""
    import torch
    import torch.utils.flop_counter  # noqa: F401  (problem 3's oracle, and students use it)
    if optimizers:
        p = torch.nn.Parameter(torch.zeros(2))
        p.grad = torch.ones(2)
        for optimizer in (torch.optim.AdamW, torch.optim.SGD):
            optimizer([p]).step()


def driver_loaded() -> bool:
    """Whether the CUDA driver (libcuda) is mapped into this process: the runtime loads it at its
    first call (torch.cuda.is_available() is one), and a forked child can no longer use CUDA."""
    with open("/proc/self/maps") as maps:
        return any("/libcuda.so" in line for line in maps)


def _send(ctl: socket.socket, message: dict) -> None:
    ctl.send(json.dumps(message).encode())


def _descendants() -> list[int]:
    out, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


# The backstops: the syscall filter keeps a worker from making keys and IPC objects at all.
KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = 7, -4, -5
IPC_RMID = 0


def clear_keyrings() -> None:
    """As the worker's uid: empty its user keyrings, which the kernel keeps per uid."""
    import seccomp
    libc = ctypes.CDLL(None, use_errno=True)
    number = seccomp.ARCHES.get(platform.machine(), (0, 0, 0, 0, {}))[4].get("keyctl")
    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        if number:
            libc.syscall(number, KEYCTL_CLEAR, ring)


def remove_ipc(uid: int) -> None:
    """Remove the SysV shared memory, queues and semaphores ``uid`` owns (in our IPC namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, remove in (("shm", lambda i: libc.shmctl(i, IPC_RMID, None)),
                         ("msg", lambda i: libc.msgctl(i, IPC_RMID, None)),
                         ("sem", lambda i: libc.semctl(i, 0, IPC_RMID))):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *rows = [line.split() for line in f]
        except (OSError, ValueError):
            continue
        for row in rows:
            fields = dict(zip(header, row))
            if int(fields.get("uid", -1)) == uid or int(fields.get("cuid", -1)) == uid:
                remove(int(row[1]))


def clean_up(cfg: dict) -> None:
    """Kill whatever the last child left behind, reap it, and empty the scratch folder (and the
    sandbox's own /dev/shm, told ``shm``)."""
    for _ in range(100):
        if cfg["pid_ns"]:
            try:
                os.kill(-1, signal.SIGKILL)  # everyone in our pid namespace but us and its init
            except ProcessLookupError:
                pass
        left = _descendants()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not left and not _descendants():
            break
    if cfg["uid"] is not None:
        import worker              # grader/sandbox/worker.py, copied beside this script
        pid = os.fork()
        if pid == 0:
            try:
                worker.drop_privileges(cfg["uid"])
                if not cfg["pid_ns"]:
                    os.kill(-1, signal.SIGKILL)  # its uid's processes outside our tree (none can leave it)
                clear_keyrings()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        remove_ipc(cfg["uid"])
    import folders                 # grader/sandbox/folders.py, copied beside this script
    for folder in (cfg["work"], cfg.get("shm")):  # without recursion: a student's folders may go 3,000 deep
        if folder:
            folders.empty(folder)


def settle(cfg: dict) -> None:
    """What a zygote sets up before it serves, the same whether it was started cold or forked
    from a template: its root (told ``pivot``), its folder, the process bits, its environment and
    where the seam is found."""
    if cfg["pivot"]:
        build_root(cfg)
    os.chdir(cfg["work"])
    libc = ctypes.CDLL(None)
    libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG: die with the grader (or bwrap, unshare, the template)
    libc.prctl(36, 1, 0, 0, 0)      # PR_SET_CHILD_SUBREAPER: orphans of a child come to us
    libc.prctl(4, 0, 0, 0, 0)       # PR_SET_DUMPABLE 0: no ptrace, no /proc/PID/mem of the zygote
    # No getppid() == 1 test for "the grader is gone": in a container the grader is often PID 1
    # itself. A gone grader closes the control socket, and the zygote exits on EOF below.
    environ(cfg["work"], cfg["limits"]["threads"])
    sys.path.insert(0, cfg["lib"])


def environ(home: str, threads: int) -> None:
    """The sandbox's environment: the grader's is not passed on but for a CUDA device's variables
    and OMP_WAIT_POLICY, which a batch sets to PASSIVE (grader/batch/scheduler.py job_env: its
    jobs share the cores, so torch's idle threads sleep rather than spin; a lone grade's worker
    has a core to itself while the grader waits, and spins as torch does by default)."""
    keep = {k: v for k, v in os.environ.items()
            if k in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME",
                     "OMP_WAIT_POLICY")}
    os.environ.clear()
    os.environ.update(keep)
    # USER and LOGNAME: getpass.getuser() reads them before the password file, which a fresh
    # root lacks and where a leased uid has no entry (torch._dynamo's import asks for it: a
    # KeyError that killed the zygote's warm-up on a GPU machine with neither set).
    os.environ.update({"HOME": home, "TMPDIR": home, "PATH": "/usr/bin:/bin",
                       "USER": "sandbox", "LOGNAME": "sandbox", "OMP_NUM_THREADS": str(threads)})
    if "tempfile" in sys.modules:  # a template's fork: the folder it found is the template's
        sys.modules["tempfile"].tempdir = None


def warm(optimizers: bool) -> None:
    """torch imported and warmed, what lives now frozen (its garbage collections then neither
    scan it nor touch its pages, which stay shared with every fork): a cold zygote's start, or a
    template's (each zygote forked from it starts with this done)."""
    warm_torch(optimizers)
    gc.freeze()


def refuse_a_driver() -> None:
    """Exit if CUDA's driver is mapped here: no worker forked from this process could use it."""
    if driver_loaded():  # the checkout's own code did it
        print("the zygote initialised CUDA before forking its workers (libcuda is mapped): "
              "no forked worker could use the GPU", file=sys.stderr, flush=True)
        os._exit(1)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    ctl = socket.socket(fileno=cfg["ctl"])
    settle(cfg)
    warm(cfg["optimizers"])
    serve_forks(cfg, ctl)


def ready_to_fork() -> dict:
    """The seam imported and what its honest-work rules forbid taken out (seam/absent.py), once
    for all the zygote's workers rather than in each (a gc walk of all of torch: about half a
    second): each is forked without the forbidden code, before any student module exists, and
    its stand-ins charge the record of the worker they run in (worker.CHARGES). Returns what
    keeps the kernels' refusals registered: keep it while workers are forked."""
    import worker                  # grader/sandbox/worker.py, copied beside this script
    for module in ("seam.codec", "seam.callee", "seam.absent"):  # they import torch and numpy, never student code
        importlib.import_module(module)
    removed = importlib.import_module("seam.absent").remove(worker.CHARGES)
    refuse_a_driver()
    gc.freeze()
    return removed


def serve_forks(cfg: dict, ctl: socket.socket) -> None:
    """The zygote proper: ready to fork, then a fresh worker forked per order, cleaned up after.
    Never returns (so what ``removed`` holds lives as long as the zygote)."""
    import worker                  # grader/sandbox/worker.py, copied beside this script
    removed = ready_to_fork()
    cfg["zygote_pid"] = os.getpid()
    cfg["removed"] = removed["gone"]  # whose files the worker's record watches (seam/audit.py)
    _send(ctl, {"ready": True})
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(ctl, 4096, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            clean_up(cfg)
            os._exit(0)
        order = json.loads(data)
        if order.get("op") != "fork" or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            continue
        req_fd, resp_fd, log_fd, record_fd = fds
        pid = os.fork()
        if pid == 0:
            try:
                ctl.close()
                os.dup2(log_fd, 1)
                os.dup2(log_fd, 2)
                os.close(log_fd)
                worker.serve(cfg, req_fd, resp_fd, record_fd)
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        status = _await_child(ctl, pid, cfg)
        clean_up(cfg)
        _send(ctl, {"exited": status})


def _await_child(ctl: socket.socket, pid: int, cfg: dict) -> int:
    """The child's wait status, when it ends by itself or when the grader says kill."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready = select.select([ctl, pidfd], [], [])[0]
            if pidfd in ready:
                return os.waitpid(pid, 0)[1]
            data = ctl.recv(4096)
            if not data or json.loads(data).get("op") == "kill":
                os.kill(pid, signal.SIGKILL)
                status = os.waitpid(pid, 0)[1]
                if not data:  # the grader is gone
                    clean_up(cfg)
                    os._exit(0)
                return status
    finally:
        os.close(pidfd)


if __name__ == "__main__":
    main()
