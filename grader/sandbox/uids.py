"""The unprivileged uids a sandbox's worker runs as, one leased to each concurrent sandbox."""

import fcntl
import os
import stat
from pathlib import Path

WORKER_UID = 64999          # the first uid of the pool; no account uses these
UID_POOL = 64               # concurrent sandboxes (batch jobs) each get their own uid


class UidLease:
    """An unprivileged uid for one sandbox, held with a lock file until ``release``: concurrent
    sandboxes (a batch's jobs) never share a uid, so none can signal, trace or read another.

    The least recently used free uid is taken (each lock file's mtime is set when it is leased
    and when it is released), so consecutive sandboxes get different uids wherever the pool
    allows: what one student's uid may have left is not the next one's to read. (Where a worker
    can write outside its scratch, the zygote also removes all its uid owns there: outside.py.)"""

    def __init__(self):
        folder = lease_folder()
        for uid in sorted(pool_uids(), key=lambda u: (_last_used(folder / str(u)), -u)):
            fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            os.utime(fd)
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError(f"all {UID_POOL} sandbox uids are in use")

    def release(self) -> None:
        if self._fd is not None:
            os.utime(self._fd)  # (its last use: the pool's least recently used goes first)
            os.close(self._fd)
            self._fd = None


def _last_used(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return 0


def lease_folder() -> Path:
    """One folder for the whole machine (every grader process, every batch job), root's alone:
    a folder someone else made or can write is refused, never trusted."""
    base = Path("/run/lock") if os.path.isdir("/run/lock") else Path("/tmp")
    folder = base / "grader-uid-leases"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{folder} is not a private folder of the grader's uid; remove it")
    return folder


def pool_uids() -> range:
    return range(WORKER_UID - UID_POOL + 1, WORKER_UID + 1)
