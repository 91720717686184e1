"""`python -m grader batch`: grade a class, or one shard of it.

The parent only plans and keeps count. ``--jobs N`` grader processes
(grader/batch/job.py) each import torch and pytest once and grade one upload after another,
each in its own fresh sandbox. A job that dies or hangs costs the student it was grading
("crashed" in the gradebook, the job's log holding its sandbox's last output) and is replaced;
the batch goes on. A signal from outside (Ctrl-C, SIGINT to the batch's process group, SIGTERM
to the batch or a job) is an interruption, not a crash: the batch stops, keeps what finished,
marks the students in flight "interrupted" and says so. Students already graded in OUT_DIR are
skipped (``--regrade`` grades them again); a rerun says why it grades each of the others again.
A student whose tests were only re-weighted since their grade is rescored from their
results.json, not graded again (rescore.py).
Every file is written atomically and the gradebook is rebuilt from the student folders at the
end, also after an interruption.
"""

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .progress import Progress
from .output import (BATCH, REPEATS, REPORT, RESULTS, STATUSES, STUDENT, Status, StudentRecord,
                     class_summary, keep_previous, done_as, read_json, student_dirs, student_folder,
                     unfinished_as, write_gradebook, write_json)
from ..options import Options
from ..sandbox.folders import remove
from ..sandbox.procs import tail
from ..text import clean, one_line
from ..paths import ROOT, out_problem
from ..provenance import reweighted, same_grader, stamp
from .roster import RosterError, choose, class_digest, discover, unpack_export
from .shards import ShardError, resolve, select as select_shard

TASKS_PER_JOB = 50            # a job is replaced after this many students (bounds any leak)
STUDENT_CAP = 4 * 3600        # seconds; a job still busy on one student after this is killed
LOG_TAIL = 4000               # bytes of each of a dead job's sandbox logs kept in the job's log
NAMED = 20                    # students named per reason a rerun grades them again
RESCORE = "re-weighted tests"  # why a student is rescored: only the tests' points moved
# How a job that a signal from outside stopped exits (job.py: 128 + the signal, as a shell says
# it, or killed by it before its handler was set): an interruption, never a crash.
OUTSIDE = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def job_env(jobs: int, environ: dict | None = None) -> dict:
    """A job's environment: the jobs share the machine's cores, so torch in each grader process
    gets its share of them (OMP_NUM_THREADS), and its idle threads sleep rather than spin
    (OMP_WAIT_POLICY): a grader and its worker take turns, and spinning threads took the core
    the other side waited for (benchmarks/batch_throughput.py). What the TA set is kept."""
    environ = dict(os.environ if environ is None else environ)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    environ.setdefault("OMP_NUM_THREADS", str(max(1, cores // max(1, jobs))))
    environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return environ


class _Job:
    """One grader process, the task it is working on, and its reply pipe (read raw: select()
    must see every line, so nothing may sit in a Python-side buffer)."""

    def __init__(self, index: int, cfg: dict, log_dir: Path, env: dict | None = None):
        # The job's sandboxes and unpacked uploads go in a private folder that the student uid
        # may cross (0711) but not list. The parent makes it and removes it once the job is gone,
        # however it went (SIGTERM in its clean-up, SIGKILL): no student's code is left behind.
        self.private = Path(tempfile.mkdtemp(prefix="grader-batch-"))
        os.chmod(self.private, 0o711)
        self.fd, write_fd = os.pipe()
        config = {**cfg, "reply_fd": write_fd, "private": str(self.private)}
        self.log = log_dir / f"job{index}.log"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "grader.batch.job", json.dumps(config)],
                stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,), cwd=ROOT, text=True,
                env=env)
        os.close(write_fd)
        self.buffer = b""
        self.created = time.monotonic()  # its first upload's time counts from here (its warm-up)
        self.task: dict | None = None
        self.mark: int | None = None  # the student's student.json (mtime) when it was sent
        self.since = 0.0
        self.done = 0
        self.ready = False

    def send(self, task: dict) -> None:
        self.task, self.since, self.mark = task, time.monotonic(), _mark(Path(task["out"]))
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()

    def replies(self) -> list[dict] | None:
        """The complete lines that arrived (call when select says the pipe is readable);
        None when the job is gone (EOF)."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def exit_status(self, wait: float) -> int | None:
        """Its exit status once it has ended (it closed its end of the pipe: it is exiting), None
        while it runs on after ``wait`` seconds."""
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, sig=signal.SIGTERM, wait: float = 15.0, died: str | None = None) -> None:
        """Ask it to stop: an idle job ends when its stdin closes (it closes its sandbox first);
        a busy one, or one that does not end, gets ``sig``, then SIGKILL. Its folder goes last;
        ``died``: why it is stopped under a student, written to its log with its sandboxes' last
        output (their logs go with the folder)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=wait if self.task is None and sig != signal.SIGKILL else 0)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.fd)
        if died is not None:
            self.keep_last_output(died)
        for _ in range(3):  # a zygote it left may still be exiting (it dies with its parent)
            remove(self.private)  # (a zygote's scratch may be in it: no recursion)
            if not self.private.exists():
                break
            time.sleep(0.5)

    def keep_last_output(self, why: str) -> None:
        """Append to its log what it died of and the last output of its sandboxes (each one's
        zygote and worker logs, one level down its folder): the job's own output stops where it
        died. Through the sanitiser: it is the student's output."""
        parts = [f"--- {why} ---"]
        try:
            sandboxes = sorted((e for e in os.scandir(self.private) if e.is_dir(follow_symlinks=False)),
                               key=lambda e: e.name)
            for box in sandboxes:
                for entry in sorted(os.scandir(box.path), key=lambda e: e.name):
                    if entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
                        text = tail(Path(entry.path), LOG_TAIL)
                        if text:
                            parts.append(f"[{box.name}/{entry.name}: its last {LOG_TAIL} bytes at most]\n{clean(text)}")
        except OSError:
            pass
        if len(parts) == 1:
            parts.append("(its sandboxes left no output)")
        with open(self.log, "a", encoding="utf-8", errors="backslashreplace") as log:
            log.write("\n".join(parts) + "\n")


