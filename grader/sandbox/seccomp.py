"""The worker's syscall filter (seccomp-BPF), installed in every isolation mode before any
student code runs and before any thread starts (with TSYNC all the same).

Landlock mediates opening and creating files, nothing else, and namespaces do not cover the
kernel's other shared objects. So, whatever the mode, a worker may not: change a file's mode,
owner, times or extended attributes; touch a kernel keyring; create SysV shared memory,
message queues or semaphores, or POSIX message queues (they outlive the process: a classmate's
code could be handed over through them); create any socket (it talks over inherited pipes;
seccomp cannot read a sockaddr, so pathname sockets cannot be told from the others); use
io_uring, bpf, perf_event_open, userfaultfd, ptrace or another process's memory; mount, make
namespaces or enter them; load kernel modules; clear its umask's 0o077 (not applied: what it
creates stays its uid's alone). A denied call fails with EPERM (clone3 with
ENOSYS, so the C library falls back to clone, whose flags the filter can read). Calls of a
foreign architecture (i386 on x86-64) and x32 calls are denied.

Standard library only: the sandbox copies this file next to the worker script.
Reference: https://docs.kernel.org/userspace-api/seccomp_filter.html
"""

import ctypes
import errno
import platform
import struct

# (audit arch, seccomp syscall number, {name: number}); the numbers are the kernel's
# (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for arm64):
# tests/self/grading/test_seccomp.py checks them against this machine's headers.
X86_64 = {
    "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132, "utimes": 235,
    "futimesat": 261, "fchownat": 260, "fchmodat": 268, "utimensat": 280, "fchmodat2": 452,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "setxattrat": 463, "removexattrat": 466,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245,
    "socket": 41, "socketpair": 53,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "process_vm_readv": 310, "process_vm_writev": 311,
    "ptrace": 101, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
    "setns": 308, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246,
    "kexec_file_load": 320, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "reboot": 169,
}
# arm64 has no chmod, chown, lchown, utime, utimes, futimesat (their *at forms cover them)
AARCH64 = {
    "fchmod": 52, "fchown": 55, "fchownat": 54, "fchmodat": 53, "utimensat": 88, "fchmodat2": 452,
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
    "fremovexattr": 16, "setxattrat": 463, "removexattrat": 466,
    "add_key": 217, "request_key": 218, "keyctl": 219,
    "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "semget": 190, "semctl": 191,
    "semtimedop": 192, "semop": 193, "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189,
    "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
    "mq_getsetattr": 185,
    "socket": 198, "socketpair": 199,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 280,
    "perf_event_open": 241, "userfaultfd": 282, "process_vm_readv": 270, "process_vm_writev": 271,
    "ptrace": 117, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97,
    "setns": 268, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "init_module": 105, "finit_module": 273, "delete_module": 106, "kexec_load": 104,
    "kexec_file_load": 294, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "reboot": 142,
}
# What may be done to a descriptor the filter guards (the worker's record of what ran,
# seam/audit.py): nothing that closes it, puts another file in its place, copies it (a copy
# shares its flags: O_NONBLOCK set on a copy would make the hook's writes fail), shuts it down or
# reconfigures it. (call, the argument holding the descriptor); close_range is checked as a range.
GUARDED = {
    "x86_64": {"close": (3, 0), "dup": (32, 0), "dup2": (33, 1), "dup3": (292, 1), "fcntl": (72, 0),
               "shutdown": (48, 0), "setsockopt": (54, 0), "ioctl": (16, 0), "close_range": (436, None)},
    "aarch64": {"close": (57, 0), "dup": (23, 0), "dup3": (24, 1), "fcntl": (25, 0),
                "shutdown": (210, 0), "setsockopt": (208, 0), "ioctl": (29, 0), "close_range": (436, None)},
}
# dup2/dup3 name the descriptor they copy first: a copy of it is refused too
COPY_SOURCE = {"x86_64": (33, 292), "aarch64": (24,)}
PIDFD_GETFD = 438  # another way to copy a descriptor (of any process, itself included): refused

ARCHES = {  # machine -> (AUDIT_ARCH_*, seccomp(2), clone, clone3, denied calls)
    "x86_64": (0xC000003E, 317, 56, 435, X86_64),
    "aarch64": (0xC00000B7, 277, 220, 435, AARCH64),
}
# umask(2) is let through only with every group and other bit set (0o077): the files a worker
# makes are its uid's alone, never readable or writable by another uid (the uid and process modes
# let it write the machine's shared temporary folders, where a classmate could look). Any other
# mask is not applied and the call returns 0: umask cannot fail (the C library would report
# EPERM's -1 as a mask, Python as "[Errno 0] Success"), so os.umask(0) returns 0, changes nothing.
UMASK = {"x86_64": 95, "aarch64": 166}
KEPT_UMASK = 0o077
X32_BIT = 0x40000000
# clone flags that make namespaces: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

