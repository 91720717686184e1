"""A real term's small class, graded for real: the class report's screenshot.

    python -m tests.self.term_class docs/ [--keep DIR]

builds a Gradescope "Download Submissions" export of 9 students and 11 submissions (a group of
two, three resubmissions), grades it with `python -m grader batch --gpu skip --jobs 2` (the
README's CPU pass), and writes docs/term-report.png (the page in headless chromium) and
docs/term-report.md (the summary the batch printed, and what the class holds). The class:

- the reference, handed in by a group of two, and one of alternatives (written apart from it);
- three named mistakes (planted bugs) in one upload, and an earlier upload of it with more;
- the stubs as given (one comment added): "not attempted";
- a partial upload: two modules solved, the rest not handed in;
- a function that hangs and one that runs out of memory: what "Timeouts and crashes" lists;
- a student who resubmitted a worse version last (Gradescope's active one counts).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from grader.paths import ROOT, problem_file
from seam.problems import PROBLEMS
from tests.self.alternatives import all_alternatives
from tests.self.bugs import all_bugs
from tests.self.submissions import reference_text, reference_with

HANG = "\n\ndef matmul_flops(m, k, n):\n    while True:\n        pass\n"
HOG = "\n\ndef parameter_bytes(module):\n    return len(bytearray(1 << 40))\n"


def _bugged(names: list[str]) -> dict[str, str]:
    """The reference with these planted bugs (one per problem)."""
    out = {}
    for bug in all_bugs():
        if bug.name in names:
            out[bug.problem] = bug.apply(out.get(bug.problem, reference_text(bug.problem)))
    return out


def uploads() -> list[tuple[str, list[tuple[str, str, str]], str, dict[str, str] | None, tuple | None, str]]:
    """(submission id, its submitters (name, sid, email), created_at, {problem: text} or None for
    the stubs, the problems handed in (None: all), what it is)."""
    mistakes = [b.name for b in all_bugs() if b.mistake]
    by_problem = {}
    for b in all_bugs():
        if b.mistake and b.problem not in by_problem:
            by_problem[b.problem] = b.name
    three = list(by_problem.values())[:3]
    alts = {}
    for problem, how, path in all_alternatives():
        alts.setdefault(problem, path.read_text())
    person = lambda name, sid: (name, sid, f"{name.split()[0].lower()}@example.edu")  # noqa: E731
    return [
        ("1001", [person("Ada Lovelace", "1815"), person("Alan Turing", "1912")], "2026-10-01 23:10", {},
         None, "the reference (a group of two)"),
        ("1002", [person("Grace Hopper", "1906")], "2026-10-01 20:00", alts,
         None, "an alternative solution of every problem, written apart from the reference"),
        ("1003", [person("Barbara Liskov", "1939")], "2026-09-30 22:00", _bugged(mistakes[:6]),
         None, "six named mistakes (superseded)"),
        ("1004", [person("Barbara Liskov", "1939")], "2026-10-01 21:30", _bugged(three),
         None, "three named mistakes"),
        ("1005", [person("Edsger Dijkstra", "1930")], "2026-10-01 23:58", None,
         None, "the stubs as given, a comment added"),
        ("1006", [person("Donald Knuth", "1938")], "2026-10-01 19:00", {},
         ("flops", "intensity"), "a partial upload: flops and intensity solved, nothing else handed in"),
        ("1007", [person("Frances Allen", "1932")], "2026-09-29 18:00", {},
         ("tensors",), "tensors alone (superseded)"),
        ("1008", [person("Frances Allen", "1932")], "2026-10-01 22:45",
         {"flops": reference_text("flops") + HANG}, None, "the reference, matmul_flops hanging"),
        ("1009", [person("John Backus", "1924")], "2026-10-01 23:30",
         {"modules": reference_text("modules") + HOG},
         None, "the reference, parameter_bytes running out of memory"),
        ("1010", [person("Katherine Johnson", "1918")], "2026-09-30 12:00", {},
         None, "the reference (superseded)"),
        ("1011", [person("Katherine Johnson", "1918")], "2026-10-01 23:59",
         _bugged([by_problem["optim"]]), None, "a named mistake in optim, handed in last"),
    ]


def make_export(dest: Path) -> Path:
    """The export as Gradescope writes it: submission_<id>/ and submission_metadata.yml."""
    metadata = {}
    for sid, people, created, replaced, handed, _ in uploads():
        folder = dest / f"submission_{sid}"
        if replaced is None:  # the stubs as given, a comment added at the top of each
            folder.mkdir(parents=True)
            for p in PROBLEMS:
                (folder / problem_file(p, "module", Path(".")).name).write_text(
                    "# TODO\n" + problem_file(p, "stub").read_text())
        else:
            reference_with(folder, replaced, problems=handed or PROBLEMS)
        metadata[f"submission_{sid}"] = {
            ":submitters": [{":name": n, ":sid": s, ":email": e} for n, s, e in people],
            ":created_at": f"{created}:00.000000000 -07:00", ":status": "processed"}
    (dest / "submission_metadata.yml").write_text(yaml.safe_dump(metadata, sort_keys=True))
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--keep", type=Path, help="grade into this folder (kept) instead of a temporary one")
    parser.add_argument("--time-limit", default="10", help="seconds per test (the hang costs two of them)")
    args = parser.parse_args()
    from tests.self.browser import require, screenshot
    require()
    work = args.keep or Path(tempfile.mkdtemp(prefix="term-class-"))
    export, out = work / "export", work / "out"
    shutil.rmtree(export, ignore_errors=True)
    make_export(export)
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", str(export), "--out", str(out), "--gpu", "skip",
                           "--jobs", "2", "--time-limit", args.time_limit], cwd=ROOT, capture_output=True, text=True)
    print(proc.stdout[-6000:], proc.stderr[-3000:], sep="\n")
    if proc.returncode != 0:
        raise SystemExit(f"batch failed ({proc.returncode})")
    args.docs.mkdir(parents=True, exist_ok=True)
    screenshot(out / "report.html", args.docs / "term-report.png", 1280, 3600)  # (the whole page)
    printed = proc.stdout + proc.stderr
    summary = printed[printed.find("class report:"):].strip()
    lines = ["# The class report on a small real term: 9 students, 11 submissions", "",
             "Made by `python -m tests.self.term_class docs/` (tests/self/term_class.py): a Gradescope export",
             "built from the corpora, graded for real by `python -m grader batch EXPORT --out OUT --gpu skip",
             f"--jobs 2 --time-limit {args.time_limit}`.", "",
             "| submission | submitters | what it holds |", "|---|---|---|"]
    for sid, people, created, _, _, what in uploads():
        lines.append(f"| submission_{sid} ({created}) | {', '.join(n for n, _, _ in people)} | {what} |")
    lines += ["", "![the report](term-report.png)", "", "## What the batch printed", "", "```", summary, "```", ""]
    (args.docs / "term-report.md").write_text("\n".join(lines))
    print(f"wrote {args.docs / 'term-report.png'} and term-report.md (graded in {work})")


if __name__ == "__main__":
    main()