def _mark(out: Path) -> int | None:
    """When the student's record was last written (None: it has none): a job that finished them
    has written it since they were sent."""
    try:
        return (out / STUDENT).stat().st_mtime_ns
    except OSError:
        return None


def _record(task: dict, status: Status, why: str) -> dict:
    """The job could not finish this student: say so in their folder (it could not)."""
    out = Path(task["out"])
    for name in (RESULTS, REPORT):
        (out / name).unlink(missing_ok=True)
    StudentRecord(key=task["key"], students=task["students"], upload=task["upload"], passes=[task["pass"]],
                  status=status, error=why).write(out)
    return {"key": task["key"], "status": status.value, "error": why}


def _crashed(task: dict, why: str) -> dict:
    """The job died or hung under this student."""
    return _record(task, Status.CRASHED, why)


class _Interrupted(Exception):
    """A signal from outside (Ctrl-C, SIGINT to the process group, SIGTERM: scancel, a Job's
    deletion, a time limit), to the batch or to one of its jobs: stop, and mark the students in
    flight "interrupted" (``marked``)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)
        self.marked: list[str] = []

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


def _on_signal(signum, frame):
    raise _Interrupted(signum)


def _stopped_from_outside(status: int | None) -> int | None:
    """The signal a job's exit status says stopped it from outside, or None (a crash)."""
    for sig in OUTSIDE:
        if status in (128 + sig, -sig):
            return int(sig)
    return None


