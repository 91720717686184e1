"""A batch's output folder, and the gradebook rebuilt from it.

    OUT_DIR/batch.json                        the pass(es) it holds, its shard I/N, the grader's
                                              version and tests hash, the uploads that count
    OUT_DIR/students/<key>/student.json       a StudentRecord: who handed the upload in, its
                                              Status, why it crashed or was interrupted, the
                                              upload's fingerprint and the grader that graded it
    OUT_DIR/students/<key>/results.json       Gradescope's results (absent when grading crashed
                                              or was interrupted)
    OUT_DIR/students/<key>/report.txt         the score table `grade` prints, for the TA to read
    OUT_DIR/students/<key>/code/<problem>.py  the modules that were graded (the class report's
                                              similarity pass, appeals)
    OUT_DIR/students/<key>/previous.json      the results a regrade replaced, and why it ran
    OUT_DIR/students/<key>/pytest-<pass>.json pytest-json-report's raw record (regrades, appeals)
    OUT_DIR/repeats/<k>/<key>/results.json    `batch --repeat K`: the k-th grading of the same upload
    OUT_DIR/gradebook.csv                     one row per student, rebuilt from the files above
    OUT_DIR/.logs/job<n>.log                  a grader process's log; where it died under a
                                              student, the last output of that student's sandbox
                                              (its zygote's and worker's logs) follows

The students are one level below the batch's own files: an upload may be named anything
(batch.json, gradebook.csv, .logs) without touching them.

Every file is written whole or not at all (grader/files.py), so an interrupted batch
leaves only complete files, and the gradebook can always be rebuilt from the student folders:
it is a pure function of them and of batch.json's list of the uploads that count (the same
folders give the same bytes; merge relies on it). A folder left from an earlier export (a
student who dropped, a submission superseded by a resubmission) stays on disk but is not in
that list: batch.json names it under ``not_counted`` and the gradebook leaves it out.

The gradebook's second row, "Points Possible" (as Canvas's own export has it), gives each
column's maximum: the points graded, per problem and in total; ``not_run`` holds the points of
tests that could not run (GPU tests on a machine without CUDA), ``to_come`` those a CPU pass
(``--gpu skip``) left for the GPU pass, which merge joins. The last column, ``tests``, is the
tests hash each row was graded with (results.json's stamp), so a gradebook kept alone still says
which tests made it (`python -m grader history gradebook.csv`).
"""

import csv
import dataclasses
import enum
import io
import json
import statistics
from pathlib import Path

from seam.problems import PROBLEMS
from ..files import write_atomically
from ..report import per_problem, render_table, to_come
from ..text import csv_cell, one_line
from . import firstscreen


class Status(enum.StrEnum):
    """What became of an upload: its gradebook ``status`` cell and the class report's statuses.
    How the upload was found (seam.upload's ``Located.status``: graded, not found, ambiguous,
    empty), or that its grading did not finish: ``crashed`` (the grader failed on it: a bug, a
    grader process that died or hung) or ``interrupted`` (a signal from outside stopped the batch
    while it was being graded: Ctrl-C, SIGTERM; nobody's fault). A rerun grades both again and
    says which it was. A str: student.json and the gradebook hold the value."""
    GRADED = "graded"
    NOT_FOUND = "not found"
    AMBIGUOUS = "ambiguous"
    EMPTY = "empty"
    CRASHED = "crashed"
    INTERRUPTED = "interrupted"


UNFINISHED = (Status.CRASHED, Status.INTERRUPTED)  # no results.json: a rerun grades them again


STATUSES = tuple(Status)  # in this order (batch counts them so)
BATCH = "batch.json"
STUDENT = "student.json"
RESULTS = "results.json"
GRADEBOOK = "gradebook.csv"
STUDENTS = "students"
REPORT = "report.txt"
CODE = "code"
PREVIOUS = "previous.json"
REPEATS = "repeats"
POINTS_POSSIBLE = "Points Possible"


def pass_label(p: dict) -> str:
    """A file-name-safe name for one pass: gpu-skip, gpu-only, gpu-auto-intensity ..."""
    return f"gpu-{p['gpu']}" + ("-" + "-".join(p["only"]) if p.get("only") else "")


