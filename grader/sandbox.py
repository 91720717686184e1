"""Run a submission in a worker process the grader can kill, and talk to it as an ``Impl``.

A zygote (``Zygote``: the sandboxed process that imported torch once and never runs student
code) forks one worker per submission, and a fresh one after each crash; a batch's job keeps
one zygote for all its submissions. What the worker may see
and do is grader/isolation.py's business (an allow-list: Python, its seam, its copy of the
submission, a scratch space); this module starts it, speaks the frame protocol with it, and
turns crashes, hangs and floods into plain messages. Always: rlimits on address space, CPU
time, file size, open files and processes; a wall-clock deadline per test; stdout/stderr go to
a capped log file, never to the protocol pipe. No Python code runs between fork and exec in the
grader (no ``preexec_fn``): the grader may be multi-threaded and CUDA-initialised.
"""

import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .isolation import (INSIDE, Isolation, UidLease, bwrap_prefix, carve, exposed, linked_python, masks,
                        python_paths, system_paths, unshare_prefix, worker_python)
from .cgroup import BASELINE_BYTES, Group
from .limits import GIB, Limits
from .paths import ROOT, SEAM
from seam import Impl, SandboxFailure, codec, frames, smaps
from seam.probes import problem_of
from seam.upload import graded_modules

WORKER = Path(__file__).with_name("_worker.py")
LANDLOCK = Path(__file__).with_name("landlock.py")
SECCOMP = Path(__file__).with_name("seccomp.py")
class Zygote:
    """The sandboxed process that forks workers: one per Sandbox, or one per batch job.

    Its folder (0711, root's): lib/ (the seam, the worker script; world-readable), inbox/ (the
    current submission's modules, restaged before each fork), work/ (scratch, emptied by the
    zygote between two workers), and a log per worker. In the namespaced modes the zygote's view
    holds only Python, lib/, inbox/ and a work tmpfs (isolation.py)."""

    def __init__(self, limits: Limits = Limits(), isolation: Isolation | None = None,
                 cuda: bool = False, hide: tuple[Path, ...] = ()):
        self.limits = limits
        self.isolation = isolation or Isolation.detect()
        self.cuda = cuda
        self.lease = UidLease() if self.isolation.drop else None
        self.python = worker_python(self.isolation.namespaces)  # (interpreter, folders it reads)
        self.uid = self.lease.uid if self.lease else None
        self.secret = [str(p) for p in (ROOT, *(Path(h).resolve() for h in hide))]
        # root's and 0711 (enter, not list): a uid-mode worker reaches its inbox and scratch, and
        # nothing here is its to change but those (no symlink games with the grader's files).
        self.root = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        os.chmod(self.root, 0o711)
        self.lib, self.inbox, self.work = self.root / "lib", self.root / "inbox", self.root / "work"
        shutil.copytree(SEAM, self.lib / "seam", ignore=shutil.ignore_patterns("__pycache__"),
                        copy_function=shutil.copyfile)  # 0644 whatever the checkout's modes
        shutil.copyfile(WORKER, self.lib / "_worker.py")
        shutil.copyfile(LANDLOCK, self.lib / "landlock.py")
        shutil.copyfile(SECCOMP, self.lib / "seccomp.py")
        for d, _, files in os.walk(self.lib):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        self.inbox.mkdir(mode=0o700)
        self.work.mkdir(mode=0o700)
        self._set_folders()
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.ready = False
        self.child_alive = False
        self.forks = 0
        self.worker_log: Path | None = None
        # memory and processes of the whole sandbox together, where the machine lets root say so
        self.cgroup = Group.make(limits.memory_bytes, limits.processes) if os.geteuid() == 0 else None

    # -- the zygote itself ---------------------------------------------------------------
    def _paths(self) -> dict:
        if self.isolation.namespaces:
            return {"lib": str(INSIDE / "lib"), "submission": str(INSIDE / "submission"),
                    "work": str(INSIDE / "work")}
        return {"lib": str(self.lib), "submission": str(self.inbox), "work": str(self.work)}

    def _view(self) -> list[tuple[str, ...]]:
        """The whole file system of a namespaced zygote, as (op, *args) in order."""
        python = python_paths()
        view = [("ro-bind", p, p) for p in python]
        view += [("symlink", os.readlink(p), p) if kind == "symlink" else ("ro-bind", p, p)
                 for kind, p in system_paths() if p not in python]
        binds = [v[2] for v in view if v[0] == "ro-bind"]
        view += [("tmpfs", m, 65536, "0755") for m in masks(binds, self.secret)]
        view += [("ro-bind", str(self.lib), str(INSIDE / "lib")),
                 ("ro-bind", str(self.inbox), str(INSIDE / "submission")),
                 ("tmpfs", str(INSIDE / "work"), self.limits.disk_bytes, "0777"),
                 ("tmpfs", "/dev/shm", 1 << 20, "1777")]
        if self.cuda:  # the GPU's device nodes, and /sys where the driver's libraries look
            view += [("dev-bind", str(d), str(d)) for d in sorted(Path("/dev").glob("nvidia*"))]
            view += [("ro-bind", "/sys", "/sys")]
        return view

    def _secrets(self) -> list[str]:
        """The checkout and the output folders, and their images in a hard-linked Python tree
        (``linked_python`` mirrors the whole prefix: a checkout inside it is linked too)."""
        secret = list(self.secret)
        if self.python[0] != sys.executable:
            tree, source = linked_python()
            secret += [str(tree / os.path.relpath(s, source)) for s in self.secret
                       if s.startswith(source + "/")]
        return secret

    def start(self) -> None:
        """Start the zygote (it imports torch); ``await_ready`` waits for it."""
        mode = self.isolation.mode
        where = self._paths()
        cfg = {**where, "mode": mode, "uid": self.uid, "threads": self.limits.threads,
               "limits": {"memory_bytes": self.limits.memory_bytes,
                          "cpu_seconds": self.limits.cpu_seconds,
                          "file_bytes": self.limits.file_bytes,
                          "processes": self.limits.processes if self.uid is not None else None}}
        script = str(self.lib / "_worker.py")
        if mode == "bwrap":
            prefix = bwrap_prefix(self._view(), root=os.geteuid() == 0)
            script = str(INSIDE / "lib" / "_worker.py")
        elif mode == "namespaces":
            prefix = unshare_prefix(self.isolation.user_ns)
            cfg["view"] = self._view()
            cfg["newroot"] = str(self.root / "newroot")
            (self.root / "newroot").mkdir(exist_ok=True)
        else:
            prefix = []
        if mode == "landlock":
            cfg["landlock"] = {"read": carve(self.python[1] + [p for _, p in system_paths()]
                                             + [where["lib"], where["submission"]], self._secrets()),
                               "write": [where["work"]],
                               "devices": [f"/dev/{d}" for d in ("null", "zero", "full", "random", "urandom")]
                               + ([str(d) for d in Path("/dev").glob("nvidia*")] if self.cuda else [])}
            if self.cuda:  # where the driver looks
                cfg["landlock"]["read"] += ["/proc/driver/nvidia", "/sys"]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cfg["ctl"] = theirs.fileno()
        self.log_path = self.root / "zygote.log"
        with open(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as log:
            self.proc = subprocess.Popen(
                (self.cgroup.prefix() if self.cgroup else []) + prefix
                + [self.python[0], "-I", script, json.dumps(cfg)], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, close_fds=True, pass_fds=(theirs.fileno(),),
                start_new_session=True, cwd="/" if self.isolation.namespaces else where["work"])
        theirs.close()
        self.ctl = ours
        self.ready = False
        self.child_alive = False

    def await_ready(self, deadline: float) -> None:
        if self.ready:
            return
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
        return _tail(self.log_path, limit)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        """Kill the zygote and everything it started."""
        if self.proc is None:
            return
        if self.isolation.namespaces:
            # Kill the namespace's init (unshare's or bwrap's child): the kernel kills everything
            # else in the PID namespace, and unshare/bwrap, left alive, reap it and exit.
            for child in _children(self.proc.pid):
                _signal(child)
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
        if self.uid is not None and not self.isolation.namespaces:
            # every process of the leased uid (kill(-1) from that uid reaches only them)
            # (none left is ESRCH: not an error, and nothing for the TA's terminal)
            subprocess.run([self.python[0], "-I", "-c", "import os, contextlib\n"
                            "with contextlib.suppress(ProcessLookupError): os.kill(-1, 9)"], timeout=10,
                           user=self.uid, group=self.uid, extra_groups=[], cwd="/")
        if self.ctl is not None:
            self.ctl.close()
        self.proc, self.ctl, self.ready, self.child_alive = None, None, False, False

    def close(self) -> None:
        self.terminate()
        if self.cgroup:
            self.cgroup.kill()
            self.cgroup.close()
        shutil.rmtree(self.root, ignore_errors=True)
        if self.lease:
            self.lease.release()
            self.lease = None

    # -- its workers ---------------------------------------------------------------------
    def fork(self, submission_dir: Path, deadline: float) -> tuple[int, int, Path]:
        """A fresh worker for ``submission_dir``: (request fd to write, response fd to read, its
        log). The previous worker must be gone (``kill_child``)."""
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
        try:
            socket.send_fds(self.ctl, [json.dumps({"op": "fork"}).encode()], [req_r, resp_w, log_fd])
        except OSError as e:
            for fd in (req_w, resp_r):
                os.close(fd)
            self.terminate()
            raise SandboxFailure(f"the sandbox's zygote is gone ({e}): {self.log_tail()}") from None
        finally:
            for fd in (req_r, resp_w, log_fd):
                os.close(fd)
        self.child_alive = True
        os.set_blocking(req_w, False)
        return req_w, resp_r, log_path

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
        return self.uid if self.uid is not None and not self.isolation.namespaces else None

    def drop_worker_log(self) -> None:
        """Delete the last worker's log (its tail was read when it ended): one log at a time, at
        most ``Limits.file_bytes``, never one student's beside the next's."""
        if self.worker_log is not None:
            self.worker_log.unlink(missing_ok=True)
            self.worker_log = None

    def _restage(self, submission_dir: Path) -> None:
        """inbox/ := the expected modules of ``submission_dir``, and nothing else."""
        self._set_folders()
        for old in self.inbox.iterdir():
            old.unlink() if not old.is_dir() or old.is_symlink() else shutil.rmtree(old)
        for src in graded_modules(submission_dir):  # the locator's rule: what seam.check shows
            dest = self.inbox / src.name
            shutil.copyfile(src, dest)
            if self.group_id is not None:  # root's, readable by the worker's group alone
                os.chown(dest, os.geteuid(), self.group_id)
            os.chmod(dest, 0o644 if self.group_id is None else 0o640)

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
        """Kill the current worker and whatever it started; the zygote survives for the next."""
        if not self.child_alive:
            return
        try:
            self.ctl.send(json.dumps({"op": "kill"}).encode())
        except OSError:
            self.terminate()
            return
        self.exit_code(timeout=10)


WATCH_POLL = 0.25  # seconds between two measurements of a scratch folder, or of a sandbox's memory


def _descendants(top: int) -> list[int]:
    """``top`` and every process below it, from /proc (those that vanish meanwhile left out)."""
    found, todo = [], [top]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _tree_bytes(top: int) -> int:
    """Memory held by ``top`` and its descendants (each page shared by n of them counted 1/n)."""
    total = 0
    for pid in _descendants(top):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0) * 1024
        except (OSError, ValueError):
            continue
    return total


