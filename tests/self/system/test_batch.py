"""`python -m grader batch` and `merge` end to end, on a small class graded on one cheap problem
(intensity): batch scores equal `grade` scores, statuses, the raw record, shards that merge
into the unsharded gradebook byte for byte, a CPU + GPU pass that merge into one full grade,
reruns that skip what is done, and batches that are interrupted or lose a grader process."""

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from grader import gpu as gpu_info
from grader.grade import grade
from grader.batch.output import POINTS_POSSIBLE, read_json, student_rows
from grader.paths import REFERENCE, ROOT
from grader.provenance import stamp
from grader.batch.roster import fingerprint
from grader.report import not_run, render_table, validate
from tests.self.bugs import all_bugs
from tests.self.shared import clean_env
from tests.self.shared import cli as run

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


def batch_cli(submissions, out, *extra, check=0):
    return run("batch", submissions, "--out", out, "--only", PROBLEM, "--gpu", "skip", *extra, check=check)


def gradebook(out: Path) -> list[dict]:
    return student_rows((out / "gradebook.csv").read_text())


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
    assert list(rows[0]) == ["student_id", "name", "email", "total", PROBLEM, "not_run", "to_come", "status",
                             "submission", "tests"]
    possible = next(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))
    full = sum(t["max_score"] for t in read_json(out / "students" / "submission_1001" / "results.json")["tests"])
    assert possible["name"] == POINTS_POSSIBLE and float(possible["total"]) == float(possible[PROBLEM]) == full
    assert possible["not_run"] == "0" and {r["not_run"] for r in rows if r["status"] != "crashed"} == {"0"}
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
    assert "6 to grade" in proc.stderr
    # no terminal here (a pipe): the interval declared once, and the last progress line
    assert "progress: a line every 30 s and one at the end (6 upload(s), 2 job(s))" in proc.stderr
    assert re.search(r"^graded 6/6; \d+:\d\d elapsed$", proc.stderr, re.M), proc.stderr


def test_the_class_report_and_the_graded_code_are_written(graded):
    """batch ends with the class report; each graded student's modules are kept for it."""
    root, out, proc = graded
    report = read_json(out / "report.json")
    assert "class report:" in proc.stderr and (out / "report.html").is_file()
    assert report["statuses"]["empty"] == ["submission_1003"] and report["graded"] >= 3
    kept = out / "students" / "submission_1001" / "code" / f"{PROBLEM}.py"
    assert kept.read_text() == (REFERENCE / f"{PROBLEM}.py").read_text()
    assert not (out / "students" / "submission_1003" / "code").exists()


def test_repeat_grades_each_upload_again_and_a_steady_one_is_not_flaky(tmp_path):
    """`--repeat 2`: the second grading goes to OUT_DIR/repeats/2/ (the gradebook ignores it);
    the reference and a planted bug grade the same both times, so no test is called flaky."""
    shutil.copytree(REFERENCE, tmp_path / "class" / "alice")
    intensity_bug().build(tmp_path / "class" / "bob")
    out = tmp_path / "out"
    batch_cli(tmp_path / "class", out, "--repeat", "2", "--jobs", "2", check=0)
    for key in ("alice", "bob"):
        first = read_json(out / "students" / key / "results.json")
        second = read_json(out / "repeats" / "2" / key / "results.json")
        assert [t["status"] for t in first["tests"]] == [t["status"] for t in second["tests"]]
    assert len(gradebook(out)) == 2
    assert read_json(out / "report.json")["flaky"] == []


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


@pytest.fixture(scope="module")
def sharded(graded, tmp_path_factory):
    """The same class in three shards (--shard I/3); the middle one from the export's .zip as
    Gradescope downloads it (not unzipped), which must grade as the folder does."""
    root, _, _ = graded
    shards = [tmp_path_factory.mktemp(f"shard{i}") / "out" for i in range(3)]
    download = tmp_path_factory.mktemp("download") / "submissions.zip"
    with zipfile.ZipFile(download, "w") as zf:
        for f in sorted((root / "assignment_42_export").rglob("*")):
            zf.write(f, f.relative_to(root).as_posix())
    for i, shard_out in enumerate(shards):
        proc = batch_cli(download if i == 1 else root, shard_out, "--shard", f"{i}/3")
        if i == 1:
            assert f"note: {download.name} unpacked into" in proc.stderr
            unpacked = proc.stderr.split("unpacked into ", 1)[1].split(" ")[0]
            assert not Path(unpacked).exists()                  # removed at the run's end
    return shards