def write_json(path: Path, data) -> None:
    """A batch output's JSON file (student.json, batch.json, previous.json, report.json): keys
    sorted, two-space indent, whole or not at all. Serialised first: data that cannot be
    leaves the old file as it was."""
    write_atomically(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path):
    return json.loads(Path(path).read_text())


@dataclasses.dataclass(frozen=True)
class StudentRecord:
    """student.json: one upload of a batch output, what became of it and what graded it. A
    student folder is finished when its student.json is written (the last of its files).

    Written by the job that graded the upload (grader/batch/job.py), by the batch when the job
    died under it (scheduler.py ``_crashed``) or when the export renamed its students, and by
    merge (one record of every pass joined); read by everything that reads a batch output
    (``read``, ``done_as``, ``_entries``). On disk the JSON of ``as_json``: the fields left
    unset are left out (a merged record has no ``upload`` nor ``grader``, a crash before
    grading no ``grader``), keys sorted (write_json), so a record reads and writes back to the
    same bytes, also one written before this class."""
    key: str                      # the upload's folder name (roster.Upload.key)
    students: list[dict]          # who handed it in: [{"sid", "name", "email"}] ([]: nobody named)
    status: Status
    passes: list[dict] = dataclasses.field(default_factory=list)  # [{"gpu", "only"}]: the pass(es) graded
    upload: str | None = None     # the upload's fingerprint: a rerun skips an unchanged upload
    grader: dict | None = None    # provenance.stamp() of the grader that graded it
    error: str | None = None      # why grading crashed or was interrupted, one line

    OPTIONAL = ("upload", "grader", "error")  # left out of the file when None

    def __post_init__(self):
        object.__setattr__(self, "status", Status(self.status))  # ValueError for an unknown one

    @property
    def crashed(self) -> bool:
        return self.status is Status.CRASHED

    @property
    def unfinished(self) -> bool:
        """Its grading did not finish (crashed, interrupted): it has no results."""
        return self.status in UNFINISHED

    def as_json(self) -> dict:
        """What student.json holds (write_json sorts the keys)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["status"] = self.status.value
        return {k: v for k, v in data.items() if not (k in self.OPTIONAL and v is None)}

    @classmethod
    def from_json(cls, data: dict) -> "StudentRecord":
        """A student.json's content; keys this class does not know are ignored, missing
        optional ones are None (``passes``: [], as a record written by hand may lack it)."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})

    def write(self, folder: Path) -> Path:
        """``folder``/student.json, whole or not at all."""
        path = Path(folder) / STUDENT
        write_json(path, self.as_json())
        return path

    @classmethod
    def read(cls, folder: Path) -> "StudentRecord":
        """``folder``/student.json; OSError when it is missing, ValueError when it holds no
        record (not JSON, a key missing, an unknown status)."""
        data = read_json(Path(folder) / STUDENT)
        if not isinstance(data, dict):
            raise ValueError(f"{Path(folder) / STUDENT} holds no record")
        try:
            return cls.from_json(data)
        except TypeError as e:  # a field missing
            raise ValueError(f"{Path(folder) / STUDENT} is not a student record ({e})") from None


def student_folder(out: Path, key: str) -> Path:
    """Where a batch output keeps one upload's files."""
    return Path(out) / STUDENTS / key


def student_dirs(out: Path) -> list[Path]:
    """The student folders of a batch output (those with a student.json), sorted by key."""
    top = Path(out) / STUDENTS
    if not top.is_dir():
        return []
    return sorted((d for d in top.iterdir() if (d / STUDENT).is_file()), key=lambda d: d.name)


def counted(out: Path) -> list[Path]:
    """The student folders that count: those batch.json lists under ``uploads`` (every one, for
    an output written before it kept that list)."""
    dirs = student_dirs(out)
    marker = Path(out) / BATCH
    keys = read_json(marker).get("uploads") if marker.is_file() else None
    return dirs if keys is None else [d for d in dirs if d.name in set(keys)]


