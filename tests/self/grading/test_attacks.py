"""The attack corpus (tests/self/attacks.py) against the real grader: every hostile submission
gets a schema-valid report, no point it did not earn, and grading ends within its limits."""

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from grader import grade as grading
from grader.grade import grade
from grader.report import validate
from grader.sandbox.uids import UidLease, pool_uids
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


@pytest.fixture
def own_uids(monkeypatch):
    """The uids this test's sandboxes lease, held until the test ends: another grader on the
    machine (a TA's run, a second pytest worker) cannot be handed them while the test looks for
    what outlived grading, so a process of one of them is this test's and no one else's."""
    leases, release = [], UidLease.release
    take = UidLease.__init__

    def init(self):
        take(self)
        leases.append(self)
        uids.add(self.uid)
    uids: set[int] = set()
    monkeypatch.setattr(UidLease, "__init__", init)
    monkeypatch.setattr(UidLease, "release", lambda self: None)
    yield uids
    for lease in leases:
        release(lease)


def run_attack(attack, tmp_path, port):
    out = tmp_path / "out" / "results.json"
    submission = attack.build(tmp_path / "submission", out, port)
    before = sandbox_processes(set(pool_uids()))  # anything of any sandbox uid already there is not ours
    started = time.monotonic()
    code = grade(submission, out, gpu="skip", time_limit=TIME_LIMIT, quiet=True, problems=[VEHICLE])
    elapsed = time.monotonic() - started
    assert code == 0, "the grader must write a report and exit 0"
    results = json.loads(out.read_text())
    validate(results)
    return results, elapsed, before


def sandbox_processes(uids: set[int]) -> dict[int, str]:
    """This test's sandbox processes (pid -> uid and command line): those of the uids it leased,
    and the descendants of this process (a uid-0 worker, in the modes that keep one). Processes
    of another grader running beside it are neither."""
    found, parent = {}, {}
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit():
                status = Path(f"/proc/{entry.name}/status").read_text()
                fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
                args = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                pid = int(entry.name)
                parent[pid] = int(fields["PPid"])
                if not fields["State"].startswith(("Z", "X")):  # a zombie is dead, not a survivor
                    found[pid] = (int(fields["Uid"].split()[0]), args[:200])
        except (OSError, KeyError, ValueError):
            continue                                     # gone meanwhile

    def descends(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            seen.add(pid)
            pid = parent.get(pid, 0)
            if pid == os.getpid():
                return True
        return False
    kept = {t.proc.pid for t in (grading.KEPT.templates.values() if grading.KEPT else ()) if t.proc}  # the grader's
    return {pid: f"uid {uid}: {args}" for pid, (uid, args) in found.items()
            if pid not in kept and (uid in uids or descends(pid))}


def test_control_vehicle_earns_full_marks(tmp_path, listener):
    """The gate works: with it open, the vehicle module scores everything (so 0 below means
    the attack failed, not that the vehicle is broken)."""
    results, _, _ = run_attack(CONTROL, tmp_path, listener)
    assert results["tests"] and results["score"] == sum(t["max_score"] for t in results["tests"])


def test_the_survivor_scan_sees_this_tests_processes_and_no_neighbours(own_uids):
    """What the check below relies on: a process of a uid this test leased is seen, and so is a
    child of this process; a process of a sandbox uid that another grader holds is not."""
    if os.geteuid() != 0:
        pytest.skip("leases need root (the grader drops workers to pool uids only as root)")
    ours = UidLease()
    other = next(uid for uid in pool_uids() if uid not in own_uids)
    # one that left this process's tree (its parent exited), as the leased uid; and a neighbour's
    pids = [int(subprocess.run(["/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], user=uid, group=uid,
                               extra_groups=[], cwd="/", capture_output=True, text=True).stdout)
            for uid in (ours.uid, other)]
    child = subprocess.Popen(["sleep", "60"])
    try:
        seen = sandbox_processes(own_uids)
        assert pids[0] in seen and seen[pids[0]].startswith(f"uid {ours.uid}:"), seen
        assert child.pid in seen and pids[1] not in seen, seen
    finally:
        child.kill()
        child.wait()
        for pid in pids:
            os.kill(pid, 9)


def test_corpus_is_large_enough():
    assert len({a.name for a in ATTACKS}) >= 20


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_earns_nothing(attack, tmp_path, listener, own_uids):
    results, elapsed, before = run_attack(attack, tmp_path, listener)
    earned = [t["name"] for t in results["tests"] if t["score"] > 0]
    assert results["score"] == 0 and not earned, f"attack earned points: {earned}"
    assert results["tests"], "the report must list the tests, failed"
    assert all(t["output"] for t in results["tests"]), "every failure says why"
    assert elapsed < BUDGET, f"grading took {elapsed:.0f} s"
    time.sleep(0.5)  # a background process that survived would rewrite results.json now
    validate(json.loads((tmp_path / "out" / "results.json").read_text()))
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 0
    survivors = {pid: cmd for pid, cmd in sandbox_processes(own_uids).items() if pid not in before}
    assert not survivors, f"processes of the sandbox uids outlived grading: {survivors}"