def test_shards_merge_into_the_unsharded_gradebook_byte_for_byte(graded, sharded, tmp_path):
    root, out, _ = graded
    shards = sharded
    assert [read_json(s / "batch.json")["shard"] for s in shards] == [[0, 3], [1, 3], [2, 3]]
    keys = [{d.name for d in (s / "students").iterdir() if (d / "student.json").exists()} for s in shards]
    assert set().union(*keys) == set(EXPECTED_STATUS)
    assert sum(map(len, keys)) == len(EXPECTED_STATUS)                     # disjoint
    merged = tmp_path / "merged"
    proc = run("merge", *shards, "--out", merged, check=0)
    assert (merged / "gradebook.csv").read_bytes() == (out / "gradebook.csv").read_bytes()
    # the class report of the merge is the unsharded batch's: the same figures, the code kept
    assert "class report:" in proc.stderr and "report failed" not in proc.stderr
    whole, joined = read_json(out / "report.json"), read_json(merged / "report.json")
    assert (joined["total"], joined["items"], joined["statuses"]) == (whole["total"], whole["items"], whole["statuses"])
    assert (merged / "students" / "submission_1001" / "code" / f"{PROBLEM}.py").read_text() == \
        (out / "students" / "submission_1001" / "code" / f"{PROBLEM}.py").read_text()
    # one shard stamped before stamps held a verdicts hash is the same grader; other tests are not
    copies = [tmp_path / f"copy{i}" for i in range(3)]
    for shard, copy in zip(shards, copies):
        shutil.copytree(shard, copy)
    held = read_json(copies[0] / "batch.json")
    for grader, code in (({k: held["grader"][k] for k in ("version", "tests")}, 0), ({**held["grader"], "tests": "0" * 16}, 2)):
        (copies[0] / "batch.json").write_text(json.dumps({**held, "grader": grader}))
        proc = run("merge", *copies, "--out", tmp_path / f"merged{code}", check=code)
        assert code == 0 or "the inputs were graded by different graders or tests" in proc.stderr, proc.stderr


def test_merge_conflicts_are_errors(graded, tmp_path):
    _, out, _ = graded
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    proc = run("merge", out, twin, "--out", tmp_path / "m1", check=2)     # same pass, same students
    assert "shards of one pass must not share students" in proc.stderr and "submission_1001" in proc.stderr
    gpu = tmp_path / "gpu"                                                 # "another pass", same tests
    shutil.copytree(out, gpu)
    (gpu / "batch.json").write_text(json.dumps({**read_json(gpu / "batch.json"),
                                                "passes": [{"gpu": "only", "only": [PROBLEM]}]}))
    proc = run("merge", out, gpu, "--out", tmp_path / "m2", check=2)
    assert "is in two passes" in proc.stderr
    shutil.rmtree(gpu / "students" / "submission_1003")                                 # passes over different students
    proc = run("merge", out, gpu, "--out", tmp_path / "m3", check=2)
    assert "cover different students" in proc.stderr and "submission_1003" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    for m in ("m1", "m2", "m3"):
        assert not (tmp_path / m / "gradebook.csv").exists()


