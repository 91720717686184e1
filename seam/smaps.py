"""Resident bytes of one file's mappings in a process, from /proc/<pid>/smaps (Linux).

The memmap probe (probes/training.py) reads its own process with it; the trusted side reads the
worker from outside with the same function (``Impl.resident_bytes``), where the student's code
cannot reach the reading. A mapping is named by the file's device and inode, not its path: a
path reads differently from inside a sandbox's mount namespace, and the file may be deleted."""

import os


def identity(path: str) -> list[int]:
    """[device, inode] of ``path``: what its mappings are found by."""
    info = os.stat(path)
    return [info.st_dev, info.st_ino]


def resident_bytes(pid, device: int, inode: int) -> int | None:
    """Resident bytes of ``pid``'s mappings of that file ("self": this process); None where
    /proc/<pid>/smaps cannot be read (another platform, another uid without ptrace rights)."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    total, inside = 0, False
    for line in lines:
        fields = line.split(maxsplit=5)
        if fields and "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
            major, minor = (int(x, 16) for x in fields[3].split(":"))
            inside = fields[4] == str(inode) and os.makedev(major, minor) == device
        elif inside and fields and fields[0] == "Rss:":
            total += int(fields[1]) * 1024
    return total
