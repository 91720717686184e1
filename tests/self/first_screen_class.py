"""A class of 125 as a TA meets it, and what its first screen asks them to read, counted.

    python -m tests.self.first_screen_class OUT_DIR [--graded CACHE.json] [--size 125]

writes the class as a batch's output folder (tests/self/synthetic_class.py: each module a
disguised variant of the reference, an alternative written apart from it, or a planted bug; some
copied from a classmate), runs the class report on it (`python -m grader report`'s ``write``),
and prints the first screen (the terminal's words, firstscreen.lines) with its figures: lines, the
students it names, those counted below it, the report's time. Results are composed from one
in-process grading per variant (``--graded`` caches them: the second run takes seconds). On top
of the drawn class, as a real term has them (seeded, so the class is the same every time):

- partial uploads (``PARTIAL`` of them): one to eight problems not handed in, what is handed in
  graded as drawn; two of them hand in modules that all fail (the wrong files);
- the stubs as given (2), an empty upload and one with two candidate submissions;
- charged students (``CHARGED``): a ruled function's forbidden call seen to run, its tests
  scored 0 as grading scores them (grader/report.py ``charge``);
- hostile or broken uploads, recorded as a batch records them: a module with a syntax error
  (its tests fail with the import's message), one that SIGKILLs its parents (its worker killed,
  extra_data.incidents), one that hangs (timed out), one that writes a fake results.json (it
  cannot reach the grader's, so nothing is recorded: it scores what its code earns);
- notes for review: ``import threading`` (threads), ``exec`` (code from text), a checkpoint
  loaded with weights_only off from bytes it spells (unpickling), in the module's text as the
  review reads it, and an honest checkpoint resume that is no note.
"""

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from grader.batch import firstscreen
from grader.batch.output import RESULTS, STUDENT, STUDENTS, read_json, write_json
from grader.report import charge
from seam.problems import PROBLEMS, RULED, touched
from seam.review import scan_source
from tests.self.synthetic_class import edit_results, grade_variants, make_class, variants, write_batch

SIZE, PARTIAL, CHARGED = 125, 40, 9
KILL = ("\nimport os, signal\ndef _gone():\n    os.kill(os.getppid(), signal.SIGKILL)\n")
FAKE = ("\nimport json\ntry:\n    open('/autograder/results/results.json', 'w').write(json.dumps({'score': 1000}))\n"
        "except OSError:\n    pass\n")
NOTES = {"threads": ("flops", "import threading\n"),
         "code from text": ("memory", "exec('PAGE = 4096')\n"),
         "unpickling": ("training", "import io\n_SEED = torch.load(io.BytesIO(b'\\x80\\x02N.'), weights_only=False)\n")}
RESUME = ("\ndef resume(path, model):\n    torch.save(model.state_dict(), path)\n"
          "    model.load_state_dict(torch.load(path, weights_only=False))\n")


def _load(cache: Path | None):
    pool = variants()
    if cache is not None and cache.is_file():
        raw = json.loads(cache.read_text())
        return pool, {tuple(k.split("\n", 1)): v for k, v in raw.items()}
    graded = grade_variants(pool, Path(tempfile.mkdtemp()))
    if cache is not None:
        cache.write_text(json.dumps({f"{p}\n{label}": v for (p, label), v in graded.items()}))
    return pool, graded


def _fail(tests: list[dict], problem: str, output: str) -> None:
    for t in tests:
        if t["tags"][0] == problem:
            t.update(score=0.0, status="failed", output=output)


