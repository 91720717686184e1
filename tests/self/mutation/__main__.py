"""Mutation testing: how many of the slips a student can make do the graded tests catch?

    python -m tests.self.mutation [--jobs N] [--all] [PROBLEM ...]   run what is stale, report
    python -m tests.self.mutation --check                            report only; exit 1 if stale

Each mutant (tests/self/mutation/mutants.py) is a submission: the reference's modules with one
slip in its problem's module. It is graded in-process, through the seam, on that problem's
graded tests (public and hidden, no GPU), stopping at the first test it fails: it is *killed*
if one fails or it runs past the time limit, and *survives* if all pass. A survivor is a hole in
the tests, or an equivalent mutant (a change no test could see: the reason is recorded in
equivalent.md, the one file of such reasons).

Incremental, and stale only where a verdict could move. record.json keeps, per problem, a hash
of what its verdicts depend on (``tests``: tests/self/mutation/inputs.py says what: its graded
tests and data, the submission's other modules, and the graded machinery its run imports, by
syntax tree) and, per mutant, a hash of its source and its verdict: ``killed_by``, the first
graded test it failed ("timeout", "error: <type>"), or null if it passed them all. What a run
does with each mutant (``plan``):

- its source changed, or it is new: graded on the whole suite;
- its source and the problem's hash unchanged: kept;
- the problem's hash changed, the mutant killed by a named test: re-checked on that test alone
  ("quick"). If it still fails, the mutant is still killed: a killed verdict needs one failing
  graded test, whatever else changed, so the record is right. If it now passes, the test is
  gone, or the re-check timed out or broke (which says nothing of that test), the mutant is
  graded on the whole suite, as a new one is;
- killed by a timeout or an error, or a survivor not in equivalent.md (a hole in the tests):
  the whole suite, since any test of the new suite might kill it;
- a survivor with its reason in equivalent.md, its source unchanged: kept. Its reason says no
  test of the spec can tell it from the reference; if a new test did, the record would only
  understate the score (equivalents leave the score's denominator, a killed one adds to its
  numerator), never pass the bar falsely. `--all` regrades them too.

So a message changed in a seam module the run imports costs one quick test per killed mutant
(about 0.1-0.2 s each on one core); a module no run imports (seam/check.py), a comment or
whitespace costs nothing. Every grade runs with pytest's plugin autoload off (the graded
tests use no third-party plugin), the same for the baseline: the reference must pass every
test so, and a plugin whose absence failed a test would fail it there first.

The score of a problem is killed / (mutants - equivalent); the bar is 90% for every problem and
95% overall. survivors.md lists every survivor, equivalent or not, with its diff line.
"""

import argparse
import hashlib
import json
import os
import resource
import select
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.paths import REFERENCE, ROOT, STUBS, problem_file
from seam.problems import PROBLEMS
from tests.self.mutation.inputs import hashed_files, registry_part, tests_hash  # noqa: F401 (used by the tests)
from tests.self.mutation.mutants import Mutant, module_mutants
from tests.self.submissions import reference_with

HERE = Path(__file__).resolve().parent
RECORD = HERE / "record.json"
EQUIVALENT = HERE / "equivalent.md"
SURVIVORS = HERE / "survivors.md"
BAR_PROBLEM, BAR_OVERALL = 0.90, 0.95
MEMORY_BYTES = 6 << 30   # per mutant: a slip that allocates without bound is killed, not the machine


def source_hash(mutant: Mutant) -> str:
    return hashlib.sha256(mutant.source.encode()).hexdigest()[:16]


def load_record() -> dict:
    return json.loads(RECORD.read_text()) if RECORD.exists() else {}


