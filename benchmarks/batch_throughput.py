"""`batch --jobs 2` against sequential `grade` calls on the same 20 generated submissions.

    python benchmarks/batch_throughput.py [--jobs 2] [--only PROBLEM,...] [--size N] [--keep DIR]

The class: correct uploads (the reference), partly wrong ones (one planted bug each, from
tests/self/bugs), broken ones (empty, a syntax error in every module, the stubs) and hostile
ones (from tests/self/attacks.py). Prints both wall times, their ratio, the cost of one
more submission in each mode (and what a job spends on one against a lone grade), and checks that every submission gets the same score, test by
test, both ways (exit 1 if not). Measured in one run, back to back: the machines are shared
and noisy, so compare ratios, not seconds. ``--size N`` grades N of the 20, spread over their
kinds (the suite's smoke run, tests/self/system/test_benchmarks.py, grades one).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.batch.output import RESULTS, student_folder  # noqa: E402
from grader.paths import REFERENCE, STUBS, problem_file  # noqa: E402
from seam.problems import PROBLEMS  # noqa: E402
from tests.self.attacks import ATTACKS  # noqa: E402
from tests.self.bugs import all_bugs  # noqa: E402

CLASS = 20  # uploads make_class builds
HOSTILE = ("write results.json everywhere at import", "read the reference solution",
           "conftest.py plugin marks every test passed", "sys.exit(0) at import")


def make_class(root: Path) -> list[str]:
    """CLASS uploads in root/; returns their names, in the order they are graded one by one."""
    names = []

    def add(name: str) -> Path:
        names.append(name)
        return root / name

    for i in range(6):
        shutil.copytree(REFERENCE, add(f"correct{i}"), ignore=shutil.ignore_patterns("__pycache__"))
    bugs = all_bugs()
    picked = [next(b for b in bugs if b.problem == p) for p in PROBLEMS][:6]  # six problems, one bug each
    for bug in picked:
        bug.build(add(f"wrong-{bug.problem}"))
    for i in range(2):
        add(f"empty{i}").mkdir()
    syntax = add("syntax-errors")
    syntax.mkdir()
    for p in PROBLEMS:
        problem_file(p, "module", syntax).write_text("def oops(:\n")
    shutil.copytree(STUBS, add("stubs"), ignore=shutil.ignore_patterns("__pycache__"))
    attacks = {a.name: a for a in ATTACKS}
    for i, name in enumerate(HOSTILE):
        attacks[name].build(add(f"hostile{i}"), root.parent / "nowhere" / "results.json", 9)
    assert len(names) == CLASS, len(names)
    return names


def sample(root: Path, names: list[str], size: int) -> list[str]:
    """``size`` of the class, evenly spread over it (its kinds come in runs); the others' folders
    removed, so that batch grades the same ones."""
    kept = [names[i * len(names) // size] for i in range(size)]
    for name in set(names) - set(kept):
        shutil.rmtree(root / name)
    return kept


def run(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


def per_test(path: Path) -> list[tuple]:
    return [(t["number"], t["status"], t["score"]) for t in json.loads(path.read_text())["tests"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="grade only these problems (quicker, less telling)")
    parser.add_argument("--size", type=int, default=CLASS,
                        help=f"grade this many of the {CLASS} (spread over their kinds)")
    parser.add_argument("--keep", type=Path, help="build the class and outputs here and keep them")
    args = parser.parse_args()
    if not 1 <= args.size <= CLASS:
        parser.error(f"--size: give 1 to {CLASS}, not {args.size}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="batch-bench-"))
    try:
        return compare(args, work)
    finally:
        if not args.keep:  # failed or not: --keep is the way to look inside
            shutil.rmtree(work, ignore_errors=True)


def compare(args, work: Path) -> int:
    """Grades the class both ways in ``work``: 0 when they agree test by test, 1 if not."""
    klass = work / "class"
    if klass.exists():
        shutil.rmtree(klass)
    klass.mkdir(parents=True)
    names = sample(klass, make_class(klass), args.size)
    common = ["--gpu", "skip"] + (["--only", args.only] if args.only else [])
    env_note = f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f} at start"

    solo = work / "solo"
    shutil.rmtree(solo, ignore_errors=True)
    seq_times = []
    for name in names:
        upload = klass / name
        seq_times.append(run([sys.executable, "-m", "grader", "grade", str(upload), "--out",
                              str(solo / name / "results.json"), "--quiet", *common]))
        print(f"  grade {name:<22} {seq_times[-1]:6.2f} s", flush=True)
    sequential = sum(seq_times)

    out = work / "batch"
    shutil.rmtree(out, ignore_errors=True)
    batched = run([sys.executable, "-m", "grader", "batch", str(klass), "--out", str(out),
                   "--jobs", str(args.jobs), *common])

    batched_results = {n: student_folder(out, n) / RESULTS for n in names}  # batch's layout, from batch
    mismatches = [n for n in names if per_test(batched_results[n]) != per_test(solo / n / "results.json")]
    n = len(names)
    print(f"\n{n} submissions ({args.only or 'all problems'}), {env_note}")
    print(f"sequential `grade` calls:   {sequential:7.1f} s   ({sequential / n:5.2f} s per submission)")
    print(f"`batch --jobs {args.jobs}`:           {batched:7.1f} s   ({batched / n:5.2f} s per submission "
          f"of wall time, {batched * args.jobs / n:5.2f} job-seconds)")
    print(f"speed-up:                   {sequential / batched:7.2f}x")
    print(f"a batch job's seconds per submission / a lone grade's: "
          f"{batched * args.jobs / sequential:5.2f}x")
    scores = {x: json.loads(batched_results[x].read_text())["score"] for x in names}
    print("scores: " + ", ".join(f"{x}={scores[x]:g}" for x in names))
    if mismatches:
        print(f"MISMATCH: batch and grade disagree on {', '.join(mismatches)}")
        return 1
    print(f"batch scores == grade scores, test by test, for all {n} submissions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
