"""The zygote: the confined process that imported torch once, never runs student code, and
forks one worker per submission (a fresh one after each crash). A Sandbox starts its own, cold
(it imports torch); a batch job's come from its template (template.py), one per student, each a
warm fork that enters its sandbox itself (in bwrap mode the job keeps one for all). What the
worker may see is the isolation mode's business (isolation.py); this module lays out the
zygote's folder, starts it under its mode's prefix (or has its template fork it) and speaks its
control socket. No Python code runs between fork and exec in the grader
(no ``preexec_fn``): the grader may be multi-threaded and CUDA-initialised."""


import dataclasses
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .isolation import Isolation
from .launch import launch as launch_of
from .view import Layout
from .cgroup import Group
from .limits import Limits
from .outside import Outside
from ..paths import ROOT, SEAM, STUBS
from seam import SandboxFailure
from seam.upload import graded_modules

from .folders import remove
from .procs import children, kill, tail

ZYGOTE = Path(__file__).with_name("zygote_server.py")  # the zygote's own script
WORKER = Path(__file__).with_name("worker.py")  # the worker's, which the zygote imports
LANDLOCK = Path(__file__).with_name("landlock.py")
SECCOMP = Path(__file__).with_name("seccomp.py")
LIMITS = Path(__file__).with_name("limits.py")  # the worker reads its Limits and their messages there
SPAWN = Path(__file__).with_name("spawn.py")    # the template's script (template.py)
FOLDERS = Path(__file__).with_name("folders.py")  # the zygote empties the scratch with it


def stage_lib(lib: Path, seam: bool) -> None:
    """A sandbox's lib/, world-readable (0755/0644 whatever the checkout's modes): the worker's
    scripts, and with ``seam`` the seam and the handout's given code (for what one problem's
    module imports from a module the upload lacks, seam/callee.py load_package; the stubs are
    public). A template's lib holds its scripts alone: it imports no seam."""
    if seam:
        for source, name in ((SEAM, "seam"), (STUBS, "given")):
            shutil.copytree(source, lib / name, ignore=shutil.ignore_patterns("__pycache__"),
                            copy_function=shutil.copyfile)
    lib.mkdir(exist_ok=True)
    for script in (ZYGOTE, WORKER, LANDLOCK, SECCOMP, LIMITS, SPAWN, FOLDERS):  # imported by these names
        shutil.copyfile(script, lib / script.name)
    for d, _, files in os.walk(lib):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)

# The problems whose graded tests step a torch optimizer in the worker (AdamW against torch's,
# the training loop). Torch's first step imports torch._dynamo and sympy: ~1.5 s in the zygote,
# twice that in a worker, under the honest watch's profiler. A zygote warms it once when its
# grade holds one of these; another grade (`--only intensity`) never needs it. A wrong entry
# costs seconds, never a point: the worker imports whatever the zygote did not.
STEPS_AN_OPTIMIZER = frozenset({"optim", "training"})


def warms_optimizers(problems: list[str] | None, cuda: bool = False) -> bool:
    """Whether a zygote for a grade of ``problems`` (None: all) should take torch's first step.
    Never where the workers get the GPU: a CUDA build's first step asks whether a CUDA graph is
    being captured (torch.cuda.is_available(), then the current stream), which initialises the
    driver in the zygote, and no forked worker can use CUDA after that ("initialization error",
    "Cannot re-initialize CUDA in forked subprocess": 20 of 222 points lost by the reference on
    an H200, seen by benchmarks/gpu_check.py)."""
    return not cuda and (problems is None or not STEPS_AN_OPTIMIZER.isdisjoint(problems))