def _check_out(out: Path, the_pass: dict, shard: list | None) -> str | None:
    """OUT_DIR is new, empty, or a batch output of this very pass and shard (a rerun goes on):
    never a folder of something else, never a mix of two passes or two shards."""
    problem = out_problem(out, folder=True)
    if problem:
        return problem
    marker = out / BATCH
    if marker.is_file():
        held = read_json(marker)
        if held.get("passes") != [the_pass]:
            return (f"{out} holds a batch with other options ({held.get('passes')}); use another --out "
                    f"(and `merge` them)")
        if held.get("shard", shard) != shard:
            return f"{out} holds {shard_label(held.get('shard'))}, not {shard_label(shard)}; use another --out"
    elif out.is_dir() and any(out.iterdir()):
        return f"--out {out} is not empty and is no batch output (no {BATCH}); give a new or empty folder"
    return None


def shard_label(shard) -> str:
    return "the whole class" if not shard else f"shard {shard[0]}/{shard[1]}"


def _why_regrade(record: dict | None, fingerprint: str, grader: dict, unfinished: str | None = None) -> str | None:
    """Why a student is (re)graded, None when the earlier grade stands: ``unfinished`` is what
    left an earlier run's grading of them unfinished ("crashed", "interrupted")."""
    if record is None:
        return unfinished or "new"
    if record.get("upload") != fingerprint:
        return "changed upload"
    if not same_grader(record.get("grader"), grader):
        return RESCORE if reweighted(record.get("grader"), grader) else "other grader or tests"
    return None


def _rescore(plan: list, out: Path, grader: dict) -> tuple[list, dict]:
    """The students planned ``RESCORE``: each results.json rebuilt with the points the tests are
    worth now (rescore.py; the one before kept as previous.json, as a regrade keeps it), its
    student.json stamped with this grader, under the student's lock as a job grades them (a
    student another run holds is left to be graded, which says so). Returns the plan with them
    marked done (or to be graded where a results.json cannot be rescored exactly) and {key:
    their plan entry} of those rescored."""
    if not any(why == RESCORE for _, _, why, _ in plan):
        return plan, {}
    from ..report import write_results
    from .job import hold
    from .output import write_report
    from .rescore import rescore, weights
    try:
        now = weights()  # one collection of the tests (it imports them, and torch): no grading
    except Exception:  # tests that do not collect: the jobs grade them, and say why it fails
        now = None
    kept, done = [], {}
    for entry in plan:
        u, fp, why, record = entry
        if why != RESCORE:
            kept.append(entry)
            continue
        folder = student_folder(out, u.key)
        lock = hold(folder) if now is not None else None
        try:
            results = None
            if lock is not None:
                before = read_json(folder / RESULTS)
                results = rescore(before, now, grader)
        except Exception:  # a results.json that is not the grader's: graded again
            results = None
        if results is None:
            if lock is not None:
                lock.close()
            kept.append((u, fp, "other grader or tests", record))
            continue
        try:
            if before.get("extra_data", {}).get("grader") != grader:  # (not rescored by a run cut short)
                keep_previous(folder, RESCORE)
            # unfinished until its student.json says this grader: a rescore cut short (Ctrl-C,
            # SIGTERM: no handler is set yet) must not leave the old record over a rescored file
            StudentRecord.from_json({**record, "status": Status.INTERRUPTED.value,
                                     "error": "interrupted while being rescored; a rerun grades them"}).write(folder)
            write_results(results, folder / RESULTS)
            write_report(folder, results)
            record = {**record, "students": u.record()["students"], "grader": grader}
            StudentRecord.from_json(record).write(folder)   # last: the mark of a finished student
        finally:
            lock.close()
        kept.append((u, fp, None, record))
        done[u.key] = entry
    return kept, done


def _tests_changed(plan: list, grader: dict) -> list[str]:
    """For the students regraded because the tests changed: which tests changed since the hash
    they were graded with, and the command that says why (tests/rubric_history.json)."""
    old = sorted({(record.get("grader") or {}).get("tests") for _, _, why, record in plan
                  if why in ("other grader or tests", RESCORE) and record} - {None, grader["tests"]})
    if not old:
        return []
    from ..history.explain import record_or_none, regrade_note
    history = record_or_none()
    return [line for h in old if (line := regrade_note(h, grader["tests"], history))]