def test_cpu_pass_and_gpu_pass_merge_into_one_full_grade(tmp_path, monkeypatch):
    """--gpu skip + --gpu only, merged == one --gpu auto grade on the same GPU. The GPU pass runs
    on the fake CUDA device (gpu.FAKE): its GPU tests run, and fail for want of CUDA, alike in
    both; without any CUDA `--gpu only` is refused (test_gpu_pass_refusals)."""
    problem = "optim"  # has GPU-marked tests
    klass = tmp_path / "class"
    shutil.copytree(REFERENCE, klass / "ada")
    cpu, gpu_out, merged = tmp_path / "cpu", tmp_path / "gpu", tmp_path / "merged"
    fake = {gpu_info.FAKE: "NVIDIA H100 80GB HBM3"}
    run("batch", klass, "--out", cpu, "--only", problem, "--gpu", "skip", check=0)
    run("batch", klass, "--out", gpu_out, "--only", problem, "--gpu", "only", check=0, env=fake)
    run("merge", cpu, gpu_out, "--out", merged, check=0)
    full = tmp_path / "full.json"
    monkeypatch.setenv(gpu_info.FAKE, fake[gpu_info.FAKE])
    assert grade(klass / "ada", full, gpu="auto", quiet=True, problems=[problem]) == 0
    want, got = read_json(full), read_json(merged / "students" / "ada" / "results.json")
    validate(got)
    cpu_results = read_json(cpu / "students" / "ada" / "results.json")
    cpu_tests = cpu_results["tests"]
    gpu_tests = read_json(gpu_out / "students" / "ada" / "results.json")["tests"]
    # the CPU pass alone says what is to come: in its report, its gradebook and its export
    gpu_points = sum(t["max_score"] for t in gpu_tests)
    assert cpu_results["extra_data"]["to_come"] == {"tests": {t["number"]: t["max_score"] for t in gpu_tests},
                                                    "points": gpu_points} and gpu_points > 0
    assert f"to come: {gpu_points:g} points in {len(gpu_tests)} GPU tests" in cpu_results["output"]
    [possible, row] = list(csv.DictReader(io.StringIO((cpu / "gradebook.csv").read_text())))
    assert float(possible["to_come"]) == float(row["to_come"]) == gpu_points
    exported = run("export", cpu, "--format", "canvas", "--out", tmp_path / "canvas.csv", check=0)
    assert f"{gpu_points:g} GPU points per student are still to come" in exported.stderr
    [_, merged_row] = list(csv.DictReader(io.StringIO((merged / "gradebook.csv").read_text())))
    assert merged_row["to_come"] == "0"
    assert cpu_tests and gpu_tests and not {t["number"] for t in cpu_tests} & {t["number"] for t in gpu_tests}
    assert any(t["status"] == "failed" and not not_run(t) for t in gpu_tests)  # they ran
    assert got["tests"] == want["tests"] and got["score"] == want["score"]
    assert got["output"].splitlines()[0] == want["output"].splitlines()[0]  # one score line, one code
    assert not got["output"].splitlines()[0].endswith(")")                   # nothing "not run" left
    assert got["extra_data"]["grader"] == want["extra_data"]["grader"] == stamp()
    assert set(got["extra_data"]) == set(want["extra_data"]) == {"grader", "notes", "files"}   # no rule broken
    assert got["extra_data"]["notes"][-1] == "joined from the passes: gpu-only-optim, gpu-skip-optim"
    report = (merged / "students" / "ada" / "report.txt").read_text()
    assert report == render_table(got) + "\n" and report.rstrip().endswith(got["output"].splitlines()[0])
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
    assert "interrupted (SIGTERM)" in err
    rows = {r["submission"]: r for r in gradebook(out)}   # the one in flight: interrupted, never crashed
    done = {k: r for k, r in rows.items() if r["status"] == "graded"}
    assert 1 <= len(done) < 3 and all(r["status"] in ("graded", "interrupted") for r in rows.values()), rows
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
    jobs = [c for c in children(proc.pid) if "grader.batch.job" in Path(f"/proc/{c}/cmdline").read_text()]
    assert len(jobs) == 1
    os.kill(jobs[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err[-2000:]                               # 1: someone crashed
    statuses = [r["status"] for r in gradebook(out)]
    assert sorted(statuses) == ["crashed", "graded", "graded"], statuses
    crashed = next(r for r in gradebook(out) if r["status"] == "crashed")
    error = read_json(out / "students" / crashed["submission"] / "student.json")["error"]
    assert crashed["total"] == "" and error.startswith("the grader process died (exit -9); its last output and its "
                                                       f"sandbox's: {out / '.logs' / 'job0.log'}"), error
    said = (out / ".logs" / "job0.log").read_text()   # the log it names ends with what its sandbox said last
    assert f"--- the grader process died (exit -9) while grading {crashed['submission']} ---" in said, said[-2000:]
    again = batch_cli(klass, out)                                          # a rerun retries it
    assert "1 to grade (regrading 1 crashed)" in again.stderr and f"regrading (crashed): {crashed['submission']}" \
        in again.stderr, again.stderr
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
    # the GPU pass where there is no GPU: refused before anything (it graded everyone 0/0)
    (["batch", "{class}", "--out", "{tmp}/o", "--gpu", "only"], "--gpu only, but CUDA is not available"),
    (["batch", "{class}", "--out", "{tmp}/o", "--gpu", "require"], "--gpu require, but CUDA is not available"),
    (["grade", "{class}/ada", "--out", "{tmp}/o/results.json", "--gpu", "only"], "it would grade nothing"),
    # a bad --out, before any grading (not a traceback after all of it)
    (["grade", "{class}/ada", "--out", "{class}"], "is a folder; give the results.json file"),
    (["grade", "{class}/ada", "--out", "{file}/o/results.json"], "is a file, not a folder"),
    (["grade", "{class}/ada", "--out", "/proc/o/results.json"], "cannot write in /proc"),
    (["batch", "{class}", "--out", "{file}"], "is a file; give a folder"),
    (["batch", "{class}", "--out", "{class}"], "is not empty and is no batch output"),
    (["merge", "{class}", "--out", "{file}"], "is a file; give a folder"),
])
def test_the_tas_mistakes_exit_2_with_one_line(tmp_path, args, message):
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "submission_metadata.yml").write_text("submission_1: [unclosed\n")
    (tmp_path / "file").write_text("not a folder\n")
    fill = lambda a: a.format(tmp=tmp_path, file=tmp_path / "file",
                              **{"class": tmp_path / "class", "bad": tmp_path / "bad"})
    proc = run(*map(fill, args), check=2)
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad", "class", "file"]
    assert sorted(p.name for p in (tmp_path / "class").iterdir()) == ["ada"]


