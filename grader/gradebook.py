"""A batch's output folder, and the gradebook rebuilt from it.

    OUT_DIR/batch.json                        which pass(es) the folder holds ({"passes": [...]})
    OUT_DIR/students/<key>/student.json       who handed the upload in, its status, why it crashed
    OUT_DIR/students/<key>/results.json       Gradescope's results (absent when grading crashed)
    OUT_DIR/students/<key>/pytest-<pass>.json pytest-json-report's raw record (regrades, appeals)
    OUT_DIR/gradebook.csv                     one row per student, rebuilt from the files above
    OUT_DIR/.logs/                            the grader processes' logs

The students are one level below the batch's own files: an upload may be named anything
(batch.json, gradebook.csv, .logs) without touching them.

Every file is written whole or not at all (temporary file + rename), so an interrupted batch
leaves only complete files, and the gradebook can always be rebuilt from the student folders:
it is a pure function of them (the same folders give the same bytes; merge relies on it).
"""

import csv
import io
import json
import os
import tempfile
from pathlib import Path

from seam.problems import PROBLEMS
from .report import per_problem
from .text import csv_cell

STATUSES = ("graded", "not found", "ambiguous", "empty", "crashed")
BATCH = "batch.json"
STUDENT = "student.json"
RESULTS = "results.json"
GRADEBOOK = "gradebook.csv"
STUDENTS = "students"


def pass_label(p: dict) -> str:
    """A file-name-safe name for one pass: gpu-skip, gpu-only, gpu-auto-intensity ..."""
    return f"gpu-{p['gpu']}" + ("-" + "-".join(p["only"]) if p.get("only") else "")


def write_bytes_atomically(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json(path: Path, data) -> None:
    write_bytes_atomically(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def read_json(path: Path):
    return json.loads(Path(path).read_text())


def student_folder(out: Path, key: str) -> Path:
    """Where a batch output keeps one upload's files."""
    return Path(out) / STUDENTS / key


def student_dirs(out: Path) -> list[Path]:
    """The student folders of a batch output (those with a student.json), sorted by key."""
    top = Path(out) / STUDENTS
    if not top.is_dir():
        return []
    return sorted((d for d in top.iterdir() if (d / STUDENT).is_file()), key=lambda d: d.name)


def is_done(folder: Path) -> bool:
    """Graded in an earlier run (crashed ones are retried)."""
    try:
        return read_json(folder / STUDENT).get("status") != "crashed" and (folder / RESULTS).is_file()
    except (OSError, ValueError):
        return False


def _points(x: float) -> str:
    return f"{x:g}"


def render(out: Path) -> bytes:
    """gradebook.csv's bytes: one row per student (a group submission gives each member a
    row), sorted by student id, email, then upload; one column per problem that was graded."""
    entries = []
    for folder in student_dirs(out):
        record = read_json(folder / STUDENT)
        results = read_json(folder / RESULTS) if record["status"] != "crashed" and \
            (folder / RESULTS).is_file() else None
        entries.append((folder.name, record, results))
    columns = [p for p in PROBLEMS
               if any(r and any(row["problem"] == p for row in per_problem(r)) for _, _, r in entries)]
    rows = []
    for key, record, results in entries:
        scores = {row["problem"]: row["score"] for row in per_problem(results)} if results else {}
        cells = [_points(results["score"]) if results else ""]
        cells += [_points(scores[p]) if p in scores else "" for p in columns]
        for s in record["students"] or [{"sid": key, "name": "", "email": ""}]:
            rows.append([s["sid"], s["name"], s["email"], *cells, record["status"], key])
    rows.sort(key=lambda r: (r[0], r[2], r[-1]))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["student_id", "name", "email", "total", *columns, "status", "submission"])
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)  # names come from the upload
    return buf.getvalue().encode()


def write_gradebook(out: Path) -> Path:
    path = Path(out) / GRADEBOOK
    write_bytes_atomically(path, render(out))
    return path
