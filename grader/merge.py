"""`python -m grader merge OUT_DIR... --out OUT_DIR`: join batch outputs.

Inputs are grouped by pass (the ``--gpu``/``--only`` options in each batch.json):
  * folders of one pass are shards: they must not share a student; their students are
    copied as they are, so the gradebook is the one an unsharded batch writes, byte for byte;
  * different passes (a CPU pass with ``--gpu skip`` and a GPU pass with ``--gpu only``) must
    cover the same students and disjoint tests: each student's tests are joined into one
    results.json. Tests are matched by number (<problem>.<k> counts every collected test,
    whichever pass ran it), so the joined file lists the tests as one full run does.
Anything else is a conflict and an error (exit 2) that names the students or tests.
"""

import sys
from pathlib import Path

from .gradebook import (BATCH, RESULTS, STATUSES, STUDENT, pass_label, read_json, student_dirs, student_folder,
                        write_bytes_atomically, write_gradebook, write_json)
from .report import score_line, validate, write_atomically
from .text import one_line


class MergeError(ValueError):
    pass


SEVERITY = ("graded", "empty", "ambiguous", "not found", "crashed")  # a joined student gets the worst
assert set(SEVERITY) == set(STATUSES)


def _names(items, limit: int = 5) -> str:
    items = sorted(items)
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _load(folder: Path) -> tuple[list[dict], dict[str, Path]]:
    if not (folder / BATCH).is_file():
        raise MergeError(f"{folder} is not a batch output (no {BATCH})")
    passes = read_json(folder / BATCH)["passes"]
    return passes, {d.name: d for d in student_dirs(folder)}


def _number(test: dict) -> tuple[int, int]:
    major, minor = test["number"].split(".")
    return int(major), int(minor)


def join_results(key: str, parts: list[tuple[str, dict]]) -> dict:
    """One student's results from several passes (label, results): tests side by side."""
    seen: dict[str, str] = {}
    tests, lines = [], []
    for label, results in parts:
        for t in results["tests"]:
            if t["number"] in seen:
                raise MergeError(f"{key}: test {t['number']} ({t['name']}) is in two passes "
                                 f"({seen[t['number']]} and {label}); passes must run disjoint tests")
            seen[t["number"]] = label
            tests.append(t)
        lines += [line for line in results["output"].splitlines()
                  if not line.startswith("Score:") and line not in lines]
    tests.sort(key=_number)
    score = sum(t["score"] for t in tests)
    summary = [score_line(tests), *lines,  # the score line of one grade of the same tests
               "joined from the passes: " + ", ".join(label for label, _ in parts)]
    merged = {"score": score, "execution_time": round(sum(r["execution_time"] for _, r in parts), 3),
              "output": "\n".join(summary), "tests": tests}
    validate(merged)
    return merged


def _join_student(key: str, folders: list[tuple[str, Path]]) -> tuple[dict, dict | None]:
    records = [(label, read_json(f / STUDENT)) for label, f in folders]
    students = records[0][1]["students"]
    for label, r in records[1:]:
        if r["students"] != students:
            raise MergeError(f"{key}: the passes name different students ({records[0][0]}: "
                             f"{students}; {label}: {r['students']})")
    status = max((r["status"] for _, r in records), key=SEVERITY.index)
    record = {"key": key, "students": students, "status": status,
              "passes": [p for _, r in records for p in r["passes"]]}
    errors = [f"{label}: {r['error']}" for label, r in records if r.get("error")]
    if errors:
        record["error"] = "; ".join(errors)
    if status == "crashed":
        return record, None
    parts = [(label, read_json(f / RESULTS)) for label, f in folders]
    return record, (parts[0][1] if len(parts) == 1 else join_results(key, parts))


def plan(inputs: list[Path]) -> tuple[list[dict], dict[str, list[tuple[str, Path]]]]:
    """Check the inputs fit together: (all passes, {student key: [(pass label, its folder)]})."""
    groups: dict[str, dict] = {}   # pass signature -> {"passes", "students": {key: folder}}
    for folder in inputs:
        passes, students = _load(folder)
        sig = " + ".join(sorted(pass_label(p) for p in passes))
        group = groups.setdefault(sig, {"passes": passes, "students": {}, "dirs": []})
        both = set(group["students"]) & set(students)
        if both:
            other = sorted({str(group["students"][k].parent.parent) for k in both})
            raise MergeError(f"{_names(both)} graded in both {', '.join(other)} and {folder} "
                             f"(same pass, {sig}): shards of one pass must not share students")
        group["students"].update(students)
        group["dirs"].append(folder)
    sigs = sorted(groups)
    labels = [pass_label(p) for sig in sigs for p in groups[sig]["passes"]]
    if len(set(labels)) != len(labels):
        raise MergeError(f"the same pass appears in two differently merged inputs ({', '.join(sigs)})")
    first = set(groups[sigs[0]]["students"])
    for sig in sigs[1:]:
        other = set(groups[sig]["students"])
        if other != first:
            missing = [f"{_names(first - other)} not in the {sig} pass" if first - other else "",
                       f"{_names(other - first)} not in the {sigs[0]} pass" if other - first else ""]
            raise MergeError("the passes cover different students: " + "; ".join(m for m in missing if m))
    joined = {key: [(sig, groups[sig]["students"][key]) for sig in sigs] for key in first}
    return [p for sig in sigs for p in groups[sig]["passes"]], joined


def merge(inputs: list[Path], out: Path) -> int:
    inputs = [Path(d).resolve() for d in inputs]
    out = Path(out).resolve()
    try:
        if out in inputs:
            raise MergeError(f"--out {out} is also an input; write the merge somewhere else")
        if len(set(inputs)) != len(inputs):
            raise MergeError("an OUT_DIR is given twice")
        passes, joined = plan(inputs)
        strangers = [d.name for d in student_dirs(out) if d.name not in joined]
        if strangers:
            raise MergeError(f"--out {out} already holds other students ({_names(strangers)})")
        merged = {key: _join_student(key, folders) for key, folders in sorted(joined.items())}
    except (MergeError, OSError, ValueError, KeyError) as e:
        print(f"error: {one_line(e)}", file=sys.stderr)  # it names uploads
        return 2
    for key, (record, results) in merged.items():
        dest = student_folder(out, key)
        dest.mkdir(parents=True, exist_ok=True)
        if results is None:
            (dest / RESULTS).unlink(missing_ok=True)
        else:
            write_atomically(results, dest / RESULTS)
        for _, folder in joined[key]:
            for raw in sorted(folder.glob("pytest-*.json")):
                write_bytes_atomically(dest / raw.name, raw.read_bytes())
        write_json(dest / STUDENT, record)
    write_json(out / BATCH, {"passes": passes})
    path = write_gradebook(out)
    crashed = sum(1 for r, _ in merged.values() if r["status"] == "crashed")
    print(f"merged {len(inputs)} folder(s), {len(merged)} upload(s) ({crashed} crashed); wrote {path}",
          file=sys.stderr)
    return 0
