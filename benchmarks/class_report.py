"""The class report on a synthetic class (tests/self/synthetic_class.py): how long the report
and its similarity pass take, and how they grow with the class.

    python benchmarks/class_report.py [--sizes 250 500 1000] [--graded CACHE.json] [--problems P ...]

Each distinct variant (the reference, alternatives, planted bugs) is graded once, in-process
(minutes: training's and benchmarking's reference among them); ``--graded`` keeps those results
in a file and reads them back next time. Then for each size: the class written as a batch
folder, the report without similarity (``build`` + the page), and the similarity pass alone,
each timed, and the whole report (the two; the goal for 1,000 students: 60 s on 2 cores); the
figures are printed as a table, with the growth from the smallest size.
``--problems`` keeps those problems' variants alone (the suite's smoke run,
tests/self/system/test_benchmarks.py, writes one problem for a dozen students).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.classreport import build, gather, similarity_of  # noqa: E402
from grader.classreport.html import render  # noqa: E402
from seam.problems import PROBLEMS  # noqa: E402
from tests.self.synthetic_class import grade_variants, make_class, variants, write_batch  # noqa: E402


def graded_pool(cache: Path | None, problems: list[str], tmp: Path):
    pool = [v for v in variants() if v.problem in problems]
    if cache is not None and cache.is_file():
        raw = json.loads(cache.read_text())
        return pool, {tuple(k.split("\n", 1)): v for k, v in raw.items()}
    start = time.perf_counter()
    graded = grade_variants(pool, tmp / "variants")  # its name names their packages
    print(f"graded {len(pool)} variants once in {time.perf_counter() - start:.0f} s", flush=True)
    if cache is not None:
        cache.write_text(json.dumps({"\n".join(k): v for k, v in graded.items()}))
    return pool, graded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--graded", type=Path, help="a file to keep the variants' results in")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS),
                        help="the class writes these problems only (default all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-report-") as tmp:
        rows = measure(args, Path(tmp))
    n0, p0, s0 = rows[0][:3]
    print("\nsize  report  similarity  (growth against the smallest: x students -> x report, x similarity)")
    for n, p, s, *_ in rows:
        print(f"{n:5d} {p:7.1f} {s:11.1f}   x{n / n0:.1f} -> x{p / p0:.1f}, x{s / s0:.1f}")


def measure(args, tmp: Path) -> list[tuple]:
    """(size, report s, similarity s, comparisons, candidates, flagged) per class size."""
    pool, graded = graded_pool(args.graded, args.problems, tmp)
    rows = []
    for i, n in enumerate(args.sizes):
        out = tmp / f"class{i}"
        students = make_class(n, seed=n, pool=pool)
        write_batch(out, students, graded)
        start = time.perf_counter()
        records = gather(out)
        report = build(records)
        render(report, {r["key"]: r["code"] for r in records})
        plain = time.perf_counter() - start
        start = time.perf_counter()
        sim = similarity_of(records)
        similar = time.perf_counter() - start
        rows.append((n, plain, similar, sim["compared"], sim["candidates"], len(sim["pairs"])))
        print(f"{n:6d} students: report {plain:6.1f} s, similarity {similar:6.1f} s "
              f"({sim['compared']} comparisons, {sim['candidates']} candidate pairs, {len(sim['pairs'])} flagged)\n"
              f"{n:6d} students: the whole report {plain + similar:6.1f} s", flush=True)
    return rows


if __name__ == "__main__":
    main()
