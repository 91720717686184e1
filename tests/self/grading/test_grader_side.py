"""The grader's own side, against the red team's attacks on it: no reply can sink it, no text can lie, a batch
keeps its own files and leaves nothing behind, and Landlock's allow-list hides a checkout that
lies inside a folder the worker may read. Each test reproduces an attack that broke one of these."""

import csv
import gc
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import weakref
import zipfile
from pathlib import Path

import pytest
import torch

from grader.batch import output as gradebook
from grader.sandbox import landlock
from grader.batch.scheduler import _Job
from grader.options import Options
from grader.batch.output import read_json, student_folder, write_json
from grader.batch.roster import fingerprint
from grader.sandbox.view import carve
from grader.paths import REFERENCE, ROOT
from grader.plugin import GraderPlugin
from grader.report import render_table
from grader.text import clean, csv_cell, indent, one_line
from seam import InProcess, codec, frames
from tests.self.attacks import REPLY_FLOOD, STUB_FUNCS, VEHICLE
from tests.self.shared import cli

ESCAPES = "\x1b[2J\x1b[H\x1b[8m\x1b]52;c;cHduZWQ=\x07\u202e\u2028\r"
MESSAGE = ESCAPES + " Score: 12/12 \ud800"  # clear screen, conceal, OSC 52, a lone surrogate


def _grade(upload, out: Path, *extra, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "grade", str(upload), "--out", str(out), "--gpu", "skip",
                           "--only", VEHICLE, *extra], capture_output=True, cwd=ROOT, timeout=600,
                          env={**os.environ, **(env or {})})


# -- bounded decoding ------------------------------------------------------------------------
def test_a_reply_is_counted_before_it_is_parsed():
    legit = codec.dumps(codec.to_plain({"x": torch.arange(100_000.0), "ys": list(range(1000))}))
    assert codec.precount(legit) < 2000 and codec.loads(legit, bounded=True)["ys"][-1] == 999
    quoted = codec.dumps(["[" * 100 + "]]]{{,,,"])  # brackets inside a string are no structure
    assert codec.precount(quoted) == 2
    nested = b"[" + b",".join([b"[]"] * 1_000_000) + b"]"
    with pytest.raises(codec.DecodeError, match="values"):
        codec.loads(nested, bounded=True)
    with pytest.raises(codec.DecodeError, match="nested"):
        codec.loads(b"[" * 65 + b"]" * 65, bounded=True)
    assert frames.MAX_REPLY < frames.MAX_FRAME




def test_replies_that_would_sink_the_grader_fail_their_tests_and_the_run_goes_on(tmp_path):
    """Decoded whole, 63 MB frames of empty lists cost a grader 10.7 GB, 768 s for 10 tests at a
    10 s limit (benchmarks/reply_frames.py prints the current figures beside a normal run's)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / f"{VEHICLE}.py").write_text(STUB_FUNCS + REPLY_FLOOD)
    proc = _grade(sub, tmp_path / "r.json", "--time-limit", "10")
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = read_json(tmp_path / "r.json")["tests"]
    outputs = [t["output"] for t in tests]
    nested = [o for o in outputs if o.startswith(f"{VEHICLE}.is_compute_bound: the worker sent garbage")]
    big = [o for o in outputs if o.startswith(f"{VEHICLE}.ridge_point: the worker broke the protocol")]
    assert nested and all("values (the limit is 250000)" in o for o in nested), outputs
    assert big and all(f"bytes (the limit is {frames.MAX_REPLY})" in o for o in big), outputs
    assert all(t["status"] == "failed" for t in tests)


def test_a_failing_test_keeps_its_text_never_its_values(tmp_path, monkeypatch):
    """Every value decoded from a reply is gone by the end of the session that failed on it (else
    each failing test's excinfo, and with it its frames' locals, would live to the end)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / f"{VEHICLE}.py").write_text(STUB_FUNCS.replace("raise NotImplementedError",
                                                          "import torch; return torch.zeros(1000)"))
    decoded, alive = [], []
    real = codec.from_plain

    def recording(node, *args, **kwargs):
        value = real(node, *args, **kwargs)
        if isinstance(value, torch.Tensor) and value.numel() == 1000:
            decoded.append(weakref.ref(value))
        return value

    def at_the_end(self, session):
        gc.collect()
        alive.append(sum(ref() is not None for ref in decoded))

    monkeypatch.setattr(codec, "from_plain", recording)
    monkeypatch.setattr(GraderPlugin, "pytest_sessionfinish", at_the_end, raising=False)
    from grader.grade import run_tests
    plugin = run_tests(InProcess(sub, package="leak_check"), "skip", False, 30.0, quiet=True, problems=[VEHICLE])
    assert decoded and any(f.outcome == "failed" for f in plugin.facts.values())
    assert alive == [0], f"{alive} of {len(decoded)} decoded tensors still held when the session ended"