def batch(submissions: Path, out: Path, options: Options | None = None, jobs: int = 1,
          shard: str | None = None, shard_count: int | None = None, regrade: bool = False,
          repeat: int = 1, **fields) -> int:
    """Every option is checked before OUT_DIR is touched: a TA's mistake leaves nothing behind.
    ``fields`` (gpu=, problems=, time_limit=, isolation=) make the Options, or change ``options``'.
    SUBMISSIONS may be a .zip as Gradescope downloads it: graded from a temporary copy, removed
    after (the grades and each student's code are kept in OUT_DIR, as for a folder)."""
    submissions = Path(submissions)
    if not (submissions.is_file() and submissions.suffix.lower() == ".zip"):
        return _batch(submissions, out, options, jobs, shard, shard_count, regrade, repeat, **fields)
    into = Path(tempfile.mkdtemp(prefix="grader-export-"))
    try:
        try:
            unpack_export(submissions, into)
        except RosterError as e:
            print(f"error: {one_line(e)}", file=sys.stderr)
            return 2
        print(f"note: {submissions.name} unpacked into {into} for this run (removed at its end)", file=sys.stderr)
        return _batch(into, out, options, jobs, shard, shard_count, regrade, repeat, **fields)
    finally:
        remove(into)


def _batch(submissions: Path, out: Path, options: Options | None, jobs: int, shard: str | None,
           shard_count: int | None, regrade: bool, repeat: int, **fields) -> int:
    submissions, out = submissions.resolve(), out.resolve()
    try:
        options = Options.of(options, **fields)
        the_pass = options.the_pass
        slice_ = resolve(shard, shard_count)
        clash = _check_out(out, the_pass, list(slice_) if slice_ else None)
        if clash:
            raise ValueError(clash)
        everyone, notes = discover(submissions, exclude=(out,))
        uploads, superseded = choose(everyone)
        from ..machine import check_options  # (imports no torch where there is no GPU driver)
        _, problem = check_options(options, batch=True)
        if problem:
            raise ValueError(problem)
    except (RosterError, ShardError, ValueError) as e:  # (a bad option is an OptionError: a ValueError)
        print(f"error: {one_line(e)}", file=sys.stderr)  # it may name uploads
        return 2
    grader = stamp()
    mine = set(select_shard([u.key for u in everyone], slice_))
    present = {u.key for u in uploads}
    not_counted = {k: why for k, why in superseded.items() if k in mine}
    not_counted.update({d.name: "not in this export (graded earlier; not counted)"
                        for d in student_dirs(out) if d.name not in present and d.name not in superseded})
    uploads = [u for u in uploads if u.key in mine]
    plan = []
    for u in uploads:
        fp = u.fingerprint()
        record = done_as(student_folder(out, u.key))
        why = "--regrade" if regrade else _why_regrade(record, fp, grader, unfinished_as(student_folder(out, u.key)))
        plan.append((u, fp, why, record))
    plan, rescored = _rescore(plan, out, grader)  # (--regrade: none is planned RESCORE)
    todo = [(u, fp) for u, fp, why, _ in plan if why]
    reasons = Counter(why for _, _, why, _ in plan if why and why != "new")  # first seen first
    where = f"{shard_label(list(slice_))}: " if slice_ else ""
    for note in notes:
        print(f"note: {one_line(note)}", file=sys.stderr)
    for key, why in sorted(not_counted.items()):
        print(f"note: {one_line(key)}: {why}", file=sys.stderr)
    again = f" (regrading {', '.join(f'{n} {why}' for why, n in reasons.items())})" if reasons else ""
    rescored_said = (f"{len(rescored)} rescored (the tests were re-weighted, no verdict can have moved: "
                     f"each results.json worth the points now), ") if rescored else ""
    print(f"{where}{len(uploads)} upload(s); {len(uploads) - len(todo) - len(rescored)} already graded in {out} "
          f"(skipped: same upload, same grader), {rescored_said}{len(todo)} to grade{again} with {jobs} job(s)",
          file=sys.stderr)
    for why in reasons if not regrade else ():  # who, for each reason
        keys = sorted(one_line(u.key) for u, _, w, _ in plan if w == why)
        print(f"regrading ({why}): {', '.join(keys[:NAMED])}"
              + (f" and {len(keys) - NAMED} more" if len(keys) > NAMED else ""), file=sys.stderr)
    if rescored:
        keys = sorted(one_line(k) for k in rescored)
        print(f"rescored ({RESCORE}): {', '.join(keys[:NAMED])}"
              + (f" and {len(keys) - NAMED} more" if len(keys) > NAMED else ""), file=sys.stderr)
    for line in _tests_changed([*plan, *rescored.values()], grader) if not regrade else ():
        print(f"{'regrading' if todo else 'rescoring'}: {line}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    for u, fp, why, record in plan:  # kept grades follow the export's names (a group changed)
        if why and why != "new":  # a regrade keeps what it replaces: the report lists what changed
            keep_previous(student_folder(out, u.key), why)
        students = u.record()["students"]
        if not why and record.get("students") != students:
            StudentRecord.from_json({**record, "students": students}).write(student_folder(out, u.key))
    write_json(out / BATCH, {"passes": [the_pass], "shard": list(slice_) if slice_ else None,
                             "grader": grader, "class": class_digest(everyone),
                             "uploads": sorted(u.key for u in uploads), "not_counted": not_counted})
    tasks = [{**u.record(), "path": str(u.path), "out": str(student_folder(out, u.key)), "pass": the_pass,
              "upload": fp} for u, fp in todo]
    # --repeat K: every upload of this run K - 1 times more, into OUT_DIR/repeats/<k>/ (flaky tests)
    tasks += [{**u.record(), "path": str(u.path), "out": str(out / REPEATS / str(k) / u.key), "pass": the_pass,
               "upload": u.fingerprint()} for k in range(2, repeat + 1) for u in uploads]
    cfg = {"options": options.as_dict(), "hide": [str(out), str(submissions)], "parent": os.getpid()}
    # SIGINT is taken even where it was inherited ignored (a batch started in the background by a
    # script): its jobs take it (job.py), so a Ctrl-C that reaches the process group stops them,
    # and the batch must stop with them rather than count them as crashes and go on.
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    code = None
    try:
        code = _run(tasks, cfg, jobs, out)
    except (KeyboardInterrupt, _Interrupted) as e:
        stop = e if isinstance(e, _Interrupted) else _Interrupted(signal.SIGINT)
        marked = ""
        if stop.marked:
            keys = [one_line(k) for k in sorted(stop.marked)]
            marked = (f"; {len(keys)} student(s) being graded marked interrupted ({', '.join(keys[:NAMED])}"
                      + (f" and {len(keys) - NAMED} more" if len(keys) > NAMED else "") + ")")
        print(f"interrupted ({stop.name}): the batch stopped; what finished is kept{marked}; "
              "run the same command again to go on", file=sys.stderr)
        code = 128 + stop.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        path = write_gradebook(out)
        # the first screen is said once: by the class report that follows, or here when none does
        for line in class_summary(out, screen=code not in (0, 1)):
            if line:
                print(line, file=sys.stderr)
        print(f"wrote {path}", file=sys.stderr)
        if code in (0, 1):  # (not after an interrupt: the class is not all there)
            from ..classreport import after_batch  # (the report's libraries, only now)
            after_batch(out)
    return code


def _run(tasks: list[dict], cfg: dict, jobs: int, out: Path) -> int:
    if not tasks:
        return 0
    log_dir = out / ".logs"
    log_dir.mkdir(exist_ok=True)
    pending = list(reversed(tasks))
    counts = dict.fromkeys(STATUSES, 0)
    started = 0
    pool: list[_Job] = []
    env = job_env(jobs)
    # on a terminal a live line; elsewhere (a log file, Slurm's, a pipe) a line every 30 s
    progress = Progress(len(tasks), jobs, TASKS_PER_JOB, sys.stderr)

    def finished(job: _Job, answer: dict, first: bool) -> None:
        """``first``: the job's first upload, whose time counts from the job's start (its warm-up)."""
        now = time.monotonic()
        seconds = now - job.created if first else answer.get("seconds", now - job.since)
        job.task = None
        if answer["status"] == "busy":  # another run's grader holds them (grader/batch/job.py hold)
            progress.note(f"skipped {answer['key']}: another run is grading them now; run again once it is done")
        counts[answer["status"]] = counts.get(answer["status"], 0) + 1
        progress.finished(answer["status"], seconds, first=first)

    stopping: _Interrupted | None = None
    try:
        while pending or any(j.task for j in pool):
            busy = sum(1 for j in pool if j.task)
            while len(pool) < min(jobs, busy + len(pending)):
                pool.append(_Job(started, cfg, log_dir, env))
                progress.job_started()
                started += 1
            for job in pool:
                if job.ready and job.task is None and pending:
                    job.send(pending.pop())
            readable = select.select([j.fd for j in pool], [], [], 1.0)[0]
            now = time.monotonic()
            progress.tick(tuple((now - (j.created if j.done == 0 else j.since), j.done == 0) for j in pool if j.task))
            for job in list(pool):
                answers = job.replies() if job.fd in readable else []
                late = job.task is not None and time.monotonic() - job.since > STUDENT_CAP
                if answers is None or late:
                    # (at EOF it is exiting: its status says whether a signal from outside stopped it)
                    status = job.exit_status(wait=10) if answers is None else None
                    outside = _stopped_from_outside(status)
                    if outside is not None and job.task is not None:
                        raise _Interrupted(outside)  # (the clean-up below marks its student)
                    if status is None:  # hung, or not ending: killed now, so its status is known
                        job.proc.kill()
                        status = job.proc.wait()
                    key = job.task["key"] if job.task is not None else None
                    why = f"grading took over {STUDENT_CAP} s" if late else f"the grader process died (exit {status})"
                    job.stop(signal.SIGKILL, wait=5, died=f"{why} while grading {one_line(key)}" if key else None)
                    pool.remove(job)
                    if job.task is None and not job.ready:
                        progress.note(f"error: a grader process failed to start; see {job.log}")
                        return 2
                    if job.task is not None:  # it died (or hung) under this student
                        finished(job, _crashed(job.task, f"{why}; its last output and its sandbox's: {job.log}"),
                                 first=job.done == 0)
                    continue
                for answer in answers:
                    if "fatal" in answer:
                        progress.note(f"error: {answer['fatal']}")
                        return 2
                    if "ready" in answer:
                        job.ready = True
                        continue
                    if "interrupted" in answer:  # a signal from outside reached the job
                        raise _Interrupted(answer["interrupted"])
                    job.done += 1
                    finished(job, answer, first=job.done == 1)
                if job.task is None and job.done >= TASKS_PER_JOB:
                    job.stop(wait=60)  # a fresh one takes its place (bounds any leak)
                    pool.remove(job)
    except (KeyboardInterrupt, _Interrupted) as e:
        stopping = e if isinstance(e, _Interrupted) else _Interrupted(signal.SIGINT)
        raise stopping from None
    finally:
        if stopping is not None:  # a second Ctrl-C must not cut the clean-up short (batch restores them)
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_IGN)
        for job in pool:
            task, mark = job.task, job.mark
            job.stop()
            # a student in flight when a signal stopped the batch, unless their job finished them
            if stopping is not None and task is not None and _mark(Path(task["out"])) == mark:
                _record(task, Status.INTERRUPTED, f"interrupted by {stopping.name} while being graded; "
                                                  "a rerun grades them")
                stopping.marked.append(task["key"])
        progress.close()
    print("; ".join(f"{v} {k}" for k, v in counts.items() if v), file=sys.stderr)
    return 1 if counts["crashed"] else 0