def done_as(folder: Path) -> dict | None:
    """What an earlier run recorded for a finished student (its StudentRecord, as its JSON
    dict: the batch reads ``upload``, ``grader`` and ``students`` of it), None when it is not
    finished (never graded, crashed, interrupted, half written): a rerun compares the upload's
    fingerprint and the grader's stamp before it skips it."""
    try:
        record = StudentRecord.read(folder)
    except (OSError, ValueError):
        return None
    return record.as_json() if not record.unfinished and (Path(folder) / RESULTS).is_file() else None


def unfinished_as(folder: Path) -> str | None:
    """Why an earlier run left a student unfinished: "crashed" or "interrupted" (its record's
    status), None when it holds no such record."""
    try:
        record = StudentRecord.read(folder)
    except (OSError, ValueError):
        return None
    return record.status.value if record.unfinished else None


def _points(x: float) -> str:
    return f"{x:g}"


def _entries(out: Path) -> list[tuple[str, StudentRecord, dict | None]]:
    """(key, its StudentRecord, its results or None) for each student folder that counts."""
    entries = []
    for folder in counted(out):
        record = StudentRecord.read(folder)
        results = read_json(folder / RESULTS) if not record.unfinished and (folder / RESULTS).is_file() else None
        entries.append((folder.name, record, results))
    return entries


def _not_run(results: dict) -> float:
    return sum(t["max_score"] for row in per_problem(results) for t in row["not_run"])


def table(out: Path) -> tuple[list[str], list[str], list[list[str]]]:
    """(header, the Points Possible row, one row per student, sorted by student id, email, then
    upload: a group submission gives each member a row); one column per problem that was graded.
    gradebook.csv and `export` are both written from it."""
    entries = _entries(out)
    columns = [p for p in PROBLEMS
               if any(r and any(row["problem"] == p for row in per_problem(r)) for _, _, r in entries)]
    most: dict[str, float] = {}
    rows = []
    for key, record, results in entries:
        scores = {row["problem"]: row for row in per_problem(results)} if results else {}
        if results:
            for p, row in scores.items():
                most[p] = max(most.get(p, 0.0), row["max"])
            most["not_run"] = max(most.get("not_run", 0.0), _not_run(results))
            most["to_come"] = max(most.get("to_come", 0.0), to_come(results))
        cells = [_points(results["score"]) if results else ""]
        cells += [_points(scores[p]["score"]) if p in scores and scores[p]["max"] else "" for p in columns]
        cells += [_points(_not_run(results)), _points(to_come(results))] if results else ["", ""]
        stamp = (results or {}).get("extra_data", {}).get("grader") or {}
        for s in record.students or [{"sid": key, "name": "", "email": ""}]:
            rows.append([s["sid"], s["name"], s["email"], *cells, record.status.value, key, stamp.get("tests", "")])
    rows.sort(key=lambda r: (r[0], r[2], r[-2]))
    possible = ["", POINTS_POSSIBLE, "", _points(sum(most.get(p, 0.0) for p in columns)),
                *(_points(most[p]) if most.get(p) else "" for p in columns), _points(most.get("not_run", 0.0)),
                _points(most.get("to_come", 0.0)), "", "", ""]
    header = ["student_id", "name", "email", "total", *columns, "not_run", "to_come", "status", "submission", "tests"]
    return header, possible, rows


def csv_bytes(rows: list[list[str]]) -> bytes:
    """Rows as CSV; every cell through text.csv_cell (names and keys come from uploads)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([csv_cell(str(cell)) for cell in row] for row in rows)
    return buf.getvalue().encode()


def render(out: Path) -> bytes:
    """gradebook.csv's bytes: the header, the Points Possible row, a row per student."""
    header, possible, rows = table(out)
    return csv_bytes([header, possible, *rows])


def student_rows(text: str) -> list[dict]:
    """gradebook.csv read back: the students' rows (the Points Possible row left out)."""
    return [r for r in csv.DictReader(io.StringIO(text)) if r["name"] != POINTS_POSSIBLE or r["student_id"]]


