"""Limits per sandbox and per student: an upload's module is capped
before it is copied, one worker log at a time (deleted with the student), a scratch folder
measured where it is not a tmpfs, and a time budget per problem."""

import json
import os
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from grader.sandbox.cgroup import BASELINE_BYTES
from grader.grade import grade
from grader.paths import REFERENCE
from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import Limits, message
from grader.sandbox.sandbox import Sandbox
from grader.sandbox.zygote import Zygote
from seam.upload import MAX_MODULE_BYTES, locate
from seam import SandboxFailure, SubmissionError, describe
from tests.self.shared import unnamespaced_modes
from tests.self.submissions import reference_with

VEHICLE = "intensity"


def test_a_sparse_module_is_neither_copied_nor_graded(tmp_path):
    """A 1 GiB sparse file takes 0 bytes on disk: its stated size is what counts."""
    folder = tmp_path / "upload"
    folder.mkdir()
    with open(folder / f"{VEHICLE}.py", "wb") as f:
        f.truncate(1 << 30)
    (folder / "flops.py").write_text("x = 1\n")
    notes = locate(folder).notes
    assert f"{VEHICLE}.py is 1024 MiB; a module may be at most {MAX_MODULE_BYTES >> 20} MiB: not graded " \
           "(that problem scores 0)" in notes, notes
    zygote = Zygote(Limits(), Isolation.detect())
    try:
        zygote._restage(folder)
        assert sorted(p.name for p in zygote.inbox.iterdir()) == ["flops.py"]
    finally:
        zygote.close()


def test_a_module_at_the_cap_is_graded(tmp_path):
    folder = tmp_path / "upload"
    folder.mkdir()
    (folder / f"{VEHICLE}.py").write_text("#" * (MAX_MODULE_BYTES - 1) + "\n")
    assert not [n for n in locate(folder).notes if "at most" in n]


CHATTY = '''
import os, sys
def ridge_point(*args):
    sys.stdout.write("x" * 100000)
    sys.stdout.flush()
    os._exit(3)
matmul_intensity = elementwise_intensity = ridge_point
'''


def test_one_worker_log_at_a_time_deleted_with_the_student(tmp_path):
    """A batch job's zygote grades student after student: it keeps no log of one for the next."""
    (tmp_path / f"{VEHICLE}.py").write_text(CHATTY)
    zygote = Zygote(Limits(time_per_test=20), Isolation.detect())
    box = Sandbox(tmp_path, zygote=zygote)
    try:
        for name in ("ridge_point", "matmul_intensity", "elementwise_intensity"):
            with pytest.raises(SandboxFailure, match="exited with status 3"):
                getattr(box.intensity, name)(1.0, 1.0)
            logs = sorted(p.name for p in box.zygote.root.glob("worker*.log"))
            assert len(logs) == 1, logs
        assert box.starts == 3
        box.close()
        assert zygote.root.exists() and not list(zygote.root.glob("worker*.log"))
    finally:
        box.close()
        zygote.close()


HOLDS_FILES = '''
import os
def ridge_point(peak, bw):
    return len([open(os.devnull) for _ in range(1000)])
'''


