"""How the sandbox worker is confined: which mode this machine allows, and what the worker sees.

An allow-list, not a deny-list: the worker sees the Python it runs on (read-only), its own copy
of the seam and of the submission, and a private scratch space it alone can write. Modes,
strongest first (``auto`` takes the first that works here):

  bwrap       bubblewrap (the sandbox Flatpak uses) builds a fresh root holding only that, in
              its own pid, network, ipc and uts namespaces; the worker drops to an uid of its own.
  namespaces  the same view, built by the worker itself (unshare + pivot_root) where bwrap is
              not installed.
  landlock    no namespaces, but Landlock (Linux >= 5.13; Docker's default seccomp allows it):
              the worker restricts itself to the same allow-list (grader/sandbox/landlock.py), as a leased
              uid (refused where Python is unreadable to other uids: never student code as uid 0).
  uid         no namespaces (Docker's default seccomp profile, Gradescope): the worker runs as an
              unprivileged uid leased for this sandbox alone; the grader's folders are 0700 and
              root's, the worker's copy is its own. It can still read what is world-readable on
              the machine: ``exposed`` checks the grader's own folders and says so in the report.
  process     rlimits only: for a TA checking trusted code. As root it runs the worker as a
              leased uid (refused where Python is unreadable to other uids), never as root.

Every mode also installs the worker's syscall filter (grader/sandbox/seccomp.py) before student code runs.

Each mode's decisions live here, on its ``Isolation`` (its row of ``TRAITS``, and what this
machine adds: root or not): the command the zygote starts under, the paths and config its worker
gets, whether a uid is leased, whether the scratch is a folder to measure. The zygote and the
sandbox ask; they never test a mode's name. A new mode is a row here, a line in ``_unusable``
and what worker.py does with the config it is given.
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
DEVICES = ("null", "zero", "full", "random", "urandom")  # the device nodes every worker opens (worker.py's too)


class IsolationUnavailable(ValueError):
    """A mode was asked for (``--isolation``) that this machine cannot give."""


@dataclasses.dataclass(frozen=True)
class Traits:
    """What a mode decides wherever it runs (``Isolation`` adds what this machine decides)."""
    launcher: str | None   # "bwrap": it builds the view before the worker starts; "unshare": it
                           # gives only the namespaces, the worker builds the view (pivot_root);
                           # None: the zygote starts as a plain process
    namespaces: bool       # own mount, pid, net, ipc and uts namespaces: a fresh root holding
                           # only the view, a scratch tmpfs of ``disk_bytes``
    landlock: bool         # the worker restricts itself to the allow-list (no namespaces)
    warns_exposed: bool    # the report names the grader's folders the worker's uid can read
    text: str              # ``describe``: {who} runs it, {abi} is Landlock's


TRAITS = {
    "bwrap": Traits("bwrap", namespaces=True, landlock=False, warns_exposed=False, text=(
        "bwrap: a fresh root with only Python, the seam, its copy and a scratch tmpfs; "
        "own pid/net/ipc namespaces; runs as {who}")),
    "namespaces": Traits("unshare", namespaces=True, landlock=False, warns_exposed=False, text=(
        "namespaces (unshare + pivot_root): a fresh root with only Python, the seam, "
        "its copy and a scratch tmpfs; own pid/net/ipc namespaces; runs as {who}")),
    "landlock": Traits(None, namespaces=False, landlock=True, warns_exposed=False, text=(
        "landlock (ABI {abi}): no namespaces; it reads only Python, the seam "
        "and its copy, writes only its scratch; no signals out; runs as {who}")),
    "uid": Traits(None, namespaces=False, landlock=False, warns_exposed=True, text=(
        "uid: no namespaces; an unprivileged uid of its own, grader folders 0700; "
        "it can read what is world-readable on this machine")),
    "process": Traits(None, namespaces=False, landlock=False, warns_exposed=False, text=(
        "process: rlimits only, NO isolation of files; runs as {who}"
        " (trusted code only: grade untrusted code as root, e.g. in the Docker image)")),
}
assert tuple(TRAITS) == MODES


@dataclasses.dataclass(frozen=True)
class Layout:
    """A zygote's folders on the grader's side, and what its worker must never see."""
    root: Path                      # the zygote's folder (0711, root's)
    lib: Path                       # the seam and the worker script
    inbox: Path                     # the current submission's modules
    work: Path                      # the scratch
    secret: tuple[str, ...]         # the checkout and the output folders
    python: tuple[str, list[str]]   # (the interpreter, the folders it reads): Isolation.python()
    disk_bytes: int                 # the scratch's size, where it is a tmpfs
    cuda: bool                      # the GPU's device nodes are let through


@dataclasses.dataclass(frozen=True)
class Launch:
    """How a zygote is started: ``prefix + [python, "-I", script, json(config + the zygote's)]``."""
    prefix: list[str]   # the command it runs under (bwrap's, unshare's), or none
    script: str         # worker.py, where the starting process finds it
    cwd: str
    config: dict        # the mode's part of the worker's config


@dataclasses.dataclass(frozen=True)
class Isolation:
    mode: str            # one of MODES
    drop: bool           # the worker runs as a leased unprivileged uid (the grader is root)
    user_ns: bool = False  # namespaces through a user namespace (grader not root): own uid
    note: str = ""       # said in the report after the mode (e.g. why a weaker one was taken)

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
                return cls(mode, drop=root, user_ns=not root and TRAITS[mode].namespaces, note=note)
            if want != "auto":
                raise IsolationUnavailable(f"--isolation {mode}: {why}")
            skipped.append(f"no {mode}: {why}")
        raise IsolationUnavailable("no isolation mode works here: " + "; ".join(skipped))

    # -- what the mode decides ----------------------------------------------------------
    @property
    def traits(self) -> Traits:
        return TRAITS[self.mode]

    @property
    def namespaces(self) -> bool:
        """A fresh root in namespaces of its own (``Traits.namespaces``)."""
        return self.traits.namespaces

    @property
    def launcher(self) -> str | None:
        """What the zygote is started under: "bwrap", "unshare" or None (``Traits.launcher``)."""
        return self.traits.launcher

    @property
    def pivot(self) -> bool:
        """The worker builds its root itself: unshare gives it the namespaces, not the view."""
        return self.launcher == "unshare"

    @property
    def pid_namespace(self) -> bool:
        """The zygote is the init's child of a PID namespace of its own: killing that init ends
        every process of the sandbox, and kill(-1) inside reaches only them."""
        return self.namespaces

    @property
    def watches_disk(self) -> bool:
        """The scratch is a folder on the grader's disk, not a tmpfs of ``disk_bytes``: the
        grader measures it while it waits for the worker."""
        return not self.namespaces

    @property
    def leases_uid(self) -> bool:
        """The worker runs as an unprivileged uid leased for this sandbox (the grader is root)."""
        return self.drop

    @property
    def by_group(self) -> bool:
        """A leased worker outside a namespace reaches the zygote's inbox (read) and scratch
        (write) through its group; inside one they are bound (read-only, or a tmpfs) and 0755."""
        return self.drop and not self.namespaces

    @property
    def sweeps_uid(self) -> bool:
        """Without a PID namespace to end them with, what a leased worker left is found by its
        uid: kill(-1) as that uid reaches only that uid's processes."""
        return self.drop and not self.pid_namespace

    def lease(self) -> "UidLease | None":
        return UidLease() if self.leases_uid else None

    def python(self) -> tuple[str, list[str]]:
        """(the interpreter a worker runs, the folders it reads): ``worker_python``."""
        return worker_python(self.namespaces)

    def paths(self, layout: Layout) -> dict:
        """The lib, submission and work folders as the worker sees them."""
        if self.namespaces:
            return {"lib": str(INSIDE / "lib"), "submission": str(INSIDE / "submission"),
                    "work": str(INSIDE / "work")}
        return {"lib": str(layout.lib), "submission": str(layout.inbox), "work": str(layout.work)}

    # -- how the zygote is started --------------------------------------------------------
    def launch(self, layout: Layout) -> Launch:
        where = self.paths(layout)
        return Launch(prefix=self.prefix(layout), script=self._script(layout, where),
                      cwd="/" if self.namespaces else where["work"],
                      config={**where, **self.worker_config(layout, where)})

    def prefix(self, layout: Layout) -> list[str]:
        if self.launcher == "bwrap":
            return bwrap_prefix(view(layout), root=os.geteuid() == 0)
        if self.launcher == "unshare":
            return unshare_prefix(self.user_ns)
        return []

    def _script(self, layout: Layout, where: dict) -> str:
        """worker.py: inside the view where the launcher built it first (bwrap), else on the
        grader's side (the worker of a pivot builds its view after it started)."""
        return str(layout.lib / "worker.py") if self.pivot else f"{where['lib']}/worker.py"

    def worker_config(self, layout: Layout, where: dict) -> dict:
        """What worker.py is told instead of the mode's name: whether to build its root
        (``pivot``, with the ``view`` and an empty ``newroot`` folder), whether kill(-1) reaches
        only the sandbox (``pid_ns``), and Landlock's allow-list (``landlock``, or None)."""
        config = {"pivot": self.pivot, "pid_ns": self.pid_namespace, "landlock": None}
        if self.pivot:
            newroot = layout.root / "newroot"
            newroot.mkdir(exist_ok=True)
            config.update(view=view(layout), newroot=str(newroot))
        if self.traits.landlock:
            config["landlock"] = landlock_rules(layout, where)
        return config

    # -- what the report says -------------------------------------------------------------
    def describe(self, secret: tuple[str, ...] | list[str] = ()) -> str:
        """The report's sandbox line; ``secret``: the grader's folders, named where the mode
        lets the worker's uid read them."""
        who = ("a leased unprivileged uid" if self.drop else
               "your uid in a user namespace" if self.user_ns else "the grader's uid")
        text = self.traits.text.format(who=who, abi=landlock.abi() if self.traits.landlock else "")
        text += "; syscall filter: no sockets, chmod, keyrings, shared memory or namespaces"
        text += f" {self.note}" if self.note else ""
        leaks = exposed([Path(p) for p in secret]) if self.traits.warns_exposed else []
        if leaks:
            text += ("; WARNING: readable by the worker uid: " + ", ".join(leaks)
                     + " (make them 0700, as the Docker image and Gradescope setup do)")
        return text


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


def view(layout: Layout) -> list[tuple[str, ...]]:
    """The whole file system of a namespaced zygote, as (op, *args) in order."""
    python = python_paths()
    out = [("ro-bind", p, p) for p in python]
    out += [("symlink", os.readlink(p), p) if kind == "symlink" else ("ro-bind", p, p)
            for kind, p in system_paths() if p not in python]
    binds = [v[2] for v in out if v[0] == "ro-bind"]
    out += [("tmpfs", m, 65536, "0755") for m in masks(binds, list(layout.secret))]
    out += [("ro-bind", str(layout.lib), str(INSIDE / "lib")),
            ("ro-bind", str(layout.inbox), str(INSIDE / "submission")),
            ("tmpfs", str(INSIDE / "work"), layout.disk_bytes, "0777"),
            ("tmpfs", "/dev/shm", 1 << 20, "1777")]
    if layout.cuda:  # the GPU's device nodes, and /sys where the driver's libraries look
        out += [("dev-bind", str(d), str(d)) for d in sorted(Path("/dev").glob("nvidia*"))]
        out += [("ro-bind", "/sys", "/sys")]
    return out


def landlock_rules(layout: Layout, where: dict) -> dict:
    """Landlock's allow-list for a worker that sees the grader's file system: it reads its Python,
    the system's libraries, its lib and its submission (the secrets carved out), writes its
    scratch, opens the harmless devices (and the GPU's)."""
    # Its lib and its submission are the sandbox's own copies, never carved: a hidden output
    # folder may hold the sandbox's root (`--out /tmp/results.json` hides all of /tmp).
    rules = {"read": carve(layout.python[1] + [p for _, p in system_paths()], _secrets(layout))
             + [where["lib"], where["submission"]],
             "write": [where["work"]],
             "devices": [f"/dev/{d}" for d in DEVICES]
             + ([str(d) for d in Path("/dev").glob("nvidia*")] if layout.cuda else [])}
    if layout.cuda:  # where the driver looks
        rules["read"] += ["/proc/driver/nvidia", "/sys"]
    return rules


def _secrets(layout: Layout) -> list[str]:
    """The checkout and the output folders, and their images in a hard-linked Python tree
    (``linked_python`` mirrors the whole prefix: a checkout inside it is linked too)."""
    secret = list(layout.secret)
    if layout.python[0] != sys.executable:
        tree, source = linked_python()
        secret += [str(tree / os.path.relpath(s, source)) for s in layout.secret
                   if s.startswith(source + "/")]
    return secret


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
