"""The attack corpus (tests/self/attacks.py) against the real grader: every hostile submission
gets a schema-valid report, no point it did not earn, and grading ends within its limits."""

import json
import socket
import subprocess
import time

import pytest

from grader.grade import grade
from grader.report import validate
from grader.isolation import pool_uids
from tests.self.attacks import ATTACKS, CONTROL, VEHICLE

TIME_LIMIT = 3.0      # seconds per test for the corpus (the default is 30)
BUDGET = 60.0         # seconds for a whole attack's grading run


@pytest.fixture
def listener():
    """A TCP server on the grader's loopback: a submission that reaches it has network access."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def run_attack(attack, tmp_path, port):
    out = tmp_path / "out" / "results.json"
    submission = attack.build(tmp_path / "submission", out, port)
    before = sandbox_processes()
    started = time.monotonic()
    code = grade(submission, out, gpu="skip", time_limit=TIME_LIMIT, quiet=True, problems=[VEHICLE])
    elapsed = time.monotonic() - started
    assert code == 0, "the grader must write a report and exit 0"
    results = json.loads(out.read_text())
    validate(results)
    return results, elapsed, before


def sandbox_processes() -> dict[int, str]:
    """Live processes of the sandbox uids (pid -> command line); a uid-0 worker that kept root
    (none in the default mode) is covered by the namespace's death instead."""
    ps = subprocess.run(["ps", "-ww", "-o", "pid=,uid=,args=", "-e"], capture_output=True, text=True).stdout
    # (workers of an older checkout's sandbox, run from its grader/_worker.py, are not ours)
    return {int(line.split()[0]): line[:200] for line in ps.splitlines()
            if len(line.split()) > 2 and int(line.split()[1]) in pool_uids()
            and "grader/_worker.py" not in line}


def test_control_vehicle_earns_full_marks(tmp_path, listener):
    """The gate works: with it open, the vehicle module scores everything (so 0 below means
    the attack failed, not that the vehicle is broken)."""
    results, _, _ = run_attack(CONTROL, tmp_path, listener)
    assert results["tests"] and results["score"] == sum(t["max_score"] for t in results["tests"])


def test_corpus_is_large_enough():
    assert len({a.name for a in ATTACKS}) >= 20


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_earns_nothing(attack, tmp_path, listener):
    results, elapsed, before = run_attack(attack, tmp_path, listener)
    earned = [t["name"] for t in results["tests"] if t["score"] > 0]
    assert results["score"] == 0 and not earned, f"attack earned points: {earned}"
    assert results["tests"], "the report must list the tests, failed"
    assert all(t["output"] for t in results["tests"]), "every failure says why"
    assert elapsed < BUDGET, f"grading took {elapsed:.0f} s"
    time.sleep(0.5)  # a background process that survived would rewrite results.json now
    validate(json.loads((tmp_path / "out" / "results.json").read_text()))
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 0
    survivors = {pid: cmd for pid, cmd in sandbox_processes().items() if pid not in before}
    assert not survivors, f"processes of the sandbox uids outlived grading: {survivors}"