def test_a_limit_met_is_named_with_its_value(tmp_path):
    """The open-file limit, no constant in worker.py, comes from Limits like every limit; the
    student reads which one they met and its value, not a bare "[Errno 24]"."""
    (tmp_path / f"{VEHICLE}.py").write_text(HOLDS_FILES)
    limits = Limits(time_per_test=30, open_files=Limits.open_files // 2)
    box = Sandbox(tmp_path, limits)
    try:
        with pytest.raises(SubmissionError) as caught:
            box.intensity.ridge_point(1.0, 1.0)
    finally:
        box.close()
    assert f"Too many open files: '/dev/null'; too many open files: {message('open_files', limits)}" \
        in describe(caught.value), describe(caught.value)


SCRIBBLER = '''
def ridge_point(peak, bw):
    for i in range(6):
        with open(f"blob{i}", "wb") as f:
            f.write(b"x" * (60 << 20))
    return 1.0
'''


@pytest.mark.parametrize("isolation", unnamespaced_modes())
def test_a_scratch_folder_is_measured_where_it_is_no_tmpfs(tmp_path, isolation):
    """The red team's scratch-disk-unbounded: each file stays under the 64 MiB file cap, together they pass the 256 MiB
    scratch cap, and the worker is killed for it."""
    (tmp_path / f"{VEHICLE}.py").write_text(SCRIBBLER)
    box = Sandbox(tmp_path, Limits(time_per_test=60), isolation=isolation)
    try:
        with pytest.raises(SandboxFailure, match=f"wrote more than {Limits.disk_bytes >> 20} MiB to its scratch"):
            box.intensity.ridge_point(1.0, 1.0)
    finally:
        box.close()


LEAVER = '''
import os, time
def ridge_point(peak, bw):
    os.umask(0)
    for i, folder in enumerate(["/var/tmp", "/tmp", "/dev/shm", "/var/tmp"]):
        with open(os.path.join(folder, f"{MARK}-{i}"), "wb") as f:
            f.write(b"x" * (8 << 20))
    os.makedirs(f"/var/tmp/{MARK}-dir/deeper")
    with open(f"/var/tmp/{MARK}-dir/deeper/module.py", "w") as f:
        f.write("LEFT = True\\n")
    time.sleep(3)
    return 1.0
'''


def marked(mark: str) -> list[str]:
    return [str(p) for folder in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(folder).glob(f"{mark}*")]


@pytest.mark.parametrize("isolation", unnamespaced_modes())
def test_what_a_worker_writes_in_the_shared_folders_counts_and_goes(tmp_path, isolation):
    """Where a worker may write the shared temporary folders (no namespace, no Landlock), what it
    writes there counts with its scratch against Limits.disk_bytes (four files of 8 MiB, each under
    the file cap, pass a 24 MiB cap), and nothing of it is left once the worker is gone."""
    mark = f"walls-{secrets.token_hex(6)}"
    (tmp_path / f"{VEHICLE}.py").write_text(LEAVER.replace("{MARK}", mark))
    limits = Limits(time_per_test=60, disk_bytes=24 << 20)
    box = Sandbox(tmp_path, limits, isolation=isolation)
    try:
        if isolation.writes_outside:
            with pytest.raises(SandboxFailure, match="wrote more than 24 MiB to its scratch folder and the "
                                                     "shared temporary folders: .*Limits.disk_bytes"):
                box.intensity.ridge_point(1.0, 1.0)
        else:  # (Landlock: it may write its scratch alone)
            with pytest.raises(Exception, match="Permission denied"):
                box.intensity.ridge_point(1.0, 1.0)
        assert not marked(mark), "the worker's files outlived it"
    finally:
        box.close()
        for path in marked(mark):
            shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)


