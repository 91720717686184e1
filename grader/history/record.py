"""tests/rubric_history.json: for each tests hash ever released, what changed in the graded tests
since the hash before it, and why (the maintainer's one line).

    {"about": ..., "entries": [{"tests": hash, "commit": short id | null, "date": ..., "why": ...,
                                "changes": {"tests": {...}, "shared": {...}, "files": [...]}}, ...],
     "latest": {"tests": hash, "facts": facts.extract(...), "files": {path: sha}, "reading": "syntax"}}

``changes`` is diff.diff's record plus ``files``: the graded files changed that no test's facts
speak for (the reference the tests compare with, the sandbox's watch), each read as the tests
hash reads it (backfill.py ``file_hashes``), so a comment, a docstring or a note's words edited
in an earlier commit is not listed under the next hash's why. ``latest`` is the last entry's
reading, so that the next entry is diffed against it without git. Written only by
``record_current`` (`python -m grader history --record --why ...`) and ``backfill``
(`python -m grader history --backfill`); entries already there are kept as they are.
"""

import json
from pathlib import Path

from ..files import write_atomically
from ..paths import ROOT
from .diff import diff

RECORD = ROOT / "tests" / "rubric_history.json"
ABOUT = ("Each tests hash the grader has stamped on a grade, oldest first: which graded tests changed since "
         "the entry before and why. Read it with `python -m grader history HASH|results.json|OUT_DIR|"
         "gradebook.csv`; add the current hash with `python -m grader history --record --why \"...\"`; "
         "entries from git with `python -m grader history --backfill`.")
SNAPSHOTS = "tests/public/snapshots/"  # the answers: each test's facts hold its targets' own


class HistoryError(ValueError):
    """A one-line reason the record cannot answer or be written."""


def load(path: Path = RECORD) -> dict:
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {"about": ABOUT, "entries": [], "latest": None}
    except (OSError, ValueError) as e:
        raise HistoryError(f"{path}: not a readable rubric history ({e})") from None
    if not isinstance(record, dict) or not isinstance(record.get("entries"), list):
        raise HistoryError(f"{path}: not a rubric history (no entries list)")
    return record


def save(record: dict, path: Path = RECORD) -> None:
    write_atomically(Path(path), json.dumps({"about": ABOUT, "entries": record["entries"],
                                             "latest": record["latest"]}, indent=1) + "\n")


def hashes(record: dict) -> list[str]:
    return [e["tests"] for e in record["entries"]]


def find(record: dict, wanted: str) -> int:
    """The index of the last entry with tests hash ``wanted`` (or a unique prefix of 6+ digits)."""
    wanted = wanted.strip().lower()
    matches = {h for h in hashes(record) if h == wanted or (len(wanted) >= 6 and h.startswith(wanted))}
    if len(matches) != 1:
        known = hashes(record)
        span = f"{len(known)} recorded, {known[0]} to {known[-1]}" if known else "none recorded"
        raise HistoryError(f"tests hash {wanted!r} is {'ambiguous' if matches else 'unknown'} in "
                           f"{RECORD.relative_to(ROOT).as_posix()} ({span})")
    found = matches.pop()
    return max(i for i, h in enumerate(hashes(record)) if h == found)


def since(record: dict, wanted: str, until: str | None = None) -> list[dict]:
    """The entries after ``wanted``'s, up to and including ``until``'s (default: the last)."""
    start = find(record, wanted)
    end = find(record, until) if until else len(record["entries"]) - 1
    return record["entries"][start + 1:end + 1]


def _module_of(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _files_changed(old: dict, new: dict, facts: list[dict]) -> list[str]:
    """The graded files changed that no test's facts speak for: no test module, snapshot or
    definition a test reaches is in them (the reference, the sandbox's watch)."""
    reached = {q.partition("[")[0].rpartition(".")[0] for f in facts for q in f["defs"]}
    reached |= {_module_of(t.partition("::")[0]) for f in facts for t in f["tests"]}
    return sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p)
                  and not p.startswith(SNAPSHOTS) and _module_of(p) not in reached)


def entry(digest: str, commit: str | None, date: str, why: str, latest: dict | None, facts: dict,
          files: dict, root: Path | None = None) -> dict:
    """A new entry against ``latest`` (the last entry's reading, None for the first). A reading
    of the files' bytes (a record written before readings were of syntax) is compared with the
    bytes of ``root``'s files."""
    from .backfill import READING, file_hashes
    changes = diff(latest["facts"] if latest else None, facts)
    if latest and latest.get("reading", "bytes") != READING and root is not None:
        files = file_hashes(root, reading=latest.get("reading", "bytes"))
    changes["files"] = _files_changed(latest["files"], files, [latest["facts"], facts]) if latest else []
    return {"tests": digest, "commit": commit, "date": date, "why": why, "changes": changes}


def record_current(why: str | None, path: Path = RECORD, root: Path = ROOT) -> str:
    """Add the checkout's tests hash with ``why``; one line saying what was done."""
    import datetime
    from ..provenance import tests_hash
    from .backfill import READING, file_hashes
    from .facts import extract
    record, digest = load(path), tests_hash()
    if digest in hashes(record):
        return f"tests hash {digest} is recorded already ({len(record['entries'])} entries); nothing to add"
    if not why or not why.strip():
        raise HistoryError(f"the tests hash is now {digest}, not recorded: say why the tests changed with --why \"...\"")
    facts, files = extract(root), file_hashes(root)
    new = entry(digest, None, datetime.date.today().isoformat(), " ".join(why.split()), record["latest"], facts,
                files, root)
    record["entries"].append(new)
    record["latest"] = {"tests": digest, "facts": facts, "files": files, "reading": READING}
    save(record, path)
    n = len(new["changes"]["tests"])
    return f"recorded tests hash {digest}: {n} test(s) changed ({path.relative_to(root) if path.is_relative_to(root) else path})"


def backfill(repo: Path = ROOT, ref: str = "HEAD", path: Path = RECORD, say=print) -> int:
    """Entries for every commit of ``ref`` (first parent) whose tests hash is not recorded yet,
    each diffed against the commit before it; entries already there are kept. Returns how many
    were added."""
    from .backfill import READING, walk
    record = load(path)
    known, added, previous = set(hashes(record)), [], None
    by_hash = {e["tests"]: e for e in record["entries"]}
    order: list[dict] = []
    for commit, date, digest, why, facts, files in walk(Path(repo), ref, say=say):
        reading = {"tests": digest, "facts": facts, "files": files, "reading": READING}
        if previous is not None and digest == previous["tests"]:
            continue  # a graded file changed but not what the hash covers
        if digest in known:
            if by_hash[digest] not in order:
                order.append(by_hash[digest])
            by_hash[digest]["commit"] = by_hash[digest].get("commit") or commit  # a --record entry, now committed
        else:
            new = entry(digest, commit, date, why, previous, facts, files)
            order.append(new)
            added.append(new)
            known.add(digest)
        previous = reading
    order += [e for e in record["entries"] if e not in order]  # recorded by --record, not in git yet
    record["entries"] = order
    last = record["entries"][-1]["tests"] if record["entries"] else None
    if previous is not None and previous["tests"] == last:
        record["latest"] = previous
    save(record, path)
    return len(added)
