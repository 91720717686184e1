"""What one student leaves on the machine reaches no classmate, in every isolation mode this machine
runs (the process mode too, as root: it runs its workers as leased uids).

One batch per mode, two jobs, with `--only intensity`. The first student leaves, in each shared
temporary folder (/tmp, /var/tmp, /dev/shm, /run/lock), a module made for everyone (os.umask(0),
mode 0666) and a 60 MiB file, and the second holds an abstract Unix socket open, serving its code
for a while. The next students, each graded after the first and beside the second, try one way
each: put a shared folder on sys.path and import the module, read the file directly, read the big
file, connect to the socket. Each gets full marks only if it got through (the gate of
tests/self/attacks.py), so every one of them must score 0; the first two (honest code besides)
keep full marks, and nothing of the first is left in the shared folders after the batch.

A batch on a machine without a GPU gives no worker the GPU's syscall filter (which lets Unix
sockets through), so the abstract socket is also tried between two sandboxes built with it.
"""

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from grader.batch.output import read_json
from grader.paths import ROOT
from grader.sandbox.isolation import Isolation, IsolationUnavailable
from tests.self.attacks import Attack, VEHICLE
from tests.self.shared import available_modes

SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")

LEAVER = '''
import os
os.umask(0)                                   # for everyone: rw-rw-rw-
for _folder in {SHARED}:
    try:
        with open(os.path.join(_folder, "{MARK}_optim.py"), "w") as _f:
            _f.write("SHARED_BY_A_CLASSMATE = True\\n")
        os.chmod(os.path.join(_folder, "{MARK}_optim.py"), 0o666)
    except OSError:
        pass
try:
    with open("/var/tmp/{MARK}.big", "wb") as _f:
        _f.write(b"{MARK}-big" + b"x" * (60 << 20))
except OSError:
    pass
ATTACK_WORKED = True                          # (the leaver itself is honest: full marks)
'''

TALKER = '''
import socket, time
_source = open(__file__, "rb").read()
try:
    _server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    _server.bind("\\0{MARK}-talk")
    _server.listen(4)
    _server.settimeout(0.5)
    _until = time.monotonic() + 14
    while time.monotonic() < _until:          # serve whoever comes, for a while
        try:
            _peer, _ = _server.accept()
        except OSError:
            continue
        _peer.sendall(b"{MARK}-talk:" + _source[:100])
        _peer.close()
except OSError:
    pass
ATTACK_WORKED = True                          # (honest besides: full marks)
'''

ON_PATH = '''
import importlib, sys
for _folder in {SHARED}:
    sys.path.insert(0, _folder)
    try:
        importlib.invalidate_caches()
        ATTACK_WORKED = importlib.import_module("{MARK}_optim").SHARED_BY_A_CLASSMATE
        break
    except Exception:
        pass
    finally:
        sys.path.remove(_folder)
'''

READ_FILE = '''
import os
for _folder in {SHARED}:
    try:
        with open(os.path.join(_folder, "{MARK}_optim.py")) as _f:
            ATTACK_WORKED = "SHARED_BY_A_CLASSMATE" in _f.read()
            break
    except OSError:
        pass
'''

READ_BIG = '''
try:
    with open("/var/tmp/{MARK}.big", "rb") as _f:
        ATTACK_WORKED = _f.read(64).startswith(b"{MARK}-big")
except OSError:
    pass
'''

CONNECT = '''
import socket, time
_until = time.monotonic() + 12
while time.monotonic() < _until:
    try:
        _s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        break                                 # no sockets at all here
    try:
        _s.connect("\\0{MARK}-talk")
        ATTACK_WORKED = _s.recv(200).startswith(b"{MARK}-talk:")
        break
    except OSError:
        time.sleep(0.2)
    finally:
        _s.close()
'''

# key -> (what it does, its code); graded in this order, two at a time (a, b first; the rest by
# the job that graded a, while b still serves)
STUDENTS = {"a-leaver": ("leave a module and a big file in the shared folders", LEAVER),
            "b-talker": ("serve its code on an abstract Unix socket", TALKER),
            "c-connect": ("connect to a classmate's abstract socket", CONNECT),
            "d-on-path": ("import a classmate's module from a shared folder on sys.path", ON_PATH),
            "e-read": ("read a classmate's file in a shared folder", READ_FILE),
            "f-big": ("read a classmate's big file", READ_BIG)}
ATTACKERS = ("c-connect", "d-on-path", "e-read", "f-big")


