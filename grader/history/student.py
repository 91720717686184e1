"""Why one upload's score moved between two grades (`python -m grader history BEFORE AFTER`).

BEFORE and AFTER are two results.json of the same student (last term's and this one's, or a
regrade's previous.json and results.json), or two batch output folders (each student in both),
or one student's folder of a batch output that holds a previous.json. Each test whose verdict or
points moved is named with its cause, from what the two grades and the rubric's history say:

- the test is new, or gone (split, merged or renamed: the history says which);
- its points changed (the rubric);
- the test itself changed (its cases, tolerances or code: tests/rubric_history.json between the
  two grades' tests hashes, with the maintainer's why);
- none of these: the upload changed, or the same upload's run differed (a timeout, a flaky
  test: its output says), where the batch's fingerprints of the upload tell which.

A test is matched across the grades by its id (``extra_data.test``, the test's node id); a
results.json older than that by its name (problem and title), never by its number, which a test
added before it shifts. Reads JSON only: no torch.
"""

import json
import re
from pathlib import Path

from .diff import compose, what
from .record import HistoryError, find, since

NODE = re.compile(r"tests/(?:public|hidden)/test_\w+\.py::\S+")


class BadPair(HistoryError):
    """The two paths are not two grades of one student or two batch outputs (exit 2)."""


def _node(t: dict) -> str | None:
    node = (t.get("extra_data") or {}).get("test")
    found = NODE.search(node) if isinstance(node, str) else None
    return found.group(0) if found else None


def test_id(t: dict, by_name: bool = False) -> str:
    """A results.json test's identity across grades: its node id where the grade wrote it (and
    ``by_name`` is not asked), else its name."""
    return (None if by_name else _node(t)) or str(t.get("name", ""))


def keyed(*grades: dict) -> list[dict[str, dict]]:
    """Each grade's tests by identity, the same for all: by node id where every grade holds them,
    else by name (a grade made before results.json kept the ids)."""
    by_name = any(_node(t) is None for g in grades for t in g.get("tests", []))
    return [{test_id(t, by_name): t for t in g.get("tests", [])} for g in grades]


def _stamp(results: dict) -> str | None:
    return ((results.get("extra_data") or {}).get("grader") or {}).get("tests")


def _ran(tests: dict[str, dict]) -> dict[str, dict]:
    return {k: t for k, t in tests.items() if (t.get("extra_data") or {}).get("outcome") != "not_run"}


def _changes(record: dict | None, old: str | None, new: str | None) -> dict | None:
    """The rubric history's changes per test between two tests hashes ({} when the same hash;
    None when a hash is not recorded or the grades are in the other order)."""
    if old == new:
        return {}
    if record is None or not old or not new:
        return None
    try:
        if find(record, new) < find(record, old):
            return None
        return compose([(e["changes"], e["why"]) for e in since(record, old, new)])
    except HistoryError:
        return None


def moved_tests(before: dict, after: dict, record: dict | None, same_upload: bool | None = None) -> list[dict]:
    """Each test whose verdict or points moved between two results.json of one upload, with its
    cause: {"test", "name", "before", "after", "delta", "cause", "what", "why"}; ``cause`` is one
    of "added", "removed", "points", "test changed", "upload changed", "run differed",
    "not the test" (the same test: which of the last two, two results.json cannot say), "unknown" (the tests hash changed but the history does not record the change)."""
    old, new = map(_ran, keyed(before, after))
    changes = _changes(record, _stamp(before), _stamp(after))
    out = []
    for key in sorted(set(old) | set(new), key=lambda k: [int(x) for x in (new.get(k) or old[k])["number"].split(".")]):
        a, b = old.get(key), new.get(key)
        score_a, score_b = (float(a["score"]) if a else 0.0), (float(b["score"]) if b else 0.0)
        status_a, status_b = (a["status"] if a else "absent"), (b["status"] if b else "absent")
        if a and b and status_a == status_b and abs(score_a - score_b) < 1e-9:
            continue
        ids = [i for i in (b and _node(b), a and _node(a), key) if i]  # a test's id where a grade holds it
        row = {"test": ids[0], "name": (b or a)["name"], "before": status_a, "after": status_b,
               "delta": score_b - score_a, "what": "", "why": ""}
        changed = next(((changes or {})[i] for i in ids if i in (changes or {})), None)
        if changed:
            row["what"], row["why"] = what(key, changed), " | ".join(changed["why"])
        if a is None or b is None:
            row["cause"] = "added" if a is None else "removed"
        elif abs(float(a["max_score"]) - float(b["max_score"])) > 1e-9:
            row["cause"] = "points"
            row["what"] = row["what"] or f"points {float(a['max_score']):g} -> {float(b['max_score']):g}"
        elif changed:
            row["cause"] = "test changed"
        elif changes is None:
            row["cause"] = "unknown"
        else:
            row["cause"] = {True: "run differed", False: "upload changed", None: "not the test"}[same_upload]
        out.append(row)
    return out


