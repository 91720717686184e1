"""What the grader's files are made of: the one atomic writer (grader/files.py), student.json as
a StudentRecord with its Status (grader/batch/output.py), and the one summary builder that
grade, merge and Gradescope share (grader/report.py). Pure and quick: no sandbox, no pytest
run of the graded tests."""

import csv
import dataclasses
import io
import json
import os
import stat
from pathlib import Path

import jsonschema
import pytest

from grader import gradescope, report
from grader.batch import output
from grader.batch.merge import join_results
from grader.batch.output import STATUSES, Status, StudentRecord, done_as, write_json
from grader.files import write_atomically
from grader.paths import ROOT
from grader.plugin import Fact
from grader.report import build_results, notes_of, render_table, summary, summary_lines, write_results
from grader.text import one_line
from seam.problems import HEAD, line

STAMP = {"version": "0.0.0", "tests": "0" * 16}


def leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# -- the atomic writer ------------------------------------------------------------------------
def test_writes_bytes_or_text_whole_world_readable(tmp_path):
    old = os.umask(0o077)  # mkstemp's 0600 and a strict umask: the file is 0644 all the same
    try:
        path = write_atomically(tmp_path / "deep" / "a.json", "ünïcode\n")
        write_atomically(tmp_path / "b.bin", b"\x00\xff")
    finally:
        os.umask(old)
    assert path == tmp_path / "deep" / "a.json" and path.read_bytes() == "ünïcode\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    for p in (path, tmp_path / "b.bin"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644
    write_atomically(path, b"again", mode=0o600)
    assert path.read_bytes() == b"again" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert leftovers(path.parent, {"a.json"}) == []


def test_a_serialisation_error_leaves_the_old_file(tmp_path):
    path = tmp_path / "student.json"
    write_json(path, {"key": "a"})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_json(path, {"key": object()})
    with pytest.raises(TypeError):
        write_atomically(path, {"not": "bytes"})
    assert path.read_bytes() == before and leftovers(tmp_path, {"student.json"}) == []


