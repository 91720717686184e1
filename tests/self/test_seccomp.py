"""The worker's syscall filter (grader/seccomp.py): what it denies, with which errno, that a
worker still runs torch under it, and that its numbers are the kernel's."""

import ctypes
import errno
import os
import platform
import re
import socket
import threading
from pathlib import Path

import pytest

from grader import seccomp
from grader.sandbox import Limits, Sandbox
from seam import SubmissionError
from seam.callee import FORBIDDEN

pytestmark = pytest.mark.skipif(platform.machine() not in seccomp.ARCHES,
                                reason=f"not here: no syscall table for {platform.machine()}")
LIBC = ctypes.CDLL(None, use_errno=True)


def in_filtered_child(probe) -> dict:
    """``probe()`` (name -> "ok" or an errno name) in a forked child that installed the filter."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            seccomp.install()
            os.write(w, repr(probe()).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return eval(text)  # a dict of str written by our own child


def outcome(call) -> str:
    try:
        result = call()
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    if isinstance(result, int) and result < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    return "ok"


def test_denied_calls_fail_with_eperm_and_the_rest_works(tmp_path):
    (tmp_path / "f").write_text("x")
    nr = seccomp.ARCHES[platform.machine()][4]

    def probe():
        calls = {
            "chmod": lambda: os.chmod(tmp_path / "f", 0o777),
            "chown": lambda: os.chown(tmp_path / "f", os.getuid(), os.getgid()),
            "utime": lambda: os.utime(tmp_path / "f", (0, 0)),
            "setxattr": lambda: os.setxattr(tmp_path / "f", "user.x", b"1"),
            "keyctl": lambda: LIBC.syscall(nr["keyctl"], 0, -4, 0),
            "add_key": lambda: LIBC.syscall(nr["add_key"], b"user", b"k", b"v", 1, -4),
            "shmget": lambda: LIBC.shmget(0, 4096, 0o1600),
            "semget": lambda: LIBC.semget(0, 1, 0o1600),
            "msgget": lambda: LIBC.msgget(0, 0o1600),
            "socket unix": lambda: socket.socket(socket.AF_UNIX),
            "socket udp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
            "socketpair": lambda: socket.socketpair(),
            "unshare": lambda: LIBC.unshare(0x10000000),
            "ptrace": lambda: LIBC.ptrace(0, 0, None, None),
            "io_uring_setup": lambda: LIBC.syscall(nr["io_uring_setup"], 8, ctypes.create_string_buffer(120)),
            "bpf": lambda: LIBC.syscall(nr["bpf"], 0, None, 0),
            # what a worker does: read and write its files, start threads, fork
            "write": lambda: (tmp_path / "g").write_text("ok"),
            "thread": lambda: threading.Thread(target=lambda: None).start(),
            "fork": lambda: os.waitpid(os.fork() or os._exit(0), 0),
        }
        if platform.machine() == "x86_64":  # an x32 call: the x32 bit on getpid
            calls["x32 getpid"] = lambda: LIBC.syscall(seccomp.X32_BIT | 39)
        return {name: outcome(call) for name, call in calls.items()}
    got = in_filtered_child(probe)
    allowed = {"write", "thread", "fork"}
    assert {k: v for k, v in got.items() if k in allowed} == dict.fromkeys(allowed, "ok"), got
    assert {k: v for k, v in got.items() if k not in allowed} == \
        {k: "EPERM" for k in got if k not in allowed}, got
    assert (tmp_path / "f").stat().st_mode & 0o777 != 0o777


def test_clone3_falls_back_and_namespace_flags_are_denied():
    nr = seccomp.ARCHES[platform.machine()][3]
    got = in_filtered_child(lambda: {"clone3": outcome(lambda: LIBC.syscall(nr, None, 0)),
                                     "unshare net": outcome(lambda: LIBC.unshare(0x40000000))})
    assert got == {"clone3": "ENOSYS", "unshare net": "EPERM"}


def test_torch_runs_under_the_filter():
    def probe():
        import torch
        torch.set_num_threads(2)
        x = torch.ones(256, 256)
        return {"sum": str(float((x @ x).sum()))}
    assert in_filtered_child(probe) == {"sum": str(256.0 ** 3)}


def test_the_numbers_are_the_kernels():
    """Checked against this machine's kernel headers (calls newer than the headers, such as
    fchmodat2 and setxattrat, are the same number on every architecture)."""
    headers = {"x86_64": ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", seccomp.X86_64),
               "aarch64": ("/usr/include/asm-generic/unistd.h", seccomp.AARCH64)}
    checked = 0
    for machine, (path, table) in headers.items():
        if not os.path.exists(path):
            continue
        known = {m.group(1): int(m.group(2))
                 for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", Path(path).read_text())}
        wrong = {k: (v, known[k]) for k, v in table.items() if k in known and known[k] != v}
        assert not wrong, (machine, wrong)
        assert len([k for k in table if k in known]) > 50
        checked += 1
    if not checked:
        pytest.skip("not here: no kernel headers (linux-libc-dev)")


def test_an_unknown_architecture_is_refused_by_name():
    with pytest.raises(seccomp.Unsupported, match="no syscall filter for ppc64le"):
        seccomp.program("ppc64le")


def test_a_forbidden_call_in_the_sandbox_says_so(tmp_path):
    (tmp_path / "intensity.py").write_text("import os\ndef ridge_point(p, b):\n"
                                           "    os.chmod('.', 0o777)\n")
    box = Sandbox(tmp_path, Limits(time_per_test=20))
    try:
        with pytest.raises(SubmissionError) as caught:
            box.intensity.ridge_point(1.0, 2.0)
    finally:
        box.close()
    assert "raised PermissionError: [Errno 1] Operation not permitted: '.'" in str(caught.value)
    assert str(caught.value).endswith(f"({FORBIDDEN})"), caught.value
