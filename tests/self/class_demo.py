"""The class report's demonstration: a synthetic class of 30 with one of each thing to act on.

    python -m tests.self.class_demo docs/ [--graded CACHE.json]

writes docs/class-report.png (the page's first screen, 1280x900, in headless chromium) and the
generated part of docs/class-report.md (below its GENERATED line; the guide above it is kept):
the summary the report printed, what the panel lists, the flagged similarity pairs with their
lineages, and the tests to doubt. The class (tests/self/synthetic_class.py, seed 1, no copies
drawn) gets exactly:

- one note for review: ``import threading`` added to one student's flops module (seam/review.py
  reads the text, as grading does);
- one timeout: one student's optim function timed out (its tests failed, extra_data.incidents);
- one copied pair: one student's alternative module of a problem copied by a classmate, disguised
  (renamed, reordered, reformatted);
- one wrong test: every student whose flops module is correct fails it and every one with a
  named flops mistake passes it (its outcomes rewritten in the composed results), so only its
  negative discrimination can flag it.
"""

import argparse
import json
import tempfile
from pathlib import Path

from grader.batch.output import RESULTS, STUDENTS, read_json
from grader.classreport import REPORT_HTML, REPORT_JSON, write
from grader.classreport.similarity import REFERENCE_NAME
from seam import review
from seam.problems import RULED, touched
from tests.self.browser import require, screenshot
from tests.self.synthetic_class import edit_results, disguise, grade_variants, make_class, variants, write_batch

WRONG_PROBLEM = "flops"
SIZE = 30
GENERATED = "<!-- generated below by python -m tests.self.class_demo docs/ -->"


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


def plant_copy(students) -> tuple[str, str, str]:
    """A classmate's disguised copy of the first alternative module in the class: (problem,
    the author's key, the copier's key)."""
    author, problem = next((s, p) for s in students for p, v in s.modules.items() if v.lineage.startswith("alt:"))
    copier = next(s for s in students if s is not author and s.modules[problem].lineage == "reference")
    copier.modules[problem] = author.modules[problem]
    copier.texts[problem] = disguise(author.texts[problem], 7)
    copier.copied_from[problem] = author.key
    return problem, author.key, copier.key


def plant_timeout(out: Path, key: str) -> str:
    """The student's first optim function timed out: its tests failed, the incident recorded as
    the sandbox records one; returns the function."""
    results = read_json(out / STUDENTS / key / RESULTS)
    function = next(f for t in results["tests"] if t["tags"] == ["optim"] for f in t["extra_data"]["functions"])

    def change(r):
        for t in r["tests"]:
            if function in t["extra_data"]["functions"]:
                t.update(status="failed", score=0.0, output=f"{function}: it timed out (the time limit per call)")
        r.setdefault("extra_data", {})["incidents"] = {function: ["it timed out"]}
    edit_results(out, key, change)
    return function


def plant_note(out: Path, key: str, problem: str = "flops") -> dict:
    """``import threading`` at the top of the student's module: the note seam/review.py makes of
    it, with the points at stake (the module's tests that call a ruled function)."""
    code = out / STUDENTS / key / "code" / f"{problem}.py"
    code.write_text("import threading\n" + code.read_text())
    notes = [n for n in review.scan(code.parent) if n["file"] == code.name]
    assert len(notes) == 1, notes
    tests = read_json(out / STUDENTS / key / RESULTS)["tests"]
    noted = {**notes[0], "at_stake": sum(t["max_score"] for t in tests if t["tags"] == [problem]
                                         and touched(t["extra_data"]["functions"], RULED))}
    edit_results(out, key, lambda r: r.setdefault("extra_data", {}).setdefault("review", []).append(noted))
    return noted


