"""Landlock (Linux >= 5.13): a process restricts itself to an allow-list of paths, without
namespaces or privileges. Docker's default seccomp profile allows it where it refuses unshare,
so the "landlock" mode gives a worker in a container the same view as bwrap gives it outside:
read Python, its seam and its copy; write its scratch; no TCP (ABI >= 4); no signals or abstract
unix sockets outside its domain (ABI >= 6).

Standard library only: the sandbox copies this file next to the worker script.
Reference: https://docs.kernel.org/userspace-api/landlock.html
"""

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
# every filesystem right each ABI version knows (v2 adds REFER, v3 TRUNCATE, v5 IOCTL_DEV)
FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
             5: (1 << 16) - 1}
IOCTL_DEV = 1 << 15  # ABI >= 5: without it a GPU's device files answer no ioctl (CUDA needs them)
READ = EXECUTE | READ_FILE | READ_DIR
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # rights valid on a file
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2          # ABI >= 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2  # ABI >= 6


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it is absent, disabled or blocked (seccomp)."""
    try:
        version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def restrict(read: list[str], write: list[str], devices: list[str]) -> int:
    """Restrict this process and its future children for good: read-only beneath ``read``,
    everything beneath ``write``, read and write on the device files ``devices``. Returns the
    ABI version used; raises OSError if the kernel refuses."""
    libc = _libc()
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available")
    fs = FS_RIGHTS[min(version, 5)]
    attr = struct.pack("=Q", fs)
    if version >= 4:
        attr += struct.pack("=Q", NET_BIND_TCP | NET_CONNECT_TCP)  # no rule: no TCP at all
    if version >= 6:
        attr += struct.pack("=Q", SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, rights in ((read, READ), (write, fs), (devices, READ_FILE | WRITE_FILE | IOCTL_DEV)):
            for path in paths:
                _allow(libc, ruleset, path, rights & fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return version


def _allow(libc, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that is not here needs no rule
    try:
        if not os.path.isdir(path):
            rights &= FILE_ONLY
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if libc.syscall(SYS_ADD_RULE, ruleset, ctypes.c_uint32(RULE_PATH_BENEATH), rule,
                        ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path} failed")
    finally:
        os.close(fd)
