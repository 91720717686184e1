"""How the sandbox worker is confined: which mode this machine allows, and what the worker sees.

An allow-list, not a deny-list: the worker sees the Python it runs on (read-only), its own copy
of the seam and of the submission, and a private scratch space it alone can write. Modes,
strongest first (``auto`` takes the first that works here):

  bwrap       bubblewrap (the sandbox Flatpak uses) builds a fresh root holding only that, in
              its own pid, network, ipc and uts namespaces; the worker drops to an uid of its own.
  namespaces  the same view, built by the worker itself (unshare + pivot_root) where bwrap is
              not installed.
  landlock    no namespaces, but Landlock (Linux >= 5.13; Docker's default seccomp allows it):
              the worker restricts itself to the same allow-list (grader/landlock.py), as a leased
              uid (refused where Python is unreadable to other uids: never student code as uid 0).
  uid         no namespaces (Docker's default seccomp profile, Gradescope): the worker runs as an
              unprivileged uid leased for this sandbox alone; the grader's folders are 0700 and
              root's, the worker's copy is its own. It can still read what is world-readable on
              the machine: ``exposed`` checks the grader's own folders and says so in the report.
  process     rlimits only: for a TA checking trusted code. As root it runs the worker as a
              leased uid (refused where Python is unreadable to other uids), never as root.

Every mode also installs the worker's syscall filter (grader/seccomp.py) before student code runs.
"""

import dataclasses
import fcntl
import hashlib
import importlib.util
import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from . import landlock

MODES = ("bwrap", "namespaces", "landlock", "uid", "process")
WORKER_UID = 64999          # the first uid of the pool; no account uses these
UID_POOL = 64               # concurrent sandboxes (batch jobs) each get their own uid
INSIDE = Path("/sandbox")   # where lib/, submission/ and work/ appear in a namespaced view
SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32",
               "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
PROBED = ("torch", "numpy", "jaxtyping", "beartype", "einops")  # packages the worker imports


class IsolationUnavailable(ValueError):
    """A mode was asked for (``--isolation``) that this machine cannot give."""


@dataclasses.dataclass(frozen=True)
class Isolation:
    mode: str            # one of MODES
    drop: bool           # the worker runs as a leased unprivileged uid (the grader is root)
    user_ns: bool = False  # namespaces through a user namespace (grader not root): own uid
    note: str = ""       # said in the report after the mode (e.g. why a weaker one was taken)

    @property
    def namespaces(self) -> bool:
        return self.mode in ("bwrap", "namespaces")

    @classmethod
    def detect(cls, want: str = "auto") -> "Isolation":
        """The strongest mode that works here, or ``want``; IsolationUnavailable if it can't."""
        if want not in ("auto", *MODES):
            raise IsolationUnavailable(f"unknown isolation mode {want!r}; one of auto, {', '.join(MODES)}")
        root = os.geteuid() == 0
        skipped = []
        for mode in (MODES if want == "auto" else (want,)):
            why = _unusable(mode, root)
            if why is None:
                note = f"({'; '.join(skipped)})" if skipped else ""
                return cls(mode, drop=root, user_ns=not root and mode in ("bwrap", "namespaces"),
                           note=note)
            if want != "auto":
                raise IsolationUnavailable(f"--isolation {mode}: {why}")
            skipped.append(f"no {mode}: {why}")
        raise IsolationUnavailable("no isolation mode works here: " + "; ".join(skipped))

    def describe(self) -> str:
        who = ("a leased unprivileged uid" if self.drop else
               "your uid in a user namespace" if self.user_ns else "the grader's uid")
        text = {
            "bwrap": f"bwrap: a fresh root with only Python, the seam, its copy and a scratch tmpfs; "
                     f"own pid/net/ipc namespaces; runs as {who}",
            "namespaces": f"namespaces (unshare + pivot_root): a fresh root with only Python, the seam, "
                          f"its copy and a scratch tmpfs; own pid/net/ipc namespaces; runs as {who}",
            "landlock": f"landlock (ABI {landlock.abi()}): no namespaces; it reads only Python, the seam "
                        f"and its copy, writes only its scratch; no signals out; runs as {who}",
            "uid": "uid: no namespaces; an unprivileged uid of its own, grader folders 0700; "
                   "it can read what is world-readable on this machine",
            "process": f"process: rlimits only, NO isolation of files; runs as {who}"
                       " (trusted code only: grade untrusted code as root, e.g. in the Docker image)",
        }[self.mode]
        text += "; syscall filter: no sockets, chmod, keyrings, shared memory or namespaces"
        return text + (f" {self.note}" if self.note else "")


