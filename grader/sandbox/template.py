"""The template: one process per batch job that imported and warmed torch once, and forks each
student's zygote (spawn.py), which then enters its own sandbox (a fresh cgroup, namespaces, uid
and folder) before it reads a byte of the student's upload. So no student's zygote pays torch's
import, and no two students share a zygote. The template holds nothing of anyone's: it imports
no seam, no test, no reference and no grader module, never reads an upload and never runs
student code (tests/self/grading/test_template.py reads its memory).

``Zygotes`` is where a batch job gets each student's zygote: a template's fresh fork, or, where a
mode's launcher must exec (bwrap builds its view before Python starts), one zygote kept for the
job (its students then share its namespaces and uid; it cleans up between them, zygote_server.py).
"""

import contextlib
import dataclasses
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .isolation import Isolation
from .limits import Limits
from .folders import remove
from .procs import tail
from .zygote import Zygote, stage_lib, warms_optimizers
from seam import SandboxFailure


class Spawned:
    """A zygote's first process when a template forked it (not the grader's child: the template
    reaps it), with what the zygote code asks of a Popen: its pid, poll and wait, through a
    pidfd the template sent (a pid alone could be reused once it ends)."""

    def __init__(self, pid: int, pidfd: int):
        self.pid, self.pidfd = pid, pidfd

    def poll(self) -> int | None:
        return 0 if select.select([self.pidfd], [], [], 0)[0] else None

    def wait(self, timeout: float | None = None) -> int:
        if not select.select([self.pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(f"zygote {self.pid}", timeout)
        return 0

    def release(self) -> None:
        os.close(self.pidfd)


class Template:
    """The batch job's torch-ready process (spawn.py). Its folder (0700, the grader's) holds
    lib/ (the scripts), work/ (its home) and its log; it runs the Python its zygotes run, as the
    grader's uid, with no sandbox of its own: it runs nothing but torch's import and warm-up."""

    def __init__(self, limits: Limits, isolation: Isolation, cuda: bool = False,
                 problems: list[str] | None = None):
        self.limits = limits
        self.optimizers = warms_optimizers(problems, cuda)
        self.python = isolation.python()[0]
        self.root = Path(tempfile.mkdtemp(prefix="grader-template-"))
        self.lib, self.work = self.root / "lib", self.root / "work"
        stage_lib(self.lib, seam=False)
        self.work.mkdir(mode=0o700)
        self.log_path = self.root / "template.log"
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.ready = False

    def start(self) -> None:
        """Start it (it imports torch meanwhile); ``spawn`` waits for it."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg = {"lib": str(self.lib), "work": str(self.work), "ctl": theirs.fileno(),
               "optimizers": self.optimizers, "limits": dataclasses.asdict(self.limits)}
        with open(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as log:
            self.proc = subprocess.Popen(
                [self.python, "-I", str(self.lib / "spawn.py"), json.dumps(cfg)], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, close_fds=True, pass_fds=(theirs.fileno(),),
                start_new_session=True, cwd=self.work)
        theirs.close()
        self.ctl, self.ready = ours, False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, cfg: dict, ctl_fd: int, log_fd: int, deadline: float) -> Spawned:
        """A fresh zygote with config ``cfg`` (zygote.py's, with launch.py's ``entry`` and the
        cgroup's files), its control socket ``ctl_fd`` and its log ``log_fd``. A template found
        gone (killed, out of memory), before or while it forks, is started again once."""
        for again in (False, True):
            if not self.alive():
                self.close_process()
                self.start()
            reply, fds = self._order(cfg, ctl_fd, log_fd, deadline)
            if type(reply) is dict and type(reply.get("spawned")) is int and len(fds) == 1:
                return Spawned(reply["spawned"], fds[0])
            for fd in fds:
                os.close(fd)
            if again or not self._died():
                raise self._failure("the sandbox's template could not fork its zygote")
        raise AssertionError("unreachable")

    def _order(self, cfg: dict, ctl_fd: int, log_fd: int, deadline: float) -> tuple[object, list[int]]:
        """(its answer, the fds that came with it) to one spawn order; (None, []) if none came."""
        if not self.ready:
            if self._recv(deadline)[0] != {"ready": True}:
                return None, []
            self.ready = True
        try:
            socket.send_fds(self.ctl, [json.dumps({"op": "spawn", "cfg": cfg}).encode()], [ctl_fd, log_fd])
        except OSError:
            return None, []
        return self._recv(deadline)

    def _died(self) -> bool:
        """Whether it is gone (a killed process is reaped within the second)."""
        try:
            self.proc.wait(timeout=1)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _recv(self, deadline: float) -> tuple[object, list[int]]:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.ctl], [], [], left)[0]:
            return None, []
        try:
            data, fds, _, _ = socket.recv_fds(self.ctl, 4096, 1)
            return (json.loads(data) if data else None), fds
        except (OSError, ValueError):
            return None, []

    def _failure(self, what: str) -> SandboxFailure:
        why = tail(self.log_path, 400)
        self.close_process()
        return SandboxFailure(f"the sandbox did not start: {what}" + (f": {why}" if why else ""))

    def close_process(self) -> None:
        """Kill it (its zygotes die with it: their death signal)."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.ctl is not None:
            self.ctl.close()
        self.proc, self.ctl, self.ready = None, None, False

    def close(self) -> None:
        self.close_process()
        remove(self.root)


class Zygotes:
    """A batch job's zygotes: ``one()`` for each student. Started at once (torch's import runs
    while the job imports its own)."""

    def __init__(self, limits: Limits, isolation: Isolation, cuda: bool = False,
                 hide: tuple[Path, ...] = (), problems: list[str] | None = None):
        self.args = dict(limits=limits, isolation=isolation, cuda=cuda, hide=hide, problems=problems)
        self.template = Template(limits, isolation, cuda, problems) if isolation.spawns else None
        self.shared = None if self.template else Zygote(**self.args)
        (self.template or self.shared).start()

    @contextlib.contextmanager
    def one(self):
        """A fresh zygote forked from the template, closed (folder, cgroup, uid) after the
        student; or the job's shared one."""
        if self.shared is not None:
            yield self.shared
            return
        zygote = Zygote(**self.args, template=self.template)
        try:
            yield zygote
        finally:
            zygote.close()

    def close(self) -> None:
        (self.template or self.shared).close()


class Kept:
    """Warm templates one process keeps across its grades, one per interpreter, thread cap and
    optimizer warm-up (all a template's start reads): ``zygote(...)`` yields a fresh fork for one
    grade, as a batch job's ``Zygotes.one`` does, or None where the mode cannot fork one (bwrap:
    the grade starts its own, cold). For a process that grades many uploads one by one (the
    project's own suite, tests/self/conftest.py): each grade still gets a zygote of its own, and a
    template holds nothing of anyone's, so what a grade sees is what a batch's student sees."""

    def __init__(self):
        self.templates: dict[tuple, Template] = {}

    @contextlib.contextmanager
    def zygote(self, limits: Limits, isolation: Isolation, cuda: bool = False,
               hide: tuple[Path, ...] = (), problems: list[str] | None = None):
        if not isolation.spawns:
            yield None
            return
        key = (isolation.python()[0], limits.threads, warms_optimizers(problems, cuda))
        template = self.templates.get(key)
        if template is None:
            template = self.templates[key] = Template(limits, isolation, cuda, problems)
            template.start()
        zygote = Zygote(limits, isolation, cuda=cuda, hide=hide, problems=problems, template=template)
        try:
            yield zygote
        finally:
            zygote.close()

    def close(self) -> None:
        for template in self.templates.values():
            template.close()
        self.templates.clear()
