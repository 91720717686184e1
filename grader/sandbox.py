"""Run a submission in a worker process the grader can kill, and talk to it as an ``Impl``.

One worker per submission, started lazily and restarted after it dies. Isolation, strongest
available first (``Isolation.detect``):
  * Linux namespaces (root, or unprivileged user namespaces): own PID, mount and network
    namespaces; reference/, tests/ and the output folder are covered by empty tmpfs mounts; the
    working directory is a size-limited tmpfs; when the grader is root the worker drops to an
    unprivileged uid. Killing the worker kills every process it started.
  * Root without namespaces (e.g. Docker's default seccomp profile): an unprivileged uid;
    reference/ and tests/ are made unreadable to it (mode 0700).
  * Neither: a separate process with rlimits only (see README: grade untrusted code in Docker).
Always: rlimits on address space, CPU time, file size, open files and processes; a wall-clock
deadline per test; stdout/stderr go to a capped log file, never to the protocol pipe.
"""

import ctypes
import dataclasses
import json
import os
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .paths import ROOT, SEAM
from tests.seam import Impl, SandboxFailure, codec
from tests.seam.layout import PROBLEMS
from tests.seam.probes import PROBLEM_OF

WORKER = Path(__file__).with_name("_worker.py")
MAX_FRAME = 64 << 20  # the largest message either side accepts (legit results are far smaller)
GIB = 1 << 30
WORKER_UID = 64999  # an otherwise unused uid: killing "all its processes" hits only the sandbox


@dataclasses.dataclass(frozen=True)
class Limits:
    time_per_test: float = 30.0        # wall seconds for all the calls of one test
    startup: float = 60.0              # wall seconds for the worker to import torch and say ready
    # Address space the tests may use beyond what importing torch mapped (CPU torch maps ~0.75
    # GiB, CUDA torch ~3.1 GiB, so this is the old 4 GiB cap on CPU torch). None when CUDA is
    # in use: it reserves terabytes of virtual memory; the container's memory limit applies.
    memory_bytes: int | None = 13 * GIB // 4
    cpu_seconds: int = 1800            # CPU time over the worker's whole life
    file_bytes: int = 64 << 20         # largest file it may write, its output log included
    disk_bytes: int = 256 << 20        # its scratch tmpfs
    processes: int = 256               # processes + threads of the worker uid
    threads: int = 2

    def describe_memory(self) -> str:
        return (f"{self.memory_bytes / GIB:g} GiB beyond torch's own" if self.memory_bytes
                else "none set")


@dataclasses.dataclass(frozen=True)
class Isolation:
    namespaces: bool     # pid + mount + net namespaces via unshare(1)
    user_ns: bool        # ... inside a user namespace (grader not root)
    uid: int | None      # uid the worker drops to (grader is root)

    @classmethod
    def detect(cls) -> "Isolation":
        root = os.geteuid() == 0
        flags = cls._unshare_flags(user_ns=not root)
        try:
            ok = shutil.which("unshare") and subprocess.run(
                flags + ["true"], capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        uid = WORKER_UID if root else None
        if root and not ok and _exposures(WORKER_UID):
            uid = None  # Python lies where an unprivileged uid can't reach it, and no mount
                        # namespace can show it: the worker would not start. Say so, run as is.
        return cls(namespaces=bool(ok), user_ns=bool(ok) and not root, uid=uid)

    @staticmethod
    def _unshare_flags(user_ns: bool) -> list[str]:
        # (no --kill-child: it sometimes fails in util-linux with "sigprocmask unblock failed";
        # the worker sets its own parent-death signal, and _kill kills the namespace's init)
        flags = ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc"]
        return flags + (["--user", "--map-root-user"] if user_ns else [])

    def command_prefix(self) -> list[str]:
        return self._unshare_flags(self.user_ns) + ["--"] if self.namespaces else []

    def describe(self) -> str:
        if self.namespaces:
            who = f"uid {self.uid}" if self.uid is not None else "your uid (user namespace)"
            return f"namespaces (pid, mount, network), runs as {who}"
        if self.uid is not None:
            return f"separate process as uid {self.uid}; no network isolation"
        if os.geteuid() == 0:
            return ("separate process with rlimits only, AS ROOT: no namespaces, and Python is "
                    "not readable by an unprivileged uid (install it outside /root)")
        return "separate process with rlimits only (grader not root, no user namespaces)"


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it if the grader dies (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def _exposures(uid: int | None) -> list[tuple[str, list[str]]]:
    """Python directories the worker uid could not reach: (blocked ancestor, paths to keep)."""
    if uid is None:
        return []
    needed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, *sys.path)
              if p and os.path.isdir(p)}
    out: dict[str, set[str]] = {}
    for path in needed:
        parts = Path(path).parts
        for i in range(2, len(parts) + 1):
            anc = str(Path(*parts[:i]))
            if not os.stat(anc).st_mode & 0o001:
                out.setdefault(anc, set()).add(path)
                break
    # keep only outermost paths under each blocked ancestor
    result = []
    for anc, paths in sorted(out.items()):
        outer = sorted(p for p in paths if not any(p != q and p.startswith(q + os.sep) for q in paths))
        result.append((anc, outer))
    return result