def _unusable(mode: str, root: bool) -> str | None:
    """Why ``mode`` cannot run here, or None."""
    if mode == "bwrap":
        if not shutil.which("bwrap"):
            return "bwrap is not installed (Debian/Ubuntu package bubblewrap)"
        return _probe(bwrap_prefix(mounts=[("ro-bind", "/", "/")], root=root) + ["true"])
    if mode == "namespaces":
        if not shutil.which("unshare"):
            return "unshare (util-linux) is not installed"
        return _probe(unshare_prefix(user_ns=not root) + ["true"])
    if mode == "landlock":
        version = landlock.abi()
        if version < 1:
            return "the kernel has no Landlock, or seccomp refuses it"
        if not root and version < 6:
            return (f"Landlock ABI {version} cannot stop signals to the grader's uid (needs 6, "
                    "Linux 6.12) and the worker cannot change uid")
        return _root_needs_a_readable_python(root)
    if mode == "uid":
        return "the grader is not root" if not root else _root_needs_a_readable_python(root)
    return _root_needs_a_readable_python(root)  # process


def _root_needs_a_readable_python(root: bool) -> str | None:
    """As root, a mode without namespaces runs the worker as a leased uid, which must be able to
    read Python: else it would run as uid 0, which owns every root file (chmod, keyrings, root's
    sockets; Landlock mediates none of these). Where Python is hidden (pyenv or conda under
    /root), the worker runs on a hard-linked tree of it outside (``linked_python``); where that
    cannot be made, the mode is refused, never downgraded."""
    hidden = _python_hidden() if root else []
    if not hidden:
        return None
    try:
        linked_python()
        return None
    except OSError as e:
        return (f"Python is not readable by an unprivileged uid ({hidden[0]}) and a worker never runs "
                f"as root; no readable copy of it could be linked ({e}); install Python outside /root "
                "(the Docker image's is)")


LINKED = Path("/var/lib/grader-python")  # hard-linked trees of a hidden Python, root's


def worker_python(namespaces: bool) -> tuple[str, list[str]]:
    """(the interpreter a worker runs, the folders it reads): this one, or, outside a namespace
    where a leased uid cannot read this one, its hard-linked tree (``linked_python``)."""
    if namespaces or os.geteuid() != 0 or not _python_hidden():
        return sys.executable, python_paths()
    tree, source = linked_python()
    exe = os.path.realpath(sys.executable)
    paths = [str(tree)] + [p for p in python_paths() if p != source and not p.startswith(source + "/")]
    return str(tree / os.path.relpath(exe, source)), paths


