"""The sandbox worker: run as ``python -I _worker.py CONFIG_JSON`` by grader/sandbox.py.

Trusted until the last lines of ``main``: it narrows what the process can see and do (mount
namespace, rlimits, an unprivileged uid), then imports the seam (and torch) from its private copy
and only then touches student code, answering requests on one pipe with responses on another
(their fds are in the config; stdout and stderr go to a log file).
Frames are an 8-byte big-endian length followed by JSON (seam/codec.py).
"""

import ctypes
import json
import os
import resource
import signal
import struct
import sys

MS_NOSUID, MS_NODEV, MS_RDONLY, MS_REMOUNT = 2, 4, 1, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2


def _mount(libc, source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def isolate_filesystem(cfg: dict) -> None:
    """We are root of a fresh mount namespace: hide what the worker must not read."""
    libc = ctypes.CDLL(None, use_errno=True)
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    # Python may live under a directory the worker uid cannot traverse (pyenv in /root):
    # bind it aside, cover the blocked ancestor with an empty tmpfs, and bind it back.
    for blocked, keep in cfg["expose"]:
        staged = []
        for i, path in enumerate(keep):
            stage = os.path.join(cfg["stage"], str(len(staged)))
            os.makedirs(stage, exist_ok=True)
            _mount(libc, path, stage, None, MS_BIND | MS_REC)
            staged.append((stage, path))
        _mount(libc, "tmpfs", blocked, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        for stage, path in staged:
            os.makedirs(path, mode=0o755, exist_ok=True)
            _mount(libc, stage, path, None, MS_BIND | MS_REC)
            libc.umount2(stage.encode(), MNT_DETACH)
    for path in cfg["hide"]:  # reference/, tests/, the output folder ...
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0000")
    for path in cfg["readonly"]:
        if os.path.isdir(path):
            _mount(libc, path, path, None, MS_BIND | MS_REC)
            _mount(libc, None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
    # The working directory is a small tmpfs: a disk-filling submission fills only that.
    _mount(libc, "tmpfs", cfg["work"], "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={cfg['limits']['disk_bytes']},mode=0700")
    if cfg["uid"] is not None:
        os.chown(cfg["work"], cfg["uid"], cfg["uid"])


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
    cap = _cap
    cap(resource.RLIMIT_CPU, limits.get("cpu_seconds"))
    cap(resource.RLIMIT_FSIZE, limits.get("file_bytes"))
    cap(resource.RLIMIT_NOFILE, 256)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NPROC, limits.get("processes"))


def drop_privileges(uid) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(struct.pack(">Q", len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def main() -> None:
    cfg = json.loads(sys.argv[1])
    req_fd, resp_fd = cfg["fds"]
    if cfg["namespaces"]:
        isolate_filesystem(cfg)
    os.chdir(cfg["work"])
    set_limits(cfg["limits"])
    drop_privileges(cfg["uid"])
    libc = ctypes.CDLL(None)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (reset by the uid change): die with unshare
    # No getppid() == 1 test for "the grader is gone": in a container the grader is often
    # PID 1 itself. A gone grader closes the request pipe, and the worker exits on EOF below.
    keep = {k: v for k, v in os.environ.items()
            if k in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME")}
    os.environ.clear()
    os.environ.update(keep)
    os.environ.update({"HOME": cfg["work"], "TMPDIR": cfg["work"], "PATH": "/usr/bin:/bin",
                       "OMP_NUM_THREADS": str(cfg["threads"])})
    sys.path.insert(0, cfg["lib"])
    from seam import codec                 # imports torch and numpy before any student code
    from seam.callee import Callee
    import torch
    torch.set_num_threads(cfg["threads"])
    set_memory_limit(cfg["limits"]["memory_bytes"])  # after the import: headroom for the tests
    callee = Callee(cfg["submission"], "submission")
    write_frame(resp_fd, codec.dumps({"ready": True}))
    while True:
        try:
            (size,) = struct.unpack(">Q", read_exact(req_fd, 8))
            request = codec.loads(read_exact(req_fd, size))
        except EOFError:
            os._exit(0)
        response = callee.handle(request)
        rid = request.get("id") if type(request) is dict else None
        try:
            payload = codec.dumps({**response, "id": rid})
            if len(payload) > cfg["max_frame"]:
                raise ValueError(f"the result is too large to send back ({len(payload) >> 20} MiB; "
                                 f"the limit is {cfg['max_frame'] >> 20} MiB)")
        except (TypeError, ValueError, MemoryError) as e:
            payload = codec.dumps({"raised": {"type": "Unsupported", "message": str(e)[:500],
                                              "where": ""}, "id": rid})
        write_frame(resp_fd, payload)


if __name__ == "__main__":
    main()
