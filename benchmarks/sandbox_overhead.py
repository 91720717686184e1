"""Sandboxed `grade reference` against the same tests run in-process with plain pytest.

    python benchmarks/sandbox_overhead.py [--pairs N] [--only PROBLEM,...]

Runs N pairs (default 3), each the in-process run then the sandboxed one, back to back, and
prints each pair's wall times and ratio, then the median ratio (the machines are shared and
noisy: compare ratios measured in one run, not seconds). ``--only``: those problems' tests on
both sides (the suite's smoke run, tests/self/system/test_benchmarks.py: one pair, one problem).
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.options import OptionError, problem_list  # noqa: E402
from grader.paths import REFERENCE, TEST_DIRS, problem_file  # noqa: E402


def timed(cmd) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=3, help="paired runs; the median ratio is kept")
    parser.add_argument("--only", metavar="PROBLEM[,PROBLEM...]", help="these problems' tests only")
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="sandbox-overhead-")
    out = Path(tmp.name) / "results.json"
    try:
        only = problem_list(args.only)
    except OptionError as e:
        parser.error(str(e))
    tests = ([problem_file(p, kind) for p in only for kind in ("public_test", "hidden_test")] if only
             else list(TEST_DIRS))
    sandboxed = [sys.executable, "-m", "grader", "grade", str(REFERENCE), "--out", str(out), "--quiet",
                 "--gpu", "skip", *(["--only", ",".join(only)] if only else [])]
    in_process = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, tests),
                  f"--impl={REFERENCE}", "-m", "not gpu"]
    ratios = []
    for i in range(args.pairs):
        plain, sandbox = timed(in_process), timed(sandboxed)
        ratios.append(sandbox / plain)
        print(f"pair {i + 1}: in-process pytest {plain:6.2f} s, grade reference (sandboxed) {sandbox:6.2f} s, "
              f"ratio {ratios[-1]:.3f}x")
    tmp.cleanup()
    print(f"median ratio sandboxed / in-process over {args.pairs} pairs: {statistics.median(ratios):.3f}x")


if __name__ == "__main__":
    main()
