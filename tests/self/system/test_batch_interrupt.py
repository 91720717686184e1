"""A signal from outside is an interruption, not a crash. A batch started in the background by a
script inherits SIGINT ignored; its grader processes take it, so a Ctrl-C that reaches the process
group stops them. The batch stops with them: it keeps what finished, marks the students in flight
"interrupted" (never "crashed": the logs would hold nothing, and nobody's code was at fault), says
so, exits 130, and a rerun grades the rest, saying why it grades each one again."""

import csv
import json
import os
import shlex
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
_ridge, _slept = ridge_point, []
def ridge_point(peak_flops, bandwidth):
    if not _slept:  # once per worker: a student is still being graded when the signal comes
        _slept.append(_time.sleep(8))
    return _ridge(peak_flops, bandwidth)
'''
STUDENTS = [f"s{i}" for i in range(4)]


def _statuses(out: Path) -> dict[str, str]:
    return {d.name: json.loads((d / "student.json").read_text())["status"]
            for d in (out / "students").iterdir() if (d / "student.json").is_file()}


def test_sigint_to_a_background_batchs_group_interrupts_it_and_a_rerun_finishes(tmp_path):
    klass, out = tmp_path / "class", tmp_path / "out"
    for key in STUDENTS:
        reference_with(klass / key, {PROBLEM: reference_text(PROBLEM) + SLOW}, problems=[PROBLEM])
    command = [sys.executable, "-m", "grader", "batch", str(klass), "--out", str(out), "--only", PROBLEM,
               "--gpu", "skip"]
    log, status = tmp_path / "batch.log", tmp_path / "status"
    # a script that starts the batch in the background (bash starts it with SIGINT ignored) and
    # waits for it, noting its exit status (the trap: a Ctrl-C ends the script's `wait`, not the script)
    script = (f"trap : INT\n{shlex.join(command)} --jobs 2 > {shlex.quote(str(log))} 2>&1 &\npid=$!\n"
              "while kill -0 $pid 2>/dev/null; do wait $pid; done\n"
              f"wait $pid; echo $? > {shlex.quote(str(status))}\n")
    shell = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=clean_env(), start_new_session=True)
    try:
        assert wait_until(lambda: len(list(out.glob(f"students/*/{LOCK}"))) == 2, 180), \
            f"no two students in flight: {log.read_text()[-2000:] if log.exists() else ''}"
        time.sleep(1)
        os.killpg(shell.pid, signal.SIGINT)   # what a Ctrl-C does to the script's process group
        assert wait_until(status.exists, 120), f"the batch did not stop: {log.read_text()[-2000:]}"
    finally:
        shell.wait(timeout=60)
    said = log.read_text()
    assert status.read_text().strip() == "130", said[-3000:]
    assert "interrupted (SIGINT): the batch stopped; what finished is kept; " in said, said[-3000:]
    first = _statuses(out)
    assert "crashed" not in first.values() and "the grading crashed" not in said, (first, said[-3000:])
    interrupted = sorted(k for k, v in first.items() if v == "interrupted")
    assert interrupted and f"marked interrupted ({', '.join(interrupted)})" in said, (first, said[-3000:])
    assert not list(out.glob(f"students/*/{LOCK}"))  # no job grades on
    with open(out / "gradebook.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["student_id"] in STUDENTS]
    assert {r["student_id"]: r["status"] for r in rows} == first

    # the students left unfinished have no record, so they are regraded as interrupted whatever
    # their upload holds now: without the sleep, which held each of them 8 s more in the rerun
    for key in set(STUDENTS) - {k for k, v in first.items() if v == "graded"}:
        reference_with(klass / key, problems=[PROBLEM])
    rerun = subprocess.run([*command, "--jobs", "2"], cwd=ROOT, capture_output=True, text=True,
                           env=clean_env(), timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"regrading (interrupted): {', '.join(interrupted)}" in rerun.stderr, rerun.stderr[-3000:]
    assert _statuses(out) == dict.fromkeys(STUDENTS, "graded")
    graded_first = [k for k, v in first.items() if v == "graded"]
    assert f"{len(graded_first)} already graded" in rerun.stderr, rerun.stderr[-3000:]
