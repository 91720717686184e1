"""One grader process of `python -m grader batch`: started by grader/batch/scheduler.py as
``python -m grader.batch.job CONFIG_JSON``.

It imports torch, pytest and the tests once, then grades upload after upload in-process (one
pytest session each, each upload in its own fresh sandbox: grade.grade_one), so the start-up
cost is paid once per job, not once per student. Tasks arrive as JSON lines on stdin; a JSON
line per task goes back on the reply pipe (its fd is in the config). stdout and stderr go to
the job's log file: pytest's chatter never mixes with the replies.

The job writes the student's files itself (results.json, the raw pytest record, then
student.json last: student.json is the mark of a finished student).
"""

import json
import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from ..sandbox.folders import remove


LOCK = ".grading.lock"  # in a student's output folder: held by the job grading them
STOPPING = []  # set by a signal; pytest.main swallows KeyboardInterrupt, so it is checked after


def _interrupt(signum, frame):
    """SIGTERM (Slurm's cancel, batch's stop) or SIGINT (a Ctrl-C that reached the batch's process
    group): the sandbox is closed on the way out, the batch is told which student was being graded
    and by what signal (it marks them "interrupted", never "crashed"), and the job exits 128 + the
    signal's number, as a shell would say it."""
    STOPPING.append(signum)
    raise KeyboardInterrupt


def _die_with(parent: int) -> None:
    """SIGTERM when the batch dies, however it died (kill -9 too), so no job grades on for an
    output that no one reads (Linux: PR_SET_PDEATHSIG; the handler above cleans up as for
    Ctrl-C). A batch already gone before that was set: stop now."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        raise SystemExit(143)


def hold(out: Path):
    """The student's folder, held while it is graded (an open file under flock, released when
    the job ends however it ends); None when another run grades them now."""
    import fcntl
    handle = open(out / LOCK, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def main() -> int:
    from ..text import clean, safe_streams
    safe_streams()
    cfg = json.loads(sys.argv[1])
    reply = os.fdopen(cfg["reply_fd"], "w", buffering=1)
    current = None  # the key of the student being graded
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    _die_with(cfg.get("parent", os.getppid()))  # (the pid of the batch that started it)
    # Sandboxes and unpacked zips go in the private folder batch.py made (0711: the student uid
    # may cross it but not list it, on top of each sandbox's own unlistable root), so the
    # folders of the students graded side by side cannot even be named from inside a sandbox.
    private = Path(cfg["private"])
    tempfile.tempdir = str(private)
    try:
        from ..machine import check_options
        from ..options import OptionError, Options
        try:  # checked again, by the same rules (grader/options.py): the config is only JSON
            options = Options(**cfg["options"])
            setup, problem = check_options(options, batch=True)
        except OptionError as e:
            setup, problem = None, str(e)
        if problem:  # (said before torch is imported: a refusal costs no grader's start)
            reply.write(json.dumps({"fatal": problem}) + "\n")
            return 2
        from ..grade import grade_one                         # torch, pytest, the seam: once
        from .output import REPORT, RESULTS, Status, StudentRecord, keep_code, pass_label, write_report
        from ..files import write_atomically
        from ..provenance import stamp
        from ..report import write_results
        from ..sandbox.template import Zygotes
        from ..text import one_line
        reply.write(json.dumps({"ready": True}) + "\n")
        the_pass = options.the_pass
        hide = tuple(Path(p) for p in cfg["hide"])
        # The job's template imports torch once; each student's zygote is a fresh fork of it, in
        # a sandbox of its own (grader/sandbox/template.py), closed after the student.
        zygotes = Zygotes(setup.limits, setup.isolation, cuda=setup.uses_cuda, hide=hide,
                          problems=setup.problems)
        for line in sys.stdin:
            task = json.loads(line)
            current = task["key"]  # (until its answer is sent: an interruption names them)
            out = Path(task["out"])
            out.mkdir(parents=True, exist_ok=True)
            record = out / f"pytest-{pass_label(the_pass)}.json"
            partial = out / f".{record.name}.partial"
            # (before the lock: from the lock on, the only way out is the ``finally`` that drops it)
            student = {"key": task["key"], "students": task["students"], "passes": [the_pass],
                       "upload": task["upload"], "grader": stamp()}
            held = hold(out)
            if held is None:  # a grader of another run is on this student now: theirs to finish
                reply.write(json.dumps({"key": task["key"], "status": "busy", "seconds": 0.0}) + "\n")
                continue
            started = time.monotonic()
            try:
                with zygotes.one() as zygote:
                    results, status = grade_one(Path(task["path"]), setup, quiet=True, hide=hide,
                                                record=partial, zygote=zygote)
                if STOPPING:
                    raise KeyboardInterrupt
                write_results(results, out / RESULTS)
                write_report(out, results)
                keep_code(Path(task["path"]), out)
                if partial.exists():  # pytest-json-report's own file, kept whole (and 0644)
                    write_atomically(record, partial.read_bytes())
                    partial.unlink()
                StudentRecord(**student, status=status).write(out)
                answer = {"key": task["key"], "status": status, "score": results["score"]}
            except KeyboardInterrupt:
                partial.unlink(missing_ok=True)
                raise
            except Exception as e:  # this student's grading failed; the next one goes on
                if STOPPING:
                    partial.unlink(missing_ok=True)
                    raise KeyboardInterrupt from None
                print(clean(traceback.format_exc()), file=sys.stderr, flush=True)
                (out / RESULTS).unlink(missing_ok=True)
                (out / REPORT).unlink(missing_ok=True)
                partial.unlink(missing_ok=True)
                why = one_line(f"{type(e).__name__}: {e}".splitlines()[0])[:500]
                StudentRecord(**student, status=Status.CRASHED, error=why).write(out)
                answer = {"key": task["key"], "status": "crashed", "error": why}
            finally:  # the file goes first, then the lock: a run that opened it meanwhile finds it
                (out / LOCK).unlink(missing_ok=True)  # held and skips, one that opens it later makes a new one
                held.close()
            answer["seconds"] = round(time.monotonic() - started, 3)
            reply.write(json.dumps(answer) + "\n")
            current = None
        return 0
    except KeyboardInterrupt:
        signum = STOPPING[0] if STOPPING else int(signal.SIGINT)
        if current:
            try:  # (the batch may be gone: then nobody is told)
                reply.write(json.dumps({"key": current, "interrupted": signum}) + "\n")
            except (OSError, ValueError):
                pass
        return 128 + signum
    finally:
        # No signal may cut the clean-up short (batch.py removes the folder in any case).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if "zygotes" in locals():
            zygotes.close()
        remove(private)  # (students' folders may be inside: no recursion)


if __name__ == "__main__":
    sys.exit(main())
