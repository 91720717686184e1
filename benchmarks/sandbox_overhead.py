"""Sandboxed `grade reference` against the same tests run in-process with plain pytest.

    python benchmarks/sandbox_overhead.py [--repeat N]

Prints both wall times and their ratio (measured in one run, back to back; the machines are
shared and noisy, so compare ratios, not seconds).
"""

import argparse
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
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the best is kept")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp()) / "results.json"
    sandboxed = [sys.executable, "-m", "grader", "grade", "reference", "--out", str(out), "--quiet",
                 "--gpu", "skip"]
    in_process = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/public",
                  "tests/hidden", "--impl", "reference", "-m", "not gpu"]
    plain = min(timed(in_process) for _ in range(args.repeat))
    sandbox = min(timed(sandboxed) for _ in range(args.repeat))
    print(f"in-process pytest (reference): {plain:6.2f} s")
    print(f"grade reference (sandboxed):   {sandbox:6.2f} s")
    print(f"ratio sandboxed / in-process:  {sandbox / plain:6.2f}x")


if __name__ == "__main__":
    main()
