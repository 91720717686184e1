"""`python -m grader batch` and `merge` end to end, on a small class graded on one cheap problem
(intensity): batch scores equal `grade` scores, statuses, the raw record, shards that merge
into the unsharded gradebook byte for byte, a CPU + GPU pass that merge into one full grade,
reruns that skip what is done, and batches that are interrupted or lose a grader process."""

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from grader.grade import grade
from grader.gradebook import read_json
from grader.paths import REFERENCE, ROOT
from grader.report import validate
from tests.self.bugs import all_bugs

PROBLEM = "intensity"
METADATA = """\
submission_1001:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1815'
    :email: ada@example.edu
  - :name: Charles Babbage
    :sid: '1791'
    :email: charles@example.edu
  :created_at: 2024-02-01 23:59:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.0
  :status: processed
submission_1002:
  :submitters:
  - :name: Grace Hopper
    :sid: '1906'
    :email: grace@example.edu
submission_1003:
  :submitters:
  - :name: Alan Turing
    :sid: '1912'
    :email: alan@example.edu
submission_1004:
  :submitters:
  - :name: Emmy Noether
    :sid: '1882'
    :email:
submission_1005:
  :submitters:
  - :name: Kurt Goedel
    :sid: '1906b'
    :email: kurt@example.edu
submission_1006:
  :submitters:
  - :name: John von Neumann
    :sid: '1903'
    :email: johnny@example.edu
"""
EXPECTED_STATUS = {"submission_1001": "graded", "submission_1002": "graded", "submission_1003": "empty",
                   "submission_1004": "ambiguous", "submission_1005": "graded", "submission_1006": "not found"}


def clean_env() -> dict:
    """No shard index from the environment (these tests may run inside a Slurm job)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("SLURM_ARRAY") and k != "JOB_COMPLETION_INDEX"}


def run(*args, timeout=900, check=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "grader", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, env=clean_env())
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def batch_cli(submissions, out, *extra, check=0):
    return run("batch", submissions, "--out", out, "--only", PROBLEM, "--gpu", "skip", *extra, check=check)


def gradebook(out: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))


def intensity_bug():
    return next(b for b in all_bugs() if b.problem == PROBLEM)


def make_export(root: Path) -> Path:
    """Gradescope's export: a correct group upload, a planted bug (nested), an empty
    upload, two copies in one upload, a syntax error, and a student whose folder is missing."""
    export = root / "assignment_42_export"
    export.mkdir(parents=True)
    (export / "submission_metadata.yml").write_text(METADATA)
    shutil.copytree(REFERENCE, export / "submission_1001")
    intensity_bug().build(export / "submission_1002" / "hw2")
    (export / "submission_1003").mkdir()
    (export / "submission_1003" / "answers.txt").write_text("I ran out of time\n")
    for copy in ("old", "new"):
        shutil.copytree(REFERENCE, export / "submission_1004" / copy)
    (export / "submission_1005").mkdir()
    (export / "submission_1005" / f"{PROBLEM}.py").write_text("def matmul_intensity(b, d, f, n):\n    return (\n")
    return root


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One unsharded batch over the export (two jobs)."""
    root = make_export(tmp_path_factory.mktemp("class"))
    out = root / "out"
    proc = batch_cli(root, out, "--jobs", "2")
    return root, out, proc


def test_statuses_and_gradebook(graded):
    root, out, proc = graded
    rows = gradebook(out)
    assert list(rows[0]) == ["student_id", "name", "email", "total", PROBLEM, "status", "submission"]
    by_sid = {r["student_id"]: r for r in rows}
    assert set(by_sid) == {"1815", "1791", "1906", "1912", "1882", "1906b", "1903"}  # a row per submitter
    assert {r["submission"]: r["status"] for r in rows} == EXPECTED_STATUS
    assert by_sid["1815"]["name"] == "Ada Lovelace" and by_sid["1815"]["email"] == "ada@example.edu"
    assert by_sid["1815"]["total"] == by_sid["1791"]["total"]           # a group shares its grade
    for row in rows:
        results = read_json(out / "students" / row["submission"] / "results.json")
        validate(results)
        assert float(row["total"]) == results["score"] == float(row[PROBLEM])
    full = sum(t["max_score"] for t in read_json(out / "students" / "submission_1001" / "results.json")["tests"])
    assert float(by_sid["1815"]["total"]) == full > 0
    assert 0 < float(by_sid["1906"]["total"]) < full                    # the planted bug costs points
    for sid in ("1912", "1882", "1906b", "1903"):
        assert float(by_sid[sid]["total"]) == 0
    ambiguous = read_json(out / "students" / "submission_1004" / "results.json")["output"]
    assert "old/" in ambiguous and "new/" in ambiguous and "Graded as neither" in ambiguous
    assert "1 level(s) down" in read_json(out / "students" / "submission_1002" / "results.json")["output"]
    assert "not found" in read_json(out / "students" / "submission_1006" / "results.json")["output"]
    assert "6 to grade" in proc.stderr and "student" in proc.stderr   # the progress bar's unit