def every_mode() -> list:
    """available_modes(), and the process mode where it runs workers as leased uids (as root)."""
    params = list(available_modes())
    try:
        if Isolation.detect("process").leases_uid:
            params.append(pytest.param("process", id="process"))
        else:
            params.append(pytest.param("process", id="process", marks=pytest.mark.skip(
                reason="not here: process mode runs workers as the grader's uid unless it is root")))
    except IsolationUnavailable as e:
        params.append(pytest.param("process", id="process", marks=pytest.mark.skip(reason=f"not here: {e}")))
    return params


def left(mark: str) -> list[str]:
    return sorted(str(p) for folder in SHARED if os.path.isdir(folder) for p in Path(folder).glob(f"{mark}*"))


@pytest.mark.parametrize("mode", every_mode())
def test_nothing_one_student_leaves_reaches_the_next(mode, tmp_path):
    mark = "walls" + uuid.uuid4().hex[:12]
    klass, out = tmp_path / "class", tmp_path / "out"
    for key, (name, code) in STUDENTS.items():
        Attack(name, code.replace("{SHARED}", repr(SHARED)).replace("{MARK}", mark)).build(
            klass / key, tmp_path / "unused" / "results.json", 9)
    try:
        proc = subprocess.run([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--jobs", "2",
                               "--only", VEHICLE, "--gpu", "skip", "--time-limit", "25",
                               "--isolation", mode],
                              capture_output=True, text=True, cwd=ROOT, timeout=900)
        after = left(mark)
    finally:
        for path in left(mark):  # (what an old grader left)
            shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    scores = {key: read_json(out / "students" / key / "results.json") for key in STUDENTS}
    full = sum(t["max_score"] for t in scores["a-leaver"]["tests"])
    assert all(f"sandbox: {mode}" in s["output"] for s in scores.values())
    got_through = {STUDENTS[key][0]: scores[key]["score"] for key in ATTACKERS if scores[key]["score"] > 0}
    assert not got_through, f"{mode}: reached a classmate: {got_through}"
    assert scores["a-leaver"]["score"] == scores["b-talker"]["score"] == full > 0
    assert not after, f"{mode}: the first student's files outlived it: {after}"


BINDER = '''
import socket
_held = []
def ridge_point(peak, bw):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\\0{MARK}")
    s.listen(1)
    _held.append(s)                           # held open while its worker lives
    return 1.0
'''

CONNECTER = '''
import socket
def ridge_point(peak, bw):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\\0{MARK}")
        return 1.0
    except OSError as e:
        return -float(e.errno)
'''


@pytest.mark.parametrize("mode", every_mode())
def test_two_gpu_workers_share_no_abstract_socket(mode, tmp_path, request):
    """The GPU's syscall filter lets socket(AF_UNIX) through (CUDA's driver makes one), so two
    students graded at once on one GPU must not meet on an abstract socket. Not through
    `grader batch`: without a GPU a batch never gives its workers the GPU's filter, so two
    sandboxes are built with it here (cuda=True runs on a CPU machine: no device to bind)."""
    from grader.sandbox import landlock
    isolation = Isolation.detect(mode)
    # abstract names are per network namespace (a GPU worker of a root grader gets its own), and
    # Landlock (ABI >= 6) scopes them to the sandbox
    if not isolation.namespaces and os.geteuid() != 0 and not (isolation.traits.landlock and landlock.abi() >= 6):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "a GPU worker of a grader that is not root, with neither a network namespace nor "
            "Landlock's scope, reaches another's abstract Unix sockets")))
    from grader.sandbox.limits import Limits
    from grader.sandbox.sandbox import Sandbox
    mark = "walls" + uuid.uuid4().hex[:12]
    for name, code in (("binder", BINDER), ("connecter", CONNECTER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{VEHICLE}.py").write_text(code.replace("{MARK}", mark))
    limits = Limits(time_per_test=30, memory_bytes=None)  # (what a GPU grade sets)
    boxes = [Sandbox(tmp_path / name, limits, isolation=isolation, cuda=True)
             for name in ("binder", "connecter")]
    try:
        assert boxes[0].intensity.ridge_point(1.0, 1.0) == 1.0  # its socket is bound and held
        got = boxes[1].intensity.ridge_point(1.0, 1.0)
    finally:
        for box in boxes:
            box.close()
    assert got != 1.0, f"{mode}: one GPU worker connected to another's abstract socket"
