"""Every isolation mode (grader/sandbox/isolation.py) contains crashes and hangs and gives the same
answers; each namespaced or Landlock mode shows the worker its allow-list and nothing else; no
worker outlives its sandbox; the mode is detected from what the machine allows."""

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox.isolation import MODES, Isolation, IsolationUnavailable
from grader.sandbox.uids import UidLease, pool_uids
from grader.sandbox.view import python_paths
from grader.paths import ROOT
from grader.sandbox.limits import Limits
from grader.sandbox.sandbox import Sandbox
from grader.sandbox.template import Zygotes
from seam import SandboxFailure

MODULE = '''
import os
import time
def ridge_point(peak, bw):
    return peak / bw
def matmul_intensity(*a):
    os._exit(4)
def elementwise_intensity(*a):  # a hang that spends no CPU (the spinning one: test_attacks.py)
    while True:
        time.sleep(1)
def roofline_seconds(*a):
    out = {"uid": os.getuid(), "cwd": os.getcwd()}
    for name, path in (("checkout", %r), ("tmp", "/tmp"), ("home", "/root")):
        try:
            out[name] = sorted(os.listdir(path))
        except OSError as e:
            out[name] = type(e).__name__
    try:
        with open(os.path.join(%r, "probe-%d"), "w") as f:
            f.write("x")
        out["wrote_outside"] = True
    except OSError:
        out["wrote_outside"] = False
    with open("scratch.txt", "w") as f:  # its own scratch is writable
        f.write("ok")
    return out
''' % (str(ROOT), str(ROOT), os.getpid())


# Each way's hang is waited out to this limit, idle (8 ways: the module's wall, on one worker);
# the calls that must answer are a module load and a division, far below it even on a loaded CI.
LIMITS = Limits(time_per_test=2)


def modes():
    out = []
    for mode in MODES:
        try:
            out.append(pytest.param(Isolation.detect(mode), id=mode))
        except IsolationUnavailable as e:
            out.append(pytest.param(None, id=mode, marks=pytest.mark.skip(reason=f"not here: {e}")))
    return out


def ways():
    """Each mode's zygote as ``grade`` starts it (cold), and as a batch job's template forks it
    (template.py), where the mode allows that."""
    out = []
    for mode, param in zip(MODES, modes()):
        isolation = param.values[0]
        out.append(pytest.param((isolation, "cold"), id=f"{mode}-cold", marks=param.marks))
        if Isolation(mode, drop=False).spawns:  # (what the mode decides, wherever it runs)
            out.append(pytest.param((isolation, "template"), id=f"{mode}-template", marks=param.marks))
    return out


@pytest.fixture(scope="module", params=ways())
def sandbox(request, tmp_path_factory):
    """One sandbox per way, shared by the tests below (each way's zygote imports torch: ~3 s of
    CPU, paid once, not once per test)."""
    isolation, how = request.param
    folder = tmp_path_factory.mktemp("upload")
    (folder / "intensity.py").write_text(MODULE)
    with contextlib.ExitStack() as stack:
        zygote = None
        if how == "template":
            zygotes = Zygotes(LIMITS, isolation)
            stack.callback(zygotes.close)
            zygote = stack.enter_context(zygotes.one())
        box = Sandbox(folder, LIMITS, isolation=isolation, zygote=zygote)
        stack.callback(box.close)
        yield box
    (ROOT / f"probe-{os.getpid()}").unlink(missing_ok=True)


def test_answers_crashes_and_hangs(sandbox):
    box = sandbox
    assert box.intensity.ridge_point(989e12, 3.35e12) == 989e12 / 3.35e12
    started = box.starts  # a worker is up (the other test may have started it)
    with pytest.raises(SandboxFailure, match="exited with status 4"):
        box.intensity.matmul_intensity(1, 2, 3, 4)
    with pytest.raises(SandboxFailure, match=f"timed out after {LIMITS.time_per_test:g} s"):
        box.intensity.elementwise_intensity(1, 2, 3)
    assert box.intensity.ridge_point(2.0, 1.0) == 2.0   # a fresh worker took over
    assert box.starts == started + 2


def test_what_the_worker_sees(sandbox):
    box = sandbox
    seen = box.intensity.roofline_seconds(1, 2, 3, 4)
    if box.isolation.drop:
        assert seen["uid"] in pool_uids() and seen["uid"] == box.uid
    if box.isolation.mode == "process":
        return  # rlimits only: it sees and may write what the grader's uid may (docs/trust.md)
    assert seen["wrote_outside"] is False, seen
    if box.isolation.namespaces:   # a fresh root: the checkout and /tmp hold only Python, if that
        assert seen["checkout"] == bound_below(str(ROOT)), seen       # lies below them, or do
        assert seen["tmp"] == bound_below("/tmp"), seen               # not exist at all
        assert seen["cwd"] == "/sandbox/work"
    elif box.isolation.mode == "landlock":
        assert seen["checkout"] == seen["tmp"] == seen["home"] == "PermissionError", seen


