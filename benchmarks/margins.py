"""Every tolerance with its margins in sight: how far the right and the wrong answers stand from it.

    python benchmarks/margins.py [--json OUT] [--doc] [--jobs 2] [--mutants N]
                                 [--problems P ...] [--platforms N] [--most N]

Every comparison of numbers with a tolerance in the graded suites goes through tests/checks.py
(``mismatch`` for floats, ``within`` for tensors), which hands its deviation, as a multiple of
the tolerance (1.0: at the edge, over 1: it fails), to ``checks.observer``. Here the graded CPU
tests run, in process, on:

- correct answers: the reference and each alternative solution, as installed and under every
  OpenBLAS kernel this CPU runs (each with the matching ATen and MKL code path) at 1 and 2
  threads, each in a fresh process; and each planted shortcut that computes the answer with
  PyTorch itself (graded blind, as tests/self/behaviour.py does), where it passes every test but
  the "how" ones (PyTorch as the oracle runs in every one of those processes too);
- mistakes: the planted bugs (the named mistakes among them) and the killed mutants
  (tests/self/mutation: each up to the first test it fails, as the mutation run grades it).

Per check (a test and a tolerance it states), ``worst_correct`` is the largest deviation of a
correct answer and ``closest_mistake`` the smallest of a mistake this check catches (over 1),
1e308 if none does. ``why`` (``WHY`` below) says why a margin under 10x on either side is right.
The JSON is the list of checks; ``--doc`` writes the table into docs/margins.md between its markers.
``--problems``, ``--platforms N`` (the first N: as installed first) and ``--most N`` (alternatives,
shortcuts and planted bugs per problem) run less, for a look at one problem (the suite's smoke
run, tests/self/system/test_benchmarks.py: one problem, one of each).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grader.paths import REFERENCE, ROOT, STUBS, problem_file  # noqa: E402
from seam.problems import PROBLEMS  # noqa: E402

CLEAR = 10.0          # a margin under this on either side needs a reason (or a better check)
NONE = 1e308          # closest_mistake of a check no mistake reaches
KERNELS = {"Prescott": ("sse3", "default", "SSE4_2"), "Haswell": ("avx2", "avx2", "AVX2"),
           "SkylakeX": ("avx512f", "avx512", "AVX512")}   # OpenBLAS core -> CPU flag, ATen, MKL path
MARKERS = ("<!-- margins: python benchmarks/margins.py --doc -->", "<!-- /margins -->")
DOC = ROOT / "docs" / "margins.md"

# Why a margin under 10x is right for a check: test -> one sentence.
WHY: dict[str, str] = {
    "tests/hidden/test_scaling.py::test_fit_noisy_power_laws":
        "a statistical band, not a rounding one: each case's atol is 6 standard deviations of the fit "
        "(false alarms under 1e-6 per test), where a correct fit lands by its noise alone; the same test "
        "also holds the fit to np.polyfit at rtol 1e-8, and the exact-data test catches the mistakes by 1e8",
    "tests/public/test_optim.py::test_adamw_matches_torch_small":
        "the closest, a step counter started at 1 (bias corrections a step late), fades as steps go on and "
        "stands at 9x here; test_adamw_state compares the step count exactly, so it cannot pass the grade",
}


# Why a check no mistake reaches (closest_mistake 1e308) is left so.
UNREACHED = ("no planted bug or killed mutant fails this comparison (each fails another part of the test or "
             "another test first; a mutant is graded up to its first failure) and every one is caught (0 "
             "survivors): it guards the rounding of correct answers")


def tolerance(rtol: float, atol: float) -> str:
    return f"rtol={rtol:g}, atol={atol:g}"


# ---- one graded run, observed ------------------------------------------------------------------
def observed(folder: Path, problems, package: str, blind: bool = False, first_failure: bool = False) -> dict:
    """{"ratios": {test: {tolerance: the largest deviation seen}}, "failed": [tests not passed]}."""
    from grader.grade import run_tests
    from seam import InProcess
    from tests import checks
    ratios: dict[str, dict[str, float]] = defaultdict(dict)

    def observe(ratio: float, rtol: float, atol: float) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
        key = tolerance(rtol, atol)
        ratios[test][key] = max(ratios[test].get(key, 0.0), ratio)

    impl = InProcess(folder, package=package, watched=not blind)
    if blind:
        impl._static_rules, impl._unverifiable = {}, ""
    checks.observer = observe
    try:
        facts = run_tests(impl, gpu="skip", cuda=False, time_limit=120, quiet=True, problems=list(problems),
                          first_failure=first_failure).facts.values()
    finally:
        checks.observer = None
    failed = [f.nodeid for f in facts if f.outcome == "failed"]
    return {"ratios": {t: {k: (v if math.isfinite(v) else NONE) for k, v in d.items()} for t, d in ratios.items()},
            "failed": failed, "how": [f.nodeid for f in facts if f.outcome == "failed" and f.how]}


def forked(jobs: list[tuple[str, callable]], workers: int, timeout: float = 600) -> dict[str, dict]:
    """Each (label, fn) run in a forked child of this warmed process (the mutation run's pool):
    fn's result by label; a child that dies or runs past ``timeout`` counts as a failed run."""
    from tests.self.mutation.__main__ import forked as pool
    out: dict[str, dict] = {}

    def done(label, result):
        out[label] = result if result is not None and "error" not in result else {
            "ratios": {}, "failed": [f"error: {(result or {}).get('error', 'no result')}"], "how": []}
    pool(jobs, workers, timeout, done)
    return out


# ---- the variants ------------------------------------------------------------------------------
def graded_copy(problems, package: str, replaced: dict[str, str] | None = None, build=None, **options) -> dict:
    """``observed`` on a copy of the reference with ``replaced`` modules (or ``build(folder)``'s
    submission), the copy removed after."""
    from tests.self.submissions import reference_with
    with tempfile.TemporaryDirectory(prefix="margins_") as tmp:
        folder = build(Path(tmp) / "s") if build else reference_with(Path(tmp) / "s", replaced or {})
        return observed(folder, problems, package, **options)


def per_problem(items, problem_of, problems, most: int | None) -> list:
    """The items of ``problems``, at most ``most`` of each (None: all), in their order."""
    return [x for p in problems for x in [x for x in items if problem_of(x) == p][:most]]


def shortcut_jobs(problems, most: int | None = None) -> list[tuple[str, callable]]:
    from tests.self.shortcuts import all_shortcuts
    return [(f"torch {s.id}", lambda s=s: graded_copy([s.problem], "m_short", build=s.build, blind=True))
            for s in per_problem(all_shortcuts(), lambda s: s.problem, problems, most)]


def mistake_jobs(mutants: int | None, problems, most: int | None = None) -> list[tuple[str, callable]]:
    from tests.self.bugs import all_bugs
    from tests.self.mutation.__main__ import load_record
    from tests.self.mutation.mutants import module_mutants
    jobs = [(f"bug {b.problem}:{b.name}", lambda b=b: graded_copy([b.problem], "m_bug", {b.problem: b.apply(
        problem_file(b.problem, "reference").read_text())}))
            for b in per_problem(all_bugs(), lambda b: b.problem, problems, most)]
    record = load_record()
    killed = []
    for p in problems:
        done = record.get(p, {}).get("mutants", {})
        killed += [(p, m) for m in module_mutants(REFERENCE, STUBS, p) if done.get(m.id, {}).get("killed_by")]
    for p, m in killed[:mutants]:
        jobs.append((f"mutant {m.id}", lambda p=p, m=m: graded_copy([p], "m_mut", {p: m.source},
                                                                     first_failure=True)))
    return jobs


def platform_variants() -> list[tuple[str, dict]]:
    """(label, environment): as installed, and under each kernel this CPU runs at 1 and 2 threads."""
    flags = set(open("/proc/cpuinfo").read().split()) if os.path.exists("/proc/cpuinfo") else set()
    out = [("as installed", {"MARGINS_THREADS": "2"})]
    for kernel, (flag, aten, mkl) in KERNELS.items():
        if flag.replace("sse3", "pni") not in flags:
            continue
        for threads in (1, 2):
            out.append((f"{kernel}, {threads} thread(s)",
                        {"OPENBLAS_CORETYPE": kernel, "ATEN_CPU_CAPABILITY": aten, "MKL_ENABLE_INSTRUCTIONS": mkl,
                         "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                         "OPENBLAS_NUM_THREADS": str(threads), "MARGINS_THREADS": str(threads)}))
    return out


def platform_child(problems, most: int | None) -> None:
    """--child: the reference's and each alternative's observed runs, in this fresh process (its
    environment chose the kernels before torch was imported), as JSON on stdout."""
    import torch
    from tests.self.alternatives import all_alternatives
    torch.set_num_threads(int(os.environ.get("MARGINS_THREADS", "1")))
    data = {"reference": observed(REFERENCE, problems, "m_ref")}
    for k, (p, how, path) in enumerate(per_problem(all_alternatives(), lambda a: a[0], problems, most)):
        data[f"alternative {p}:{how}"] = graded_copy([p], f"m_alt{k}", {p: path.read_text()})
    sys.stdout.write("\n" + json.dumps(data))


def platform_runs(workers: int, variants: list[tuple[str, dict]], problems, most: int | None) -> dict[str, dict]:
    out, procs = {}, []
    variants = list(variants)
    while variants or procs:
        while variants and len(procs) < workers:
            label, env = variants.pop(0)
            procs.append((label, subprocess.Popen([sys.executable, __file__, "--child", "--problems", *problems,
                                                   *(["--most", str(most)] if most is not None else [])],
                                                  cwd=ROOT, text=True,
                                                  env={**os.environ, **env}, stdout=subprocess.PIPE,
                                                  stderr=subprocess.DEVNULL)))
        platform, proc = procs.pop(0)
        stdout, _ = proc.communicate(timeout=900)
        for label, run in json.loads(stdout.strip().splitlines()[-1]).items():
            out[f"{label} ({platform})"] = run
    return out


# ---- the table ---------------------------------------------------------------------------------
def _stated(tolerances: set[str]) -> str:
    """The tolerance a test states: one pair, a few, or a band per case (a statistical test's)."""
    if len(tolerances) <= 3:
        return "; ".join(sorted(tolerances))
    pairs = [dict(kv.split("=") for kv in t.split(", ")) for t in tolerances]
    span = {k: (min(float(p[k]) for p in pairs), max(float(p[k]) for p in pairs)) for k in ("rtol", "atol")}
    return "per case: " + ", ".join(f"{k}={lo:g}" if lo == hi else f"{k} {lo:.3g} to {hi:.3g}"
                                    for k, (lo, hi) in span.items())


def margins(correct: dict[str, dict], mistakes: dict[str, dict]) -> list[dict]:
    """One row per test with a toleranced comparison (its deviations are multiples of each
    comparison's own tolerance, so the cases of a per-case band are one check)."""
    worst: dict[str, tuple[float, str]] = {}
    stated: dict[str, set[str]] = defaultdict(set)
    for label, run in correct.items():
        for test, by_tol in run["ratios"].items():
            stated[test] |= set(by_tol)
            r = max(by_tol.values())
            if r > worst.get(test, (-1.0, ""))[0]:
                worst[test] = (r, label)
    closest: dict[str, tuple[float, str]] = {}
    for label, run in mistakes.items():
        for test, by_tol in run["ratios"].items():
            r = max(by_tol.values())
            if test in worst and r > 1 and r < closest.get(test, (math.inf, ""))[0]:
                closest[test] = (r, label)
    rows = []
    for test, (w, w_by) in sorted(worst.items()):
        c, c_by = closest.get(test, (NONE, ""))
        rows.append({"test": test, "tolerance": _stated(stated[test]), "worst_correct": w, "closest_mistake": c,
                     "why": WHY.get(test, UNREACHED if c >= NONE else ""), "_worst_by": w_by, "_closest_by": c_by})
    return rows


def under(row: dict) -> bool:
    """A margin under CLEAR on either side: the worst correct answer over 1/CLEAR of the
    tolerance, or the closest mistake caught under CLEAR times it."""
    return row["worst_correct"] > 1 / CLEAR or row["closest_mistake"] < CLEAR


def table(rows: list[dict]) -> list[str]:
    """Every check, those under CLEAR first (bold); a check no mistake reaches says "none"."""
    def fmt(x):
        return "none" if x >= NONE else f"{x:.3g}"
    lines = [f"{sum(map(under, rows))} of {len(rows)} toleranced checks run under {CLEAR:g}x on a side "
             f"(worst correct over 1/{CLEAR:g} of the tolerance, or the closest mistake under {CLEAR:g}x); "
             f"{sum(r['closest_mistake'] >= NONE for r in rows)} are reached by no mistake (\"none\": {UNREACHED}).", "",
             "| test | tolerance | worst correct | closest mistake | why |", "|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (not under(r), r["test"])):
        name = f"`{r['test'].removeprefix('tests/')}`"
        lines.append(f"| {'**' + name + '**' if under(r) else name} | {r['tolerance']} | {fmt(r['worst_correct'])} "
                     f"({r['_worst_by']}) | {fmt(r['closest_mistake'])}"
                     f"{' (' + r['_closest_by'] + ')' if r['_closest_by'] else ''} | "
                     f"{'' if r['why'] == UNREACHED else r['why']} |")
    return lines


def write_doc(lines: list[str]) -> None:
    readme = DOC
    text = readme.read_text()
    start, end = text.index(MARKERS[0]) + len(MARKERS[0]), text.index(MARKERS[1])
    readme.write_text(text[:start] + "\n" + "\n".join(lines) + "\n" + text[end:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write the checks here (a list of objects)")
    parser.add_argument("--doc", action="store_true", help="write the table into docs/margins.md")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--mutants", type=int, default=None, help="at most this many killed mutants (default all)")
    parser.add_argument("--raw", type=Path, help="keep every run's deviations here (or, with --from-raw, read them)")
    parser.add_argument("--from-raw", action="store_true", help="make the table from --raw without grading")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS),
                        help="these problems' tests and variants only (default all)")
    parser.add_argument("--platforms", type=int, default=None, help="the first N platforms only (as installed first)")
    parser.add_argument("--most", type=int, default=None,
                        help="at most N alternatives, shortcuts and planted bugs per problem (default all)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if (args.platforms is not None and args.platforms < 1) or (args.most is not None and args.most < 0):
        parser.error("--platforms: 1 or more; --most: 0 or more")
    if args.child:
        platform_child(args.problems, args.most)
        return 0
    started = time.monotonic()
    if args.from_raw:
        correct, mistakes = json.loads(args.raw.read_text())
    else:
        correct, mistakes = runs(args, started)
        if args.raw:
            args.raw.write_text(json.dumps([correct, mistakes]))
    return report(args, margins(correct, mistakes), started)


def runs(args, started) -> tuple[dict, dict]:
    """Every correct answer's and every mistake's observed run (label -> run)."""
    platforms = platform_variants()[:args.platforms]
    correct = platform_runs(args.jobs, platforms, args.problems, args.most)
    print(f"the reference and the alternatives on {len(platforms)} platforms: "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    from grader.grade import run_tests
    from seam import InProcess
    run_tests(InProcess(REFERENCE, package="m_warm"), gpu="skip", cuda=False, time_limit=120, quiet=True,
              problems=args.problems)  # warm
    others = forked(shortcut_jobs(args.problems, args.most), args.jobs)
    # a shortcut counts as a correct answer only where PyTorch answers every case (the "how" tests aside)
    kept = {k: v for k, v in others.items() if not k.startswith("torch ") or set(v["failed"]) <= set(v["how"])}
    correct |= kept
    print(f"correct answers: {len(correct)} runs ({len(others) - len(kept)} shortcuts left out: PyTorch cannot answer "
          f"every case): "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    mistakes = forked(mistake_jobs(args.mutants, args.problems, args.most), args.jobs)
    print(f"mistakes: {len(mistakes)} runs: {time.monotonic() - started:.0f} s", file=sys.stderr)
    return correct, mistakes


def report(args, rows: list[dict], started: float) -> int:
    """The JSON, the table (printed, and into docs/margins.md with --doc)."""
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows], indent=1) + "\n")
    lines = table(rows)
    print("\n".join(lines))
    if args.doc:
        write_doc(lines)
    print(f"{len(rows)} checks, {sum(map(under, rows))} under {CLEAR:g}x; {time.monotonic() - started:.0f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
