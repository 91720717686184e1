"""The template: started as ``python -I spawn.py CONFIG_JSON`` by grader/sandbox/template.py, beside
zygote_server.py (the zygote each of its forks becomes) and worker.py.

A batch job's zygotes are forked from one process that imported and warmed torch once, and
nothing else: no seam, no submission, no test; it reads nothing but Python's files and the
scripts beside this one. Each fork enters its sandbox itself before anything else (the cgroup,
the namespaces unshare gives a cold zygote, then zygote_server.settle: its root, its uid's limits come
with each worker), imports the seam from its own lib, and serves one student. Orders arrive as
JSON datagrams on a SEQPACKET socket, file descriptors attached with SCM_RIGHTS.
"""

import ctypes
import json
import os
import signal
import socket
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000


def template(cfg: dict, ctl: socket.socket) -> None:
    """Warm torch, then fork a zygote per order ({"op": "spawn", "cfg": ...} with the zygote's
    control socket and log attached); answer {"spawned": pid} with a pidfd of it. Never returns."""
    os.chdir(cfg["work"])
    libc = ctypes.CDLL(None)
    libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG: die with the grader
    libc.prctl(4, 0, 0, 0, 0)       # PR_SET_DUMPABLE 0: no ptrace, no /proc/PID/mem of it
    zygote_server.environ(cfg["work"], cfg["limits"]["threads"])
    zygote_server.warm(cfg["optimizers"])
    zygote_server.refuse_a_driver()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # its zygotes are reaped by the kernel
    zygote_server._send(ctl, {"ready": True})
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 2)
        except OSError:
            data, fds = b"", []
        if not data:
            os._exit(0)  # the grader is gone (its zygotes die with it: their death signal)
        order = json.loads(data)
        if order.get("op") != "spawn" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        zygote_ctl, log_fd = fds
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                ctl.close()
                os.dup2(log_fd, 1)
                os.dup2(log_fd, 2)
                os.close(log_fd)
                spawned(order["cfg"], zygote_ctl)
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                os._exit(1)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # it died at once (and was reaped): the grader reads its log
            zygote_server._send(ctl, {"spawned": None})
        else:
            socket.send_fds(ctl, [json.dumps({"spawned": pid}).encode()], [pidfd])
            os.close(pidfd)
        for fd in fds:
            os.close(fd)


def spawned(cfg: dict, ctl_fd: int) -> None:
    """A template's fresh child: enter the sandbox, then be its zygote."""
    os.setsid()  # its own process group, which the grader kills as a cold zygote's
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # die with the template
    for procs in cfg["cgroup"]:  # join the sandbox's cgroup first: all it forks is counted
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    if cfg["unshare"]:
        enter_namespaces(cfg["user_ns"], ctl_fd)
    cfg["ctl"] = ctl_fd
    sys.path.remove(LIB)  # the zygote's modules come from its own lib (zygote_server.settle)
    zygote_server.settle(cfg)
    zygote_server.serve_forks(cfg, socket.socket(fileno=ctl_fd))


def enter_namespaces(user_ns: bool, ctl_fd: int) -> None:
    """What ``unshare --net --mount --pid --ipc --uts --fork [--user --map-root-user]`` does for a
    cold zygote: new namespaces, then a fork, so that the child is the PID namespace's init and
    this process waits for it and ends as it ends. Returns in the child."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags | (CLONE_NEWUSER if user_ns else 0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")
    if user_ns:  # root inside, this uid outside (--map-root-user)
        # /proc/self's maps are writable to their owner only while it is dumpable (the template
        # is not); zygote_server.settle makes it undumpable again before the zygote does anything
        libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    pid = os.fork()
    if pid == 0:
        return
    os.close(ctl_fd)  # the grader sees the zygote's end as the socket's
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    config = json.loads(sys.argv[1])
    LIB = config["lib"]
    sys.path.insert(0, LIB)
    import zygote_server  # grader/sandbox/zygote_server.py, copied beside this script
    template(config, socket.socket(fileno=config["ctl"]))
