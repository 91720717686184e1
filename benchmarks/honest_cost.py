"""What the honest-work watch (seam/honest.py) costs a grade of the reference.

    python benchmarks/honest_cost.py [--pairs N] [--problems P ...] [--grade-only]

For each problem, N pairs (default 3) of in-process runs of its graded tests, watched and not
(``InProcess(watched=...)``), in alternating order; the fastest of each side is kept (the
machines are shared and noisy: the minimum is the run least disturbed). Prints each problem's
times and ratio, the sum over the problems, and that added time against one real
`python -m grader grade reference --gpu skip` measured in the same run: the watch runs in the
sandbox's worker there, so the added seconds are the same and the grade is the denominator.
training and benchmarking are left out by default: they take minutes, and what they time (the
loop, MFU) is no ruled function's work. ``--grade-only`` grades those problems alone for the
denominator too (quicker; the share is then of that smaller grade), as the suite's smoke run
does (tests/self/system/test_benchmarks.py).
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.grade import run_tests  # noqa: E402
from grader.paths import REFERENCE  # noqa: E402
from seam import InProcess  # noqa: E402
from seam.problems import PROBLEMS  # noqa: E402

SLOW = ("training", "benchmarking")


def once(problem: str, watched: bool, tag: str) -> float:
    impl = InProcess(REFERENCE, package=f"cost_{problem}_{tag}", watched=watched)
    start = time.perf_counter()
    plugin = run_tests(impl, gpu="skip", cuda=False, time_limit=120, quiet=True, problems=[problem])
    elapsed = time.perf_counter() - start
    failed = [f.nodeid for f in plugin.facts.values() if f.outcome == "failed"]
    if failed:
        sys.exit(f"the reference failed {failed[:3]} ({'watched' if watched else 'unwatched'})")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=3, help="pairs per problem; the fastest of each side is kept")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=[p for p in PROBLEMS if p not in SLOW],
                        help=f"default: all but {', '.join(SLOW)} (minutes each; in-process, not what matters)")
    parser.add_argument("--grade-only", action="store_true",
                        help="the grade in the denominator grades only these problems too")
    args = parser.parse_args()
    problems = args.problems
    total = {True: 0.0, False: 0.0}
    print(f"{'problem':18} {'unwatched s':>11} {'watched s':>10} {'ratio':>6}")
    for problem in problems:
        best = {True: float("inf"), False: float("inf")}
        for i in range(args.pairs):
            for watched in ((False, True) if i % 2 == 0 else (True, False)):
                best[watched] = min(best[watched], once(problem, watched, f"{i}_{watched}"))
        for side in best:
            total[side] += best[side]
        print(f"{problem:18} {best[False]:11.2f} {best[True]:10.2f} {best[True] / best[False]:6.2f}", flush=True)
    added = total[True] - total[False]
    print(f"{'all of them':18} {total[False]:11.2f} {total[True]:10.2f} {total[True] / total[False]:6.2f}")
    only = ["--only", ",".join(problems)] if args.grade_only else []
    with tempfile.TemporaryDirectory(prefix="honest-cost-") as tmp:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(REFERENCE), "--out",
                               str(Path(tmp) / "results.json"), "--quiet", "--gpu", "skip", *only],
                              cwd=ROOT, capture_output=True, text=True)
        grade = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"grade reference failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    print(f"the watch adds {added:.2f} s; `grade reference --gpu skip{' '.join(['', *only])}` took {grade:.1f} s: "
          f"{100 * added / grade:.1f}% of a grade")


if __name__ == "__main__":
    main()
