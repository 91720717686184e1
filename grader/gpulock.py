"""Graders that share a GPU take turns on it.

Graders on one device (``batch --jobs 2`` on a one-GPU node, two grades side by side) take
``device_lock`` around each GPU-marked test (plugin.py, before the test's deadline starts), so
an MFU test never times its matmuls while another grader's run on the same device. The lock is
an ``flock`` on a file named by the GPU's UUID (gpu.device_uuid: the same card whatever
CUDA_VISIBLE_DEVICES numbers it) in ``lock_dir()``, the grader's own folder (0700) that no
student process can reach or make first. Graders in separate containers have separate /run
and /tmp and do not see each other's locks: give each container its own GPU. No heavy imports: a test holds the lock from a bare process.
"""

import contextlib
import fcntl
import os
import re
import time
from pathlib import Path

def lock_dir() -> Path:
    """root's graders: /run (no other user may write there, so no student's process made the
    folder first); any other user's: a folder of its own in /tmp. Checked to be ours alone."""
    uid = os.geteuid()
    folder = Path("/run/cs336-grader-gpu-locks") if uid == 0 and os.access("/run", os.W_OK) \
        else Path(f"/tmp/cs336-grader-gpu-locks-{uid}")
    return checked(folder)


def checked(folder: Path) -> Path:
    """``folder``, made 0700 if absent; RuntimeError if it is a link, another user's, or open
    to others (whoever made it first could hold every lock, or swap the files)."""
    uid = os.geteuid()
    folder.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not os.path.isdir(folder) or os.path.islink(folder) or info.st_uid != uid or info.st_mode & 0o077:
        raise RuntimeError(f"{folder} is not this user's alone (mode {info.st_mode & 0o777:o}, owner "
                           f"{info.st_uid}); remove it: the GPU lock cannot be trusted there")
    return folder


@contextlib.contextmanager
def device_lock(uuid: str):
    """Hold the GPU ``uuid`` alone (among graders on this machine); yields the seconds waited."""
    name = re.sub(r"[^A-Za-z0-9-]", "_", uuid)
    fd = os.open(lock_dir() / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        start = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - start
    finally:
        os.close(fd)  # closing drops the lock