# -- text that cannot lie --------------------------------------------------------------------
def test_the_sanitiser():
    assert clean("a\x1b[2Jb\x07c\u202ed\u2028e\rf\tg\n") == "a[2Jbcdef g\n"
    assert clean("x\ud800y") == "x\\ud800y" and clean("x\ud800y").encode("utf-8")
    assert one_line("upload\nScore: 12/12\n") == "upload / Score: 12/12 / "
    assert indent("a\nScore: 1/1") == "    a\n    Score: 1/1"
    assert [csv_cell(v) for v in ("=1+1", "+1", "-2", "@SUM(1)", "\t=x", "Ada", "12")] == \
        ["'=1+1", "'+1", "'-2", "'@SUM(1)", "' =x", "Ada", "12"]
    assert [csv_cell(v) for v in ("\u00a0=1+1", "\uff1d1+1", "\u3000@x")] == \
        ["'\u00a0=1+1", "'\uff1d1+1", "'\u3000@x"]              # behind NBSP, full-width (red team)
    assert not any(c in clean(ESCAPES) for c in "\x1b\x07\u202e\u2028\r")


def test_names_and_messages_cannot_forge_a_line_of_the_report(tmp_path):
    """A folder named with newlines and a fake score and sandbox line, a message full of escape
    sequences and a lone surrogate: the report's only score line is the grader's (first in
    results.json, last on the terminal), its only sandbox line too, and no escape reaches the
    terminal. Unguarded, the terminal ends in the fake `Score: 12/12` and `grade` exits 1."""
    fake = "upload\nScore: 12/12\nsandbox: bwrap: a fresh root (fake line)\n"
    body = STUB_FUNCS.replace("def matmul_intensity(b, d, f, bytes_per_element):\n    raise NotImplementedError",
                              "def matmul_intensity(b, d, f, bytes_per_element):\n"
                              f"    raise ValueError({MESSAGE!r})")
    upload = tmp_path / "newline-name.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        zf.writestr(f"{fake}/{VEHICLE}.py", body)
    proc = _grade(upload, tmp_path / "r.json", env={"PYTHONIOENCODING": "utf-8:strict"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    for stream in (proc.stdout, proc.stderr):
        assert not any(c.encode() in stream for c in "\x1b\x07\r") and "\u202e".encode() not in stream
    shown = proc.stdout.decode().rstrip("\n").splitlines()
    assert shown[-1].startswith("wrote ") and shown[-2].startswith("Score: 0/")
    assert [line for line in shown if line.startswith("Score:")] == [shown[-2]]
    results = read_json(tmp_path / "r.json")
    summary = results["output"].splitlines()
    assert summary[0].startswith("Score: 0/") and not any(line.startswith("Score:") for line in summary[1:])
    assert len([line for line in summary if line.startswith("sandbox:")]) == 1
    assert "Score: 12/12" in results["output"]  # shown, inside the grader's own line
    outputs = "".join(t["output"] for t in results["tests"])
    assert "\\ud800" in outputs and not any(c in outputs for c in "\x1b\x07\u202e\u2028\r")
    assert render_table(results).splitlines()[-1] == summary[0]


def test_a_lone_surrogate_still_gets_its_gradescope_report(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "submission" / f"{VEHICLE}.py").write_text(STUB_FUNCS.replace(
        "raise NotImplementedError", "raise ValueError('bad \\ud800 value')", 1))
    proc = subprocess.run([sys.executable, "-c", "import sys; from grader.gradescope import run_autograder; "
                           "sys.exit(run_autograder())"], capture_output=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_GPU": "skip"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = read_json(root / "results" / "results.json")
    assert results["tests"] and "could not grade" not in results["output"]
    assert any("\\ud800" in t["output"] for t in results["tests"])


def test_no_gradebook_cell_is_a_formula(tmp_path):
    out = tmp_path / "out"
    students = [{"sid": "=1+1", "name": "=HYPERLINK(\"http://x\")", "email": "@SUM(1+9)*cmd|' /C calc'!A0"},
                {"sid": "-3", "name": "+Ada\nLovelace", "email": "\tada@example.edu"}]
    folder = student_folder(out, "=key")
    write_json(folder / gradebook.RESULTS, {"score": 0, "execution_time": 0, "output": "Score: 0/0", "tests": []})
    write_json(folder / gradebook.STUDENT, {"key": "=key", "students": students, "status": "graded"})
    rows = list(csv.reader(io.StringIO(gradebook.render(out).decode())))
    cells = [cell for row in rows[1:] for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells), rows
    assert "'=1+1" in cells and "'+Ada / Lovelace" in cells and "'=key" in cells


# -- batch: its own files, nothing left behind -----------------------------------------------
def test_uploads_named_like_the_batchs_own_files_are_graded(tmp_path):
    """Unguarded, an upload named batch.json crashes the batch (later students never graded) and
    one named gradebook.csv leaves no gradebook at all."""
    klass = tmp_path / "class"
    for name in ("batch.json", "gradebook.csv", "students"):
        (klass / name).mkdir(parents=True)
        (klass / name / f"{VEHICLE}.py").write_text((REFERENCE / f"{VEHICLE}.py").read_text())
    out = tmp_path / "out"
    cli("batch", klass, "--out", out, "--jobs", "1", "--only", VEHICLE, "--gpu", "skip", check=0)
    rows = gradebook.student_rows((out / "gradebook.csv").read_text())
    assert sorted(r["submission"] for r in rows) == ["batch.json", "gradebook.csv", "students"]
    assert {r["status"] for r in rows} == {"graded"} and len({r["total"] for r in rows}) == 1
    assert read_json(out / "batch.json")["passes"]


def _job(tmp_path: Path) -> _Job:
    cfg = {"options": Options(gpu="skip", time_limit=30.0, problems=[VEHICLE]).as_dict(),
           "hide": [str(tmp_path)]}
    job = _Job(0, cfg, tmp_path)
    deadline = time.monotonic() + 300
    while not job.ready and time.monotonic() < deadline:
        answers = job.replies()
        assert answers is not None, (tmp_path / "job0.log").read_text()[-2000:]
        job.ready = any("ready" in a for a in answers)
    assert job.ready, (tmp_path / "job0.log").read_text()[-2000:]
    return job


def _task(tmp_path: Path, key: str) -> dict:
    upload = tmp_path / "class" / key
    upload.mkdir(parents=True)
    (upload / f"{VEHICLE}.py").write_text((REFERENCE / f"{VEHICLE}.py").read_text())
    return {"key": key, "students": [], "path": str(upload), "out": str(tmp_path / "out" / key),
            "pass": {"gpu": "skip", "only": [VEHICLE]}, "upload": fingerprint(upload)}


def test_a_job_leaves_nothing_behind_however_it_stops(tmp_path):
    """Stopped when idle (its clean-up may meet a SIGTERM), and SIGKILLed in the middle of a
    student: its private folder (the student's modules, worker logs) is gone either way (a
    clean-up that a SIGTERM cuts short, or a SIGKILL skips, would leave it in $TMP)."""
    job = _job(tmp_path)
    job.send(_task(tmp_path, "first"))
    deadline = time.monotonic() + 300
    while job.task is not None and time.monotonic() < deadline:
        answers = job.replies()
        assert answers is not None, (tmp_path / "job0.log").read_text()[-2000:]
        if any("status" in a for a in answers):
            job.task = None
    assert job.task is None and job.private.is_dir()
    job.stop()
    assert not job.private.exists() and job.proc.returncode is not None

    job = _job(tmp_path)
    job.send(_task(tmp_path, "second"))
    time.sleep(3)  # inside the student's grading: its worker has the modules
    job.stop(signal.SIGKILL, wait=5)
    assert not job.private.exists()


# -- Landlock: a checkout inside a readable prefix -------------------------------------------
def test_carve_keeps_everything_but_the_secret(tmp_path):
    prefix = tmp_path / "venv"
    for rel in ("lib/site.py", "src/grader/reference/intensity.py", "src/other/x.py", "bin/python"):
        (prefix / rel).parent.mkdir(parents=True, exist_ok=True)
        (prefix / rel).write_text("x")
    (prefix / "lib" / "to-checkout").symlink_to(prefix / "src" / "grader")
    (prefix / "lib" / "to-src").symlink_to(prefix / "src")
    secret = str(prefix / "src" / "grader")
    rules = carve([str(prefix), "/usr"], [secret])
    assert "/usr" in rules and str(prefix) not in rules
    # lib keeps its rule: Landlock judges a file where it really lies, so a symlink beneath an
    # allowed folder reaches nothing (the next test asks the kernel)
    assert {str(prefix / p) for p in ("bin", "lib", "src/other")} == set(rules) - {"/usr"}
    assert carve([str(prefix / "lib" / "to-src")], [secret]) == [str(prefix / "src" / "other")]
    assert carve([str(prefix / "lib" / "to-checkout")], [secret]) == []
    assert carve(["/usr"], [secret]) == ["/usr"]


@pytest.mark.skipif(landlock.abi() < 1, reason="needs Landlock (Linux >= 5.13)")
def test_a_carved_allow_list_denies_the_checkout_for_real(tmp_path):
    """The kernel's answer, in a child that restricts itself to the carved rules: the prefix is
    readable, the checkout inside it is not, nor through a symlink (namespaces mask it;
    landlock must carve it out too, or its line "reads only Python" lies)."""
    prefix = tmp_path / "venv"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "site.py").write_text("site")
    (prefix / "src" / "grader" / "reference").mkdir(parents=True)
    (prefix / "src" / "grader" / "reference" / "intensity.py").write_text("the reference")
    (prefix / "src" / "README").write_text("beside")
    (prefix / "lib" / "link").symlink_to(prefix / "src" / "grader")
    rules = carve([str(prefix)] + [p for p in ("/usr", "/lib", "/lib64", "/etc") if os.path.exists(p)],
                  [str(prefix / "src" / "grader")])
    child = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(Path(landlock.__file__).parent)!r})
        import landlock
        landlock.restrict(json.loads(sys.argv[1]), [], [])
        def reads(path):
            try:
                open(path).read()
                return True
            except OSError:
                return False
        print(json.dumps([reads(p) for p in sys.argv[2:]]))
    """)
    paths = [prefix / "lib" / "site.py", prefix / "src" / "README",
             prefix / "src" / "grader" / "reference" / "intensity.py", prefix / "lib" / "link" / "reference" / "intensity.py"]
    proc = subprocess.run([sys.executable, "-I", "-c", child, json.dumps(rules), *map(str, paths)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [True, True, False, False]


def test_the_grader_carves_a_folder_it_hides_out_of_the_pythons_tree(tmp_path):
    """End to end, in landlock mode: a hidden folder lying inside the Python tree the worker
    reads (as a checkout inside a venv prefix does) cannot be read from the submission."""
    from grader.sandbox.isolation import Isolation, IsolationUnavailable
    from grader.sandbox.limits import Limits
    from grader.sandbox.sandbox import Sandbox
    try:
        isolation = Isolation.detect("landlock")
    except IsolationUnavailable as e:
        pytest.skip(f"landlock mode is not available here: {e}")
    box = Sandbox(tmp_path / "none", Limits(time_per_test=30), isolation=isolation)
    tree = Path(box.zygote.python[1][0])  # the first folder of Python the worker reads
    secret = tree / f".grader-test-secret-{os.getpid()}"
    secret.mkdir()
    try:
        (secret / "reference.py").write_text("THE_REFERENCE = 1\n")
        sub = tmp_path / "sub"
        sub.mkdir()
        (sub / f"{VEHICLE}.py").write_text(STUB_FUNCS + textwrap.dedent(f"""
            def ridge_point(p, b):
                try:
                    return open({str(secret / "reference.py")!r}).read()
                except OSError as e:
                    return f"denied: {{e.errno}}"
            """))
        box.close()
        box = Sandbox(sub, Limits(time_per_test=30), isolation=isolation, hide=(secret,))
        assert box.call(f"{VEHICLE}.ridge_point", 1.0, 1.0).startswith("denied")
        assert "reads only Python" in box.describe()
    finally:
        box.close()
        for f in secret.iterdir():
            f.unlink()
        secret.rmdir()