def parse_equivalent(text: str) -> dict[str, dict[str, str]]:
    """equivalent.md: under a "## <problem>" heading, each survivor is a list item "- `<id>`"
    followed by its reason on the indented lines below it."""
    out: dict[str, dict[str, str]] = {}
    problem, current = None, None
    for line in text.splitlines():
        if line.startswith("## "):
            problem, current = line[3:].strip(), None
            out.setdefault(problem, {})
        elif problem and line.startswith("- `") and line.rstrip().endswith("`"):
            current = line.strip()[3:-1]
            out[problem][current] = ""
        elif problem and current and line.startswith("  ") and line.strip():
            out[problem][current] = (out[problem][current] + " " + line.strip()).strip()
        elif line.strip():
            current = None
    return out


def load_equivalent() -> dict[str, dict[str, str]]:
    return parse_equivalent(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}


def killing_test(killed_by: str | None) -> bool:
    """Whether a recorded verdict names the one test that killed the mutant (not a timeout or
    an error of the run, which no single test reproduces)."""
    return bool(killed_by) and killed_by != "timeout" and not killed_by.startswith("error: ")


def plan(problem: str, mutants: list[Mutant], record: dict, equivalent: dict) -> dict[str, list[Mutant]]:
    """What each mutant needs for its recorded verdict to be current: "keep" it, "quick" (re-run
    only its recorded killing test) or "full" (its problem's whole suite). See the module's
    docstring for why each is sound."""
    entry = record.get(problem, {})
    done, same = entry.get("mutants", {}), entry.get("tests") == tests_hash(problem)
    out: dict[str, list[Mutant]] = {"keep": [], "quick": [], "full": []}
    for m in mutants:
        was = done.get(m.id)
        if was is None or was.get("source") != source_hash(m):
            out["full"].append(m)
        elif same or (not was.get("killed_by") and m.id in equivalent.get(problem, {})):
            out["keep"].append(m)
        else:
            out["quick" if killing_test(was.get("killed_by")) else "full"].append(m)
    return out


def stale(problem: str, mutants: list[Mutant], record: dict, equivalent: dict | None = None) -> list[Mutant]:
    steps = plan(problem, mutants, record, load_equivalent() if equivalent is None else equivalent)
    return steps["quick"] + steps["full"]


# -- running one mutant ------------------------------------------------------------------------

def _grade(problem: str, mutant: Mutant, time_limit: float, only: str | None = None) -> str | None:
    """In a forked child: the first graded test this mutant fails, or None if it passes them all
    (``only``: of the tests of that name alone)."""
    from grader.grade import run_tests
    from seam import InProcess
    folder = reference_with(Path(tempfile.mkdtemp(prefix="mutant_")), {problem: mutant.source})
    try:
        impl = InProcess(folder, package=f"mutant_{os.getpid()}")
        facts = run_tests(impl, gpu="skip", cuda=False, time_limit=time_limit, quiet=True,
                          problems=[problem], first_failure=True, only=None if only is None else {only}).facts.values()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failed = [f.nodeid.split("::")[-1] for f in facts if f.outcome not in ("passed", "skipped")]
    return failed[0] if failed else None


def _limited(problem: str, mutant: Mutant, time_limit: float, only: str | None = None) -> dict:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    return {"killed_by": _grade(problem, mutant, time_limit, only)}


def run_mutants(jobs: list[tuple[str, Mutant]], workers: int, timeout: float, on_done,
                only: dict[str, str] | None = None) -> None:
    """Grade each (problem, mutant) in a forked child, ``workers`` at a time; a child past
    ``timeout`` seconds is killed and its mutant counts as killed ("timeout"), and one whose run
    itself broke (e.g. out of memory) as killed by that error: the slip is caught. ``only``:
    mutant id -> the one test (by name) to grade that mutant on."""
    only = only or {}

    def done(key, result):
        problem, mutant = key
        if result is None:
            on_done(problem, mutant, "timeout")
        else:
            on_done(problem, mutant, f"error: {result['error']}" if "error" in result else result["killed_by"])
    forked([((p, m), lambda p=p, m=m: _limited(p, m, timeout, only.get(m.id))) for p, m in jobs], workers, timeout, done)