def _folder_bytes(top: Path) -> int:
    """Bytes allocated under ``top`` (blocks, so a sparse file counts what it holds)."""
    total = 0
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _signal(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - limit))
            return f.read().decode(errors="replace").strip()
    except OSError:
        return ""


class Sandbox(Impl):
    """An ``Impl`` whose code runs in a sandboxed worker process, forked by a zygote: its own,
    or a batch job's shared one (``zygote=``; then ``close`` leaves it running)."""

    def __init__(self, submission_dir: Path, limits: Limits = Limits(),
                 isolation: Isolation | None = None, hide: tuple[Path, ...] = (),
                 cuda: bool = False, zygote: Zygote | None = None):
        super().__init__()
        self.label = "submission"
        self.folder = Path(submission_dir)  # staged for each worker; the static look (Impl._found) reads it here
        self.owns_zygote = zygote is None
        self.zygote = zygote or Zygote(limits, isolation, cuda=cuda, hide=hide)
        self.limits, self.isolation = self.zygote.limits, self.zygote.isolation
        self.uid = self.zygote.uid
        self.deadline: float | None = None
        self.running = False
        self.starts = 0
        self.broken: dict[str, str] = {}     # problem -> why (its module kills the worker)
        self.strikes: dict[str, list[str]] = {}  # target -> how its calls hung or crashed
        self.timeouts: dict[str, int] = {}   # problem -> how many of its calls timed out
        self._touched: set[str] = set()      # problems called successfully in this worker

    def describe(self) -> str:
        """The report's sandbox line: the mode, and what a uid-mode worker could still read."""
        text = self.isolation.describe()
        if self.isolation.mode == "uid":
            leaks = exposed([Path(p) for p in self.zygote.secret])
            if leaks:
                text += ("; WARNING: readable by the worker uid: " + ", ".join(leaks)
                         + " (make them 0700, as the Docker image and Gradescope setup do)")
        return text

    # -- lifecycle ---------------------------------------------------------------------
    def prewarm(self) -> None:
        """Start the zygote now (it imports torch while pytest collects); the first call awaits it."""
        if not self.zygote.alive():
            self.zygote.start()

    def _start(self) -> None:
        if self.running:
            return
        deadline = time.monotonic() + self.limits.startup
        self.zygote.kill_child()  # a batch's previous submission, if it is still there
        self._req_w, self._resp_r, self.log_path = self.zygote.fork(self.folder, deadline)
        self.starts += 1
        self._touched = set()
        self.running = True
        hello = self._read(deadline, "starting")
        if hello != {"ready": True}:
            self._kill()
            raise SandboxFailure(f"the worker did not start: {self._log_tail()}")

    def _kill(self) -> None:
        if not self.running:
            return
        self.running = False
        for fd in (self._req_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.zygote.kill_child()

    def close(self) -> None:
        self._kill()
        self.zygote.drop_worker_log()
        if self.owns_zygote:
            self.zygote.close()

    def resident_bytes(self, device: int, inode: int) -> int | None:
        """Read by the grader in /proc/<pid>/smaps of the sandbox's processes (the worker keeps
        the probe's mapping until its next request): no code of the student's takes part."""
        if self.zygote.proc is None:
            return None
        readings = [smaps.resident_bytes(pid, device, inode) for pid in _descendants(self.zygote.proc.pid)]
        readable = [r for r in readings if r is not None]
        return sum(readable) if readable else None

    # -- protocol -------------------------------------------------------------------------
    def _wait(self, fd: int, deadline: float, doing: str, writing: bool = False):
        """frames.py's ``wait``: block until ``fd`` is ready, or kill the worker at the deadline.
        Meanwhile, every ``WATCH_POLL`` s: outside a namespace the scratch (a folder, not a tmpfs of
        ``disk_bytes``) is measured, and without a cgroup the memory of all the sandbox's processes
        together (proportional set sizes); a worker past either cap is killed."""
        disk = not self.isolation.namespaces
        memory = self.zygote.cgroup is None and self.limits.memory_bytes is not None
        watch = disk or memory

        def wait():
            while True:
                left = deadline - time.monotonic()
                sets = ([], [fd], []) if writing else ([fd], [], [])
                ready = left > 0 and any(select.select(*sets, min(left, WATCH_POLL) if watch else left))
                # measured also when the reply is ready: a fast writer must not beat the poll
                if disk and _folder_bytes(self.zygote.work) > self.limits.disk_bytes:
                    self._kill()
                    raise SandboxFailure(f"{doing}: wrote more than {self.limits.disk_bytes >> 20} MiB "
                                         "to its scratch folder; the worker was restarted")
                if ready:
                    return
                if left <= 0 or not watch:
                    self._kill()
                    raise TimeoutError(doing)
                cap = (self.limits.memory_bytes or 0) + BASELINE_BYTES
                if memory and self.zygote.proc and (held := _tree_bytes(self.zygote.proc.pid)) > cap:
                    self._kill()
                    raise SandboxFailure(f"{doing}: its processes held {held / GIB:.2f} GiB together, over "
                                         f"the sandbox's {cap / GIB:.2f} GiB; the worker was restarted")
        return wait

    def _read(self, deadline: float, doing: str):
        """One reply, parsed within the deadline and within bounds: at most MAX_REPLY bytes, and
        counted (codec.precount) before json.loads builds a single object of it."""
        try:
            body = frames.read_frame(self._resp_r, self._wait(self._resp_r, deadline, doing),
                                     limit=frames.MAX_REPLY)
        except EOFError:
            raise EOFError(doing) from None
        except frames.FrameTooLarge as e:
            self._kill()
            raise SandboxFailure(f"{doing}: the worker broke the protocol ({e}); it was restarted") from None
        if time.monotonic() > deadline:
            raise TimeoutError(doing)
        try:
            return codec.loads(body, bounded=True)
        except codec.DecodeError as e:
            self._kill()
            raise SandboxFailure(f"{doing}: the worker sent garbage ({e}); it was restarted") from None

    def _write(self, payload: bytes, deadline: float) -> None:
        """Send one frame; a worker that stops reading meets the deadline (the pipe is
        non-blocking, so a full pipe never hangs the grader)."""
        frames.write_frame(self._req_w, payload, self._wait(self._req_w, deadline, "sending", writing=True))

    def _death_message(self) -> str:
        code = self.zygote.exit_code(timeout=10)
        if code is None:
            how = "the process ended"
        elif code < 0 or code > 128:
            sig = -code if code < 0 else code - 128
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            how = f"the process was killed by {name}"
            hint = {"SIGXCPU": f"CPU time limit {self.limits.cpu_seconds} s",
                    "SIGXFSZ": f"output/file size limit {self.limits.file_bytes >> 20} MiB",
                    "SIGKILL": f"killed: memory limit {self.limits.describe_memory()} or a signal",
                    "SIGSEGV": f"a crash, often the memory limit {self.limits.describe_memory()}",
                    "SIGABRT": f"an abort, often the memory limit {self.limits.describe_memory()}"}.get(name)
            how += f" ({hint})" if hint else ""
        else:
            how = f"the process exited with status {code} (sys.exit / os._exit?)"
        tail = self._log_tail()
        return how + (f"; its last output: {tail}" if tail else "")

    def _log_tail(self, limit: int = 400) -> str:
        return _tail(self.log_path, limit) or self.zygote.log_tail(limit)

    def _send(self, request: dict) -> dict:
        target = request.get("target", "")
        problem = problem_of(target)
        if problem in self.broken:
            raise SandboxFailure(self.broken[problem])
        if self.timeouts.get(problem, 0) >= self.limits.timeouts_per_problem:
            raise SandboxFailure(f"not run: this problem's time budget ran out ({self.timeouts[problem]} of its "
                                 f"calls timed out after {self.limits.time_per_test:g} s)")
        if len(self.strikes.get(target, ())) >= 2:  # don't pay a hang or a restart again and again
            raise SandboxFailure(f"{target} was not called again: twice already, "
                                 f"{' / '.join(self.strikes[target])}")
        deadline = self.deadline or time.monotonic() + self.limits.time_per_test
        loading = False
        try:
            started = time.monotonic()
            self._start()
            spent = time.monotonic() - started  # a (re)start is the grader's time, not the test's:
            deadline += spent                   # this call's, and the rest of the test's
            if self.deadline is not None:
                self.deadline += spent
            if problem and problem not in self._touched:
                loading = True  # import it alone first: a crash now is the module's, not the call's
                self._write(codec.dumps({"op": "load", "target": problem, "id": "load"}), deadline)
                self._read(deadline, f"loading {problem}.py")
                self._touched.add(problem)
                loading = False
            request = {**request, "id": secrets.token_hex(8)}
            self._write(codec.dumps(request), deadline)
            response = self._read(deadline, target)
            if type(response) is not dict or response.pop("id", None) != request["id"]:
                self._kill()
                raise SandboxFailure(f"{target}: the worker's reply does not match the request "
                                     "(someone wrote on the protocol pipe); it was restarted")
        except TimeoutError:
            self._kill()
            if loading:
                self.broken[problem] = (f"{problem}.py did not finish loading within "
                                        f"{self.limits.time_per_test:g} s")
                raise SandboxFailure(self.broken[problem]) from None
            self.strikes.setdefault(target, []).append("it timed out")
            self.timeouts[problem] = self.timeouts.get(problem, 0) + 1
            raise SandboxFailure(f"timed out after {self.limits.time_per_test:g} s in {target}; "
                                 "the worker was restarted") from None
        except (EOFError, BrokenPipeError):
            why = self._death_message()
            self._kill()
            if loading:
                self.broken[problem] = f"{problem}.py kills the worker when it is loaded: {why}"
                raise SandboxFailure(self.broken[problem]) from None
            self.strikes.setdefault(target, []).append(why.split(";")[0])
            raise SandboxFailure(f"{target}: {why}; the worker was restarted") from None
        raised = response.get("raised")
        if type(raised) is dict and raised.get("type") == "MemoryError":
            self._kill()  # a process that ran out of memory may be in any state
            self.strikes.setdefault(target, []).append("it ran out of memory")
            raise SandboxFailure(f"{target} ran out of memory (limit {self.limits.describe_memory()}); "
                                 "the worker was restarted")
        return response