class Zygote:
    """The sandboxed process that forks workers: one per Sandbox, or one per student of a batch
    job (forked from its ``template``).

    Its folder (0711, root's): lib/ (the seam, the zygote's and worker's scripts; world-readable), inbox/ (the
    current submission's modules, restaged before each fork), work/ (scratch, emptied by the
    zygote between two workers), and a log per worker. In the namespaced modes the zygote's view
    holds only Python, lib/, inbox/ and a work tmpfs (isolation.py)."""

    def __init__(self, limits: Limits = Limits(), isolation: Isolation | None = None,
                 cuda: bool = False, hide: tuple[Path, ...] = (), problems: list[str] | None = None,
                 template=None, watched: bool = True):
        """watched: the honest-work watch runs in its workers; False only to measure what a
        shortcut keeps with the watch blinded (tests/self/behaviour.py), never in a grade."""
        self.limits = limits
        self.watched = watched
        self.template = template  # a Template (template.py) that forks it, or None: started cold
        self.optimizers = warms_optimizers(problems, cuda)  # the grade's tests step one: take its first step here
        self.isolation = isolation or Isolation.detect()
        self.cuda = cuda
        self.lease = self.isolation.lease()
        self.python = self.isolation.python()  # (interpreter, folders it reads)
        self.uid = self.lease.uid if self.lease else None
        # where its worker may write outside its scratch: what its uid holds there, counted with the
        # scratch and removed after each worker; and now, with what still runs as the uid: a job
        # killed with SIGKILL closes no zygote, and what its worker started outlives it (no
        # subreaper is left to kill it)
        self.outside = Outside(self.uid) if self.isolation.sweeps_outside else None
        self._written = True
        if self.uid is not None:
            self._kill_uid()
        self.sweep()
        self.secret = [str(p) for p in (ROOT, *(Path(h).resolve() for h in hide))]
        # root's and 0711 (enter, not list): a uid-mode worker reaches its inbox and scratch, and
        # nothing here is its to change but those (no symlink games with the grader's files).
        self.root = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        os.chmod(self.root, 0o711)
        self.lib, self.inbox, self.work = self.root / "lib", self.root / "inbox", self.root / "work"
        stage_lib(self.lib, seam=True)
        self.inbox.mkdir(mode=0o700)
        self.work.mkdir(mode=0o700)
        self._set_folders()
        self.proc: subprocess.Popen | None = None  # (or a template's Spawned: the same calls)
        self.ctl: socket.socket | None = None
        self.unstarted = ""  # why its template could not fork it (await_ready says so)
        self.ready = False
        self.child_alive = False
        self.forks = 0
        self.worker_log: Path | None = None
        # memory and processes of the whole sandbox together, where the machine lets root say so
        self.cgroup = Group.make(limits.memory_bytes, limits.processes) if os.geteuid() == 0 else None

    # -- the zygote itself ---------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        """Its folders, for the isolation to say what the worker sees of them."""
        return Layout(root=self.root, lib=self.lib, inbox=self.inbox, work=self.work,
                      secret=tuple(self.secret), python=self.python,
                      disk_bytes=self.limits.disk_bytes, cuda=self.cuda)

    def start(self) -> None:
        """Start the zygote: cold (it imports torch), or forked from its template (warm);
        ``await_ready`` waits for it."""
        launch = launch_of(self.isolation, self.layout)
        cfg = {**launch.config, "uid": self.uid, "cuda": self.cuda,
               "optimizers": self.optimizers, "watched": self.watched,
               # every limit (the worker's messages name them all); RLIMIT_NPROC counts the uid's
               # processes, so only a leased uid's worker is given one
               "limits": {**dataclasses.asdict(self.limits),
                          "processes": self.limits.processes if self.uid is not None else None}}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg["ctl"] = theirs.fileno()
        self.log_path = self.root / "zygote.log"
        with open(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as log:
            try:
                if self.template is not None:  # it enters what a cold zygote's prefix gives it
                    self.proc = self.template.spawn(
                        {**cfg, **launch.entry, "cgroup": self.cgroup.procs() if self.cgroup else []},
                        theirs.fileno(), log.fileno(), time.monotonic() + self.limits.startup)
                else:
                    self.proc = subprocess.Popen(
                        (self.cgroup.prefix() if self.cgroup else []) + launch.prefix
                        + [self.python[0], "-I", launch.script, json.dumps(cfg)], stdin=subprocess.DEVNULL,
                        stdout=log, stderr=log, close_fds=True, pass_fds=(theirs.fileno(),),
                        start_new_session=True, cwd=launch.cwd)
            except SandboxFailure as e:  # said when it is awaited, as a cold zygote's failure is
                ours.close()
                why = self.log_tail()  # what its fork said before it died, if it did
                self.proc, self.ctl, self.unstarted = None, None, f"{e}" + (f"; {why}" if why else "")
                return
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()
        self.ctl = ours
        self.ready = False
        self.child_alive = False

    def await_ready(self, deadline: float) -> None:
        if self.ready:
            return
        if self.unstarted:  # its template could not fork it
            why, self.unstarted = self.unstarted, ""
            raise SandboxFailure(why)
        message = self._recv(deadline)
        if message != {"ready": True}:
            why = self.log_tail()
            self.terminate()
            raise SandboxFailure(f"the sandbox did not start: {why or message}")
        self.ready = True

    def _recv(self, deadline: float):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.ctl], [], [], left)[0]:
            return None
        try:
            data = self.ctl.recv(4096)
        except OSError:
            return None
        try:
            return json.loads(data) if data else None
        except ValueError:
            return None

    def log_tail(self, limit: int = 400) -> str:
        return tail(self.log_path, limit)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        """Kill the zygote and everything it started."""
        if self.proc is None:
            return
        if self.isolation.pid_namespace:
            # Kill the namespace's init (unshare's or bwrap's child): the kernel kills everything
            # else in the PID namespace, and unshare/bwrap, left alive, reap it and exit.
            for child in children(self.proc.pid):
                kill(child)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._kill_uid()
        if self.ctl is not None:
            self.ctl.close()
        if self.template is not None:
            self.proc.release()
        self.proc, self.ctl, self.ready, self.child_alive = None, None, False, False
        self.sweep()  # its uid's processes are gone

    def _kill_uid(self) -> None:
        """Every process of the leased uid (kill(-1) from that uid reaches only them)."""
        if self.isolation.sweeps_uid:
            # (none left is ESRCH: not an error, and nothing for the TA's terminal)
            subprocess.run([self.python[0], "-I", "-c", "import os, contextlib\n"
                            "with contextlib.suppress(ProcessLookupError): os.kill(-1, 9)"], timeout=10,
                           user=self.uid, group=self.uid, extra_groups=[], cwd="/")

    def sweep(self) -> None:
        """Remove what the uid holds in the shared temporary folders (outside.py), once its
        processes are gone: after each worker, so nothing it wrote there outlives it."""
        if self.outside is not None and self._written:
            self.outside.sweep()
            self._written = False

    def outside_bytes(self) -> int:
        """What the current worker holds outside its scratch (0 where it can write nowhere else)."""
        return self.outside.bytes() if self.outside is not None else 0

    def close(self) -> None:
        self.terminate()
        if self.cgroup:
            self.cgroup.kill()
            self.cgroup.close()
        remove(self.root)  # its scratch is the student's: no recursion, however deep it goes
        self.sweep()
        if self.lease:
            self.lease.release()
            self.lease = None

    # -- its workers ---------------------------------------------------------------------
    def fork(self, submission_dir: Path, deadline: float) -> tuple[int, int, Path, socket.socket]:
        """A fresh worker for ``submission_dir``: (request fd to write, response fd to read, its
        log, the grader's end of its record of what ran). The previous worker must be gone
        (``kill_child``)."""
        if not self.alive():
            self.terminate()
            self.start()
        self.await_ready(deadline)
        self._restage(submission_dir)
        self.drop_worker_log()
        self.forks += 1
        log_path = self.worker_log = self.root / f"worker{self.forks}.log"
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        # the record of what ran (seam/audit.py): datagrams, the worker's end guarded by its filter
        record, record_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self.ctl, [json.dumps({"op": "fork"}).encode()],
                            [req_r, resp_w, log_fd, record_w.fileno()])
        except OSError as e:
            for fd in (req_w, resp_r):
                os.close(fd)
            record.close()
            self.terminate()
            raise SandboxFailure(f"the sandbox's zygote is gone ({e}): {self.log_tail()}") from None
        finally:
            for fd in (req_r, resp_w, log_fd):
                os.close(fd)
            record_w.close()
        self.child_alive = True
        self._written = True
        os.set_blocking(req_w, False)
        record.setblocking(False)
        return req_w, resp_r, log_path, record

    def _set_folders(self) -> None:
        """The modes and owners of the zygote's folders, set again before each fork: all root's
        (the grader's), none the worker's, so no student can change them for the next. Outside a
        namespace a leased worker reaches its inbox (read) and scratch (write) through its group."""
        for path, alone, shared in ((self.root, 0o711, 0o711), (self.lib, 0o755, 0o755),
                                    (self.inbox, 0o755, 0o750), (self.work, 0o755, 0o770)):
            if self.group_id is not None:
                os.chown(path, os.geteuid(), self.group_id)
            os.chmod(path, alone if self.group_id is None else shared)

    @property
    def group_id(self) -> int | None:
        """The worker's group where it reaches the zygote's folders through it (a leased uid
        outside a namespace); None where they are 0755 (inside one, they are bound read-only)."""
        return self.uid if self.isolation.by_group else None

    def drop_worker_log(self) -> None:
        """Delete the last worker's log (its tail was read when it ended): one log at a time, at
        most ``Limits.file_bytes``, never one student's beside the next's."""
        if self.worker_log is not None:
            self.worker_log.unlink(missing_ok=True)
            self.worker_log = None

    def _restage(self, submission_dir: Path) -> None:
        """inbox/ := the problem modules of ``submission_dir`` and the helpers they import (a
        helper package's folder with its files), and nothing else."""
        self._set_folders()
        for old in self.inbox.iterdir():
            old.unlink() if not old.is_dir() or old.is_symlink() else shutil.rmtree(old)
        for src in graded_modules(submission_dir):  # the locator's rule: what seam.check shows
            dest = self.inbox / src.relative_to(submission_dir)
            if dest.parent != self.inbox and not dest.parent.is_dir():  # a helper package's folder
                dest.parent.mkdir()
                self._own(dest.parent, 0o755, 0o750)
            shutil.copyfile(src, dest)
            self._own(dest, 0o644, 0o640)

    def _own(self, path: Path, alone: int, shared: int) -> None:
        """A file or folder of the inbox: root's, readable by the worker's group alone where it
        reaches the inbox through it."""
        if self.group_id is not None:
            os.chown(path, os.geteuid(), self.group_id)
        os.chmod(path, alone if self.group_id is None else shared)

    def exit_code(self, timeout: float) -> int | None:
        """The ended worker's exit code (negative: killed by that signal), once the zygote has
        cleaned up after it; None if the zygote does not say."""
        if not self.child_alive:
            return None
        message = self._recv(time.monotonic() + timeout)
        if type(message) is dict and type(message.get("exited")) is int:
            self.child_alive = False
            return os.waitstatus_to_exitcode(message["exited"])
        self.terminate()  # no word from the zygote: start over
        return None

    def kill_child(self) -> None:
        """Kill the current worker and whatever it started, and sweep what it left outside its
        scratch; the zygote survives for the next."""
        if self.child_alive:
            try:
                self.ctl.send(json.dumps({"op": "kill"}).encode())
            except OSError:
                self.terminate()
                return
            self.exit_code(timeout=10)
        if not self.child_alive:  # (the zygote killed its uid's processes before it said so)
            self.sweep()
