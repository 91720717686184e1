"""Graders that share a GPU take turns on it: each GPU-marked test holds the device's lock
(grader/gpulock.py ``device_lock``, keyed by the GPU's UUID), taken before the test's deadline starts.

On the fake CUDA device (the GPU tests run, and fail for want of CUDA) two real grader
processes, started together, run the optim GPU tests of a submission whose optim module takes
0.6 s to import, inside the first GPU test, and logs when: with one UUID their windows never
overlap; with two UUIDs (two GPUs) they do, so the check can fail. The fake clock of the MFU
tests cannot show contention; the lock can."""

import contextlib
import json
import subprocess
import sys
import time
import types

import pytest

from grader.paths import ROOT
from grader.plugin import Fact, GraderPlugin

# Its import is what takes the time: the GPU test's probe imports optim, then fails at its first
# CUDA tensor (no CUDA here); the import happens once per grader, inside its first GPU test.
SLOW = '''
import os, time
_start = time.time()
time.sleep({seconds})
with open({log!r}, "a") as f:
    f.write(f"{{os.getpid()}} {{_start}} {{time.time()}}\\n")
'''

GRADER = '''
import json, os, sys, time
from pathlib import Path
from grader.grade import run_tests
from seam import InProcess
folder, uuid, go = sys.argv[1:4]
impl = InProcess(Path(folder), package=f"slow_{os.getpid()}")
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.01)
plugin = run_tests(impl, gpu="only", cuda=True, time_limit=30, quiet=True, problems=["optim"], gpu_uuid=uuid)
print(json.dumps({"waited": [f.waited for f in plugin.facts.values()],
                  "outcomes": [f.outcome for f in plugin.facts.values()]}), flush=True)
'''

HOLD = '''
import sys, time
from grader.gpulock import device_lock
with device_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
'''


def _two_graders(tmp_path, uuids: tuple[str, str], seconds: float = 0.6):
    """Run two graders side by side from one start signal; (their windows by pid, their facts)."""
    log, go = tmp_path / "windows.log", tmp_path / "go"
    log.unlink(missing_ok=True)
    go.unlink(missing_ok=True)
    sub = tmp_path / "slow"
    sub.mkdir(exist_ok=True)
    (sub / "optim.py").write_text(SLOW.format(seconds=seconds, log=str(log)))
    procs = [subprocess.Popen([sys.executable, "-c", GRADER, str(sub), uuid, str(go)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for uuid in uuids]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    facts = [json.loads(p.communicate(timeout=300)[0].strip().splitlines()[-1]) for p in procs]
    windows: dict[str, list[tuple[float, float]]] = {}
    for line in log.read_text().splitlines():
        pid, start, end = line.split()
        windows.setdefault(pid, []).append((float(start), float(end)))
    return windows, facts


def _overlaps(windows) -> bool:
    (a, b) = windows.values()
    return any(s1 < e2 and s2 < e1 for s1, e1 in a for s2, e2 in b)


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_two_graders_on_one_gpu_take_turns(tmp_path):
    windows, facts = _two_graders(tmp_path, ("GPU-fake-one", "GPU-fake-one"))
    assert len(windows) == 2 and all(len(w) == 1 for w in windows.values()), windows
    assert all(o == "failed" for f in facts for o in f["outcomes"])  # they ran (and failed: no CUDA)
    assert not _overlaps(windows), windows
    assert max(w for f in facts for w in f["waited"]) > 0.3           # one waited for the other
    # the control: on two GPUs nothing waits, and the same two graders overlap
    windows, facts = _two_graders(tmp_path, ("GPU-fake-one", "GPU-fake-two"))
    assert _overlaps(windows), windows


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_the_wait_is_not_the_students_time(tmp_path):
    """A grader holds the GPU for 1.5 s; the next test's deadline starts when it gets the lock,
    so a 2 s time limit is still whole; after the test the lock is free at once."""
    uuid = f"GPU-fake-wait-{tmp_path.name}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, uuid, "1.5"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    impl = types.SimpleNamespace(deadline=None)

    @contextlib.contextmanager
    def deadline_for(seconds):  # what a Sandbox does with the limit it is handed
        impl.deadline = time.monotonic() + seconds
        yield
        impl.deadline = None
    impl.deadline_for = deadline_for
    plugin = GraderPlugin(impl, gpu="auto", cuda=True, time_limit=2.0, gpu_uuid=uuid)
    plugin.facts["t"] = Fact("t", "optim", "a GPU test", 1.0, "visible", gpu=True)
    item = types.SimpleNamespace(nodeid="t", get_closest_marker=lambda name: None)
    start = time.monotonic()
    plugin.pytest_runtest_setup(item)
    assert time.monotonic() - start > 1.0 and plugin.facts["t"].waited > 1.0
    assert impl.deadline - time.monotonic() > 1.9                     # the whole limit is left
    plugin.pytest_runtest_teardown(item)
    holder.wait(timeout=30)
    again = subprocess.run([sys.executable, "-c", HOLD, uuid, "0"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
    assert again.stdout.strip() == "held"
    cpu_test = GraderPlugin(types.SimpleNamespace(deadline_for=deadline_for), gpu="auto", cuda=True, time_limit=2.0,
                            gpu_uuid=uuid)
    cpu_test.facts["t"] = Fact("t", "optim", "a CPU test", 1.0, "visible", gpu=False)
    cpu_test.pytest_runtest_setup(item)                               # no lock for a CPU test
    assert cpu_test.facts["t"].waited == 0.0


def test_a_lock_folder_someone_else_made_is_refused(tmp_path):
    """Whoever makes the folder first could hold every GPU's lock (a grader waiting forever) or
    swap its files: one open to others, or not ours, is refused rather than used."""
    import os
    import pytest
    from grader.gpulock import checked
    mine = checked(tmp_path / "fresh")
    assert mine.stat().st_mode & 0o777 == 0o700
    (tmp_path / "open").mkdir(mode=0o777)
    os.chmod(tmp_path / "open", 0o777)
    with pytest.raises(RuntimeError, match="is not this user's alone"):
        checked(tmp_path / "open")
    (tmp_path / "target").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(RuntimeError, match="is not this user's alone"):
        checked(tmp_path / "link")
    if os.geteuid() == 0:
        (tmp_path / "theirs").mkdir(mode=0o700)
        os.chown(tmp_path / "theirs", 65534, 65534)
        with pytest.raises(RuntimeError, match="is not this user's alone"):
            checked(tmp_path / "theirs")


def test_an_untrusted_lock_folder_stops_the_run_before_it_starts(tmp_path, monkeypatch):
    """Not one GPU test failing per student: check_options refuses (exit 2, one line)."""
    import os
    from grader import gpu, gpulock
    from grader.grade import check_options
    from grader.options import Options
    bad = tmp_path / "locks"
    bad.mkdir()
    os.chmod(bad, 0o777)
    monkeypatch.setenv(gpu.FAKE, "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(gpulock, "lock_dir", lambda: gpulock.checked(bad))
    monkeypatch.setattr("grader.machine.lock_dir", lambda: gpulock.checked(bad))
    setup, problem = check_options(Options(gpu="only", problems=["optim"]))
    assert setup is None and "is not this user's alone" in problem and problem.endswith("no report written")