CAUSES = {"added": "a new test", "removed": "the test is gone", "points": "the rubric changed its points",
          "test changed": "the test changed", "upload changed": "the same test: the upload's code changed",
          "run differed": "the same test and the same upload: the run differed (a timeout or a flaky test; "
                          "its output says)",
          "not the test": "the same test and points: the upload's code changed, or the run differed (its output "
                          "says)",
          "unknown": "the tests changed between the grades, and tests/rubric_history.json does not record how"}


def possible(results: dict) -> float:
    """The points a grade was out of: every test that ran (a GPU test not run is to come)."""
    return sum(float(t.get("max_score", 0.0)) for t in _ran(keyed(results)[0]).values())


def lines(before: dict, after: dict, record: dict | None, same_upload: bool | None = None, who: str = "") -> list[str]:
    """What `history BEFORE AFTER` prints for one upload. Where the points possible moved (a test
    it failed both times was re-weighted, added or removed), a line says so: its score did not
    move with them, its share of the total did."""
    a, b = float(before.get("score", 0.0)), float(after.get("score", 0.0))
    moved = moved_tests(before, after, record, same_upload)
    head = f"{who + ': ' if who else ''}score {a:g} -> {b:g} ({b - a:+g})"
    out_of = possible(before), possible(after)
    total = [] if abs(out_of[0] - out_of[1]) < 1e-9 else [
        f"  out of {out_of[0]:g} -> {out_of[1]:g} points ({out_of[1] - out_of[0]:+g}: tests added, removed or "
        f"re-weighted, those it failed both times included)"]
    if not moved:
        return [head + ": no test's verdict or points moved" + ("" if not total else " for it"), *total]
    out = [head + f": {len(moved)} test(s) moved", *total]
    for m in moved:
        detail = f": {m['what']}" if m["what"] else ""
        why = f" (why: {m['why']})" if m["why"] else ""
        out.append(f"  {m['name']}: {m['before']} -> {m['after']} ({m['delta']:+g}): {CAUSES[m['cause']]}{detail}{why}")
    if _stamp(before) != _stamp(after):
        out.append(f"  graded with tests {_stamp(before)} then {_stamp(after)}")
    return out


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BadPair(f"{path}: not readable JSON ({e})") from None
    if isinstance(data, dict) and isinstance(data.get("results"), dict):  # previous.json
        data = data["results"]
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise BadPair(f"{path}: not a results.json (no tests list)")
    return data


def _student(folder: Path) -> tuple[dict, str | None]:
    """A batch output's student folder: its results.json and its upload's fingerprint."""
    try:
        upload = json.loads((folder / "student.json").read_text()).get("upload")
    except (OSError, ValueError, AttributeError):
        upload = None
    return _read(folder / "results.json"), upload


def compare(before: str, after: str, record: dict | None) -> list[str]:
    """The lines for two results.json, two batch outputs (every student graded in both), or, with
    ``after`` None-like "", one student's folder holding previous.json."""
    pa = Path(before)
    if not after:
        if not (pa / "previous.json").is_file():
            raise BadPair(f"{pa}: no previous.json in it (give two results.json or two batch outputs)")
        return lines(_read(pa / "previous.json"), _read(pa / "results.json"), record, who=pa.name)
    pb = Path(after)
    for p in (pa, pb):
        if not p.exists():
            raise BadPair(f"{p}: no such file or folder")
    if pa.is_file() and pb.is_file():
        return lines(_read(pa), _read(pb), record)
    if pa.is_dir() and pb.is_dir() and (pa / "students").is_dir() and (pb / "students").is_dir():
        out = []
        keys = sorted({d.name for d in (pa / "students").iterdir()} & {d.name for d in (pb / "students").iterdir()})
        for key in keys:
            if not ((pa / "students" / key / "results.json").is_file() and (pb / "students" / key / "results.json").is_file()):
                continue
            (ra, ua), (rb, ub) = _student(pa / "students" / key), _student(pb / "students" / key)
            same = (ua == ub) if ua and ub else None
            out += lines(ra, rb, record, same, who=key)
        return out or [f"no student is graded in both {pa} and {pb}"]
    raise BadPair(f"{pa} and {pb}: give two results.json or two batch output folders")