LD_ABS_W, JEQ, JGT, JGE, JSET, RET, AND = 0x20, 0x15, 0x25, 0x35, 0x45, 0x06, 0x54
NR, ARCH, ARG0, ARG1 = 0, 4, 16, 24                      # offsets into struct seccomp_data
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
DENY = ERRNO | errno.EPERM
PR_SET_NO_NEW_PRIVS, SET_MODE_FILTER, FLAG_TSYNC = 38, 1, 1
AF_UNIX = 1


class Unsupported(OSError):
    """No syscall table for this machine's architecture."""


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _guard(machine: str, fd: int) -> list[bytes]:
    """The instructions that refuse every call of ``GUARDED`` on ``fd``, and pidfd_getfd (the
    accumulator holds the call's number before and after them)."""
    out = []
    for nr, arg in GUARDED[machine].values():
        if arg is None:  # close_range(first, last, flags): refused where first <= fd <= last
            out += [_insn(JEQ, nr, jf=6), _insn(LD_ABS_W, ARG0), _insn(JGT, fd, jt=3),
                    _insn(LD_ABS_W, ARG1), _insn(JGE, fd, jf=1), _insn(RET, DENY), _insn(LD_ABS_W, NR)]
        else:
            out += [_insn(JEQ, nr, jf=4), _insn(LD_ABS_W, ARG0 + 8 * arg), _insn(JEQ, fd, jf=1),
                    _insn(RET, DENY), _insn(LD_ABS_W, NR)]
    for nr in COPY_SOURCE[machine]:  # dup2(fd, x) / dup3(fd, x, flags): a copy of it
        out += [_insn(JEQ, nr, jf=4), _insn(LD_ABS_W, ARG0), _insn(JEQ, fd, jf=1),
                _insn(RET, DENY), _insn(LD_ABS_W, NR)]
    out += [_insn(JEQ, PIDFD_GETFD, jf=1), _insn(RET, DENY)]
    return out


def program(machine: str | None = None, unix_sockets: bool = False, guard: int | None = None) -> bytes:
    """The filter for ``machine`` (default: this one), as struct sock_filter[] bytes.

    ``unix_sockets``: socket(AF_UNIX, ...) is allowed, every other family still denied. Only for
    a worker given the GPU: the CUDA driver makes a Unix socket when it starts (on an H200,
    driver 580, cudaGetDeviceCount fails with error 304 "OS call failed" when socket() is
    refused; found by benchmarks/gpu_check.py's first run on a GPU).

    ``guard``: a descriptor nothing may close, replace, copy or reconfigure (``GUARDED``)."""
    machine = machine or platform.machine()
    if machine not in ARCHES:
        raise Unsupported(f"no syscall filter for {machine} (known: {', '.join(ARCHES)})")
    arch, _, clone, clone3, denied = ARCHES[machine]
    out = [_insn(LD_ABS_W, ARCH), _insn(JEQ, arch, jt=1), _insn(RET, DENY),  # a foreign arch: denied
           _insn(LD_ABS_W, NR)]
    if machine == "x86_64":
        out += [_insn(JGE, X32_BIT, jf=1), _insn(RET, DENY)]
    if guard is not None:
        out += _guard(machine, guard)
    socket = denied["socket"]
    for nr in sorted(set(denied.values()) - ({socket} if unix_sockets else set())):
        out += [_insn(JEQ, nr, jf=1), _insn(RET, DENY)]
    if unix_sockets:  # socket(domain, ...): AF_UNIX alone (the accumulator holds arg 0 after this)
        out += [_insn(JEQ, socket, jf=4), _insn(LD_ABS_W, ARG0),
                _insn(JEQ, AF_UNIX, jf=1), _insn(RET, ALLOW), _insn(RET, DENY)]
    out += [_insn(JEQ, UMASK[machine], jf=5), _insn(LD_ABS_W, ARG0),   # umask(mask): 0o077 kept
            _insn(AND, KEPT_UMASK), _insn(JEQ, KEPT_UMASK, jf=1), _insn(RET, ALLOW), _insn(RET, ERRNO | 0)]
    out += [_insn(JEQ, clone3, jf=1), _insn(RET, ERRNO | errno.ENOSYS),
            _insn(JEQ, clone, jf=3), _insn(LD_ABS_W, ARG0),      # clone(flags, ...): no new namespaces
            _insn(JSET, CLONE_NEW, jf=1), _insn(RET, DENY),
            _insn(RET, ALLOW)]
    return b"".join(out)


def install(unix_sockets: bool = False, guard: int | None = None) -> None:
    """Filter this process (all its threads, TSYNC) and its future children, for good."""
    code = program(unix_sockets=unix_sockets, guard=guard)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    insns = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("=HxxxxxxQ", len(code) // 8, ctypes.addressof(insns))
    buf = ctypes.create_string_buffer(fprog, len(fprog))
    number = ARCHES[platform.machine()][1]
    if libc.syscall(number, SET_MODE_FILTER, FLAG_TSYNC, buf) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")