def keep_code(upload: Path, folder: Path) -> None:
    """The modules the grader took from the upload (seam.upload), copied to ``folder``/code."""
    import shutil
    from seam.upload import graded_modules, locate
    from ..sandbox.folders import remove
    located = locate(upload)
    try:
        dest = Path(folder) / CODE
        shutil.rmtree(dest, ignore_errors=True)
        if located.folder is not None:
            dest.mkdir(parents=True, exist_ok=True)
            for module in graded_modules(located.folder):  # (a helper package's files in its folder)
                (dest / module.relative_to(located.folder)).parent.mkdir(parents=True, exist_ok=True)
                write_atomically(dest / module.relative_to(located.folder), module.read_bytes())
    finally:
        if located.cleanup is not None:
            remove(located.cleanup)  # an unpacked upload: its folders may go deeper than any recursion


def keep_previous(folder: Path, why: str) -> None:
    """Before a regrade: the results it replaces, as ``PREVIOUS`` (with why it was regraded), so
    that the class report lists whose total changed and which tests flipped."""
    results = Path(folder) / RESULTS
    if results.is_file():
        try:
            write_json(Path(folder) / PREVIOUS, {"why": why, "results": read_json(results)})
        except ValueError:  # a half-written file is nothing to compare with
            pass


def write_report(folder: Path, results: dict) -> None:
    """report.txt beside results.json: the table `grade` prints."""
    write_atomically(Path(folder) / REPORT, render_table(results) + "\n")


def screen_uploads(out: Path, entries: list) -> list[dict]:
    """The first screen's facts of each counted upload (firstscreen.first_screen): who, its
    status, its results, the problems its kept modules leave missing or as the stub as given."""
    from .firstscreen import not_attempted
    uploads = []
    for key, record, results in entries:
        code = {}
        for p in PROBLEMS:
            path = student_folder(out, key) / CODE / f"{p}.py"
            if results is not None and path.is_file() and path.stat().st_size <= 1 << 20:
                code[p] = path.read_text(errors="replace")
        uploads.append({"key": key, "status": record.status.value, "results": results, "error": record.error,
                        "who": [s.get("name") or s.get("sid") or key for s in record.students or []],
                        "missing": not_attempted(code)})
    return uploads


def class_summary(out: Path, screen: bool = True) -> list[str]:
    """The end of a batch: what to act on first (firstscreen.lines: the class report's first
    screen, less what only the report finds, its likely copies), then three lines: who was graded,
    each problem's mean, the test most students failed. ``screen=False``: the three lines alone
    (the class report that follows says the first screen, copies included)."""
    entries = _entries(out)  # every results.json of the class, read once for all
    said = firstscreen.lines(firstscreen.first_screen(screen_uploads(out, entries))) if screen else []
    return [*said, *_class_lines(entries)]


def _class_lines(entries: list) -> list[str]:
    graded = [r for _, _, r in entries if r]
    statuses: dict[str, int] = {}
    for _, record, _ in entries:
        statuses[record.status.value] = statuses.get(record.status.value, 0) + 1
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0])))
    if not graded:
        return [f"class: {len(entries)} upload(s) ({counts or 'none'}); nothing graded", "", ""]
    totals = sorted(r["score"] for r in graded)
    possible = max(sum(row["max"] for row in per_problem(r)) for r in graded)
    median = statistics.median(totals)
    first = (f"class: {len(entries)} upload(s) ({counts}); mean {sum(totals) / len(totals):.1f} of "
             f"{possible:g}, median {median:g}")
    means = []
    for p in PROBLEMS:
        rows = [row for r in graded for row in per_problem(r) if row["problem"] == p and row["max"]]
        if rows:
            means.append(f"{p} {sum(row['score'] for row in rows) / len(graded):.1f}/{max(row['max'] for row in rows):g}")
    failed: dict[tuple[str, str], int] = {}
    for r in graded:
        for t in r["tests"]:
            if t["status"] == "failed" and t.get("extra_data", {}).get("outcome") != "not_run":
                failed[(t["number"], t["name"])] = failed.get((t["number"], t["name"]), 0) + 1
    if failed:
        (number, name), n = max(failed.items(), key=lambda kv: (kv[1], [-int(x) for x in kv[0][0].split(".")]))
        worst = f"most failed: {number} {name} (failed by {n} of {len(graded)})"
    else:
        worst = "most failed: none (every graded upload passed every test that ran)"
    return [first, "per problem (mean): " + ", ".join(means), worst]


def write_gradebook(out: Path) -> Path:
    path = Path(out) / GRADEBOOK
    write_atomically(path, render(out))
    return path
