"""`python -m grader history PATH`: which graded tests changed since the tests hash a grade was
made with, what changed and why; and, for the class report and a regrade, why a student's score
moved. Reads JSON and CSV only: no torch.

PATH is a results.json (its ``extra_data.grader.tests``), a previous.json (the results a
regrade replaced), a batch output folder or its batch.json (``grader.tests``), a gradebook.csv
(its ``tests`` column; an older one without it: the batch.json beside it), or a bare hash.
"""

import csv
import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path

from .diff import compose, short, what
from .record import HistoryError, find, hashes, load, since

HASH = re.compile(r"[0-9a-fA-F]{6,64}")
SHOWN_SHARED = 6  # shared definitions named on a change set's line; the rest are counted


class BadPath(HistoryError):
    """PATH is neither a file or folder the history reads nor a hash (the TA's mistake: exit 2)."""


def _from_json(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BadPath(f"{path}: not readable JSON ({e})") from None
    if isinstance(data, dict) and isinstance(data.get("results"), dict):  # previous.json
        data = data["results"]
    stamp = data.get("grader") if isinstance(data, dict) else None  # batch.json
    if stamp is None and isinstance(data, dict):
        stamp = (data.get("extra_data") or {}).get("grader")  # results.json
    if not isinstance(stamp, dict) or not isinstance(stamp.get("tests"), str):
        raise BadPath(f"{path}: no grader stamp (extra_data.grader.tests) in it")
    return [stamp["tests"]]


def _from_gradebook(path: Path) -> list[str]:
    try:
        rows = list(csv.DictReader(path.read_text().splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadPath(f"{path}: not a readable CSV ({e})") from None
    found = list(dict.fromkeys(r["tests"] for r in rows if r.get("tests")))
    if found:
        return found
    if (path.parent / "batch.json").is_file():
        return _from_json(path.parent / "batch.json")
    raise BadPath(f"{path}: no tests column and no batch.json beside it")


def hashes_of(target: str) -> list[str]:
    """The tests hash(es) ``target`` was graded with (a gradebook may hold several)."""
    path = Path(target)
    if path.is_dir():
        if not (path / "batch.json").is_file():
            raise BadPath(f"{path}: a folder without batch.json (give a batch output, a results.json, "
                               "a gradebook.csv or a tests hash)")
        return _from_json(path / "batch.json")
    if path.is_file():
        return _from_gradebook(path) if path.suffix.lower() == ".csv" else _from_json(path)
    if HASH.fullmatch(target):
        return [target.lower()]
    raise BadPath(f"{target}: no such file or folder, and not a tests hash")


@lru_cache(maxsize=None)
def committed_in(digest: str) -> str | None:
    """The commit that first wrote ``digest`` into tests/rubric_history.json (an entry recorded
    with --record holds no commit of its own: it is written before the commit that carries it),
    or None where git has none (not committed yet, or no git)."""
    from .record import RECORD
    try:
        run = subprocess.run(["git", "-C", str(RECORD.parent), "log", "--reverse", "--format=%h", "-S", digest,
                              "--", RECORD.name], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    found = run.stdout.split()
    return found[0] if run.returncode == 0 and found else None


def _entry_line(e: dict) -> str:
    commit = e.get("commit") or committed_in(e["tests"])
    return f"{e['tests']} ({commit or 'not committed'}, {e.get('date', '?')})"


def explain(record: dict, digest: str, until: str | None = None) -> list[str]:
    """The lines `history` prints for the tests changed since ``digest``."""
    start = record["entries"][find(record, digest)]
    later = since(record, digest, until)
    if not later:
        return [f"no graded test changed since tests hash {_entry_line(start)}: it is the latest recorded"]
    out = [f"since tests hash {_entry_line(start)}, {len(later)} change set(s) to {_entry_line(later[-1])}:"]
    changed = compose([(e["changes"], e["why"]) for e in later])
    for test, c in changed.items():
        out.append(f"  {test}: {what(test, c)} (why: {' | '.join(c['why']) or 'not given'})")
    for e in later:  # what no single test's line holds: shared checks, files no test reaches
        reach = sorted(e["changes"].get("shared", {}).items(), key=lambda kv: (-kv[1], kv[0]))
        if reach:
            names = ", ".join(f"{short(q)} ({n} tests)" for q, n in reach[:SHOWN_SHARED])
            more = f" and {len(reach) - SHOWN_SHARED} more" if len(reach) > SHOWN_SHARED else ""
            out.append(f"  shared checks changed: {names}{more} (why: {e['why']})")
        if e["changes"].get("files"):
            out.append(f"  files no test's facts cover: {', '.join(e['changes']['files'])} (why: {e['why']})")
    if not changed:
        out.append("  no graded test's points, cases, tolerances or code changed")
    return out


def run(target: str, until: str | None = None) -> tuple[int, list[str]]:
    """(exit status, lines) of `python -m grader history PATH`."""
    from ..provenance import tests_hash
    try:
        record, digests = load(), hashes_of(target)
        current = tests_hash()
        lines = []
        for digest in digests:
            if digest == current and until is None and current not in hashes(record):
                # graded by this very checkout, whose tests are not recorded yet: nothing moved
                lines.append(f"tests hash {current} is this checkout's own: no graded test changed since")
                continue
            lines += explain(record, digest, until)
    except HistoryError as e:  # a bad PATH: 2; a hash the record does not know: 1
        return 2 if isinstance(e, BadPath) else 1, [f"python -m grader history: {e}"]
    if current not in [e["tests"] for e in record["entries"]]:
        lines.append(f"note: this checkout's tests hash {current} is not recorded: "
                     "python -m grader history --record --why \"...\"")
    return 0, lines


def record_or_none() -> dict | None:
    """The record, or None where it cannot be read (a regrade's report is never worth failing)."""
    try:
        return load()
    except HistoryError:
        return None


def stamp_of(results: dict) -> str | None:
    return ((results.get("extra_data") or {}).get("grader") or {}).get("tests")


def moved_scores(before: dict, after: dict, record: dict | None) -> list[dict]:
    """Why a regraded student's score moved, where the tests hash changed between ``before`` and
    ``after`` (two results.json): each changed test whose verdict or points moved for this upload,
    with what changed and why ([] when the hash is the same or a hash is unrecorded). A changed
    test the upload failed (or passed) both times moved nothing of its score and is not named."""
    from .student import moved_tests
    if not stamp_of(before) or not stamp_of(after) or stamp_of(before) == stamp_of(after) or record is None:
        return []
    return [{"test": m["test"], "what": m["what"], "why": m["why"]}
            for m in moved_tests(before, after, record) if m["what"]]


def regrade_note(old: str, new: str, record: dict | None) -> str | None:
    """One line for a batch that regrades because the tests changed: how many graded tests
    changed from ``old`` to ``new`` and the command that says which and why (None: unrecorded)."""
    try:
        if record is None or find(record, new) <= find(record, old):
            return None
        changed = compose([(e["changes"], e["why"]) for e in since(record, old, new)])
    except HistoryError:
        return None
    first = next(iter(changed.items()), None)
    example = f", e.g. {first[0]}: {what(*first)}" if first else ""
    return (f"the tests changed since {old}: {len(changed)} graded test(s){example} "
            f"(python -m grader history {old} says each and why)")