def test_rerun_after_changing_options_is_refused_and_leaves_the_output(graded, tmp_path):
    root, out, _ = graded
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    for extra, message in ((["--gpu", "auto"], "holds a batch with other options"),
                           (["--gpu", "skip", "--shard", "0/2"], "holds the whole class, not shard 0/2")):
        proc = run("batch", root, "--out", out, "--only", PROBLEM, *extra, check=2)
        assert message in proc.stderr, proc.stderr
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def re_export(metadata: str) -> str:
    """The export a week on: Grace's first submission dated, her resubmission (submission_1007,
    later) added, John von Neumann's entry (the last) gone."""
    grace = "    :email: grace@example.edu\n"
    text = metadata[:metadata.index("submission_1006:")]
    text = text.replace(grace, grace + "  :created_at: 2024-02-01 09:00:00.000000000 -08:00\n", 1)
    return text + ("submission_1007:\n  :submitters:\n  - :name: Grace Hopper\n    :sid: '1906'\n"
                   "    :email: grace@example.edu\n  :created_at: 2024-02-03 10:00:00.000000000 -08:00\n")


def test_a_re_export_one_row_per_student_dropped_listed_changes_regraded(graded, tmp_path):
    """The export again, a week on: Grace resubmitted (a new submission_1007, later), John von
    Neumann dropped (gone from the export), Kurt fixed his file under the same name, and
    submission_1001 was graded by another version of the tests. One row per student, the
    latest submission's; the dropped one listed, not counted; exactly the three changed
    uploads regraded, each reason said."""
    root, first, _ = graded
    out = tmp_path / "out"
    shutil.copytree(first, out)
    export = tmp_path / "class" / "assignment_42_export"
    shutil.copytree(root / "assignment_42_export", export)
    (export / "submission_metadata.yml").write_text(re_export(METADATA))
    shutil.copytree(REFERENCE, export / "submission_1007")
    shutil.copyfile(REFERENCE / f"{PROBLEM}.py", export / "submission_1005" / f"{PROBLEM}.py")
    record = read_json(out / "students" / "submission_1001" / "student.json")
    (out / "students" / "submission_1001" / "student.json").write_text(
        json.dumps({**record, "grader": {"version": "0.0.9", "tests": "0" * 16}}))
    proc = batch_cli(tmp_path / "class", out)
    assert "5 upload(s); 2 already graded" in proc.stderr and "3 to grade" in proc.stderr, proc.stderr
    assert "(regrading 1 other grader or tests, 1 changed upload)" in proc.stderr, proc.stderr
    assert "submission_1002: superseded by submission_1007" in proc.stderr
    assert "submission_1006: not in this export" in proc.stderr
    rows = gradebook(out)
    assert [r["submission"] for r in rows if r["student_id"] == "1906"] == ["submission_1007"]
    assert not [r for r in rows if r["student_id"] == "1903"]                     # dropped: not counted
    assert len(rows) == len({r["student_id"] for r in rows}) == 6
    full = read_json(out / "students" / "submission_1001" / "results.json")["score"]
    assert float(next(r for r in rows if r["student_id"] == "1906")["total"]) == full
    assert float(next(r for r in rows if r["student_id"] == "1906b")["total"]) == full
    held = read_json(out / "batch.json")
    assert set(held["not_counted"]) == {"submission_1002", "submission_1006"}
    assert (out / "students" / "submission_1006" / "results.json").exists()      # kept, not counted
    assert read_json(out / "students" / "submission_1001" / "student.json")["grader"] == stamp()
    # the class report lists what the regrade changed: Kurt's fixed file, not the re-stamped 1001
    changed = {r["student"]: r for r in read_json(out / "report.json")["regrades"]}
    assert set(changed) == {"submission_1005"}, changed
    assert changed["submission_1005"]["delta"] > 0 and changed["submission_1005"]["why"] == "changed upload"
    assert changed["submission_1005"]["flipped"] and all(
        f["before"] == "failed" and f["after"] == "passed" for f in changed["submission_1005"]["flipped"])
    again = batch_cli(tmp_path / "class", out)
    assert "0 to grade" in again.stderr and "regrading" not in again.stderr