def test_the_sweep_removes_the_uid_s_own_and_nothing_else(tmp_path):
    """outside.py on a planted shared folder: the uid's files and folders go (a folder of its own
    whole, wherever it lies below a folder others may enter), through no symlink of its; what
    others own stays, also inside a folder the uid may write."""
    if os.geteuid() != 0:
        pytest.skip("not here: files of another uid are made as root")
    from grader.sandbox.outside import Outside
    from grader.sandbox.uids import pool_uids
    uid = pool_uids()[0]
    shared = Path(tempfile.mkdtemp(prefix="walls-shared-", dir="/var/tmp"))
    try:
        os.chmod(shared, 0o1777)
        keep = shared / "others" / "kept.txt"            # root's, in a folder every uid may enter
        keep.parent.mkdir(mode=0o755)
        keep.write_text("root's")
        deep = shared / "others" / "open"                 # a world-writable folder deeper down
        deep.mkdir()
        os.chmod(deep, 0o1777)
        made = [shared / "mine.py", deep / "mine-too.bin", shared / "my-folder", shared / "link"]
        made[0].write_text("x")
        made[1].write_bytes(b"y" * 8192)
        (made[2] / "inner").mkdir(parents=True)
        (made[2] / "inner" / "f").write_text("z")
        made[3].symlink_to(keep)
        for path in [*made, made[2] / "inner", made[2] / "inner" / "f"]:
            os.lchown(path, uid, uid)
        outside = Outside(uid, tops=(str(shared),))
        assert outside.bytes() >= 8192
        assert sorted(outside.sweep()) == sorted(map(str, made))
        assert not any(os.path.lexists(p) for p in made)
        assert keep.read_text() == "root's" and deep.is_dir()
        assert outside.bytes() == 0
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.parametrize("isolation", unnamespaced_modes())
def test_a_uid_leased_again_starts_with_nothing_of_its_last_student(isolation, monkeypatch):
    """A batch job killed with SIGKILL closes no zygote: its student's files stay in the shared
    folders and what its worker started runs on as the uid. The next sandbox leased that uid
    kills those processes and removes those files before any worker of its own starts."""
    if not isolation.sweeps_uid:
        pytest.skip("not here: workers run as the grader's uid")
    import subprocess
    from grader.sandbox import isolation as modes
    from grader.sandbox.uids import UidLease
    lease = UidLease()
    mark = f"walls-{secrets.token_hex(6)}"
    left = Path("/var/tmp", mark)
    survivor = subprocess.Popen(["sleep", "300"], user=lease.uid, group=lease.uid, extra_groups=[])
    left.write_text("the last student's")
    os.chown(left, lease.uid, lease.uid)
    monkeypatch.setattr(modes.Isolation, "lease", lambda self: lease)
    zygote = Zygote(Limits(), isolation)
    try:
        assert zygote.uid == lease.uid
        assert survivor.wait(timeout=10) == -9
        assert not left.exists() or not isolation.sweeps_outside
    finally:
        zygote.close()
        survivor.kill()
        left.unlink(missing_ok=True)


HANGS = '''
def _hang(*args):
    while True:
        pass
matmul_intensity = elementwise_intensity = ridge_point = is_compute_bound = roofline_seconds = _hang
'''


