"""The template (grader/sandbox/template.py): a batch job's torch-ready process, which forks each
student's zygote. Read from the outside: its memory holds no text of the reference, the hidden
tests or a submission graded through it (while the same reader finds the submission in its
worker); each student's zygote is a fresh fork, in a PID namespace and under a uid of its own;
and a fork of an unprivileged template enters a user namespace as ``unshare --map-root-user``."""

import json
import os
import re
import secrets
import sys
from pathlib import Path

import pytest

from grader.paths import REFERENCE, ROOT, problem_file
from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import Limits
from grader.sandbox.procs import descendants
from grader.sandbox.sandbox import Sandbox
from grader.sandbox.template import Zygotes
from seam.problems import PROBLEMS

VEHICLE = "intensity"
SO = re.compile(r"\.so(\.[0-9]+)*$")

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="reads another process's memory (/proc/PID/mem "
                                "of an undumpable process) and leases uids: needs root")


def readable_memory(pid: int) -> bytes:
    """Every region of ``pid`` that holds data: its heap, stacks and anonymous mappings, and any
    file it mapped but a shared library (their code is the same in every process)."""
    chunks = []
    try:
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except PermissionError as e:  # Docker's default drops CAP_SYS_PTRACE: no undumpable process's memory
        pytest.skip(f"this root may not read another process's memory here ({e})")
    with open(f"/proc/{pid}/maps") as maps, mem:
        for line in maps:
            fields = line.split(maxsplit=5)
            span, perms, path = fields[0], fields[1], (fields[5].strip() if len(fields) > 5 else "")
            if "r" not in perms or path in ("[vvar]", "[vsyscall]", "[vvar_vclock]") or SO.search(path):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except (OSError, OverflowError, ValueError):
                continue
    return b"\0".join(chunks)


def distinctive_lines(paths: list[Path], per_file: int = 2) -> list[bytes]:
    """The longest ASCII lines of each file: text that is in a process only if it read the file
    or imported it (a docstring, a message)."""
    out = []
    for path in paths:
        lines = sorted({line.strip() for line in path.read_text().splitlines()
                        if line.strip().isascii() and len(line.strip()) >= 40}, key=len, reverse=True)
        out += [line.encode() for line in lines[:per_file]]
    return out


def worker_pid(box: Sandbox) -> int:
    """The worker: the zygote's child (the zygote is its first process, or that one's child in a
    PID namespace)."""
    tree = descendants(box.zygote.proc.pid)
    return tree[-1]


@needs_root
def test_the_template_holds_nothing_of_anyone_s(tmp_path):
    marker = f"ONLY-THIS-STUDENT-{secrets.token_hex(8)}".encode()
    upload = tmp_path / "upload"
    upload.mkdir()
    source = problem_file(VEHICLE, "module", REFERENCE).read_text()
    problem_file(VEHICLE, "module", upload).write_text(f'SECRET = "{marker.decode()}"\n' + source)
    zygotes = Zygotes(Limits(time_per_test=20), Isolation.detect())
    try:
        with zygotes.one() as zygote:
            box = Sandbox(upload, zygote=zygote)
            try:
                assert box.intensity.ridge_point(2.0, 1.0) == 2.0
                assert marker in readable_memory(worker_pid(box)), "the reader does not find what a process holds"
            finally:
                box.close()
        template = zygotes.template.proc.pid
        memory = readable_memory(template)
        assert str(zygotes.template.work).encode() in memory, "the reader sees the template's own config"
        assert marker not in memory, "a submission's text is in the template"
        secrets_ = {"the reference": [problem_file(p, "module", REFERENCE) for p in PROBLEMS],
                    "the hidden tests": sorted((ROOT / "tests" / "hidden").glob("test_*.py"))}
        for what, paths in secrets_.items():
            found = [line for line in distinctive_lines(paths) if line in memory]
            assert not found, f"text of {what} is in the template: {found[:3]}"
    finally:
        zygotes.close()


NAMESPACES = '''
import os
def ridge_point(peak, bw):
    return peak / bw
def roofline_seconds(*a):
    return {"pid": os.getpid(), "uid": os.getuid(), "ns": os.readlink("/proc/self/ns/pid"),
            "found": sorted(os.listdir(os.environ["HOME"])), "wait": os.environ.get("OMP_WAIT_POLICY")}
def matmul_intensity(*a):
    open(os.path.join(os.environ["HOME"], "left-behind"), "w").write("x")
    return 0.0
'''