@pytest.mark.parametrize("where", ["fsync", "replace", "interrupt"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, where):
    path = tmp_path / "results.json"
    write_atomically(path, b"old")

    def broken(*a, **k):
        raise KeyboardInterrupt if where == "interrupt" else OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync" if where != "replace" else "replace", broken)
    with pytest.raises(KeyboardInterrupt if where == "interrupt" else OSError):
        write_atomically(path, b"new, but never whole")
    assert path.read_bytes() == b"old" and leftovers(tmp_path, {"results.json"}) == []


def test_a_folder_in_the_way_leaves_no_temporary(tmp_path):
    """A real failure of the rename (also as root): the target is a folder."""
    (tmp_path / "report.txt" / "x").mkdir(parents=True)
    with pytest.raises(OSError):
        write_atomically(tmp_path / "report.txt", "table\n")
    assert leftovers(tmp_path, {"report.txt"}) == [] and (tmp_path / "report.txt" / "x").is_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_leaves_the_old_file(tmp_path):
    path = tmp_path / "ro" / "gradebook.csv"
    write_atomically(path, b"old")
    path.parent.chmod(0o555)
    try:
        with pytest.raises(PermissionError):
            write_atomically(path, b"new")
        assert path.read_bytes() == b"old" and leftovers(path.parent, {"gradebook.csv"}) == []
    finally:
        path.parent.chmod(0o755)


def test_an_invalid_results_json_is_never_written(tmp_path):
    out = tmp_path / "results.json"
    good = build_results(facts(), 1.0, ["note"])
    write_results(good, out)
    with pytest.raises(jsonschema.ValidationError):
        write_results({**good, "score": -1}, out)
    assert json.loads(out.read_text()) == good and leftovers(tmp_path, {"results.json"}) == []
    assert out.read_text() == json.dumps(good, indent=2) + "\n"  # the bytes results.json always had


def test_one_atomic_writer():
    """No module of the grader makes a temporary file and renames it itself: they all write
    through grader/files.py."""
    bad = [f"{p.relative_to(ROOT)}: {word}" for p in sorted((ROOT / "grader").rglob("*.py"))
           if p != ROOT / "grader" / "files.py" for word in ("mkstemp", "os.replace(")
           if word in p.read_text()]
    assert not bad, bad


# -- student.json -----------------------------------------------------------------------------
def old_write_json(path: Path, data) -> None:
    """How student.json was written before StudentRecord (three writers, by hand)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


WHO = [{"sid": "1001", "name": "Ada Lövelace", "email": "ada@example.edu"}]
PASS = {"gpu": "skip", "only": None}
OLD_RECORDS = {  # what each writer wrote, key for key
    "job, graded": {"key": "ada", "students": WHO, "passes": [PASS], "upload": "f" * 16, "grader": STAMP,
                    "status": "ambiguous"},
    "job, crashed": {"key": "ada", "students": WHO, "passes": [PASS], "upload": "f" * 16, "grader": STAMP,
                     "status": "crashed", "error": "RuntimeError: the test run itself failed"},
    "batch, the job died": {"key": "ada", "students": WHO, "upload": "f" * 16, "passes": [PASS],
                            "status": "crashed", "error": "the grader process died (exit -9)"},
    "merge": {"key": "ada", "students": [], "status": "graded",
              "passes": [PASS, {"gpu": "only", "only": ["optim"]}], "error": "gpu-only: oops"},
}


@pytest.mark.parametrize("writer", sorted(OLD_RECORDS))
def test_a_record_written_by_the_old_code_reads_and_writes_back_the_same_bytes(tmp_path, writer):
    old_write_json(tmp_path / "old" / "student.json", OLD_RECORDS[writer])
    record = StudentRecord.read(tmp_path / "old")
    assert record.as_json() == OLD_RECORDS[writer]
    assert isinstance(record.status, Status) and record.status == OLD_RECORDS[writer]["status"]
    record.write(tmp_path / "new")
    assert (tmp_path / "new" / "student.json").read_bytes() == (tmp_path / "old" / "student.json").read_bytes()
    assert StudentRecord.read(tmp_path / "new") == record


def test_record_round_trip_and_what_it_refuses(tmp_path):
    record = StudentRecord(key="ada", students=WHO, status="graded", passes=[PASS], upload="f" * 16, grader=STAMP)
    assert record.status is Status.GRADED and not record.crashed
    assert StudentRecord.read(record.write(tmp_path).parent) == record
    assert json.loads((tmp_path / "student.json").read_text())["status"] == "graded"
    assert stat.S_IMODE((tmp_path / "student.json").stat().st_mode) == 0o644
    # a record written by hand (tests, older outputs) may lack the optional fields
    old_write_json(tmp_path / "min" / "student.json", {"key": "=key", "students": WHO, "status": "graded"})
    assert StudentRecord.read(tmp_path / "min") == StudentRecord("=key", WHO, Status.GRADED)
    for bad in ({"key": "x", "students": [], "status": "lost"}, {"key": "x", "students": []}, ["x"]):
        old_write_json(tmp_path / "bad" / "student.json", bad)
        with pytest.raises(ValueError):
            StudentRecord.read(tmp_path / "bad")
    with pytest.raises(OSError):
        StudentRecord.read(tmp_path / "nowhere")


def test_done_as_is_a_finished_record(tmp_path):
    folder = tmp_path / "ada"
    StudentRecord("ada", WHO, Status.GRADED, [PASS], "f" * 16, STAMP).write(folder)
    assert done_as(folder) is None                              # no results.json: not finished
    write_results(build_results(facts(), 1.0, []), folder / output.RESULTS)
    assert done_as(folder) == OLD_RECORDS["job, graded"] | {"status": "graded"}
    StudentRecord("ada", WHO, Status.CRASHED, [PASS], "f" * 16, error="x").write(folder)
    assert done_as(folder) is None
    (folder / "student.json").write_text('{"key": "ada", "stud')  # (never so: written whole)
    assert done_as(folder) is None


def test_the_status_values_are_the_gradebooks_and_the_class_reports(tmp_path):
    from grader.classreport import build, gather
    from seam.upload import Located
    assert [s.value for s in STATUSES] == ["graded", "not found", "ambiguous", "empty", "crashed", "interrupted"]
    assert Located(None, []).status in set(Status)  # seam.upload's statuses are among them
    for s in Status:
        assert json.dumps(s) == json.dumps(s.value) and f"{s}" == str(s) == s.value
    out = tmp_path / "out"
    results = build_results(facts(), 1.0, [], STAMP)
    for s in Status:
        folder = output.student_folder(out, s.value.replace(" ", "-"))
        StudentRecord(folder.name, [{"sid": folder.name, "name": "N", "email": ""}], s, [PASS], "f" * 16).write(folder)
        if s is not Status.CRASHED:  # (an interrupted regrade's old results.json is not read)
            write_results(results, folder / output.RESULTS)
    write_json(out / output.BATCH, {"passes": [PASS]})
    rows = list(csv.DictReader(io.StringIO(output.render(out).decode())))
    assert sorted(r["status"] for r in rows if r["name"] == "N") == sorted(s.value for s in Status)
    report_json = json.loads(json.dumps(build(gather(out))))
    # every graded upload left the same GPU tests: said once for the class, nobody named under "not run"
    assert set(report_json["statuses"]) == {s.value for s in Status} - {"graded"}
    assert report_json["gpu"]["kind"] == "not run" and report_json["gpu"]["students"] == report_json["graded"]
    lines = output.class_summary(out)
    act = [line for line in lines if line.startswith("act on:")]
    assert lines[0] == act[0], "what to act on comes first"
    broken = lines[lines.index(next(a for a in act if a.startswith("act on: did not import"))) + 1:]
    assert broken[0].startswith("  N (crashed): the grading crashed") and broken[1].startswith(
        "  N (interrupted): the grading was interrupted"), lines
    zero = lines[lines.index(next(a for a in act if a.startswith("act on: at zero"))) + 1:]
    assert "  N (not-found): no submission found in the upload: 6 points lost" in zero[:3], lines
    assert not any(line.startswith("below:") for line in lines)
    gpu = next(i for i, line in enumerate(lines) if line.startswith("GPU tests not run: "))
    assert lines[gpu + 1].startswith("class: 6 upload(s) (1 ambiguous, 1 crashed, 1 empty, ")
    # the class report's first screen says the same, to the letter (no similarity compared here)
    from grader.batch.firstscreen import lines as screen_lines
    assert screen_lines(report_json["act_on"]) == lines[:gpu + 1]
    interrupted = [r for r in rows if r["status"] == "interrupted"]
    assert [r["total"] for r in interrupted] == [""]   # unfinished: no score, as for a crash
    assert output.done_as(output.student_folder(out, "interrupted")) is None
    assert output.unfinished_as(output.student_folder(out, "interrupted")) == "interrupted"
    assert output.unfinished_as(output.student_folder(out, "crashed")) == "crashed"
    assert output.unfinished_as(output.student_folder(out, "graded")) is None


# -- the summary ------------------------------------------------------------------------------
def facts(gpu: str = "not_run") -> list[Fact]:
    """Five tests over three problems; the two GPU ones not run (a CPU pass), or run."""
    why = "not run: needs CUDA" if gpu == "not_run" else "failed: no CUDA here"
    return [
        Fact("tests/hidden/test_flops.py::b", "flops", "hidden flops", 2, "after_published", False, "passed",
             functions=("flops.matmul_flops",)),
        Fact("tests/public/test_tensors.py::a", "tensors", "offsets", 1, "visible", False, "failed",
             "element_offset\n  expected: 6\n  got:      7"),
        Fact("tests/public/test_optim.py::a", "optim", "adamw step", 3, "visible", False, "passed",
             functions=("optim.AdamW",)),
        Fact("tests/hidden/test_optim.py::g", "optim", "gpu memory", 2, "after_published", True, gpu, why),
        Fact("tests/hidden/test_optim.py::h", "optim", "gpu mfu", 2, "after_published", True, gpu, why),
    ]


NOTES = ["found the modules in a/ (1 level(s) down); graded from there", "sandbox: uid (test)\nits second line"]
VIOLATIONS = {"optim.AdamW": "torch.optim.adamw.AdamW", "flops.matmul_flops": "torch.matmul"}


def head_rule(lines: list[str]) -> None:
    """Exactly one line starts with 'Score:', and it is the first."""
    assert lines[0].startswith("Score: ") and [ln for ln in lines if ln.startswith("Score:")] == lines[:1]


def test_a_cpu_pass_with_its_gpu_tests_not_run():
    results = build_results(facts(), 1.5, NOTES, STAMP)
    lines = results["output"].splitlines()
    head_rule(lines)
    assert lines == ["Score: 5/6 graded (4 points in 2 tests not run: needs CUDA)",
                     NOTES[0], "sandbox: uid (test) / its second line"]  # one line per note
    assert lines == summary_lines(results["tests"], NOTES)
    assert notes_of(results) == [one_line(n) for n in NOTES]
    table = render_table(results).splitlines()
    assert table[:2] == lines[1:] and table[-1] == lines[0]  # the notes first, the score last
    assert build_results([f for f in facts() if f.outcome != "not_run"], 1.0, [])["output"] == "Score: 5/6"


def test_honest_work_lines_come_first_each_once_and_stay_out_of_the_notes():
    results = build_results(facts(), 1.5, NOTES, STAMP, VIOLATIONS)
    lines = results["output"].splitlines()
    head_rule(lines)
    honest = [line("flops.matmul_flops", "torch.matmul"), line("optim.AdamW", "torch.optim.adamw.AdamW")]
    assert lines[1:3] == honest and all(ln.startswith(HEAD) for ln in honest)  # sorted by function
    assert sum(ln.startswith(HEAD) for ln in lines) == 2 and lines[3:] == [one_line(n) for n in NOTES]
    assert results["extra_data"] == {"grader": STAMP, "honest_work": VIOLATIONS, "notes": [one_line(n) for n in NOTES]}
    assert notes_of(results) == [one_line(n) for n in NOTES]
    assert results["output"] == summary(results["tests"], NOTES, VIOLATIONS)


def test_an_uncounted_test_is_named_after_the_notes():
    uncounted = facts("passed")
    uncounted[-1] = dataclasses.replace(uncounted[-1], counted=False, message="the GPU's peak is unknown")
    lines = build_results(uncounted, 1.0, ["GPU: X"])["output"].splitlines()
    head_rule(lines)
    assert lines == ["Score: 7/8", "GPU: X", "not counted: optim: gpu mfu: the GPU's peak is unknown"]


def _passes():
    """A CPU pass (GPU tests not run, a rule broken) and a GPU pass of the same upload, their
    tests numbered as one full run numbers them."""
    numbers = {t["name"]: t["number"] for t in build_results(facts(), 1.0, [])["tests"]}
    cpu = build_results([f for f in facts() if not f.gpu], 1.0, [*NOTES, "graded only: optim"], STAMP, VIOLATIONS)
    gpu = build_results([f for f in facts("failed") if f.gpu], 2.0,
                        [NOTES[1], "GPU: H100", "graded only the GPU tests (--gpu only)"], STAMP)
    for r in (cpu, gpu):
        for t in r["tests"]:
            t["number"] = numbers[t["name"]]
    return cpu, gpu


def test_a_merged_pass_has_one_score_line_the_rules_once_and_each_note_once():
    cpu, gpu = _passes()
    merged = join_results("ada", [("gpu-skip", cpu), ("gpu-only", gpu)])
    lines = merged["output"].splitlines()
    head_rule(lines)
    assert lines[0] == "Score: 0/10"  # every test ran; AdamW's and matmul_flops' tests charged
    notes = [one_line(NOTES[0]), one_line(NOTES[1]), "graded only: optim", "GPU: H100",
             "graded only the GPU tests (--gpu only)", "joined from the passes: gpu-skip, gpu-only"]
    assert lines == summary_lines(merged["tests"], notes, VIOLATIONS)
    assert merged["extra_data"] == {"grader": STAMP, "honest_work": VIOLATIONS, "notes": notes}
    assert merged["execution_time"] == 3.0
    # a merged output merged again keeps its notes (and says both joins)
    again = join_results("ada", [("cpu+gpu", merged), ("none", {**gpu, "tests": []})])
    assert notes_of(again) == [*notes, "joined from the passes: cpu+gpu, none"]
    # the notes are data: what an output's text says after its score line is never read back as one
    assert notes_of({"output": f"Score: 1/1\n{line('optim.AdamW', 'x')}\nGPU: Y",
                     "extra_data": {"honest_work": {"optim.AdamW": "x"}}}) == []


def test_what_hung_in_either_pass_is_kept_by_the_merge():
    """extra_data.incidents (the class report's "Timeouts and crashes"): each pass's, every time."""
    cpu, gpu = _passes()
    cpu = build_results([f for f in facts() if not f.gpu], 1.0, [], STAMP, incidents={"optim.AdamW": ["it timed out"]})
    gpu = {**gpu, "extra_data": {**gpu["extra_data"], "incidents": {"optim.AdamW": ["it ran out of memory"],
                                                                    "optim.py": ["it kills the worker"]}}}
    report.validate(cpu)  # (the schema holds the key)
    merged = join_results("ada", [("gpu-skip", cpu), ("gpu-only", gpu)])
    assert merged["extra_data"]["incidents"] == {"optim.AdamW": ["it timed out", "it ran out of memory"],
                                                 "optim.py": ["it kills the worker"]}
    plain = _passes()
    assert "incidents" not in join_results("ada", [("gpu-skip", plain[0]), ("gpu-only", plain[1])])["extra_data"]


def test_gradescope_says_its_gpu_note_right_after_the_score():
    """Its note is the first note: right after the score line, or after the rules a submission
    broke (which come first in every report)."""
    clean = build_results(facts(), 1.0, [gradescope.GPU_NOTE, *NOTES], STAMP)["output"].splitlines()
    assert clean[1] == gradescope.GPU_NOTE and clean[2:] == [one_line(n) for n in NOTES]
    broken = build_results(facts(), 1.0, [gradescope.GPU_NOTE, *NOTES], STAMP, VIOLATIONS)["output"].splitlines()
    honest = [line(f, u) for f, u in sorted(VIOLATIONS.items())]
    assert broken == [clean[0], *honest, gradescope.GPU_NOTE, *clean[2:]]


def test_run_autograder_writes_results_json_once(tmp_path, monkeypatch):
    """The GPU note is built into the summary before grade writes: results.json is written once
    and never read back."""
    import grader.grade
    writes = []

    def grade(submission, out, gpu, notes):
        assert gpu == "skip"
        write_results(build_results(facts(), 1.0, [*notes, *NOTES], STAMP), out)
        return 0

    def counted(path, data, *a, **k):
        writes.append(Path(path).name)
        return write_atomically(path, data, *a, **k)
    monkeypatch.setattr(grader.grade, "grade", grade)
    monkeypatch.setattr(report, "_write_file", counted)
    monkeypatch.setenv(gradescope.ROOT_ENV, str(tmp_path))
    monkeypatch.delenv("GRADER_GPU", raising=False)
    (tmp_path / "submission").mkdir()
    assert gradescope.run_autograder() == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    lines = results["output"].splitlines()
    head_rule(lines)
    assert writes == ["results.json"] and lines[1] == gradescope.GPU_NOTE
    assert lines[2:] == [one_line(n) for n in NOTES]
