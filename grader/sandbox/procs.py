"""What the sandbox reads from /proc and the file system about what it runs: a process tree,
the memory it holds, the bytes a scratch folder holds, a log's tail. Plain functions, no state."""

import os
import signal
from pathlib import Path

from .folders import allocated_bytes

def descendants(top: int) -> list[int]:
    """``top`` and every process below it, from /proc (those that vanish meanwhile left out)."""
    found, todo = [], [top]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def tree_bytes(top: int) -> int:
    """Memory held by ``top`` and its descendants (each page shared by n of them counted 1/n)."""
    total = 0
    for pid in descendants(top):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0) * 1024
        except (OSError, ValueError):
            continue
    return total


def folder_bytes(top: Path) -> int:
    """Bytes allocated under ``top`` (blocks, so a sparse file counts what it holds), walked
    without recursion or long paths however deep the student's folders go (folders.py)."""
    return allocated_bytes(top)


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - limit))
            return f.read().decode(errors="replace").strip()
    except OSError:
        return ""
