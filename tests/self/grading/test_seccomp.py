"""The worker's syscall filter (grader/sandbox/seccomp.py): what it denies, with which errno, that a
worker still runs torch under it, and that its numbers are the kernel's."""

import ast
import ctypes
import errno
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import seccomp
from grader.paths import ROOT
from grader.sandbox.limits import Limits
from grader.sandbox.sandbox import Sandbox
from seam import SubmissionError
from seam.callee import FORBIDDEN

pytestmark = pytest.mark.skipif(platform.machine() not in seccomp.ARCHES,
                                reason=f"not here: no syscall table for {platform.machine()}")
LIBC = ctypes.CDLL(None, use_errno=True)


def in_filtered_child(probe: str, unix_sockets: bool = False, **values) -> dict:
    """Run ``probe`` (Python source defining ``probe() -> dict``) in a fresh interpreter that
    installed the filter first, and return the dict. A fresh process, not a fork of this one:
    pytest has run torch by now, and a fork of a process with an OpenMP pool hangs in it."""
    code = (f"import ctypes, errno, os, platform, socket, threading\n"
            f"from grader.sandbox import seccomp\nfrom tests.self.grading.test_seccomp import LIBC, outcome\n"
            f"values = {values!r}\n{probe}\nseccomp.install(unix_sockets={unix_sockets})\nprint(repr(probe()))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return ast.literal_eval(run.stdout.strip().splitlines()[-1])


def outcome(call) -> str:
    try:
        result = call()
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    if isinstance(result, int) and result < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    return "ok"


DENIED_AND_ALLOWED = """
def probe():
    f, g = values["f"], values["g"]
    nr = seccomp.ARCHES[platform.machine()][4]
    calls = {
        "chmod": lambda: os.chmod(f, 0o777),
        "chown": lambda: os.chown(f, os.getuid(), os.getgid()),
        "utime": lambda: os.utime(f, (0, 0)),
        "setxattr": lambda: os.setxattr(f, "user.x", b"1"),
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
        "write": lambda: open(g, "w").write("ok"),
        "thread": lambda: threading.Thread(target=lambda: None).start(),
        "fork": lambda: os.waitpid(os.fork() or os._exit(0), 0),
    }
    if platform.machine() == "x86_64":  # an x32 call: the x32 bit on getpid
        calls["x32 getpid"] = lambda: LIBC.syscall(seccomp.X32_BIT | 39)
    return {name: outcome(call) for name, call in calls.items()}
"""


def test_denied_calls_fail_with_eperm_and_the_rest_works(tmp_path):
    (tmp_path / "f").write_text("x")
    got = in_filtered_child(DENIED_AND_ALLOWED, f=str(tmp_path / "f"), g=str(tmp_path / "g"))
    allowed = {"write", "thread", "fork"}
    assert {k: v for k, v in got.items() if k in allowed} == dict.fromkeys(allowed, "ok"), got
    assert {k: v for k, v in got.items() if k not in allowed} == \
        {k: "EPERM" for k in got if k not in allowed}, got
    assert (tmp_path / "f").stat().st_mode & 0o777 != 0o777


def test_a_gpu_worker_may_make_unix_sockets_and_nothing_else_more(tmp_path):
    """The GPU's filter lets socket(AF_UNIX) through (CUDA's driver makes one at start) and
    denies every other family and every other call the CPU's filter denies."""
    (tmp_path / "f").write_text("x")
    got = in_filtered_child(DENIED_AND_ALLOWED, unix_sockets=True, f=str(tmp_path / "f"), g=str(tmp_path / "g"))
    allowed = {"write", "thread", "fork", "socket unix"}
    assert {k: v for k, v in got.items() if k in allowed} == dict.fromkeys(allowed, "ok"), got
    assert {k: v for k, v in got.items() if k not in allowed} == \
        {k: "EPERM" for k in got if k not in allowed}, got
    more = in_filtered_child("""
def probe():
    return {"inet6": outcome(lambda: socket.socket(socket.AF_INET6)),
            "netlink": outcome(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)),
            "unix dgram": outcome(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))}
""", unix_sockets=True)
    assert more == {"inet6": "EPERM", "netlink": "EPERM", "unix dgram": "ok"}


def test_clone3_falls_back_and_namespace_flags_are_denied():
    got = in_filtered_child("""
def probe():
    nr = seccomp.ARCHES[platform.machine()][3]
    return {"clone3": outcome(lambda: LIBC.syscall(nr, None, 0)),
            "unshare net": outcome(lambda: LIBC.unshare(0x40000000))}
""")
    assert got == {"clone3": "ENOSYS", "unshare net": "EPERM"}


def test_torch_runs_under_the_filter():
    assert in_filtered_child("""
def probe():
    import torch
    torch.set_num_threads(2)
    x = torch.ones(256, 256)
    return {"sum": str(float((x @ x).sum()))}
""") == {"sum": str(256.0 ** 3)}


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
        table = {**table, "umask": seccomp.UMASK[machine], "pidfd_getfd": seccomp.PIDFD_GETFD,
                 **{name: nr for name, (nr, _) in seccomp.GUARDED[machine].items()}}
        wrong = {k: (v, known[k]) for k, v in table.items() if k in known and known[k] != v}
        assert not wrong, (machine, wrong)
        assert len([k for k in table if k in known]) > 50
        checked += 1
    if not checked:
        pytest.skip("not here: no kernel headers (linux-libc-dev)")


GUARDED_FD = """
import fcntl, struct
def probe():
    record, grader = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fd, other = record.detach(), os.open("/dev/null", os.O_RDONLY)
    seccomp.install(guard=fd)
    pidfd = os.pidfd_open(os.getpid())
    calls = {
        "close": lambda: os.close(fd),
        "dup": lambda: os.dup(fd),
        "dup2 onto it": lambda: os.dup2(other, fd),
        "dup2 of it": lambda: os.dup2(fd, 200),
        "set non-blocking": lambda: os.set_blocking(fd, False),
        "fcntl dupfd": lambda: fcntl.fcntl(fd, fcntl.F_DUPFD, 300),
        "shutdown": lambda: socket.socket(fileno=fd).shutdown(socket.SHUT_WR),
        "setsockopt": lambda: LIBC.setsockopt(fd, 1, 7, struct.pack("i", 1), 4),
        "ioctl FIONBIO": lambda: fcntl.ioctl(fd, 0x5421, struct.pack("i", 1)),
        "close_range": lambda: LIBC.syscall(436, 3, 0xFFFFFFFF, 0),
        "pidfd_getfd": lambda: LIBC.syscall(438, pidfd, fd, 0),
    }
    out = {name: outcome(call) for name, call in calls.items()}
    # it still works, and every other descriptor is the process's as before
    out["write"] = outcome(lambda: os.write(fd, b"record"))
    out["read back"] = grader.recv(100).decode()
    out["other fd"] = outcome(lambda: (os.close(os.dup(other)), os.dup2(other, 201), os.close(201)))
    return out
"""


def test_the_record_descriptor_cannot_be_closed_copied_replaced_or_reconfigured():
    """seam/audit.py's record goes out on one descriptor: the filter refuses every call that
    would close it, put another file in its place, copy it (a copy shares its flags), shut it down
    or make it non-blocking; writing on it, and every other descriptor, work as before."""
    code = (f"import ctypes, errno, os, platform, socket\n"
            f"from grader.sandbox import seccomp\nfrom tests.self.grading.test_seccomp import LIBC, outcome\n"
            f"{GUARDED_FD}\nprint(repr(probe()))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = ast.literal_eval(run.stdout.strip().splitlines()[-1])
    assert got.pop("write") == "ok" and got.pop("read back") == "record" and got.pop("other fd") == "ok", got
    assert got == dict.fromkeys(got, "EPERM"), got


def test_a_worker_cannot_clear_its_umask(tmp_path):
    """umask keeps 0o077 (the worker sets 0o077 before the filter): what it creates outside its
    scratch, in a shared temporary folder, is never another uid's to read. A mask that would
    clear those bits is not applied, and the call returns 0 (umask cannot fail)."""
    got = in_filtered_child("""
def probe():
    os.umask(0o077)
    out = {oct(mask): (os.umask(mask), os.umask(0o077)) for mask in (0, 0o022, 0o007, 0o070, 0o277)}
    made = os.path.join(values["d"], "made")
    os.umask(0)
    os.close(os.open(made, os.O_CREAT | os.O_WRONLY, 0o666))
    os.mkdir(made + "-dir", 0o777)
    out["file"], out["dir"] = oct(os.stat(made).st_mode & 0o777), oct(os.stat(made + "-dir").st_mode & 0o777)
    return out
""", d=str(tmp_path))
    # (umask(0o077) afterwards says what the mask was: 0o077 kept; 0o277 was applied)
    assert got == {"0o0": (0, 0o077), "0o22": (0, 0o077), "0o7": (0, 0o077), "0o70": (0, 0o077),
                   "0o277": (0o077, 0o277), "file": "0o600", "dir": "0o700"}, got


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