def forked(jobs: list[tuple], workers: int, timeout: float, on_done) -> None:
    """Run each (key, fn) in a forked child of this warmed process (one torch thread, output to
    /dev/null: a submission's prints are noise), ``workers`` at a time; ``on_done(key, result)``
    with fn's JSON result, {"error": its type} if it raised, None if it ran past ``timeout``
    seconds (killed) or gave nothing readable. The mutation run and benchmarks/margins.py."""
    pending = list(jobs)
    running: dict[int, tuple] = {}
    while pending or running:
        while pending and len(running) < workers:
            key, fn = pending.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    import torch
                    torch.set_num_threads(1)
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, 1)
                    os.dup2(devnull, 2)
                    result = fn()
                except BaseException as e:  # the run itself broke
                    result = {"error": type(e).__name__}
                with os.fdopen(w, "wb") as f:
                    f.write(json.dumps(result).encode())
                os._exit(0)
            os.close(w)
            running[pid] = (key, r, time.monotonic(), bytearray())
        readable, _, _ = select.select([v[1] for v in running.values()], [], [], 0.2)
        for pid, (key, r, started, buf) in list(running.items()):
            if r in readable:
                chunk = os.read(r, 1 << 20)
                buf += chunk
                if chunk:
                    continue
            elif time.monotonic() - started <= timeout:
                continue
            else:
                os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(r)
            del running[pid]
            try:
                result = json.loads(buf.decode()) if buf else None
            except ValueError:
                result = None
            on_done(key, result)


def warm_up(problems: list[str] | None = None) -> None:
    """Import torch and every test module, and let the reference remember its answers, before
    forking: each child then pays only for its own mutant. Also the baseline: the unmutated
    reference, graded exactly as a mutant is, must pass everything."""
    from grader.grade import run_tests
    from seam import InProcess
    facts = run_tests(InProcess(REFERENCE, package="mutation_baseline"), gpu="skip", cuda=False,
                      time_limit=60, quiet=True, problems=problems).facts.values()
    bad = [f.nodeid for f in facts if f.outcome not in ("passed", "skipped")]
    if bad:
        raise SystemExit(f"the reference itself fails {bad}: fix that before mutation testing")


def save(record: dict, problems: set[str], all_mutants: dict[str, list[Mutant]]) -> dict:
    """Write this run's problems into record.json as it is on disk now (another run may have
    written other problems meanwhile), dropping mutants that no longer exist."""
    on_disk = load_record()
    for p in problems:
        ids = {m.id for m in all_mutants.get(p, [])}
        on_disk[p] = {"tests": record[p]["tests"],
                      "mutants": {i: v for i, v in sorted(record[p]["mutants"].items()) if i in ids}}
    tmp = RECORD.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(on_disk, indent=1, sort_keys=True) + "\n")
    tmp.replace(RECORD)
    return on_disk


# -- the report --------------------------------------------------------------------------------

SPEC_SILENT = "Equivalent in the spec"  # a reason that starts so: only input the handout leaves open tells it


def summarise(all_mutants: dict[str, list[Mutant]], record: dict, equivalent: dict) -> tuple[list, list[str]]:
    """Rows (problem, mutants, killed, equivalent, of them only for unspecified input, survived,
    score, strict score, stale) and the problems below the bar. The score leaves out every
    recorded equivalent; the strict score counts the spec-silent ones as survivors."""
    rows, below = [], []
    tot = [0, 0, 0, 0]
    for problem, mutants in all_mutants.items():
        done = record.get(problem, {}).get("mutants", {})
        eq = equivalent.get(problem, {})
        n_stale = len(stale(problem, mutants, record, equivalent))
        killed = sum(1 for m in mutants if done.get(m.id, {}).get("killed_by"))
        alive_eq = [m.id for m in mutants if m.id in eq and m.id in done and not done[m.id].get("killed_by")]
        n_eq, n_spec = len(alive_eq), sum(eq[i].startswith(SPEC_SILENT) for i in alive_eq)
        row = _row(problem, len(mutants), killed, n_eq, n_spec, n_stale)
        rows.append(row)
        tot = [a + b for a, b in zip(tot, (len(mutants), killed, n_eq, n_spec))]
        if row[6] < BAR_PROBLEM or n_stale:
            below.append(problem)
    rows.append(_row("overall", *tot, sum(r[-1] for r in rows)))
    if rows[-1][6] < BAR_OVERALL:
        below.append("overall")
    return rows, below


