"""Every upload shape a student makes from the bundle, graded in full: the table for the handout.

    python benchmarks/upload_shapes.py [--jobs N] [--only PROBLEM,...] [--shapes N]

Builds the real `release --student` bundle with the reference filled in, packs it as students
do (tests/self/uploads.py: a Finder zip with __MACOSX/, a GitHub "Download ZIP", the folder
nested, a bundle full of notebooks and stray copies), grades each with `python -m grader
grade` as a TA would, and prints shape -> score. Every row must equal the bare modules' row.
``--only`` and ``--shapes N`` (the first N shapes) grade less (the suite's smoke run,
tests/self/system/test_benchmarks.py: the bare modules on one problem).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.paths import REFERENCE  # noqa: E402
from tests.self.uploads import shapes  # noqa: E402


def grade(path: Path, out: Path, only: list[str]) -> tuple[str, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--out", str(out), "--quiet",
                           "--gpu", "skip", *only], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        return f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}", time.perf_counter() - start
    results = json.loads(out.read_text())
    return results["output"].splitlines()[0], time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="grades side by side (default 2)")
    parser.add_argument("--only", metavar="PROBLEM[,PROBLEM...]", help="grade only these problems")
    parser.add_argument("--shapes", type=int, default=None,
                        help="grade the first N shapes only (the bare modules first)")
    args = parser.parse_args()
    if args.shapes is not None and args.shapes < 1:
        parser.error(f"--shapes: give 1 or more, not {args.shapes}")
    only = ["--only", args.only] if args.only else []
    with tempfile.TemporaryDirectory(prefix="upload-shapes-") as tmp:
        uploads = list(shapes(Path(tmp) / "shapes", REFERENCE).items())[:args.shapes]
        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(lambda kv: (kv[0], *grade(kv[1], Path(tmp) / f"{abs(hash(kv[0]))}.json", only)),
                                 uploads))
    width = max(len(name) for name, _, _ in rows)
    print(f"| {'upload shape':<{width}} | score | seconds |")
    print(f"|{'-' * (width + 2)}|-------|---------|")
    for name, score, seconds in rows:
        print(f"| {name:<{width}} | {score.removeprefix('Score: ')} | {seconds:.0f} |")
    bare = rows[0][1]
    same = all(score == bare for _, score, _ in rows)
    print(f"\nevery shape scores as the bare modules ({bare}): {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
