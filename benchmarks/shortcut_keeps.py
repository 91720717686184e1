"""What the best shortcut of each honest-work rule keeps, by absence and behaviour alone.

    python benchmarks/shortcut_keeps.py [--measure PROBLEM ...]

Reads tests/self/behaviour.json (each shortcut graded in the grader's sandbox with the watch
switched off: tests/self/behaviour.py) and prints, per rule, its points and what the best
measured shortcut of each of its functions keeps; with ``--measure``, grades those problems'
shortcuts again first (minutes each) and prints from the new figures, leaving the record as it is.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import trust  # noqa: E402
from seam.problems import RULED  # noqa: E402


def table(record: dict) -> list[str]:
    lines = [f"{'rule':<36} {'points':>6}  kept by the best shortcut with the watch blinded"]
    by_rule: dict = {}
    for function, rule in RULED.items():
        by_rule.setdefault(rule.name, []).append(function)
    total = kept = 0.0
    for name, functions in by_rule.items():
        points = sum(trust._tests(functions, record).values())
        keeps = trust.kept(functions, record)
        total += points
        kept += float(keeps.split(" pt")[0])
        lines.append(f"{name:<36} {points:>6g}  {keeps}")
    lines.append(f"{'all rules':<36} {total:>6g}  {kept:g} pt")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", nargs="*", default=None, metavar="PROBLEM",
                        help="grade these problems' shortcuts again (sandboxed, watch off) before printing")
    args = parser.parse_args()
    from grader.rubric import collect
    record = trust.measured(collect())  # the points the markers give now
    if args.measure:
        from tests.self import behaviour
        fresh = behaviour.record(args.measure)
        record |= {f: entry for problem in fresh.values() for f, entry in problem["functions"].items()}
    print("\n".join(table(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
