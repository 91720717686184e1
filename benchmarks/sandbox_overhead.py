"""Sandboxed `grade reference` against the same tests run in-process with plain pytest.

    python benchmarks/sandbox_overhead.py [--pairs N]

Runs N pairs (default 3), each the in-process run then the sandboxed one, back to back, and
prints each pair's wall times and ratio, then the median ratio (the machines are shared and
noisy: compare ratios measured in one run, not seconds).
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp()) / "results.json"
    sandboxed = [sys.executable, "-m", "grader", "grade", "reference", "--out", str(out), "--quiet",
                 "--gpu", "skip"]
    in_process = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/public",
                  "tests/hidden", "--impl", "reference", "-m", "not gpu"]
    ratios = []
    for i in range(args.pairs):
        plain, sandbox = timed(in_process), timed(sandboxed)
        ratios.append(sandbox / plain)
        print(f"pair {i + 1}: in-process pytest {plain:6.2f} s, grade reference (sandboxed) {sandbox:6.2f} s, "
              f"ratio {ratios[-1]:.3f}x")
    print(f"median ratio sandboxed / in-process over {args.pairs} pairs: {statistics.median(ratios):.3f}x")


if __name__ == "__main__":
    main()