def bound_below(folder: str) -> list[str] | str:
    """What a namespaced worker lists in ``folder``: the first names on the way to the Python
    folders bound below it (a Python installed under /tmp, say), or FileNotFoundError."""
    names = {Path(p).relative_to(folder).parts[0] for p in python_paths() if p.startswith(folder.rstrip("/") + "/")}
    return sorted(names) or "FileNotFoundError"


def test_auto_takes_the_strongest_mode_that_works():
    available = [m for m in MODES if _works(m)]
    assert available, "no mode works on this machine"
    assert Isolation.detect().mode == available[0]
    if os.geteuid() == 0:  # a root grader never runs a worker as root, in any mode
        assert all(Isolation.detect(m).drop for m in available)


@pytest.mark.parametrize("hidden, linked", [(["/root"], False), (["/root"], True), ([], False)],
                         ids=["python-unreadable", "python-unreadable-linked", "python-readable"])
def test_no_mode_runs_student_code_as_root(monkeypatch, hidden, linked):
    """As root, where Python is unreadable to other uids (pyenv under /root), the modes without
    namespaces run the worker as a leased uid on a hard-linked tree of Python, or, where none
    can be made, are refused in one line: never run as uid 0 (it owns every root file: chmod,
    keyrings, root's sockets). Where Python is readable, they run as a leased uid."""
    import grader.sandbox.isolation as isolation
    monkeypatch.setattr(isolation, "_python_hidden", lambda: hidden)
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)
    monkeypatch.setattr(isolation.landlock, "abi", lambda: 6)

    def link():
        if not linked:
            raise OSError("another file system")
        return Path("/var/lib/grader-python/x"), "/root/py"
    monkeypatch.setattr(isolation, "linked_python", link)
    refused = hidden and not linked
    for mode in ("landlock", "uid", "process"):
        if refused:
            with pytest.raises(IsolationUnavailable) as e:
                Isolation.detect(mode)
            assert str(e.value) == (f"--isolation {mode}: Python is not readable by an unprivileged uid (/root) "
                                    "and a worker never runs as root; no readable copy of it could be linked "
                                    "(another file system); install Python outside /root (the Docker image's is)")
        else:
            assert Isolation.detect(mode).drop
    monkeypatch.setattr(isolation, "_unusable", lambda mode, root: "no" if mode != "process" else
                        isolation._root_needs_a_readable_python(root))
    if refused:   # auto with nothing left: refused, naming why each mode was
        with pytest.raises(IsolationUnavailable, match="no isolation mode works here: no bwrap: no; "):
            Isolation.detect()
    else:
        assert Isolation.detect() == Isolation("process", drop=True, note=(
            "(no bwrap: no; no namespaces: no; no landlock: no; no uid: no)"))
        assert "runs as a leased unprivileged uid" in Isolation.detect().describe()