@needs_root
def test_each_student_gets_a_fresh_zygote_of_its_own(tmp_path, monkeypatch):
    """Two students one after the other get two zygotes, each a new fork of the template, and the
    second finds nothing the first left in its scratch; two zygotes alive at once (two of the
    template's forks) are under different uids where uids are leased, and in different PID
    namespaces where the mode has them (a namespace's number is reused once it is gone). A
    batch's OMP_WAIT_POLICY reaches the workers (grader/batch/scheduler.py job_env)."""
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    isolation = Isolation.detect()
    assert isolation.spawns, f"{isolation.mode} cannot be forked from a template"
    (tmp_path / VEHICLE).mkdir()
    problem_file(VEHICLE, "module", tmp_path / VEHICLE).write_text(NAMESPACES)
    zygotes = Zygotes(Limits(time_per_test=20), isolation)
    seen, firsts = [], []
    try:
        for _ in range(2):
            with zygotes.one() as zygote:
                box = Sandbox(tmp_path / VEHICLE, zygote=zygote)
                try:
                    box.intensity.matmul_intensity(1, 2, 3, 4)
                    seen.append(box.intensity.roofline_seconds(1, 2, 3, 4))
                    firsts.append(zygote.proc.pid)
                finally:
                    box.close()
        assert firsts[0] != firsts[1]
        assert seen[1]["found"] == ["left-behind"], seen  # its own file alone: the first's was not there
        assert seen[0]["wait"] == "PASSIVE", seen
        with zygotes.one() as one, zygotes.one() as other:
            boxes = [Sandbox(tmp_path / VEHICLE, zygote=z) for z in (one, other)]
            try:
                both = [box.intensity.roofline_seconds(1, 2, 3, 4) for box in boxes]
            finally:
                for box in boxes:
                    box.close()
    finally:
        zygotes.close()
    if isolation.leases_uid:
        assert both[0]["uid"] != both[1]["uid"], both
    if isolation.pid_namespace:
        assert both[0]["ns"] != both[1]["ns"] and both[0]["pid"] == 2, both  # the zygote is its init


@needs_root
def test_an_unprivileged_template_s_fork_enters_a_user_namespace():
    """spawn.py as a grader that is not root runs it: the fork is root inside a user namespace
    (only its own uid mapped) and the init of a PID namespace, as under unshare --map-root-user."""
    code = r'''
import json, os, sys
sys.path.insert(0, "grader/sandbox")
import spawn
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
    try:
        spawn.enter_namespaces(True, os.dup(w))
        os.write(w, json.dumps({"pid": os.getpid(), "uid": os.getuid(),
                                "map": open("/proc/self/uid_map").read().split()}).encode())
    except BaseException as e:
        os.write(w, json.dumps({"error": repr(e)}).encode())
    os._exit(0)
os.close(w)
print(os.read(r, 4096).decode())
os.waitpid(pid, 0)
'''
    import subprocess
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    if "error" in seen and "Operation not permitted" in seen["error"]:
        pytest.skip(f"this kernel refuses user namespaces to unprivileged users: {seen['error']}")
    assert seen == {"pid": 1, "uid": 0, "map": ["0", "65534", "1"]}, seen


@needs_root
def test_a_template_that_died_is_started_again_and_one_that_cannot_fork_is_said(tmp_path, monkeypatch):
    """Killed between two students (the kernel's OOM killer, a TA's kill), the template is started
    again for the next; a fork it cannot make fails that student's calls with the reason, as a
    cold zygote that does not start does, and the job goes on."""
    from grader.sandbox.template import Template
    from seam import SandboxFailure
    (tmp_path / VEHICLE).mkdir()
    problem_file(VEHICLE, "module", tmp_path / VEHICLE).write_text(NAMESPACES)
    zygotes = Zygotes(Limits(time_per_test=20), Isolation.detect())

    def one_student() -> float:
        with zygotes.one() as zygote:
            box = Sandbox(tmp_path / VEHICLE, zygote=zygote)
            try:
                return box.intensity.ridge_point(2.0, 1.0)
            finally:
                box.close()
    try:
        assert one_student() == 2.0
        first = zygotes.template.proc.pid
        os.kill(first, 9)
        assert one_student() == 2.0
        assert zygotes.template.proc.pid != first
        monkeypatch.setattr(Template, "spawn", lambda *a: (_ for _ in ()).throw(SandboxFailure("no fork here")))
        with pytest.raises(SandboxFailure, match="no fork here"):
            one_student()
    finally:
        zygotes.close()


def test_grades_in_one_process_share_a_template_never_a_zygote(tmp_path, monkeypatch):
    """grader/grade.py ``KEPT`` (what the suite's own process sets): each grade's zygote is a
    fresh fork of one kept template, closed with its grade, and the grades score as a cold one."""
    from grader import grade as grading
    from grader.sandbox import template as templates
    from grader.sandbox.zygote import Zygote
    kept, made = templates.Kept(), []
    real = Zygote.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(Zygote, "__init__", init)
    monkeypatch.setattr(grading, "KEPT", kept)
    try:
        scores = []
        for i in range(2):
            out = tmp_path / f"r{i}.json"
            assert grading.grade(REFERENCE, out, gpu="skip", quiet=True, problems=[VEHICLE]) == 0
            scores.append(json.loads(out.read_text())["score"])
        isolation = Isolation.detect()
        if isolation.spawns:
            [template] = kept.templates.values()
            assert [z.template for z in made] == [template, template] and made[0] is not made[1]
            assert all(not z.alive() and not z.root.exists() for z in made)  # closed with its grade
            assert template.alive()
        else:  # a mode whose zygote cannot be forked: each grade starts its own
            assert not kept.templates and all(z.template is None for z in made)
    finally:
        kept.close()
    monkeypatch.setattr(grading, "KEPT", None)
    cold = tmp_path / "cold.json"
    assert grading.grade(REFERENCE, cold, gpu="skip", quiet=True, problems=[VEHICLE]) == 0
    assert scores == [json.loads(cold.read_text())["score"]] * 2 and scores[0] > 0
