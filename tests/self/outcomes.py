"""What every planted bug (and the reference) scores, test by test: a record to compare before
and after changing the tests, which must not move a grade unless they mean to.

    python -m tests.self.outcomes record OUT.json [PROBLEM ...]
    python -m tests.self.outcomes compare BEFORE.json AFTER.json     (exit 1 if they differ)

Each bug is graded in-process on its own problem's tests (public and hidden, no GPU); the record
maps "<problem>:<bug>" to the tests it does not pass and its score, and "reference:<problem>" to
every test's outcome."""

import json
import sys
import tempfile
from pathlib import Path

from grader.grade import run_tests
from grader.paths import REFERENCE
from seam import InProcess
from seam.problems import PROBLEMS
from tests.self.bugs import all_bugs


def outcomes(impl, problem: str) -> dict[str, list]:
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[problem]).facts.values()
    return {f.nodeid.split("::")[-1]: [f.outcome, f.points] for f in facts}


def record(problems) -> dict:
    out = {f"reference:{p}": outcomes(InProcess(REFERENCE, package=f"outcomes_ref_{p}"), p) for p in problems}
    for i, bug in enumerate(b for b in all_bugs() if b.problem in problems):
        with tempfile.TemporaryDirectory() as tmp:
            got = outcomes(InProcess(bug.build(Path(tmp) / "s"), package=f"outcomes_bug{i}"), bug.problem)
        out[bug.id] = {t: o for t, o in got.items() if o[0] != "passed"}
        out[bug.id]["_score"] = sum(o[1] for o in got.values() if o[0] == "passed")
        print(f"{bug.id}: {out[bug.id]['_score']:g}", flush=True)
    return out


def compare(before: dict, after: dict) -> int:
    differ = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    for k in differ:
        print(f"DIFF {k}\n  before: {before.get(k)}\n  after:  {after.get(k)}")
    print(f"{len(before)} vs {len(after)} entries, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"] and len(argv) >= 2:
        problems = argv[2:] or list(PROBLEMS)
        Path(argv[1]).write_text(json.dumps(record(problems), indent=1, sort_keys=True) + "\n")
        return 0
    if argv[:1] == ["compare"] and len(argv) == 3:
        return compare(*(json.loads(Path(p).read_text()) for p in argv[1:]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
