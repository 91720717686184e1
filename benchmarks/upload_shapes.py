"""Every upload shape a student makes from the bundle, graded in full: the table for the handout.

    python benchmarks/upload_shapes.py [--jobs N]

Builds the real `release --student` bundle with the reference filled in, packs it as students
do (tests/self/uploads.py: a Finder zip with __MACOSX/, a GitHub "Download ZIP", the folder
nested, a bundle full of notebooks and stray copies), grades each with `python -m grader
grade` as a TA would, and prints shape -> score. Every row must equal the bare modules' row.
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


def grade(path: Path, out: Path) -> tuple[str, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--out", str(out), "--quiet",
                           "--gpu", "skip"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        return f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}", time.perf_counter() - start
    results = json.loads(out.read_text())
    return results["output"].splitlines()[0], time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="grades side by side (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="upload-shapes-") as tmp:
        uploads = shapes(Path(tmp) / "shapes", REFERENCE)
        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(lambda kv: (kv[0], *grade(kv[1], Path(tmp) / f"{abs(hash(kv[0]))}.json")),
                                 uploads.items()))
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