def kept_guide(md: Path) -> list[str]:
    """The hand-written part of class-report.md: everything above the GENERATED line."""
    text = md.read_text() if md.is_file() else ""
    return (text.split(GENERATED)[0].rstrip("\n").splitlines() + [""]) if GENERATED in text else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--graded", type=Path, help="a file to keep the variants' results in")
    args = parser.parse_args()
    require()
    pool = variants()
    if args.graded and args.graded.is_file():
        graded = {tuple(k.split("\n", 1)): v for k, v in json.loads(args.graded.read_text()).items()}
    else:
        graded = grade_variants(pool, Path(tempfile.mkdtemp()))
        if args.graded:
            args.graded.write_text(json.dumps({"\n".join(k): v for k, v in graded.items()}))
    students = make_class(SIZE, seed=1, pool=pool, copy_rate=0.0)
    wrong = make_wrong(students, graded)
    copied = plant_copy(students)
    out = write_batch(Path(tempfile.mkdtemp()) / "class", students, graded)
    keys = [s.key for s in students if s.key not in copied[1:]]
    hung = plant_timeout(out, keys[3])
    noted = plant_note(out, keys[7])
    lines = write(out)
    report = json.loads((out / REPORT_JSON).read_text())
    args.docs.mkdir(parents=True, exist_ok=True)
    screenshot(out / REPORT_HTML, args.docs / "class-report.png", 1280, 900)
    lineage = {(s.key, p): v.lineage for s in students for p, v in s.modules.items()}
    pairs = report["similarity"]["pairs"]
    apart = [p for p in pairs if (p["b"] == REFERENCE_NAME and lineage[p["a"], p["problem"]] != "reference")
             or (p["b"] != REFERENCE_NAME and lineage[p["a"], p["problem"]] != lineage[p["b"], p["problem"]])]
    copies = [(s.key, p, src) for s in students for p, src in s.copied_from.items()]
    flagged = {(p["problem"], frozenset((p["a"], p["b"]))) for p in pairs}
    found = [c for c in copies if (c[1], frozenset((c[0], c[2]))) in flagged]
    doubt = {i["number"]: i for i in report["doubt"]}
    between = [p for p in pairs if p["b"] != REFERENCE_NAME]
    md = [*kept_guide(args.docs / "class-report.md"), GENERATED, "",
          f"## A synthetic class of {SIZE}", "",
          "Made by `python -m tests.self.class_demo docs/` (tests/self/class_demo.py): the class from",
          "tests/self/synthetic_class.py (seed 1), its results composed from one grading per variant, with",
          f"one note for review ({keys[7]}: {noted['file']}:{noted['line']} {noted['kind']}), one timeout "
          f"({keys[3]}: {hung}), one copied pair ({copied[0]}: {copied[2]} copied {copied[1]}) and one wrong test "
          f"({wrong}).", "",
          "![the first screen](class-report.png)", "", "### The summary it printed", "", "```", *lines, "```", "",
          "### What to act on", "",
          *[f"- {section['head']}" for section in report["act_on"]["sections"]], "",
          "### Similarity", "",
          f"{len(pairs)} pairs at or above {report['similarity']['threshold']}, {len(between)} of them between two "
          f"uploads; pairs flagged apart from their lineage (an alternative flagged): **{len(apart)}**; copies of a "
          f"classmate in the class: {len(copies)}, flagged: {len(found)}. The synthetic class's correct modules are "
          "the reference disguised, so most of the class matches the reference: the panel counts them, naming "
          "nobody.", "",
          "| problem | a | b | score | lineage of a | lineage of b |", "|---|---|---|---|---|---|"]
    pairs = between + [p for p in pairs if p["b"] == REFERENCE_NAME][:10]
    for p in pairs:
        b = "reference" if p["b"] == REFERENCE_NAME else lineage[p["b"], p["problem"]]
        md.append(f"| {p['problem']} | {p['a']} | {p['b']} | {p['score']:.2f} | {lineage[p['a'], p['problem']]} | {b} |")
    md += [f"| ... | {len(report['similarity']['pairs']) - len(pairs)} more pairs with the reference | | | | |", "",
           "### Tests to doubt", "",
           f"Test {wrong} was made wrong (correct flops modules fail it, named mistakes pass it): "
           f"{'flagged: ' + '; '.join(doubt[wrong]['flags']) if wrong in doubt else 'NOT flagged'}.", "",
           "| test | pass rate | discrimination | flags |", "|---|---|---|---|"]
    for i in report["doubt"]:
        md.append(f"| {i['number']} {i['name']} | {i['pass_rate']:.2f} | "
                  f"{'' if i['discrimination'] is None else format(i['discrimination'], '.2f')} | {'; '.join(i['flags'])} |")
    (args.docs / "class-report.md").write_text("\n".join(md) + "\n")
    print("\n".join(lines))
    print(f"wrote {args.docs / 'class-report.png'} and class-report.md; pairs {len(report['similarity']['pairs'])} "
          f"({len(between)} between uploads), apart {len(apart)}, wrong test {wrong} flagged: {wrong in doubt}")


if __name__ == "__main__":
    main()