def build_class(out: Path, graded: dict, pool: list, size: int = SIZE, seed: int = 0) -> dict[str, str]:
    """The class in ``out``; returns key -> what was planted (for the figures)."""
    rng = random.Random(seed)
    students = make_class(size, seed=seed, pool=pool)
    keys = [s.key for s in students]
    planted: dict[str, str] = {}
    free = keys[1:]  # (the first student is every copier's likeliest source: left as drawn)
    rng.shuffle(free)
    take = lambda n: [free.pop() for _ in range(n)]  # noqa: E731
    statuses = {k: "empty" for k in take(1)} | {k: "ambiguous" for k in take(1)}
    planted |= {k: v for k, v in statuses.items()}
    partial = take(PARTIAL)
    wrong_files = partial[:2]
    missing: dict[str, list[str]] = {}
    by_key = {s.key: s for s in students}
    for k in partial:
        gone = rng.sample(list(PROBLEMS), rng.randint(1, 8))
        missing[k] = [p for p in PROBLEMS if p in gone]
        for p in gone:
            by_key[k].texts.pop(p, None)
        planted[k] = f"partial: {len(gone)} missing" + (", the rest failing" if k in wrong_files else "")
    stubs = take(2)
    from grader.paths import problem_file
    for k in stubs:
        by_key[k].texts = {p: "# TODO\n" + problem_file(p, "stub").read_text() for p in PROBLEMS}
        planted[k] = "stubs as given"
    charged = take(CHARGED)
    ruled = sorted(RULED)
    hostile = dict(zip(("broken", "killer", "hang", "fake"), take(4)))
    noted = dict(zip(NOTES, take(len(NOTES))))
    resume = take(1)[0]
    for kind, k in noted.items():
        problem, line = NOTES[kind]
        by_key[k].texts[problem] += "\n" + line  # (at the end: the module's imports come first)
        planted[k] = f"note: {kind}"
    by_key[resume].texts["training"] += RESUME
    planted[resume] = "honest checkpoint resume (weights_only=False): no note"
    by_key[hostile["broken"]].texts["intensity"] += "\ndef oops(:\n"
    by_key[hostile["killer"]].texts["intensity"] += KILL
    by_key[hostile["fake"]].texts["tensors"] += FAKE
    write_batch(out, students, graded, statuses)
    # what grading would have recorded beyond the composed tests
    for k, gone in missing.items():
        def change(r, gone=gone, k=k):
            for p in gone:
                _fail(r["tests"], p, f"{p}.py is missing from the submission")
            if k in wrong_files:
                for p in PROBLEMS:
                    _fail(r["tests"], p, "AssertionError: expected the handout's value")
        edit_results(out, k, change)
    for k in stubs:
        edit_results(out, k, lambda r: [_fail(r["tests"], p, "NotImplementedError") for p in PROBLEMS])
    for i, k in enumerate(charged):
        function = ruled[i % len(ruled)]
        planted[k] = f"charged: {function}"

        def change(r, function=function):
            violations = {function: "a forbidden call (seen to run)"}
            charge(r["tests"], violations)
            r.setdefault("extra_data", {})["honest_work"] = violations
        edit_results(out, k, change)
    line = len(by_key[hostile["broken"]].texts["intensity"].splitlines())
    edit_results(out, hostile["broken"], lambda r: _fail(
        r["tests"], "intensity", f"intensity.py could not be imported (SyntaxError: invalid syntax (intensity.py, "
                                 f"line {line}), at intensity.py:{line})"))
    killed = "the process was killed by SIGKILL, perhaps memory"

    def incident(r, function: str, how: str):
        for t in r["tests"]:
            if touched(t.get("extra_data", {}).get("functions", ()), [function]):
                t.update(score=0.0, status="failed", output=f"{function}: {how}")
        r.setdefault("extra_data", {})["incidents"] = {function: [how, how]}
    edit_results(out, hostile["killer"], lambda r: incident(r, "intensity.matmul_intensity", killed))
    edit_results(out, hostile["hang"], lambda r: incident(r, "optim.AdamW", "it timed out"))
    planted |= {k: f"hostile: {what}" for what, k in hostile.items()}
    for kind, k in noted.items():
        problem = NOTES[kind][0]
        text = (out / STUDENTS / k / "code" / f"{problem}.py").read_text()
        notes = [n for n in scan_source(text, f"{problem}.py") if n["kind"] == kind]
        assert notes, (kind, k)
        worth = sum(t["max_score"] for t in read_json(out / STUDENTS / k / RESULTS)["tests"] if t["tags"][0] == problem)
        edit_results(out, k, lambda r, notes=notes, worth=worth: r.setdefault("extra_data", {}).__setitem__(
            "review", [{**n, "at_stake": worth} for n in notes]))
    text = (out / STUDENTS / resume / "code" / "training.py").read_text()
    assert scan_source(text, "training.py") == [], "an honest checkpoint resume is no note"
    for s in students:  # a roster's names, as Gradescope's export gives them
        record = read_json(out / STUDENTS / s.key / STUDENT)
        record["students"] = [{"sid": s.key[1:], "name": f"Student {s.key[1:]}", "email": ""}]
        write_json(out / STUDENTS / s.key / STUDENT, record)
    return planted


def figures(out: Path) -> dict:
    """The report written, its first screen printed, and what a TA must read, counted."""
    from grader.classreport import REPORT_JSON, write
    start = time.monotonic()
    write(out)
    seconds = time.monotonic() - start
    report = read_json(out / REPORT_JSON)
    screen = report["act_on"]
    said = firstscreen.lines(screen)
    named = firstscreen.named(screen)
    return {"lines": said, "first screen lines": len(said),
            "students named to act on": len({k for kind, keys in named.items() if kind != "partial" for k in keys}),
            "per section": {s["kind"]: len(named[s["kind"]]) for s in screen["sections"]},
            "partial (counted below)": len(named["partial"]), "report seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--graded", type=Path, help="cache of the variants' gradings (JSON)")
    parser.add_argument("--size", type=int, default=SIZE)
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        raise SystemExit(f"{args.out} is not empty")
    pool, graded = _load(args.graded)
    planted = build_class(args.out, graded, pool, args.size)
    got = figures(args.out)
    print("\n".join(got.pop("lines")))
    print(json.dumps(got, indent=2))
    print(json.dumps({"planted": dict(sorted(planted.items()))}, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
