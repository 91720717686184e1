"""`python -m grader merge OUT_DIR... --out OUT_DIR`: join batch outputs.

Inputs are grouped by pass (the ``--gpu``/``--only`` options in each batch.json):
  * folders of one pass are shards: they must not share a student; their students are
    copied as they are, so the gradebook is the one an unsharded batch writes, byte for byte;
  * different passes (a CPU pass, ``--gpu skip`` or ``auto`` where there is no CUDA, and a GPU
    pass with ``--gpu only``) must cover the same students and run disjoint tests (a GPU test
    the CPU pass reported "not run" gives way to the GPU pass's outcome): each student's tests
    are joined into one results.json. Tests are matched by number (<problem>.<k> counts every collected test,
    whichever pass ran it), so the joined file lists the tests as one full run does.
The shards of a pass must be the whole set: each batch.json records its ``I/N``, and merge
refuses a set with a shard missing, a shard given twice, or counts that disagree. It refuses a
pass in which no test ran (a GPU pass graded where there was no GPU would charge every student
its points), inputs graded by different graders or tests (batch.json's stamp), and inputs
graded from different downloads of the class (batch.json's ``class``).
Anything else is a conflict and an error (exit 2) that names the students or tests.
"""

import json
import sys
from pathlib import Path

from .output import (BATCH, CODE, PREVIOUS, REPORT, RESULTS, STATUSES, Status, StudentRecord, counted,
                     pass_label, read_json, student_dirs, student_folder, write_gradebook, write_json, write_report)
from ..files import write_atomically
from ..paths import out_problem
from ..report import assemble, charge, not_run, notes_of, review_of, to_come_note, validate, violations_of, write_results
from ..text import one_line


class MergeError(ValueError):
    pass


# a student joined from several passes gets the worst of its statuses
SEVERITY = (Status.GRADED, Status.EMPTY, Status.AMBIGUOUS, Status.NOT_FOUND, Status.INTERRUPTED, Status.CRASHED)
assert set(SEVERITY) == set(STATUSES)


def _names(items, limit: int = 5) -> str:
    items = sorted(items)
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _load(folder: Path) -> tuple[dict, dict[str, Path]]:
    """(batch.json, {key: folder} of the students that count)."""
    if not (folder / BATCH).is_file():
        raise MergeError(f"{folder} is not a batch output (no {BATCH})")
    return read_json(folder / BATCH), {d.name: d for d in counted(folder)}


def _shard_set(sig: str, shards: list[tuple[list | None, Path]]) -> None:
    """The shards of one pass: the whole class once, or each of 0..N-1 exactly once."""
    if len(shards) == 1 and shards[0][0] is None:
        return
    whole = [str(f) for s, f in shards if s is None]
    if whole:
        raise MergeError(f"{', '.join(whole)} graded the whole class ({sig}) and cannot be merged with shards of it")
    counts = sorted({s[1] for s, _ in shards})
    if len(counts) > 1:
        raise MergeError(f"the {sig} shards were cut into different numbers of slices ({', '.join(map(str, counts))})")
    n = counts[0]
    seen: dict[int, Path] = {}
    for (i, _), folder in shards:
        if i in seen:
            raise MergeError(f"shard {i}/{n} of {sig} is given twice ({seen[i]} and {folder})")
        seen[i] = folder
    missing = [f"{i}/{n}" for i in range(n) if i not in seen]
    if missing:
        raise MergeError(f"the {sig} pass is incomplete: shard(s) {', '.join(missing)} missing "
                         f"(have {', '.join(f'{i}/{n}' for i in sorted(seen))})")


def _ran_nothing(students: dict[str, Path]) -> bool:
    """True when the pass graded someone but ran no test for anyone (all 'not run')."""
    any_results = False
    for folder in students.values():
        if (folder / RESULTS).is_file():
            any_results = True
            if any(not not_run(t) for t in read_json(folder / RESULTS)["tests"]):
                return False
    return any_results


def _number(test: dict) -> tuple[int, int]:
    major, minor = test["number"].split(".")
    return int(major), int(minor)


def join_results(key: str, parts: list[tuple[str, dict]]) -> dict:
    """One student's results from several passes (label, results): tests side by side."""
    seen: dict[str, tuple[str, dict]] = {}  # test number -> (the pass that has it, the test)
    notes = []
    violations: dict[str, str] = {}  # honest work: a rule broken in one pass costs the tests of every pass
    for label, results in parts:
        for function, used in violations_of(results).items():
            violations.setdefault(function, used)
        for t in results["tests"]:
            held = seen.get(t["number"])
            if held is None or (not_run(held[1]) and not not_run(t)):
                seen[t["number"]] = (label, t)  # a pass that ran a test replaces one that could not
            elif not (not_run(t) or not_run(held[1])):
                raise MergeError(f"{key}: test {t['number']} ({t['name']}) is in two passes "
                                 f"({held[0]} and {label}); passes must run disjoint tests")
        notes += [n for n in notes_of(results) if n not in notes]  # each pass's, once
    tests = sorted((t for _, t in seen.values()), key=_number)
    charge(tests, violations)
    # what a CPU pass left for the GPU pass is still to come only if no pass here ran it
    ran = {t["number"] for t in tests}
    to_come = {n: points for _, r in parts for n, points in r.get("extra_data", {}).get("to_come", {}).get("tests", {}).items()
               if n not in ran}
    notes = [n for n in notes if not n.startswith("to come:")]  # a pass's own, now stale
    if to_come:
        notes.append(to_come_note(sum(to_come.values()), len(to_come)))
    incidents: dict[str, list[str]] = {}  # what hung or crashed, in any pass
    for _, r in parts:
        for what, how in r.get("extra_data", {}).get("incidents", {}).items():
            incidents.setdefault(what, []).extend(how)
    review: dict[tuple, dict] = {}  # the notes for review of every pass, once each
    for _, r in parts:
        for n in review_of(r):
            key = (n["file"], n["line"], n["kind"])
            if n.get("at_stake", 0) >= review.get(key, {}).get("at_stake", 0):
                review[key] = n
    stamps = [r["extra_data"]["grader"] for _, r in parts if "grader" in r.get("extra_data", {})]
    # the same code as one grade's results: one score line, the rules broken, the notes after it
    merged = assemble(tests, sum(r["execution_time"] for _, r in parts),
                      [*notes, "joined from the passes: " + ", ".join(label for label, _ in parts)],
                      stamps[0] if stamps else None, violations, to_come, incidents, list(review.values()),
                      next((r["extra_data"]["files"] for _, r in parts if "files" in r.get("extra_data", {})), None))
    validate(merged)
    return merged