def test_raw_pytest_record_beside_results(graded):
    _, out, _ = graded
    record = read_json(out / "students" / "submission_1002" / f"pytest-gpu-skip-{PROBLEM}.json")
    results = read_json(out / "students" / "submission_1002" / "results.json")
    assert len(record["tests"]) == len(results["tests"])
    outcomes = {t["outcome"] for t in record["tests"]}
    assert outcomes == {"passed", "failed"}
    assert all(t["call"]["duration"] >= 0 for t in record["tests"] if "call" in t)
    assert sum(t["status"] == "failed" for t in results["tests"]) == \
        sum(t["outcome"] == "failed" for t in record["tests"])


def test_batch_scores_equal_grade_scores(graded, tmp_path):
    root, out, _ = graded
    export = root / "assignment_42_export"
    for key in ("submission_1001", "submission_1002", "submission_1005"):
        solo = tmp_path / key / "results.json"
        assert grade(export / key, solo, gpu="skip", quiet=True, problems=[PROBLEM]) == 0
        want, got = read_json(solo), read_json(out / "students" / key / "results.json")
        assert got["score"] == want["score"], key
        strip = lambda r: [(t["number"], t["name"], t["status"], t["score"], t["output"]) for t in r["tests"]]
        assert strip(got) == strip(want), key


def test_rerun_skips_what_is_done(graded):
    root, out, _ = graded
    before = {p: p.stat().st_mtime_ns for p in out.glob("students/*/results.json")}
    proc = batch_cli(root, out)
    assert "0 to grade" in proc.stderr and "6 already graded" in proc.stderr
    assert {p: p.stat().st_mtime_ns for p in out.glob("students/*/results.json")} == before


def test_shards_merge_into_the_unsharded_gradebook_byte_for_byte(graded, tmp_path):
    root, out, _ = graded
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, shard_out in enumerate(shards):
        batch_cli(root, shard_out, "--shard", f"{i}/2")
    keys = [{d.name for d in (s / "students").iterdir() if (d / "student.json").exists()} for s in shards]
    assert set().union(*keys) == set(EXPECTED_STATUS)
    assert sum(map(len, keys)) == len(EXPECTED_STATUS)                     # disjoint
    merged = tmp_path / "merged"
    run("merge", *shards, "--out", merged, check=0)
    assert (merged / "gradebook.csv").read_bytes() == (out / "gradebook.csv").read_bytes()


def test_merge_conflicts_are_errors(graded, tmp_path):
    _, out, _ = graded
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    proc = run("merge", out, twin, "--out", tmp_path / "m1", check=2)     # same pass, same students
    assert "shards of one pass must not share students" in proc.stderr and "submission_1001" in proc.stderr
    gpu = tmp_path / "gpu"                                                 # "another pass", same tests
    shutil.copytree(out, gpu)
    (gpu / "batch.json").write_text(json.dumps({"passes": [{"gpu": "only", "only": [PROBLEM]}]}))
    proc = run("merge", out, gpu, "--out", tmp_path / "m2", check=2)
    assert "is in two passes" in proc.stderr
    shutil.rmtree(gpu / "students" / "submission_1003")                                 # passes over different students
    proc = run("merge", out, gpu, "--out", tmp_path / "m3", check=2)
    assert "cover different students" in proc.stderr and "submission_1003" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    for m in ("m1", "m2", "m3"):
        assert not (tmp_path / m / "gradebook.csv").exists()


def test_cpu_pass_and_gpu_pass_merge_into_one_full_grade(tmp_path):
    """--gpu skip + --gpu only, merged == one --gpu auto grade (on CPU the GPU tests are 'not
    run' in both, with the same text; on a CUDA machine they run in both)."""
    problem = "optim"  # has GPU-marked tests
    klass = tmp_path / "class"
    shutil.copytree(REFERENCE, klass / "ada")
    cpu, gpu_out, merged = tmp_path / "cpu", tmp_path / "gpu", tmp_path / "merged"
    run("batch", klass, "--out", cpu, "--only", problem, "--gpu", "skip", check=0)
    run("batch", klass, "--out", gpu_out, "--only", problem, "--gpu", "only", check=0)
    run("merge", cpu, gpu_out, "--out", merged, check=0)
    full = tmp_path / "full.json"
    assert grade(klass / "ada", full, gpu="auto", quiet=True, problems=[problem]) == 0
    want, got = read_json(full), read_json(merged / "students" / "ada" / "results.json")
    validate(got)
    cpu_tests = read_json(cpu / "students" / "ada" / "results.json")["tests"]
    gpu_tests = read_json(gpu_out / "students" / "ada" / "results.json")["tests"]
    assert cpu_tests and gpu_tests and not {t["number"] for t in cpu_tests} & {t["number"] for t in gpu_tests}
    assert got["tests"] == want["tests"] and got["score"] == want["score"]
    assert got["output"].splitlines()[0] == want["output"].splitlines()[0]  # one score line, one code
    assert set(read_json(merged / "students" / "ada" / "student.json")["passes"][i]["gpu"] for i in (0, 1)) == {"skip", "only"}
    assert sorted(p.name for p in (merged / "students" / "ada").glob("pytest-*.json")) == \
        [f"pytest-gpu-only-{problem}.json", f"pytest-gpu-skip-{problem}.json"]