def linked_python() -> tuple[Path, str]:
    """(a tree of hard links to this Python, made once per machine and version of its packages,
    outside root's home: the same files, readable as their modes say; the folder it mirrors).
    OSError where it cannot be made (another file system, several Python folders)."""
    paths, exe = python_paths(), os.path.realpath(sys.executable)
    [source] = [p for p in paths if exe.startswith(p + "/")] or [None]
    if source is None or len(paths) != 1:
        raise OSError(f"Python lives in {len(paths)} folders: {', '.join(paths)}")
    site_dir = sysconfig.get_paths()["purelib"]
    key = hashlib.sha256("\0".join([source, str(os.stat(site_dir).st_mtime_ns),
                                     *sorted(os.listdir(site_dir))]).encode()).hexdigest()[:16]
    tree = LINKED / key
    if not tree.exists():
        LINKED.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = os.lstat(LINKED)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise OSError(f"{LINKED} is not root's alone; remove it")
        part = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=LINKED))
        done = subprocess.run(["cp", "-al", source, str(part / "tree")], capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(part, ignore_errors=True)
            raise OSError((done.stderr.strip().splitlines() or ["cp -al failed"])[-1])
        try:
            os.rename(part / "tree", tree)  # atomic: a concurrent grader made it or we did
        except OSError:
            pass
        shutil.rmtree(part, ignore_errors=True)
    if unreadable_by_other([str(tree)]):
        raise OSError(f"{tree} is not readable by other uids")
    return tree, source


def _python_hidden() -> list[str]:
    return unreadable_by_other(python_paths())


def _probe(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=20, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]


# -- what the worker may see ---------------------------------------------------------------
def python_paths() -> list[str]:
    """Folders the worker's Python needs, read-only: the interpreter's prefixes, its stdlib and
    site-packages, the packages it imports, and the system's shared libraries."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= set(site.getsitepackages())
    for name in PROBED:
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            paths |= {os.path.dirname(p) for p in spec.submodule_search_locations}
    paths = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    return sorted(p for p in paths if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in paths))


def system_paths() -> list[tuple[str, str]]:
    """(kind, path) for the shared libraries: ("symlink", "/lib") where /lib -> usr/lib (merged
    /usr), ("bind", path) otherwise."""
    out = []
    for p in SYSTEM_LIBS:
        if os.path.islink(p):
            out.append(("symlink", p))
        elif os.path.exists(p):
            out.append(("bind", p))
    return out


def masks(binds: list[str], secret: list[str]) -> list[str]:
    """Secret folders (the checkout, the output folder) that lie inside a folder the worker gets:
    they are covered by an empty tmpfs (a venv whose prefix is /usr, a checkout under it ...)."""
    return [s for s in secret if any(s.startswith(b.rstrip("/") + "/") for b in binds)]


def carve(read: list[str], secret: list[str]) -> list[str]:
    """Landlock's read rules with the secret folders taken out. Landlock can only allow, so a
    rule for a folder that holds a secret (a checkout inside a Python prefix) is replaced by a
    rule for each entry beside the path down to it: the secret and the folders above it get no
    rule, everything else beneath the folder still does. A rule's target is its real path (the
    kernel follows symlinks), so a link to a secret, or to a folder holding one, is carved too."""
    secret = [os.path.realpath(s) for s in secret]

    def inside(path: str, top: str) -> bool:
        return path == top or path.startswith(top.rstrip("/") + "/")

    out: list[str] = []
    pending = list(read)
    while pending:
        path = pending.pop()
        real = os.path.realpath(path)
        if any(inside(real, s) for s in secret):
            continue  # the secret itself, or inside it
        if not any(inside(s, real) and s != real for s in secret):
            out.append(path)
            continue
        try:
            pending += [entry.path for entry in os.scandir(real)]
        except OSError:
            continue  # unreadable: no rule
    return sorted(out)


def unreadable_by_other(paths: list[str]) -> list[str]:
    """Paths an unprivileged uid (not owner, not in the group) cannot reach: some folder on the
    way lacks the other-execute bit."""
    blocked = []
    for path in paths:
        parts = Path(path).parts
        for i in range(2, len(parts) + 1):
            try:
                if not os.stat(Path(*parts[:i])).st_mode & 0o001:
                    blocked.append(str(Path(*parts[:i])))
                    break
            except OSError:
                break
    return sorted(set(blocked))


def exposed(paths: list[Path]) -> list[str]:
    """Of ``paths`` (the grader's checkout, the output folder), those an unprivileged uid can reach."""
    return [str(p) for p in paths if p.exists() and not unreadable_by_other([str(p)])]


# -- how the worker is started --------------------------------------------------------------
def bwrap_prefix(mounts: list[tuple[str, ...]], root: bool) -> list[str]:
    """bwrap's command line: ``mounts`` are (op, *args) for ro-bind, symlink, tmpfs ... in order."""
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--proc", "/proc",
           "--dev", "/dev"]
    if root:  # each child drops to the uid itself; the zygote kills what it leaves behind
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    else:
        cmd += ["--unshare-user"]
    made = {"/"}
    for op, *args in mounts:
        dest = args[0] if op == "tmpfs" else args[1]
        for parent in reversed(Path(dest).parents):  # bwrap would make them 0700: the worker
            if str(parent) not in made:              # could not reach what is bound below
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
        if op == "tmpfs":   # ("tmpfs", path, size_bytes, perms)
            cmd += ["--perms", args[2], "--size", str(args[1]), "--tmpfs", args[0]]
        else:
            cmd += [f"--{op}", *args]
    return cmd + ["--"]


def unshare_prefix(user_ns: bool) -> list[str]:
    # (no --kill-child: it sometimes fails in util-linux with "sigprocmask unblock failed";
    # the worker sets its own parent-death signal, and the sandbox kills the namespace's init)
    flags = ["unshare", "--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--mount-proc"]
    return flags + (["--user", "--map-root-user"] if user_ns else []) + ["--"]


class UidLease:
    """An unprivileged uid for one sandbox, held with a lock file until ``release``: concurrent
    sandboxes (a batch's jobs) never share a uid, so none can signal, trace or read another."""

    def __init__(self):
        folder = lease_folder()
        for uid in range(WORKER_UID, WORKER_UID - UID_POOL, -1):
            fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError(f"all {UID_POOL} sandbox uids are in use")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


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