def _join_student(key: str, folders: list[tuple[str, Path]]) -> tuple[StudentRecord, dict | None]:
    records = [(label, StudentRecord.read(f)) for label, f in folders]
    students = records[0][1].students
    for label, r in records[1:]:
        if r.students != students:
            raise MergeError(f"{key}: the passes name different students ({records[0][0]}: "
                             f"{students}; {label}: {r.students})")
    errors = [f"{label}: {r.error}" for label, r in records if r.error]
    record = StudentRecord(key=key, students=students, status=max((r.status for _, r in records), key=SEVERITY.index),
                           passes=[p for _, r in records for p in r.passes], error="; ".join(errors) or None)
    if record.unfinished:
        return record, None
    parts = [(label, read_json(f / RESULTS)) for label, f in folders]
    return record, (parts[0][1] if len(parts) == 1 else join_results(key, parts))


def plan(inputs: list[Path]) -> tuple[list[dict], dict[str, list[tuple[str, Path]]]]:
    """Check the inputs fit together: (all passes, {student key: [(pass label, its folder)]})."""
    groups: dict[str, dict] = {}   # pass signature -> {"passes", "students": {key: folder}}
    # what every input must share, batch.json key -> {its value: the folders holding it}
    shared: dict[str, dict[str, list[str]]] = {"class": {}, "grader": {}}
    for folder in inputs:
        held, students = _load(folder)
        passes = held["passes"]
        for key, values in shared.items():
            value = held.get(key)
            if key == "grader" and isinstance(value, dict):  # one grader, one set of tests (a stamp
                value = {k: value.get(k) for k in ("version", "tests")}  # may predate ``verdicts``)
            values.setdefault(json.dumps(value, sort_keys=True), []).append(str(folder))
        sig = " + ".join(sorted(pass_label(p) for p in passes))
        group = groups.setdefault(sig, {"passes": passes, "students": {}, "shards": []})
        group["shards"].append((held.get("shard"), folder))
        both = set(group["students"]) & set(students)
        if both:
            other = sorted({str(group["students"][k].parent.parent) for k in both})
            raise MergeError(f"{_names(both)} graded in both {', '.join(other)} and {folder} "
                             f"(same pass, {sig}): shards of one pass must not share students")
        group["students"].update(students)
    for key, what, fix in (("class", "from different downloads of the class",
                            "grade every shard and pass from one (a resubmission could give a student two rows)"),
                           ("grader", "by different graders or tests", "regrade one of them")):
        if len(shared[key]) > 1:
            raise MergeError(f"the inputs were graded {what}: " + "; ".join(
                f"{', '.join(dirs)}: {key} {json.loads(value)}" for value, dirs in shared[key].items()) + f"; {fix}")
    sigs = sorted(groups)
    for sig in sigs:
        _shard_set(sig, groups[sig]["shards"])
        if _ran_nothing(groups[sig]["students"]):
            raise MergeError(f"the {sig} pass ran no test (every one 'not run'; a GPU pass graded without a "
                             f"GPU?): merging it would charge every student its points; grade it again where "
                             f"it can run")
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
        problem = out_problem(out, folder=True)
        if problem:
            raise MergeError(problem)
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
            for name in (RESULTS, REPORT):
                (dest / name).unlink(missing_ok=True)
        else:
            write_results(results, dest / RESULTS)
            write_report(dest, results)
        for _, folder in joined[key]:
            for raw in sorted(folder.glob("pytest-*.json")) + sorted((folder / CODE).glob("*.py")) + sorted(
                    folder.glob(PREVIOUS)):
                (dest / raw.relative_to(folder)).parent.mkdir(exist_ok=True)
                write_atomically(dest / raw.relative_to(folder), raw.read_bytes())
        record.write(dest)
    held = [read_json(d / BATCH) for d in inputs]
    write_json(out / BATCH, {"passes": passes, "shard": None, "grader": held[0].get("grader"),
                             "class": held[0].get("class"),
                             "uploads": sorted(merged),
                             "not_counted": {k: v for h in held for k, v in h.get("not_counted", {}).items()}})
    path = write_gradebook(out)
    crashed = sum(1 for r, _ in merged.values() if r.crashed)
    interrupted = sum(1 for r, _ in merged.values() if r.status is Status.INTERRUPTED)
    print(f"merged {len(inputs)} folder(s), {len(merged)} upload(s) ({crashed} crashed"
          + (f", {interrupted} interrupted" if interrupted else "") + f"); wrote {path}", file=sys.stderr)
    from ..classreport import after_batch  # (the report's libraries, only now)
    after_batch(out)
    return 0