def small_class(root: Path, n: int) -> Path:
    """n correct uploads: folders, the last one a zip."""
    for i in range(n - 1):
        shutil.copytree(REFERENCE, root / f"s{i}", ignore=shutil.ignore_patterns("__pycache__"))
    with zipfile.ZipFile(root / f"s{n - 1}.zip", "w") as zf:
        for f in REFERENCE.glob("*.py"):
            zf.write(f, f.name)
    return root


def wait_for(predicate, timeout=300.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_interrupted_batch_keeps_what_was_written_and_resumes(tmp_path):
    klass, out = small_class(tmp_path / "class", 3), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--only", PROBLEM,
                             "--gpu", "skip"], cwd=ROOT, stderr=subprocess.PIPE, text=True, env=clean_env())
    assert wait_for(lambda: any(out.glob("students/*/student.json"))), "nothing was graded"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]
    assert "interrupted" in err
    done = {r["submission"]: r for r in gradebook(out)}
    assert 1 <= len(done) < 3 and all(r["status"] == "graded" for r in done.values())
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".") and p.is_file() and p.parent != out / ".logs"]
    assert not leftovers, leftovers                                        # no half-written files
    mtimes = {k: (out / "students" / k / "results.json").stat().st_mtime_ns for k in done}
    again = batch_cli(klass, out)
    assert f"{len(done)} already graded" in again.stderr and f"{3 - len(done)} to grade" in again.stderr
    assert {r["submission"] for r in gradebook(out)} == {"s0", "s1", "s2"}
    assert {k: (out / "students" / k / "results.json").stat().st_mtime_ns for k in done} == mtimes


def test_a_dead_grader_process_costs_one_student_and_the_batch_goes_on(tmp_path):
    klass, out = small_class(tmp_path / "class", 3), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", klass, "--out", out, "--only", PROBLEM,
                             "--gpu", "skip"], cwd=ROOT, stderr=subprocess.PIPE, text=True, env=clean_env())
    assert wait_for(lambda: any(out.glob("students/*/student.json")))
    jobs = [c for c in children(proc.pid) if "_batch_job" in Path(f"/proc/{c}/cmdline").read_text()]
    assert len(jobs) == 1
    os.kill(jobs[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err[-2000:]                               # 1: someone crashed
    statuses = [r["status"] for r in gradebook(out)]
    assert sorted(statuses) == ["crashed", "graded", "graded"], statuses
    crashed = next(r for r in gradebook(out) if r["status"] == "crashed")
    assert crashed["total"] == "" and "died" in read_json(out / "students" / crashed["submission"] / "student.json")["error"]
    again = batch_cli(klass, out)                                          # a rerun retries it
    assert "1 to grade" in again.stderr
    assert [r["status"] for r in gradebook(out)] == ["graded"] * 3


@pytest.mark.parametrize("args, message", [
    (["batch", "/no/such/class", "--out", "{tmp}/o"], "no such folder"),
    (["batch", "{class}", "--out", "{tmp}/o", "--shard", "3/3"], "not in 0..2"),
    (["batch", "{class}", "--out", "{tmp}/o", "--shard", "x"], "expected I/N"),
    (["batch", "{class}", "--out", "{tmp}/o", "--shard", "0/2", "--shard-count", "3"], "disagree"),
    (["batch", "{class}", "--out", "{tmp}/o", "--only", "nope"], "unknown problem"),
    (["batch", "{bad}", "--out", "{tmp}/o"], "not valid YAML"),
    (["merge", "{class}", "--out", "{tmp}/o"], "not a batch output"),
    (["grade", "/no/such/upload.zip", "--out", "{tmp}/o/results.json"], "no such file or folder"),
])
def test_the_tas_mistakes_exit_2_with_one_line(tmp_path, args, message):
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "submission_metadata.yml").write_text("submission_1: [unclosed\n")
    fill = lambda a: a.format(tmp=tmp_path, **{"class": tmp_path / "class", "bad": tmp_path / "bad"})
    proc = run(*map(fill, args), check=2)
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o").exists()
