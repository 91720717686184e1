"""Run a submission in a worker process the grader can kill, and talk to it as an ``Impl``.

Its worker is forked by a zygote (zygote.py: its own, or a batch job's). What the worker may see
and do is grader/sandbox/isolation.py's business (an allow-list: Python, its seam, its copy of the
submission, a scratch space); this module starts it, speaks the frame protocol with it, and
turns crashes, hangs and floods into plain messages. Always: rlimits on address space, CPU
time, file size, open files and processes; a wall-clock deadline per test; stdout/stderr go to
a capped log file, never to the protocol pipe. No Python code runs between fork and exec in the
grader (no ``preexec_fn``): the grader may be multi-threaded and CUDA-initialised.
"""

import contextlib
import os
import secrets
import select
import signal
import time
from pathlib import Path

from .isolation import Isolation
from .cgroup import BASELINE_BYTES
from .limits import GIB, Limits, explain, message
from seam import Impl, SandboxFailure, codec, frames, smaps
from seam.probes import problem_of, student_name

from . import record
from .procs import descendants, folder_bytes, tail, tree_bytes
from .zygote import Zygote

WATCH_POLL = 0.25  # seconds between two measurements of a scratch folder, or of a sandbox's memory


class Sandbox(Impl):
    """An ``Impl`` whose code runs in a sandboxed worker process, forked by a zygote: its own,
    or one a batch job gives it (``zygote=``, template.py ``Zygotes``; then ``close`` leaves it running). ``problems``:
    the grade's (None: all), which say whether its own zygote warms torch's optimizers."""

    def __init__(self, submission_dir: Path, limits: Limits = Limits(),
                 isolation: Isolation | None = None, hide: tuple[Path, ...] = (),
                 cuda: bool = False, zygote: Zygote | None = None, problems: list[str] | None = None,
                 watched: bool = True):
        super().__init__()
        self.label = "submission"
        self.folder = Path(submission_dir)  # staged for each worker; the static look (Impl._found) reads it here
        self.owns_zygote = zygote is None
        self.zygote = zygote or Zygote(limits, isolation, cuda=cuda, hide=hide, problems=problems, watched=watched)
        self.limits, self.isolation = self.zygote.limits, self.zygote.isolation
        self.uid = self.zygote.uid
        self._deadline: float | None = None  # when the running test must end (``deadline_for``)
        self.running = False
        self.starts = 0
        self.broken: dict[str, str] = {}     # problem -> why (its module kills the worker)
        self.strikes: dict[str, list[str]] = {}  # student function -> how its calls hung or crashed
        self.timeouts = 0                    # calls of the whole submission that timed out
        self._touched: set[str] = set()      # problems called successfully in this worker
        self._datagrams: list[bytes] = []    # the worker's record (seam/audit.py), not yet notes
        self._record_open = False
        self._loaded: set[str] = set()       # problems whose module loaded in some worker

    def incidents(self) -> dict[str, list[str]]:
        """What hung or crashed, for ``extra_data.incidents`` (the class report lists them): each
        student function's strikes, each module that broke its worker, a spent time budget."""
        out = {function: list(how) for function, how in self.strikes.items() if function}
        out |= {f"{problem}.py": [why] for problem, why in self.broken.items()}
        if self.timeouts >= self.limits.timeouts_per_submission:
            out["the submission"] = [f"its time budget ran out ({self.timeouts} calls timed out)"]
        return out

    def describe(self) -> str:
        """The report's sandbox line: the mode, and what a uid-mode worker could still read."""
        return self.isolation.describe(secret=self.zygote.secret, cuda=self.zygote.cuda)

    @contextlib.contextmanager
    def deadline_for(self, seconds: float):
        """The running test's time limit, from now until the block ends (the grader's plugin
        hands it over per test). A worker's (re)start within it moves the end on: that is the
        grader's time, not the test's. Outside a block each call gets ``time_per_test``."""
        self._deadline = time.monotonic() + seconds
        try:
            yield
        finally:
            self._deadline = None

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
        self._req_w, self._resp_r, self.log_path, self._record = self.zygote.fork(self.folder, deadline)
        self._record_open = True
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
        if self._record_open:  # what it recorded before it died counts
            record.drain(self._record, self._datagrams)
        self._record.close()

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
        readings = [smaps.resident_bytes(pid, device, inode) for pid in descendants(self.zygote.proc.pid)]
        readable = [r for r in readings if r is not None]
        return sum(readable) if readable else None

    # -- protocol -------------------------------------------------------------------------
    def _wait(self, fd: int, deadline: float, doing: str, writing: bool = False):
        """frames.py's ``wait``: block until ``fd`` is ready, or kill the worker at the deadline.
        Meanwhile, every ``WATCH_POLL`` s: outside a namespace the scratch (a folder, not a tmpfs of
        ``disk_bytes``) is measured, with what the worker wrote in the shared temporary folders,
        and without a cgroup the memory of all the sandbox's processes together (proportional set
        sizes); a worker past either cap is killed."""
        disk = self.isolation.watches_disk
        memory = self.zygote.cgroup is None and self.limits.memory_bytes is not None
        watch = disk or memory

        def wait():
            while True:
                left = deadline - time.monotonic()
                ready = records = False
                if left > 0:  # the record is read as it comes: a full socket would stall the worker
                    reading = ([] if writing else [fd]) + ([self._record] if self._record_open else [])
                    readable, writable, _ = select.select(reading, [fd] if writing else [], [],
                                                          min(left, WATCH_POLL) if watch else left)
                    if self._record in readable:
                        records = True
                        self._record_open = record.drain(self._record, self._datagrams)
                    ready = fd in readable or fd in writable
                if records and not ready and not watch:
                    continue  # only records came: wait on
                # measured also when the reply is ready: a fast writer must not beat the poll
                # (what it wrote in the shared temporary folders counts too: outside.py)
                if disk and folder_bytes(self.zygote.work) + self.zygote.outside_bytes() > self.limits.disk_bytes:
                    self._kill()
                    where = "its scratch folder" + (" and the shared temporary folders"
                                                    if self.zygote.outside is not None else "")
                    raise SandboxFailure(f"{doing}: wrote more than {self.limits.disk_bytes >> 20} MiB "
                                         f"to {where}: {message('disk_bytes', self.limits)}; "
                                         "the worker was restarted")
                if ready:
                    return
                if left <= 0 or not watch:
                    self._kill()
                    raise TimeoutError(doing)
                cap = (self.limits.memory_bytes or 0) + BASELINE_BYTES
                if memory and self.zygote.proc and (held := tree_bytes(self.zygote.proc.pid)) > cap:
                    self._kill()
                    raise SandboxFailure(f"{doing}: its processes held {held / GIB:.2f} GiB together, over "
                                         f"the sandbox's {cap / GIB:.2f} GiB ({BASELINE_BYTES / GIB:g} GiB for "
                                         f"torch's own): {message('memory_bytes', self.limits)}; "
                                         "the worker was restarted")
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
            hint = explain(name, self.limits)
            how = f"the process was killed by {name}" + (f", {hint}" if hint else "")
        else:
            how = f"the process exited with status {code} (sys.exit / os._exit?)"
        tail = self._log_tail()
        return how + (f"; its last output: {tail}" if tail else "")

    def _log_tail(self, limit: int = 400) -> str:
        return tail(self.log_path, limit) or self.zygote.log_tail(limit)

    def _send(self, request: dict) -> dict:
        target = request.get("target", "")
        problem = problem_of(target)
        if problem in self.broken:
            raise SandboxFailure(self.broken[problem])
        if self.timeouts >= self.limits.timeouts_per_submission:
            raise SandboxFailure(f"not run: the submission's time budget ran out ({self.timeouts} of its "
                                 f"calls timed out after {self.limits.time_per_test:g} s): "
                                 f"{message('timeouts_per_submission', self.limits)}")
        # a function that hung or crashed is not paid for again and again; the others run on (a
        # probe's strikes are those of the student functions it drives)
        function = student_name(target) if target else ""
        if len(self.strikes.get(function, ())) >= self.limits.strikes_per_function:
            raise SandboxFailure(f"{function} was not called again: {len(self.strikes[function])} times already, "
                                 f"{' / '.join(self.strikes[function])}; "
                                 f"{message('strikes_per_function', self.limits)}")
        deadline = self._deadline or time.monotonic() + self.limits.time_per_test
        try:
            return self._exchange_once(request, target, problem, function, deadline)
        finally:  # what the record holds now was recorded during this request, however it ended
            if self.running and self._record_open:
                self._record_open = record.drain(self._record, self._datagrams)
            self._recorded(record.notes(self._datagrams, problem), record.charges(self._datagrams))
            self._datagrams.clear()

    def _exchange_once(self, request: dict, target: str, problem: str | None, function: str,
                       deadline: float) -> dict:
        loading = False
        try:
            started = time.monotonic()
            self._start()
            spent = time.monotonic() - started  # a (re)start is the grader's time, not the test's:
            deadline += spent                   # this call's, and the rest of the test's
            if self._deadline is not None:
                self._deadline += spent
            if problem and problem not in self._touched:
                loading = True  # import it alone first: a crash now is the module's, not the call's
                self._write(codec.dumps({"op": "load", "target": problem, "id": "load"}), deadline)
                self._read(deadline, f"loading {problem}.py")
                self._touched.add(problem)
                self._loaded.add(problem)
                loading = False
            request = {**request, "id": secrets.token_hex(8)}
            self._write(codec.dumps(request), deadline)
            response = self._read(deadline, target)
            if type(response) is not dict or response.pop("id", None) != request["id"]:
                self._kill()
                raise SandboxFailure(f"{target}: the worker's reply does not match the request "
                                     "(someone wrote on the protocol pipe); it was restarted")
        except TimeoutError as e:
            self._kill()
            allowed = message("time_per_test", self.limits)
            if loading and problem not in self._loaded:  # (a module that loaded before is slow now,
                # after a restart on a busy machine: the call's timeout, not a broken module)
                self.broken[problem] = (f"{problem}.py did not finish loading within "
                                        f"{self.limits.time_per_test:g} s: {allowed}")
                raise SandboxFailure(self.broken[problem]) from None
            self.strikes.setdefault(function, []).append("it timed out")
            self.timeouts += 1
            if str(e) == "starting":  # (_start's deadline: the worker's start, not the call)
                raise SandboxFailure(f"the worker did not start in time for {target}: "
                                     f"{message('startup', self.limits)}") from None
            raise SandboxFailure(f"timed out after {self.limits.time_per_test:g} s in {target}: {allowed}, "
                                 f"{message('threads', self.limits)}; the worker was restarted") from None
        except (EOFError, BrokenPipeError):
            why = self._death_message()
            self._kill()
            if loading:
                self.broken[problem] = f"{problem}.py kills the worker when it is loaded: {why}"
                raise SandboxFailure(self.broken[problem]) from None
            self.strikes.setdefault(function, []).append(why.split(";")[0])
            raise SandboxFailure(f"{target}: {why}; the worker was restarted") from None
        raised = response.get("raised")
        if type(raised) is dict and raised.get("type") == "MemoryError":
            self._kill()  # a process that ran out of memory may be in any state
            self.strikes.setdefault(function, []).append("it ran out of memory")
            raise SandboxFailure(f"{target} ran out of memory: {message('memory_bytes', self.limits)}; "
                                 "the worker was restarted")
        return response
