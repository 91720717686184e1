"""The grader's own cost of a hostile reply: peak memory and time of `grade --only intensity`.

    python benchmarks/reply_frames.py [--time-limit S] [--no-flood]

Grades three intensity submissions in one run and prints, for each, the grader process's peak
resident memory (its own, not the worker's) and its wall time, and the ratios to the normal run:
the reference; the red team's reply flood (tests/self/attacks.py REPLY_FLOOD: 2 million values in
6 MB, and a 63 MB frame of empty lists). Decoded whole, the 63 MB frames alone take a grader to
10.7 GB and 768 s at a 10 s limit (the red team's grader-memory-frames); the machines are shared and noisy, so compare
the ratios of one run. ``--no-flood`` grades the normal run alone (the suite's smoke run,
tests/self/system/test_benchmarks.py; the flood's grading has a test of its own in
tests/self/grading/test_grader_side.py).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.paths import problem_file  # noqa: E402
from tests.self.attacks import REPLY_FLOOD, STUB_FUNCS, VEHICLE  # noqa: E402

# Runs the grader in this child and prints its own peak RSS (KiB) when it exits.
MEASURED = ("import resource, runpy, sys\n"
            "sys.argv = ['grader'] + sys.argv[1:]\n"
            "try:\n"
            "    runpy.run_module('grader', run_name='__main__')\n"
            "finally:\n"
            "    print('PEAK_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")


def measure(folder: Path, time_limit: float) -> tuple[float, float, float]:
    """(peak GiB, seconds, score) of one grade."""
    out = folder.parent / f"{folder.name}.json"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", MEASURED, "grade", str(folder), "--out", str(out), "--quiet",
                           "--gpu", "skip", "--only", VEHICLE, "--time-limit", str(time_limit)],
                          cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"grading {folder.name} failed:\n{proc.stderr[-2000:]}")
    peak = next(int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("PEAK_KIB"))
    return peak / 2**20, seconds, json.loads(out.read_text())["score"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--no-flood", action="store_true", help="grade the reference alone")
    args = parser.parse_args()
    subs = {"reference": problem_file(VEHICLE, "reference").read_text(), "reply flood": STUB_FUNCS + REPLY_FLOOD}
    rows = {}
    with tempfile.TemporaryDirectory(prefix="reply-frames-") as root:
        for name, source in subs.items():
            if args.no_flood and name != "reference":
                continue
            folder = Path(root) / name.replace(" ", "-")
            folder.mkdir()
            problem_file(VEHICLE, "module", folder).write_text(source)
            rows[name] = measure(folder, args.time_limit)
    base_peak, base_seconds, _ = rows["reference"]
    print(f"{'submission':<12} {'grader peak':>12} {'x normal':>9} {'seconds':>8} {'x normal':>9} {'score':>6}")
    for name, (peak, seconds, score) in rows.items():
        print(f"{name:<12} {peak:>9.2f} GiB {peak / base_peak:>9.2f} {seconds:>8.1f} "
              f"{seconds / base_seconds:>9.2f} {score:>6g}")


if __name__ == "__main__":
    main()