def test_a_rerun_after_a_re_weighting_rescores_and_grades_no_one(graded, tmp_path):
    """Ada's group and Grace were graded when every test was worth twice what it is now (the
    same verdicts hash, another tests hash): a rerun rescores them from their results.json and
    writes what a fresh grade wrote; Grace, held by another run's job, is left to it, and the next
    rerun rescores her, starting no grader. Kurt's record, stamped before stamps held a verdicts
    hash, is the same grader and stays as it is."""
    root, first, _ = graded
    out = tmp_path / "out"
    shutil.copytree(first, out)
    now = stamp()
    for key in ("submission_1001", "submission_1002"):
        folder = out / "students" / key
        results = read_json(folder / "results.json")
        for t in results["tests"]:
            t["score"], t["max_score"] = 2 * t["score"], 2 * t["max_score"]
        results["score"] = sum(t["score"] for t in results["tests"])
        old = {**now, "tests": "0" * 16}
        results["extra_data"]["grader"] = old
        (folder / "results.json").write_text(json.dumps(results))
        (folder / "student.json").write_text(json.dumps({**read_json(folder / "student.json"), "grader": old}))
    kurt = out / "students" / "submission_1005" / "student.json"
    kurt.write_text(json.dumps({**read_json(kurt), "grader": {"version": now["version"], "tests": now["tests"]}}))
    from grader.batch.job import hold
    busy = hold(out / "students" / "submission_1002")   # as another run's job grading Grace holds her
    try:
        proc = batch_cli(root, out)
    finally:
        busy.close()
    assert "1 rescored (the tests were re-weighted" in proc.stderr and "1 to grade" in proc.stderr, proc.stderr
    assert "rescored (re-weighted tests): submission_1001\n" in proc.stderr
    assert "skipped submission_1002: another run is grading them now" in proc.stderr
    assert read_json(out / "students" / "submission_1002" / "student.json")["grader"]["tests"] == "0" * 16
    proc = batch_cli(root, out)                                         # once the other run is done
    assert "1 rescored (the tests were re-weighted" in proc.stderr and "0 to grade" in proc.stderr, proc.stderr
    assert "rescored (re-weighted tests): submission_1002\n" in proc.stderr
    assert "progress:" not in proc.stderr                               # no grader started
    for key in ("submission_1001", "submission_1002"):
        fresh = read_json(first / "students" / key / "results.json")
        rescored = read_json(out / "students" / key / "results.json")
        assert rescored == fresh, key                                   # what a regrade writes
        assert read_json(out / "students" / key / "student.json")["grader"] == now
        previous = read_json(out / "students" / key / "previous.json")
        assert previous["why"] == "re-weighted tests" and previous["results"]["score"] == 2 * fresh["score"]
    assert "verdicts" not in read_json(kurt)["grader"]
    assert (out / "gradebook.csv").read_bytes() == (first / "gradebook.csv").read_bytes()
    changed = {r["student"]: r["why"] for r in read_json(out / "report.json")["regrades"]}
    moved = {k for k in ("submission_1001", "submission_1002")
             if read_json(first / "students" / k / "results.json")["score"]}
    assert "submission_1001" in moved and changed == dict.fromkeys(moved, "re-weighted tests")


