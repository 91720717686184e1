"""Mutation testing: how many of the slips a student can make do the graded tests catch?

    python -m tests.self.mutation [--jobs N] [--all] [PROBLEM ...]   run what is stale, report
    python -m tests.self.mutation --check                            report only; exit 1 if stale

Each mutant (tests/self/mutation/mutants.py) is a submission: the reference's modules with one
slip in its problem's module. It is graded in-process, through the seam, on that problem's
graded tests (public and hidden, no GPU), stopping at the first test it fails: it is *killed*
if one fails or it runs past the time limit, and *survives* if all pass. A survivor is a hole in
the tests, or an equivalent mutant (a change no test could see: the reason is recorded in
equivalent.md, the one file of such reasons).

Incremental: record.json keeps each mutant's outcome with a hash of the mutant's source and of
what its problem's graded tests depend on (``tests_hash``): its own tests, snapshot, probe and
helpers (``hashed_files``), the machinery every graded test imports whole (tests/checks.py,
tests/snapshot.py, the conftest, every module of the seam), and of the registry
(seam/problems.py) only what concerns it: the file less the other problems' entries, NO_RULE
lines and rules (``registry_part``). So a new problem, or another problem's title or rule,
leaves this record current; a change to the shared machinery makes every problem's stale. Only
mutants whose hash changed are run again (`--all`: every one).

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
from grader.provenance import graded_files
from grader.scaffold import REGISTRY, registry_lines
from seam.problems import PROBLEMS, owner
from tests.self.mutation.mutants import Mutant, module_mutants
from tests.self.submissions import reference_with

HERE = Path(__file__).resolve().parent
RECORD = HERE / "record.json"
EQUIVALENT = HERE / "equivalent.md"
SURVIVORS = HERE / "survivors.md"
BAR_PROBLEM, BAR_OVERALL = 0.90, 0.95
MEMORY_BYTES = 6 << 30   # per mutant: a slip that allocates without bound is killed, not the machine


def hashed_files(problem: str) -> list[Path]:
    """What decides whether a mutant of ``problem`` is killed: every file a grade depends on
    (provenance.graded_files: the graded tests, their data and helpers, tests/checks.py, the
    seam and its probes), less the reference (a mutant's own source is hashed apart) and less
    the files of the layout that belong to another problem."""
    def ours(path: Path) -> bool:
        found = owner(path.relative_to(ROOT))
        return found is None or found[1] == problem
    return [f for f in graded_files() if not f.is_relative_to(REFERENCE) and ours(f)]


def registry_part(text: str, problem: str) -> str:
    """The registry's text as it concerns ``problem``: its lines less those that concern other
    problems only (grader/scaffold.py ``registry_lines``: their entries, NO_RULE lines, rules)."""
    owned = registry_lines(text)
    others = set().union(*(lines for p, lines in owned.items() if p != problem)) - owned.get(problem, set())
    return "".join(line for i, line in enumerate(text.splitlines(keepends=True)) if i not in others)


def tests_hash(problem: str) -> str:
    h = hashlib.sha256()
    for f in hashed_files(problem):
        data = registry_part(f.read_text(), problem).encode() if f == ROOT / REGISTRY else f.read_bytes()
        h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:16]


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


def stale(problem: str, mutants: list[Mutant], record: dict) -> list[Mutant]:
    entry = record.get(problem, {})
    if entry.get("tests") != tests_hash(problem):
        return list(mutants)
    done = entry.get("mutants", {})
    return [m for m in mutants if done.get(m.id, {}).get("source") != source_hash(m)]


# -- running one mutant ------------------------------------------------------------------------

def _grade(problem: str, mutant: Mutant, time_limit: float) -> str | None:
    """In a forked child: the first graded test this mutant fails, or None if it passes them all."""
    from grader.grade import run_tests
    from seam import InProcess
    folder = reference_with(Path(tempfile.mkdtemp(prefix="mutant_")), {problem: mutant.source})
    try:
        impl = InProcess(folder, package=f"mutant_{os.getpid()}")
        facts = run_tests(impl, gpu="skip", cuda=False, time_limit=time_limit, quiet=True,
                          problems=[problem], first_failure=True).facts.values()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failed = [f.nodeid.split("::")[-1] for f in facts if f.outcome not in ("passed", "skipped")]
    return failed[0] if failed else None


def _limited(problem: str, mutant: Mutant, time_limit: float) -> dict:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    return {"killed_by": _grade(problem, mutant, time_limit)}


def run_mutants(jobs: list[tuple[str, Mutant]], workers: int, timeout: float, on_done) -> None:
    """Grade each (problem, mutant) in a forked child, ``workers`` at a time; a child past
    ``timeout`` seconds is killed and its mutant counts as killed ("timeout"), and one whose run
    itself broke (e.g. out of memory) as killed by that error: the slip is caught."""
    def done(key, result):
        problem, mutant = key
        if result is None:
            on_done(problem, mutant, "timeout")
        else:
            on_done(problem, mutant, f"error: {result['error']}" if "error" in result else result["killed_by"])
    forked([((p, m), lambda p=p, m=m: _limited(p, m, timeout)) for p, m in jobs], workers, timeout, done)


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


def warm_up() -> None:
    """Import torch and every test module, and let the reference remember its answers, before
    forking: each child then pays only for its own mutant. Also the baseline: the unmutated
    reference, graded exactly as a mutant is, must pass everything."""
    from grader.grade import run_tests
    from seam import InProcess
    facts = run_tests(InProcess(REFERENCE, package="mutation_baseline"), gpu="skip", cuda=False,
                      time_limit=60, quiet=True).facts.values()
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
        n_stale = len(stale(problem, mutants, record))
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
        jobs = [(p, m) for p in problems for m in (all_mutants[p] if args.all else stale(p, all_mutants[p], record))]
        print(f"{len(jobs)} mutant(s) to run", flush=True)
        if jobs:
            warm_up()
            started = time.monotonic()
            for p in {p for p, _ in jobs}:  # a new entry per problem run, keeping what is current
                old, now = record.get(p, {}), tests_hash(p)
                keep = old.get("mutants", {}) if old.get("tests") == now and not args.all else {}
                record[p] = {"tests": now, "mutants": keep}

            counter = [0]

            def done(problem, mutant, killed_by):
                record[problem]["mutants"][mutant.id] = {"source": source_hash(mutant), "killed_by": killed_by}
                if not killed_by:
                    print(f"  survived  {problem}:{mutant.line}  {mutant.id}", flush=True)
                counter[0] += 1
                if counter[0] % 50 == 0:
                    print(f"  {counter[0]}/{len(jobs)} done", flush=True)

            try:
                run_mutants(jobs, args.jobs, args.timeout, done)
            finally:  # an interrupted run keeps what it finished
                record = save(record, {p for p, _ in jobs}, all_mutants)
            print(f"ran {len(jobs)} mutant(s) in {time.monotonic() - started:.0f} s", flush=True)

    rows, below = summarise(all_mutants, record, equivalent)
    stale_eq = unknown_equivalents(all_mutants, record, equivalent)
    if not args.check:
        SURVIVORS.write_text(survivors_md(all_mutants, record, equivalent, rows))
    print(table(rows))
    if stale_eq:
        print("equivalent.md names mutants that are gone, killed, or without a reason:\n  " + "\n  ".join(stale_eq))
    if below:
        print(f"below the bar ({BAR_PROBLEM:.0%} per problem, {BAR_OVERALL:.0%} overall) or stale: {', '.join(below)}")
    return 1 if below or stale_eq else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
