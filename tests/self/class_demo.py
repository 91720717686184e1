"""The class report's demonstration: a synthetic class of 40, one of its tests made wrong.

    python -m tests.self.class_demo docs/ [--graded CACHE.json]

writes docs/class-report.png (the page in headless chromium) and docs/class-report.md: the
flagged similarity pairs with their scores and lineages, whether an alternative was flagged, and
the tests to doubt. The wrong test is made so: every student whose flops module is correct fails
it and every one with a named flops mistake passes it (its outcomes rewritten in the composed
results), so only its negative discrimination can flag it.
"""

import argparse
import json
import tempfile
from pathlib import Path

from grader.classreport import REPORT_HTML, REPORT_JSON, write
from grader.classreport.similarity import REFERENCE_NAME
from tests.self.browser import screenshot
from tests.self.synthetic_class import grade_variants, make_class, variants, write_batch

WRONG_PROBLEM = "flops"


def make_wrong(students, graded: dict) -> str:
    """Rewrite one flops test of every student's results; returns its number."""
    tests = graded[WRONG_PROBLEM, "reference"]
    number = tests[0]["number"]
    for s in students:
        v = s.modules[WRONG_PROBLEM]
        passes = bool(v.mistake)
        key = (WRONG_PROBLEM, f"{v.label}@wrong:{'pass' if passes else 'fail'}")
        if key not in graded:
            rewritten = []
            for t in graded[WRONG_PROBLEM, v.label]:
                if t["number"] == number:
                    t = {**t, "status": "passed" if passes else "failed", "score": t["max_score"] if passes else 0.0,
                         "output": "passed" if passes else "expected 2·m·k·n - 1 (made wrong on purpose)"}
                rewritten.append(t)
            graded[key] = rewritten
        s.modules[WRONG_PROBLEM] = type(v)(v.problem, key[1], v.text, v.lineage, v.mistake)
    return number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--graded", type=Path, help="a file to keep the variants' results in")
    args = parser.parse_args()
    pool = variants()
    if args.graded and args.graded.is_file():
        graded = {tuple(k.split("\n", 1)): v for k, v in json.loads(args.graded.read_text()).items()}
    else:
        graded = grade_variants(pool, Path(tempfile.mkdtemp()))
        if args.graded:
            args.graded.write_text(json.dumps({"\n".join(k): v for k, v in graded.items()}))
    students = make_class(40, seed=1, pool=pool)
    wrong = make_wrong(students, graded)
    out = write_batch(Path(tempfile.mkdtemp()) / "class", students, graded)
    lines = write(out)
    report = json.loads((out / REPORT_JSON).read_text())
    args.docs.mkdir(parents=True, exist_ok=True)
    screenshot(out / REPORT_HTML, args.docs / "class-report.png", 1280, 3000)
    lineage = {(s.key, p): v.lineage for s in students for p, v in s.modules.items()}
    pairs = report["similarity"]["pairs"]
    apart = [p for p in pairs if (p["b"] == REFERENCE_NAME and lineage[p["a"], p["problem"]] != "reference")
             or (p["b"] != REFERENCE_NAME and lineage[p["a"], p["problem"]] != lineage[p["b"], p["problem"]])]
    copies = [(s.key, p, src) for s in students for p, src in s.copied_from.items()]
    flagged = {(p["problem"], frozenset((p["a"], p["b"]))) for p in pairs}
    found = [c for c in copies if (c[1], frozenset((c[0], c[2]))) in flagged]
    doubt = {i["number"]: i for i in report["doubt"]}
    md = ["# The class report on a synthetic class of 40", "",
          "Made by `python -m tests.self.class_demo docs/` (tests/self/class_demo.py): the class from",
          "tests/self/synthetic_class.py (seed 1), its results composed from one grading per variant.", "",
          "![the report](class-report.png)", "", "## The summary it printed", "", "```", *lines, "```", "",
          "## Similarity", "",
          f"{len(pairs)} pairs at or above {report['similarity']['threshold']}; pairs flagged apart from their "
          f"lineage (an alternative flagged): **{len(apart)}**; copies of a classmate in the class: {len(copies)}, "
          f"flagged: {len(found)} (a copy of a reference-lineage module is found against the reference instead).", "",
          "| problem | a | b | score | lineage of a | lineage of b |", "|---|---|---|---|---|---|"]
    for p in pairs:
        b = "reference" if p["b"] == REFERENCE_NAME else lineage[p["b"], p["problem"]]
        md.append(f"| {p['problem']} | {p['a']} | {p['b']} | {p['score']:.2f} | {lineage[p['a'], p['problem']]} | {b} |")
    md += ["", "## Tests to doubt", "",
           f"Test {wrong} was made wrong (correct flops modules fail it, named mistakes pass it): "
           f"{'flagged: ' + '; '.join(doubt[wrong]['flags']) if wrong in doubt else 'NOT flagged'}.", "",
           "| test | pass rate | discrimination | flags |", "|---|---|---|---|"]
    for i in report["doubt"]:
        md.append(f"| {i['number']} {i['name']} | {i['pass_rate']:.2f} | "
                  f"{'' if i['discrimination'] is None else format(i['discrimination'], '.2f')} | {'; '.join(i['flags'])} |")
    (args.docs / "class-report.md").write_text("\n".join(md) + "\n")
    print("\n".join(lines))
    print(f"wrote {args.docs / 'class-report.png'} and class-report.md; pairs {len(pairs)}, apart {len(apart)}, "
          f"wrong test {wrong} flagged: {wrong in doubt}")


if __name__ == "__main__":
    main()