def _row(name, n, killed, n_eq, n_spec, n_stale):
    return (name, n, killed, n_eq, n_spec, n - killed - n_eq, killed / max(1, n - n_eq),
            killed / max(1, n - n_eq + n_spec), n_stale)


def table(rows) -> str:
    lines = [f"{'problem':<18}{'mutants':>8}{'killed':>8}{'equiv':>7}{'(spec)':>7}{'survived':>9}{'score':>8}"
             f"{'strict':>8}{'stale':>7}"]
    for p, n, k, e, sp, s, score, strict, st in rows:
        lines.append(f"{p:<18}{n:>8}{k:>8}{e:>7}{sp:>7}{s:>9}{score:>8.1%}{strict:>8.1%}{st:>7}")
    lines.append("score: killed / (mutants - equiv); strict: the (spec) equivalents, which only input the "
                 "handout leaves open tells apart, counted as survivors")
    return "\n".join(lines)


def survivors_md(all_mutants, record, equivalent, rows) -> str:
    out = ["# Mutation survivors", "",
           "Generated by `python -m tests.self.mutation`; do not edit. Reasons for equivalent",
           "mutants live in `equivalent.md`. Each survivor: where, its id, the line before (-) and",
           "after (+) the mutation.", "", "```", table(rows), "```", ""]
    for problem, mutants in all_mutants.items():
        done = record.get(problem, {}).get("mutants", {})
        eq = equivalent.get(problem, {})
        alive = [m for m in mutants if m.id in done and not done[m.id].get("killed_by")]
        if not alive:
            continue
        out += [f"## {problem}", ""]
        for m in alive:
            why = eq.get(m.id)
            reference = problem_file(problem, "reference")
            before = reference.read_text().splitlines()[m.line - 1].strip()
            after = m.source.splitlines()[m.line - 1].strip()
            out += [f"- `{reference.relative_to(ROOT).as_posix()}:{m.line}` `{m.id}`", "  ```diff",
                    f"  - {before}", f"  + {after}",
                    "  ```", f"  equivalent: {why}" if why else "  **not killed**: a hole in the tests"]
        out.append("")
    return "\n".join(out)


def survivors_stale(all_mutants, record, equivalent, rows: list | None = None) -> list[str]:
    """survivors.md against what the record and equivalent.md make of it now: a reason added to
    equivalent.md moves no verdict, so no mutant is stale, yet the list must say it. ``rows``:
    ``summarise``'s, where the caller has them."""
    rows = summarise(all_mutants, record, equivalent)[0] if rows is None else rows
    now = SURVIVORS.read_text() if SURVIVORS.exists() else ""
    return [] if now == survivors_md(all_mutants, record, equivalent, rows) else [
        f"{SURVIVORS.name} (not as the record and {EQUIVALENT.name} make it)"]


def unknown_equivalents(all_mutants, record, equivalent) -> list[str]:
    """Reasons recorded for mutants that no longer exist or are now killed, or recorded without a
    reason: stale entries."""
    bad = []
    for problem, reasons in equivalent.items():
        done = record.get(problem, {}).get("mutants", {})
        ids = {m.id for m in all_mutants.get(problem, [])}
        bad += [f"{problem}: {i}" + ("" if why else " (no reason given)") for i, why in reasons.items()
                if i not in ids or done.get(i, {}).get("killed_by") or not why]
    return bad