def test_a_hidden_python_runs_workers_from_a_linked_tree():
    """The tree is the same files (hard links), outside root's home, readable by other uids; a
    venv is mirrored with its base, and its interpreter, run by an unprivileged uid, is the venv
    (its packages) over the base's image, never the hidden original."""
    from grader.sandbox.view import _python_hidden, image_of, linked_python, unreadable_by_other, worker_python
    if os.geteuid() != 0 or not _python_hidden():
        pytest.skip("not here: Python is readable by other uids (no tree is needed)")
    tree, images = linked_python()
    exe, paths = worker_python(namespaces=False)
    assert exe.startswith(str(tree) + "/") and paths[0] == str(tree) and not unreadable_by_other(paths)
    assert os.stat(exe).st_ino == os.stat(os.path.realpath(sys.executable)).st_ino
    assert worker_python(namespaces=True) == (sys.executable, python_paths())
    # started as root and dropped to another uid before it reads a module, as a zygote's worker is
    seen = subprocess.run([exe, "-I", "-c", "import os; os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
                           "import sys, torch; print(sys.prefix); print(sys.base_prefix); print(torch.__file__)"],
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert seen.returncode == 0, seen.stderr[-2000:]
    prefix, base, torch_file = seen.stdout.split()
    for seen_as, own in ((prefix, sys.prefix), (base, sys.base_prefix)):  # the image where it is mirrored
        assert seen_as == (image_of(os.path.realpath(own), images) or os.path.realpath(own)), (seen_as, own)
    assert torch_file.startswith(str(tree) + "/") or not unreadable_by_other([torch_file])


def test_unknown_mode_is_refused():
    with pytest.raises(IsolationUnavailable, match="unknown isolation mode"):
        Isolation.detect("chroot")


def test_python_view_holds_the_interpreter_and_no_checkout():
    paths = python_paths()
    assert any(os.path.realpath(os.__file__).startswith(p + "/") for p in paths)
    import torch
    assert any(os.path.realpath(torch.__file__).startswith(p + "/") for p in paths)
    assert not any(str(ROOT).startswith(p.rstrip("/") + "/") or p == str(ROOT) for p in paths), paths


def test_concurrent_sandboxes_get_distinct_uids():
    if os.geteuid() != 0:
        pytest.skip("leases need root (the grader drops workers to pool uids only as root)")
    a, b = UidLease(), UidLease()
    try:
        assert a.uid != b.uid and {a.uid, b.uid} <= set(pool_uids())
    finally:
        a.release()
        b.release()
    c = UidLease()  # the least recently used goes first: a released uid waits for the rest of the pool
    try:
        assert c.uid not in (a.uid, b.uid)
    finally:
        c.release()


def _works(mode):
    try:
        Isolation.detect(mode)
        return True
    except IsolationUnavailable:
        return False


FIRST = '''
import os, time
def ridge_point(peak, bw):
    with open("left-by-first.txt", "w") as f:
        f.write("first's scratch")
    pid = os.fork()
    if pid == 0:                      # a background process that hides in a new session
        os.setsid()
        if os.fork() == 0:
            while True:
                time.sleep(0.1)
        os._exit(0)
    os.waitpid(pid, 0)
    return float(os.getpid())
'''

SECOND = '''
import os
def ridge_point(peak, bw):
    return float(len(os.listdir(".")))
'''


def pythons_under(pid: int) -> list[int]:
    """Python processes among ``pid`` and its descendants (seen from the grader's side)."""
    python = os.stat(sys.executable).st_ino  # (a worker may run a hard-linked copy of it)
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            if os.stat(f"/proc/{p}/exe").st_ino == python:
                found.append(p)
            for tid in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
        except OSError:
            continue
    return found


@pytest.mark.parametrize("isolation", modes())
def test_a_shared_zygote_leaves_nothing_of_one_submission_to_the_next(isolation, tmp_path):
    """A batch job's zygote grades submission after submission: the next one finds an empty
    scratch and no process of the one before (they are killed even after setsid)."""
    from grader.sandbox.zygote import Zygote
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "intensity.py").write_text(FIRST)
    (tmp_path / "b" / "intensity.py").write_text(SECOND)
    zygote = Zygote(Limits(time_per_test=10), isolation)
    try:
        first = Sandbox(tmp_path / "a", zygote=zygote)
        first.intensity.ridge_point(1.0, 1.0)
        first.close()
        assert len(pythons_under(zygote.proc.pid)) == 1, "a process of the first survived"
        second = Sandbox(tmp_path / "b", zygote=zygote)
        assert second.intensity.ridge_point(1.0, 1.0) == 0.0, "the scratch was not emptied"
        second.close()
        assert zygote.forks == 2  # one zygote, two workers: torch was imported once
    finally:
        zygote.close()


def test_no_python_code_runs_between_fork_and_exec(monkeypatch, tmp_path):
    """A GPU grader is multi-threaded and CUDA-initialised: Python code in a fork of it (a
    ``preexec_fn``) may deadlock. Every process the sandbox starts, restarts and kills with is
    set up by the C fork/exec path alone."""
    import subprocess
    calls = []
    real = subprocess.Popen.__init__

    def spy(self, *args, **kwargs):
        calls.append(kwargs.get("preexec_fn"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    (tmp_path / "intensity.py").write_text(MODULE)
    box = Sandbox(tmp_path, Limits(time_per_test=4))
    try:
        with pytest.raises(SandboxFailure):
            box.intensity.matmul_intensity(1, 2, 3, 4)    # kills its worker
        assert box.intensity.ridge_point(2.0, 1.0) == 2.0  # restarted
    finally:
        box.close()
    assert calls and all(fn is None for fn in calls), calls


def test_what_the_worker_sees_with_python_installed_under_tmp(tmp_path):
    """The view checks above hold wherever Python lives: here a venv under the temporary folder
    (so /tmp itself holds a folder the worker is given), run in a fresh interpreter."""
    import subprocess
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], check=True)
    run = subprocess.run([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"{Path(__file__).relative_to(ROOT)}::test_what_the_worker_sees", "-k", "namespaces or landlock"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
