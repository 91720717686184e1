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
              What it writes in the shared temporary folders is its uid's alone (umask 077, kept
              by the syscall filter), counted in its disk limit and removed after each worker
              (outside.py).
  process     rlimits only: for a TA checking trusted code. As root it runs the worker as a
              leased uid (refused where Python is unreadable to other uids), never as root, and
              what it writes outside its scratch is treated as the uid mode's; else what it writes
              there stays, so ``auto`` never takes it for a batch.

Every mode also installs the worker's syscall filter (grader/sandbox/seccomp.py) before student code runs.

Each mode's decisions live here, on its ``Isolation`` (its row of ``TRAITS``, and what this
machine adds: root or not): which launcher, where the worker's folders appear, whether a uid is
leased, whether the scratch is a folder to measure, what the report says. The zygote and the
sandbox ask; they never test a mode's name. Beside it: what the worker may see (view.py), how a
zygote is started from those decisions (launch.py), the uids it runs as (uids.py). A new mode is
a row here, a line in ``_unusable`` and what zygote_server.py and worker.py do with the config
they are given.
"""

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

from . import landlock
from .launch import bwrap_prefix, unshare_prefix
from .uids import UidLease
from .view import INSIDE, Layout, _python_hidden, exposed, linked_python, view, worker_python

MODES = ("bwrap", "namespaces", "landlock", "uid", "process")


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
class Isolation:
    mode: str            # one of MODES
    drop: bool           # the worker runs as a leased unprivileged uid (the grader is root)
    user_ns: bool = False  # namespaces through a user namespace (grader not root): own uid
    note: str = ""       # said in the report after the mode (e.g. why a weaker one was taken)

    @classmethod
    def detect(cls, want: str = "auto", batch: bool = False) -> "Isolation":
        """The strongest mode that works here, or ``want``; IsolationUnavailable if it can't.
        ``batch``: students are graded one after another, so ``auto`` takes no mode whose worker
        ``leaves_behind`` what it wrote (a forced one is the TA's choice: trusted code)."""
        if want not in ("auto", *MODES):
            raise IsolationUnavailable(f"unknown isolation mode {want!r}; one of auto, {', '.join(MODES)}")
        root = os.geteuid() == 0
        skipped = []
        for mode in (MODES if want == "auto" else (want,)):
            why = _unusable(mode, root)
            found = None if why else cls(mode, drop=root, user_ns=not root and TRAITS[mode].namespaces)
            if found is not None and batch and want == "auto" and found.leaves_behind:
                why = ("in a batch its worker, running as the grader's uid, could leave files in the "
                       "shared temporary folders for the next student (run as root)")
            if why is None:
                note = f"({'; '.join(skipped)})" if skipped else ""
                return dataclasses.replace(found, note=note)
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
    def spawns(self) -> bool:
        """Its zygotes may be forked from a warm template and enter their sandbox themselves
        (spawn.py: the cgroup, unshare's namespaces, then the root and the rest as a cold zygote
        does). Not bwrap's: bwrap builds the view before the process starts, so it must exec."""
        return self.launcher != "bwrap"

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

    @property
    def writes_outside(self) -> bool:
        """The worker may write outside its scratch: the machine's shared temporary folders (no
        fresh root of its own, no Landlock rule holding it to its scratch)."""
        return not self.namespaces and not self.traits.landlock

    @property
    def sweeps_outside(self) -> bool:
        """What its leased uid holds in the shared temporary folders is counted against the
        scratch's limit and removed after each worker (outside.py): only that uid's files, never
        the grader's."""
        return self.writes_outside and self.leases_uid

    @property
    def leaves_behind(self) -> bool:
        """What a worker writes outside its scratch may outlive it, for the next student to read:
        it runs as the grader's own uid, whose files no sweep can tell from the grader's."""
        return self.writes_outside and not self.sweeps_outside

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

    def prefix(self, layout: Layout) -> list[str]:
        """The command its zygote starts under (launch.py puts the rest of the line after it)."""
        if self.launcher == "bwrap":
            return bwrap_prefix(view(layout), root=os.geteuid() == 0)
        if self.launcher == "unshare":
            return unshare_prefix(self.user_ns)
        return []

    # -- what the report says -------------------------------------------------------------
    def describe(self, secret: tuple[str, ...] | list[str] = (), cuda: bool = False) -> str:
        """The report's sandbox line; ``secret``: the grader's folders, named where the mode
        lets the worker's uid read them; ``cuda``: the worker has the GPU, and with it Unix
        sockets (seccomp.program's ``unix_sockets``)."""
        who = ("a leased unprivileged uid" if self.drop else
               "your uid in a user namespace" if self.user_ns else "the grader's uid")
        text = self.traits.text.format(who=who, abi=landlock.abi() if self.traits.landlock else "")
        sockets = "no sockets but Unix ones (CUDA's driver makes one)" if cuda else "no sockets"
        text += f"; syscall filter: {sockets}, chmod, keyrings, shared memory or namespaces"
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


def _probe(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=20, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]

