"""A batch that is killed takes its grader processes with it, and a student being graded is
graded by one run at a time (else, after `kill -9` of batch, its jobs grade on for minutes,
and a rerun grades a student at the same time as the orphan still grading them)."""

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader.batch.job import LOCK
from grader.paths import ROOT
from tests.self.shared import clean_env, wait_until
from tests.self.submissions import reference_text, reference_with

PROBLEM = "intensity"
SLOW = '''
import time as _time
_ridge = ridge_point
def ridge_point(peak_flops, bandwidth):
    _time.sleep(20)  # (an orphan would grade on for minutes)
    return _ridge(peak_flops, bandwidth)
'''


def _class(folder: Path, n: int, slow: bool = False) -> Path:
    for i in range(n):
        reference_with(folder / f"s{i}", {PROBLEM: reference_text(PROBLEM) + (SLOW if slow else "")}, problems=[PROBLEM])
    return folder


def _jobs(parent: int) -> list[int]:
    """The grader processes a batch started: their command line holds its pid."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "grader.batch.job" in cmdline and f'"parent": {parent}' in cmdline:
            out.append(int(pid))
    return out


def test_kill_9_of_batch_stops_its_jobs(tmp_path):
    klass, out = _class(tmp_path / "class", 4, slow=True), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--only", PROBLEM,
                             "--gpu", "skip", "--jobs", "2"], cwd=ROOT, stderr=subprocess.DEVNULL, env=clean_env())
    try:
        assert wait_until(lambda: len(_jobs(proc.pid)) == 2, 120), "the jobs did not start"
        jobs = _jobs(proc.pid)
        assert wait_until(lambda: len(list(out.glob(f"students/*/{LOCK}"))) == 2, 120), "no job is grading"
        time.sleep(2)  # well into a student's 20 s call
        proc.kill()
        proc.wait()
        assert wait_until(lambda: not any(Path(f"/proc/{j}").exists() and "Z" not in _state(j) for j in jobs), 10), \
            f"grader processes outlived their batch: {[j for j in jobs if Path(f'/proc/{j}').exists()]}"
    finally:
        for j in _jobs(proc.pid):
            os.kill(j, signal.SIGKILL)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_a_student_being_graded_by_another_run_is_skipped_and_said(tmp_path):
    klass, out = _class(tmp_path / "class", 2), tmp_path / "out"
    command = [sys.executable, "-m", "grader", "batch", klass, "--out", out, "--only", PROBLEM, "--gpu", "skip"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=clean_env(), timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    before = {s: (out / "students" / s / "student.json").stat().st_mtime_ns for s in ("s0", "s1")}
    with open(out / "students" / "s0" / LOCK, "a") as held:  # another run's grader, on s0 now
        fcntl.flock(held, fcntl.LOCK_EX)
        run = subprocess.run([*command, "--regrade"], cwd=ROOT, capture_output=True, text=True, env=clean_env(),
                             timeout=600)
    assert "skipped s0: another run is grading them now" in run.stderr, run.stderr[-2000:]
    after = {s: (out / "students" / s / "student.json").stat().st_mtime_ns for s in ("s0", "s1")}
    assert after["s0"] == before["s0"] and after["s1"] != before["s1"]  # s0 left to its grader, s1 regraded
