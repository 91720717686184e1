"""What a leased uid holds outside its scratch: in the machine's shared temporary folders, which
every uid may write where no namespace gives the worker a root of its own and no Landlock rule
holds it to its scratch (the uid mode, the process mode as root).

The grader (root) measures it while the worker runs, counted with the scratch against
``Limits.disk_bytes`` (``Outside.bytes``), and removes all of it after each worker and before the
next (``Outside.sweep``), once every process of the uid is gone: nothing a student's worker wrote
there outlives it, and the next student leased the same uid finds none of it. The worker's
files there are its own alone besides (its umask keeps 077, the syscall filter refuses chmod).

Only entries the uid owns are touched, found by walking each shared folder through the folders
every uid may enter (a folder the uid cannot enter holds nothing of its own, but for its own
folders, which are removed whole). Nothing is followed through a symlink; a folder of the uid's
group (the zygote's inbox and scratch) is the zygote's business and is skipped."""

import os
import stat

from . import folders

# The folders every uid may write on a usual Linux machine (and in the Docker image): a
# world-writable folder elsewhere is not swept, so an image for the uid mode must have none.
SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


class Outside:
    """What ``uid`` (or each of a set of uids) owns in the shared folders ``tops``."""

    def __init__(self, uid, tops: tuple[str, ...] = SHARED):
        self.uids = frozenset(uid) if isinstance(uid, (set, frozenset, range, list, tuple)) else frozenset({uid})
        self.tops = [t for t in tops if os.path.isdir(t) and not os.path.islink(t)]
        # folder -> (its mtime, whether others may write it, the folders below it to walk, the
        # uid's entries in it), kept between two polls: a folder the uid may not write keeps its
        # entries as far as the uid goes, and one it may write is listed again only when its
        # mtime changed (an entry was made, removed or renamed there). ``sweep`` lists all afresh.
        self._seen: dict[str, tuple[int, bool, list[str], list[str]]] = {}

    def _entries(self, fresh: bool) -> list[str]:
        """The uid's entries in the shared folders (its own folders as one entry each)."""
        found, todo, seen = [], list(self.tops), {}
        while todo:
            folder = todo.pop()
            cached = None if fresh else self._seen.get(folder)
            if cached is None or cached[1]:
                try:
                    info = os.lstat(folder)
                except OSError:
                    continue
                if cached is None or cached[0] != info.st_mtime_ns:
                    cached = (info.st_mtime_ns, bool(info.st_mode & 0o002), *self._list(folder))
            seen[folder] = cached
            found += cached[3]
            todo += cached[2]
        self._seen = seen
        return found

    def _list(self, folder: str) -> tuple[list[str], list[str]]:
        below, mine = [], []
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return below, mine
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid in self.uids:
                mine.append(entry.path)
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o001 and info.st_gid not in self.uids:
                below.append(entry.path)  # others may enter it: the uid may have written below
        return below, mine

    def bytes(self) -> int:
        """Bytes the uid's entries hold (blocks: a sparse file counts what it holds)."""
        total = 0
        for path in self._entries(fresh=False):
            total += _tree_bytes(path)
        return total

    def sweep(self) -> list[str]:
        """Remove every entry of the uid in the shared folders (call once none of its processes
        is left); the paths removed."""
        removed = self._entries(fresh=True)
        for path in removed:
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    folders.remove(path)  # no recursion: a student's chain may go 3,000 deep
                else:
                    os.unlink(path)
            except OSError:
                pass
        # the walk just made is the next poll's: the folders the uid may write listed again
        # (their mtime forgotten), the others kept as they are, none with an entry of the uid's
        self._seen = {folder: (-1 if writable else mtime, writable, below, [])
                      for folder, (mtime, writable, below, _) in self._seen.items()}
        return removed


def _tree_bytes(top: str) -> int:
    try:
        info = os.lstat(top)
    except OSError:
        return 0
    return info.st_blocks * 512 + (folders.allocated_bytes(top) if stat.S_ISDIR(info.st_mode) else 0)


def owned(uids, tops: tuple[str, ...] = SHARED) -> list[str]:
    """Every entry the ``uids`` own in the shared folders (for a check that none is left)."""
    return sorted(Outside(frozenset(uids), tops)._entries(fresh=True))
