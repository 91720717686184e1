"""The maintainer's one command for the generated records: find what is stale, regenerate it in
the order the records feed each other, and say what it reran and how long each took.

    python -m tests.self.regen [--jobs N]    regenerate what is stale, in order
    python -m tests.self.regen --check       list what is stale; exit 1 if anything is

The records, in the order they are made (each step's inputs include what the steps before it
write, so a later one is judged stale only after the earlier ones are current):

1. snapshots (tests/public/snapshots/*.json): the reference's answers the public tests compare
   with; stale when the reference gives other answers. The mutation and behaviour records hash
   them, so they come first.
2. behaviour (tests/self/behaviour.json): what each planted shortcut keeps with the watch
   blinded; stale per problem when what its verdicts depend on changed (behaviour.inputs_hash).
3. rubric (the generated parts of assignment/ and README.md): the problem table, the trust
   tables (read from the behaviour record, hence after it), the figures; stale when they differ
   from what they would say now.
4. mutation (tests/self/mutation/record.json, survivors.md): what the graded tests kill; stale
   mutants are only those whose verdict could move (tests/self/mutation/__main__.py ``plan``).

Each step runs as the command a maintainer would type (printed), in its own process, and is
checked again after: a step still stale after its own command is an error. Last, where the tests
hash a grade carries moved and tests/rubric_history.json lacks it, both modes say so with the
command that records it (`python -m grader history --record --why "..."`): not a step, since
the why is the maintainer's to write. docs/margins.json
and README's margins table (benchmarks/margins.py, minutes) are not tracked here: no check says
when they are stale; docs/maintaining.md says when to rerun them.
"""

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

from grader.paths import ROOT


def _snapshots() -> list[str]:
    from grader.snapshots import check
    return [line.split(" (run")[0].removeprefix("stale snapshot: ") for line in check()]


def _behaviour() -> list[str]:
    from tests.self import behaviour
    return behaviour.stale()


def _rubric() -> list[str]:
    from grader.rubric import collect, stale
    return stale(collect())


def _mutation() -> list[str]:
    from grader.paths import REFERENCE, STUBS
    from seam.problems import PROBLEMS
    from tests.self.mutation import __main__ as mutation
    from tests.self.mutation.mutants import module_mutants
    record, equivalent = mutation.load_record(), mutation.load_equivalent()
    out, every = [], {p: module_mutants(REFERENCE, STUBS, p) for p in PROBLEMS}
    for p, mutants in every.items():
        steps = mutation.plan(p, mutants, record, equivalent)
        if steps["quick"] or steps["full"]:
            out.append(f"{p} ({len(steps['quick'])} to re-check on their killing test, {len(steps['full'])} in full)")
    return out + mutation.survivors_stale(every, record, equivalent)


@dataclass(frozen=True)
class Step:
    name: str
    stale: Callable[[], list[str]]              # what is stale, one line each; [] if current
    command: Callable[[list[str], int], list[str]]  # (what is stale, jobs) -> the command to run


STEPS = (
    Step("snapshots", _snapshots, lambda stale, jobs: ["python", "-m", "grader", "snapshots"]),
    Step("behaviour", _behaviour, lambda stale, jobs: ["python", "-m", "tests.self.behaviour", "record", *stale]),
    Step("rubric", _rubric, lambda stale, jobs: ["python", "-m", "grader", "rubric", "--write"]),
    Step("mutation", _mutation, lambda stale, jobs: ["python", "-m", "tests.self.mutation", "--jobs", str(jobs)]),
)
COMMAND = "python -m tests.self.regen"
RECORD_COMMAND = 'python -m grader history --record --why "<why the tests changed, one line>"'


def unrecorded() -> str | None:
    """A line saying the tests hash is not in tests/rubric_history.json, or None where it is."""
    from grader.history.record import hashes, load
    from grader.provenance import tests_hash
    digest = tests_hash()
    return None if digest in hashes(load()) else (
        f"history: the tests hash is now {digest}, which tests/rubric_history.json does not record: "
        f"run `{RECORD_COMMAND}`")


def check() -> dict[str, list[str]]:
    """Each step's stale lines, as the files stand now (a step's own command may make a later
    step stale: ``regenerate`` judges each after the ones before it have run)."""
    return {step.name: step.stale() for step in STEPS}


def regenerate(jobs: int, say=print) -> int:
    """Run each stale step's command in order; 0 if every record is current at the end."""
    started, ran = time.monotonic(), []
    for step in STEPS:
        t = time.monotonic()
        stale = step.stale()
        if not stale:
            say(f"{step.name}: current ({time.monotonic() - t:.0f} s to check)")
            continue
        command = step.command(stale, jobs)
        say(f"{step.name}: stale: {'; '.join(stale)}\n  $ {' '.join(command)}")
        run = subprocess.run([sys.executable, *command[1:]], cwd=ROOT)  # its output as it comes
        took = time.monotonic() - t
        if run.returncode != 0:
            say(f"{step.name}: its command failed (exit {run.returncode}) after {took:.0f} s")
            return 1
        if still := step.stale():
            say(f"{step.name}: still stale after its own command: {'; '.join(still)}")
            return 1
        ran.append((step.name, took))
        say(f"{step.name}: regenerated in {took:.0f} s")
    total = time.monotonic() - started
    say(f"reran {', '.join(f'{n} ({s:.0f} s)' for n, s in ran) if ran else 'nothing'}; {total:.0f} s in all")
    if line := unrecorded():
        say(line)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list what is stale; exit 1 if anything is")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for the mutation run")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if not args.check:
        return regenerate(args.jobs)
    found = check()
    for name, lines in found.items():
        print(f"{name}: " + ("; ".join(lines) if lines else "current"))
    if any(found.values()):
        print(f"stale: run `{COMMAND}`" + (", then record the tests hash" if unrecorded() else ""))
        return 1
    if line := unrecorded():
        print(line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