def test_a_problem_that_hangs_every_call_spends_its_budget_once(tmp_path):
    """Each hanging function times out at most strikes_per_function times; its later tests fail
    at once, and the grade ends in seconds."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{VEHICLE}.py").write_text(HANGS)
    out = tmp_path / "results.json"
    started = time.monotonic()
    assert grade(tmp_path / "sub", out, gpu="skip", time_limit=1.0, quiet=True, problems=[VEHICLE]) == 0
    elapsed = time.monotonic() - started
    tests = json.loads(out.read_text())["tests"]
    timed_out = [t for t in tests if t["output"].startswith("timed out after 1 s")]
    skipped = [t for t in tests if "was not called again: 2 times already, it timed out / it timed out" in t["output"]]
    functions = {f for t in tests for f in t["extra_data"]["functions"]}
    assert len(timed_out) <= Limits.strikes_per_function * len(functions), [t["output"][:120] for t in tests]
    assert skipped and len(timed_out) + len(skipped) <= len(tests)
    assert all(t["score"] == 0 for t in tests)
    assert elapsed < 60, elapsed
    assert os.path.exists(out)


TWO_HANG = '''
def roofline_seconds(flops, bytes_moved, peak_flops, bandwidth):  # (no other function calls these two)
    while True:
        pass
def elementwise_intensity(flops_per_element, bytes_read_per_element, bytes_written_per_element):
    while True:
        pass
'''


def test_a_hanging_function_costs_only_the_tests_that_call_it(tmp_path):
    """After two functions' timeouts (four: more than a per-problem budget of three allows), the
    problem's other tests still run and score (a budget per problem would zero a 3-point test calling only
    a working function)."""
    folder = reference_with(tmp_path / "sub", {VEHICLE: (REFERENCE / f"{VEHICLE}.py").read_text() + TWO_HANG},
                            problems=[VEHICLE])
    out = tmp_path / "results.json"
    assert grade(folder, out, gpu="skip", time_limit=2.0, quiet=True, problems=[VEHICLE]) == 0
    tests = json.loads(out.read_text())["tests"]
    calls = [t for t in tests if {f"{VEHICLE}.roofline_seconds", f"{VEHICLE}.elementwise_intensity"}
             & set(t["extra_data"]["functions"])]
    assert sum(t["output"].startswith("timed out") for t in calls) > 3, [t["output"][:100] for t in calls]
    rest = [t for t in tests if t not in calls]
    assert calls and all(t["score"] == 0 for t in calls)
    assert rest and all(t["score"] == t["max_score"] for t in rest), [(t["name"], t["output"][:150]) for t in rest]
    # what hung is kept as data for the class report: each function, each time, and nothing else
    incidents = json.loads(out.read_text())["extra_data"]["incidents"]
    assert incidents == {f"{VEHICLE}.roofline_seconds": ["it timed out"] * Limits.strikes_per_function,
                         f"{VEHICLE}.elementwise_intensity": ["it timed out"] * Limits.strikes_per_function}


HOARDERS = '''
import os, time
def ridge_point(peak, bw):
    kids = []
    for _ in range(3):                      # three processes, each under the per-process limit
        pid = os.fork()
        if pid == 0:
            block = bytearray(3 << 28)      # 0.75 GiB, touched (each under its 1 GiB)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(3)
            os._exit(0)
        kids.append(pid)
    held = sum(os.waitpid(pid, 0)[1] == 0 for pid in kids)
    return float(held)
'''


def test_memory_is_limited_per_sandbox_not_per_process(tmp_path):
    """Capped per process, three children of one worker hold 4.5 GiB against a 3.25 GiB limit. With a
    cgroup (where root may make one) they are counted together, and one is killed. (Here at a
    1 GiB headroom: each child stays under its own address-space cap, the three together do not.)"""
    (tmp_path / f"{VEHICLE}.py").write_text(HOARDERS)
    limits = Limits(time_per_test=120, memory_bytes=1 << 30)
    box = Sandbox(tmp_path, limits)
    try:
        if box.zygote.cgroup is None:
            pytest.skip("not here: no cgroup this grader may make (the rlimits hold per process)")
        held = box.intensity.ridge_point(1.0, 1.0)
        peak = box.zygote.cgroup.peak_bytes()
    finally:
        box.close()
    assert held < 3, "all three children held their 0.75 GiB at once"
    assert peak is not None and peak <= limits.memory_bytes + BASELINE_BYTES, peak


def test_without_a_cgroup_the_grader_watches_the_sandboxs_memory(tmp_path, monkeypatch):
    """Where no cgroup can be made (a default Docker container), the grader sums the memory of
    the sandbox's processes while it waits, and kills the worker past the same cap."""
    from grader.sandbox.cgroup import Group
    monkeypatch.setattr(Group, "make", classmethod(lambda cls, *a: None))
    (tmp_path / f"{VEHICLE}.py").write_text(HOARDERS)
    limits = Limits(time_per_test=120, memory_bytes=1 << 30)
    box = Sandbox(tmp_path, limits)
    try:
        assert box.zygote.cgroup is None
        with pytest.raises(SandboxFailure, match=r"its processes held \d\.\d\d GiB together, over the "
                                                 r"sandbox's 2\.00 GiB \(1 GiB for torch's own\): "
                                                 + re.escape(message("memory_bytes", limits))
                                                 + "; the worker was restarted"):
            box.intensity.ridge_point(1.0, 1.0)
    finally:
        box.close()