class Sandbox(Impl):
    """An ``Impl`` whose code runs in a sandboxed worker process."""

    def __init__(self, submission_dir: Path, limits: Limits = Limits(),
                 isolation: Isolation | None = None, hide: tuple[Path, ...] = ()):
        self.label = "submission"
        self.limits = limits
        self.isolation = isolation or Isolation.detect()
        self.submission_dir = Path(submission_dir)
        self.root = Path(tempfile.mkdtemp(prefix="grader-sandbox-"))
        # Cover reference/, tests/ and e.g. the output folder; never a folder the worker needs
        # (one holding Python or the sandbox's own files).
        needed = [self.root, Path(sys.prefix), Path(sys.base_prefix)]
        self.hide = [str(p) for p in (ROOT / "reference", ROOT / "tests", *map(Path, hide))
                     if not any(n == p or p in n.parents for n in needed)]
        os.chmod(self.root, 0o711)
        self.deadline: float | None = None
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.broken: dict[str, str] = {}     # problem -> why (its module kills the worker)
        self.strikes: dict[str, list[str]] = {}  # target -> how its calls hung or crashed
        self._touched: set[str] = set()      # problems called successfully in this worker
        if self.isolation.uid is not None and not self.isolation.namespaces:
            for d in ("reference", "tests"):
                if (ROOT / d).is_dir():
                    os.chmod(ROOT / d, 0o700)

    # -- lifecycle ---------------------------------------------------------------------
    def prewarm(self) -> None:
        """Start a worker now (it imports torch while pytest collects); the first call awaits it."""
        if self.proc is None:
            self._spawn()

    def _start(self) -> None:
        if self.proc is None:
            self._spawn()
        self._await_ready()

    def _spawn(self) -> None:
        self.starts += 1
        run = self.root / f"run{self.starts}"
        lib, sub, work, stage = run / "lib", run / "submission", run / "work", run / "stage"
        # copyfile, not copy2: the worker must read its seam whatever the checkout's modes
        # (a Docker image may chmod tests/ go-rwx); the copy gets 0644 files in 0755 folders.
        shutil.copytree(SEAM, lib / "seam", ignore=shutil.ignore_patterns("__pycache__"),
                        copy_function=shutil.copyfile)
        for d, _, files in os.walk(lib):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        sub.mkdir(parents=True)
        for problem in PROBLEMS:  # only the expected modules; everything else is ignored
            src = self.submission_dir / f"{problem}.py"
            if src.is_file() and not src.is_symlink():
                shutil.copyfile(src, sub / f"{problem}.py")
        work.mkdir()
        stage.mkdir()
        uid = self.isolation.uid
        if uid is not None:
            os.chown(work, uid, uid)
        for d in (run, lib, sub):
            os.chmod(d, 0o755)
        self.log_path = run / "output.log"
        cfg = {"lib": str(lib), "submission": str(sub), "work": str(work), "stage": str(stage),
               "namespaces": self.isolation.namespaces, "uid": uid,
               "hide": self.hide, "expose": _exposures(uid) if self.isolation.namespaces else [],
               "readonly": [str(ROOT)] if self.isolation.user_ns else [],
               "threads": self.limits.threads, "max_frame": MAX_FRAME,
               "limits": {"memory_bytes": self.limits.memory_bytes,
                          "cpu_seconds": self.limits.cpu_seconds,
                          "file_bytes": self.limits.file_bytes,
                          "disk_bytes": self.limits.disk_bytes,
                          "processes": self.limits.processes if uid is not None else None}}
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        cfg["fds"] = [req_r, resp_w]
        with open(self.log_path, "wb") as log:
            cmd = self.isolation.command_prefix() + [sys.executable, "-I", str(WORKER), json.dumps(cfg)]
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                pass_fds=(req_r, resp_w), start_new_session=True, preexec_fn=_die_with_parent)
        os.close(req_r)
        os.close(resp_w)
        os.set_blocking(self._req_w, False)
        self._touched = set()
        self._ready = False

    def _await_ready(self) -> None:
        if self._ready:
            return
        hello = self._read(time.monotonic() + self.limits.startup, "starting")
        if hello != {"ready": True}:
            self._kill()
            raise SandboxFailure(f"the worker did not start: {self._log_tail()}")
        self._ready = True

    def _kill(self) -> None:
        if self.proc is None:
            return
        if self.isolation.namespaces:
            # Kill the namespace's init (unshare's child): the kernel kills everything else in
            # the PID namespace, and unshare, left alive, reaps it and exits; no zombies.
            for child in self._children(self.proc.pid):
                self._signal(child)
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
        for fd in (self._req_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.isolation.uid is not None and not self.isolation.namespaces:
            self._kill_uid()  # processes that left the group (setsid) die too
        self.proc = None

    @staticmethod
    def _children(pid: int) -> list[int]:
        try:
            return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except (OSError, ValueError):
            return []

    @staticmethod
    def _signal(pid: int) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _kill_uid(self) -> None:
        uid = self.isolation.uid
        subprocess.run([sys.executable, "-c", "import os; os.kill(-1, 9)"], timeout=10,
                       preexec_fn=lambda: (os.setgroups([]), os.setresgid(uid, uid, uid),
                                           os.setresuid(uid, uid, uid), None)[-1])

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- protocol -------------------------------------------------------------------------
    def _read(self, deadline: float, doing: str):
        header = self._read_exact(8, deadline, doing)
        (size,) = struct.unpack(">Q", header)
        if size > MAX_FRAME:
            self._kill()
            raise SandboxFailure("the worker broke the protocol (oversized message); it was restarted")
        body = self._read_exact(size, deadline, doing)
        try:
            return codec.loads(body)
        except codec.DecodeError as e:
            self._kill()
            raise SandboxFailure(f"the worker sent garbage ({e}); it was restarted") from None

    def _read_exact(self, n: int, deadline: float, doing: str) -> bytes:
        chunks = []
        while n:
            left = deadline - time.monotonic()
            ready = select.select([self._resp_r], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self._kill()
                raise TimeoutError(doing)
            chunk = os.read(self._resp_r, min(n, 1 << 20))
            if not chunk:
                raise EOFError(doing)
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _write(self, payload: bytes, deadline: float) -> None:
        """Send one frame; a worker that stops reading meets the deadline (the pipe is
        non-blocking, so a full pipe never hangs the grader)."""
        view = memoryview(struct.pack(">Q", len(payload)) + payload)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self._req_w], [], left)[1]:
                self._kill()
                raise TimeoutError("sending")
            try:
                view = view[os.write(self._req_w, view):]
            except BlockingIOError:
                continue

    def _death_message(self) -> str:
        try:
            code = self.proc.wait(timeout=10) if self.proc else None
        except subprocess.TimeoutExpired:
            code = None
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
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - limit))
                return f.read().decode(errors="replace").strip()
        except OSError:
            return ""

    def _problem_of(self, target: str) -> str:
        head, _, name = target.partition(".")
        return PROBLEM_OF.get(name, "") if head == "probes" else head

    def _send(self, request: dict) -> dict:
        target = request.get("target", "")
        problem = self._problem_of(target)
        if problem in self.broken:
            raise SandboxFailure(self.broken[problem])
        if len(self.strikes.get(target, ())) >= 2:  # don't pay a hang or a restart again and again
            raise SandboxFailure(f"{target} was not called again: twice already, "
                                 f"{' / '.join(self.strikes[target])}")
        deadline = self.deadline or time.monotonic() + self.limits.time_per_test
        loading = False
        try:
            started = time.monotonic()
            self._start()
            deadline += time.monotonic() - started  # a (re)start is the grader's time, not the test's
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