def regrade(problems: list[str], all_mutants: dict[str, list[Mutant]], record: dict, equivalent: dict,
            workers: int, timeout: float, everything: bool = False) -> dict:
    """Bring ``problems``' entries of the record up to date (``plan``; ``everything``: all in
    full), write it, and return it as written."""
    steps = {p: (plan(p, all_mutants[p], record, equivalent) if not everything
                 else {"keep": [], "quick": [], "full": list(all_mutants[p])}) for p in problems}
    quick = [(p, m) for p in problems for m in steps[p]["quick"]]
    full = [(p, m) for p in problems for m in steps[p]["full"]]
    print(f"{len(quick) + len(full)} mutant(s) to run: {len(quick)} re-checked on the test that killed them, "
          f"{len(full)} on the whole suite", flush=True)
    if not quick and not full:
        return record
    touched = sorted({p for p, _ in quick + full})
    warm_up(touched)
    started = time.monotonic()
    old = {p: record.get(p, {}).get("mutants", {}) for p in touched}
    for p in touched:  # a new entry per problem run, keeping what is current
        record[p] = {"tests": tests_hash(p), "mutants": {m.id: old[p][m.id] for m in steps[p]["keep"]}}
    counter, again = [0], []

    def done(problem, mutant, killed_by, rechecked=False):
        if rechecked and not killing_test(killed_by):  # its test passes now, or the re-check itself
            again.append((problem, mutant))              # broke or hung: the whole suite decides
            return
        record[problem]["mutants"][mutant.id] = {"source": source_hash(mutant), "killed_by": killed_by}
        if not killed_by:
            print(f"  survived  {problem}:{mutant.line}  {mutant.id}", flush=True)
        counter[0] += 1
        if counter[0] % 100 == 0:
            print(f"  {counter[0]} done", flush=True)

    try:
        if quick:
            run_mutants(quick, workers, timeout, lambda p, m, k: done(p, m, k, rechecked=True),
                        only={m.id: old[p][m.id]["killed_by"] for p, m in quick})
            print(f"  re-checked {len(quick)} in {time.monotonic() - started:.0f} s: {len(quick) - len(again)} "
                  f"still killed, {len(again)} to the whole suite", flush=True)
        run_mutants(full + again, workers, timeout, done)
    finally:  # an interrupted run keeps what it finished
        record = save(record, set(touched), all_mutants)
    print(f"ran {len(quick) + len(full) + len(again)} grade(s) in {time.monotonic() - started:.0f} s", flush=True)
    return record


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.self.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", metavar="PROBLEM")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--all", action="store_true", help="rerun every mutant, stale or not")
    parser.add_argument("--check", action="store_true", help="run nothing; exit 1 if stale or below the bar")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant (default 60)")
    args = parser.parse_args(argv)
    problems = args.problems or list(PROBLEMS)
    if unknown := set(problems) - set(PROBLEMS):
        parser.error(f"unknown problem(s) {sorted(unknown)}; known: {', '.join(PROBLEMS)}")
    all_mutants = {p: module_mutants(REFERENCE, STUBS, p) for p in PROBLEMS}
    record, equivalent = load_record(), load_equivalent()

    if not args.check:
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # see the module's docstring
        record = regrade(problems, all_mutants, record, equivalent, args.jobs, args.timeout, args.all)

    rows, below = summarise(all_mutants, record, equivalent)
    stale_eq = unknown_equivalents(all_mutants, record, equivalent)
    listed = survivors_stale(all_mutants, record, equivalent, rows) if args.check else []
    if not args.check:
        SURVIVORS.write_text(survivors_md(all_mutants, record, equivalent, rows))
    print(table(rows))
    if stale_eq:
        print("equivalent.md names mutants that are gone, killed, or without a reason:\n  " + "\n  ".join(stale_eq))
    if below:
        print(f"below the bar ({BAR_PROBLEM:.0%} per problem, {BAR_OVERALL:.0%} overall) or stale: {', '.join(below)}")
    if listed:
        print(f"stale: {listed[0]}: run `python -m tests.self.mutation` (it reruns no mutant for it)")
    return 1 if below or stale_eq or listed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