def test_merge_refuses_a_pass_that_ran_nothing_and_an_incomplete_shard_set(graded, sharded, tmp_path):
    root, out, _ = graded
    gpu = tmp_path / "gpu"                       # a "GPU pass" made where there was no GPU
    shutil.copytree(out, gpu)
    held = read_json(gpu / "batch.json")
    (gpu / "batch.json").write_text(json.dumps({**held, "passes": [{"gpu": "only", "only": [PROBLEM]}]}))
    for results in gpu.glob("students/*/results.json"):
        data = read_json(results)
        data["tests"] = [{**t, "number": f"{t['number']}9", "status": "failed", "score": 0,
                          "extra_data": {"outcome": "not_run"}} for t in data["tests"]]
        results.write_text(json.dumps(data))
    proc = run("merge", out, gpu, "--out", tmp_path / "m", check=2)
    assert "the gpu-only-intensity pass ran no test" in proc.stderr, proc.stderr
    shards = sharded
    proc = run("merge", shards[0], shards[2], "--out", tmp_path / "m", check=2)
    assert "incomplete: shard(s) 1/3 missing (have 0/3, 2/3)" in proc.stderr, proc.stderr
    twin = tmp_path / "twin"
    shutil.copytree(shards[0], twin)
    shutil.rmtree(twin / "students")                                     # no shared student, same I/N
    proc = run("merge", *shards, twin, "--out", tmp_path / "m", check=2)
    assert "shard 0/3 of gpu-skip-intensity is given twice" in proc.stderr, proc.stderr
    proc = run("merge", out, twin, "--out", tmp_path / "m", check=2)
    assert "graded the whole class (gpu-skip-intensity) and cannot be merged with shards" in proc.stderr
    later = tmp_path / "later"                                           # shard 1 from a later download
    shutil.copytree(shards[1], later)
    (later / "batch.json").write_text(json.dumps({**read_json(later / "batch.json"), "class": "0" * 16}))
    proc = run("merge", shards[0], later, shards[2], "--out", tmp_path / "m", check=2)
    assert "graded from different downloads of the class" in proc.stderr, proc.stderr
    assert not (tmp_path / "m").exists()
    run("merge", *shards, "--out", tmp_path / "m", check=0)


def test_export_for_gradescope_and_canvas(graded, tmp_path):
    _, out, _ = graded
    rows = gradebook(out)
    run("export", out, "--format", "gradescope", "--out", tmp_path / "gs.csv", check=0)
    gs = list(csv.reader(io.StringIO((tmp_path / "gs.csv").read_text())))
    assert gs[0] == ["Name", "SID", "Email", "Total Score"]
    assert sorted(gs[1:]) == sorted([r["name"], r["student_id"], r["email"], r["total"]] for r in rows)
    run("export", out, "--format", "canvas", "--out", tmp_path / "canvas.csv", "--title", "HW2 (4242)", check=0)
    cv = list(csv.reader(io.StringIO((tmp_path / "canvas.csv").read_text())))
    assert cv[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW2 (4242)"]
    full = sum(t["max_score"] for t in read_json(out / "students" / "submission_1001" / "results.json")["tests"])
    assert cv[1] == ["Points Possible", "", "", "", "", f"{full:g}"]
    assert sorted(cv[2:]) == sorted([r["name"], "", r["student_id"], r["email"], "", r["total"]] for r in rows)


def test_version_and_what_a_ta_reads(graded):
    root, out, proc = graded
    version = run("--version", check=0).stdout
    assert stamp()["version"] in version and stamp()["tests"] in version
    assert read_json(out / "batch.json")["grader"] == stamp()
    for folder in (out / "students").iterdir():
        student = read_json(folder / "student.json")
        assert student["grader"] == stamp()
        assert student["upload"] == ("absent" if folder.name == "submission_1006" else fingerprint(
            root / "assignment_42_export" / folder.name))
        results = read_json(folder / "results.json")
        assert results["extra_data"]["grader"] == stamp()
        assert {"grader", "notes"} <= set(results["extra_data"]) <= {"grader", "notes", "files"}  # files: if any
        assert (folder / "report.txt").read_text() == render_table(results) + "\n"
    summary = proc.stderr[proc.stderr.index("class: "):].splitlines()
    assert summary[0].startswith("class: 6 upload(s) (3 graded, 1 ambiguous, 1 empty, 1 not found); mean ")
    assert summary[1].startswith(f"per problem (mean): {PROBLEM} ")
    assert summary[2].startswith("most failed: 4.") and "of 6)" in summary[2]
