"""Pure functions from test facts to Gradescope's results.json and to the terminal table;
``write_results`` writes it (validated, whole or not at all: files.write_atomically)."""

import json
from functools import lru_cache
from pathlib import Path

import jsonschema

from seam.problems import PROBLEMS, RULED, line, problem_number, section, touched
from seam.review import ordered, said, tally
from .files import write_atomically as _write_file
from .paths import SCHEMA
from .text import clean, indent, one_line


def number(facts: list) -> list:
    """Give each fact its k in <problem>.<k>: the problem's public tests first, then its hidden
    ones, each in written order (the sort is stable). The plugin numbers every collected test,
    so a --gpu skip and a --gpu only pass number theirs as one full run does (merge relies on
    it); the one numbering, also for facts made by hand (build_results)."""
    counters: dict[str, int] = {}
    for fact in sorted(facts, key=lambda f: f.visibility != "visible"):
        fact.index = counters[fact.problem] = counters.get(fact.problem, 0) + 1
    return facts


def _order(fact) -> tuple:
    """Problem by problem, public before hidden; within that, the order the tests are written
    in (facts arrive in collection order and the sort is stable)."""
    return (problem_number(fact.problem), fact.visibility != "visible")


def build_results(facts, execution_time: float, notes: list[str], grader: dict | None = None,
                  violations: dict[str, str] | None = None, to_come: dict[str, float] | None = None,
                  incidents: dict[str, list[str]] | None = None, review: list[dict] = (),
                  files: dict | None = None) -> dict:
    """results.json as Gradescope reads it; one entry per test, numbered <problem>.<k>.

    A test that did not run (``Fact.outcome == "not_run"``, e.g. a GPU test on a CPU machine) is
    "failed" for Gradescope, with its reason as output and ``extra_data.outcome = "not_run"``; the
    score line counts it apart from what was graded. A test that is not counted at all
    (``Fact.counted`` False: an MFU test on a GPU the peak table lacks) is left out of ``tests``
    and named in the summary. ``grader``: provenance.stamp(), kept in ``extra_data``.
    ``violations``: the honest-work rules broken (function -> what it used), said first in the
    summary and kept in ``extra_data.honest_work``; each test keeps the functions it called
    (``extra_data.functions``), so that merge charges a rule broken in one pass to the others.
    ``to_come``: test number -> points of the GPU tests a CPU pass left out (``extra_data.to_come``).
    ``incidents``: the sandbox's record of what hung or crashed (``Sandbox.incidents``), kept in
    ``extra_data.incidents`` for the class report. ``review``: notes for a person (seam/review.py),
    each with the points at stake in its module (``stakes``; a helper's: those of the problem
    modules that import it), in ``extra_data.review``. ``files``: the upload's files graded and
    ignored (``files_graded``), in ``extra_data.files``."""
    if any(fact.index is None for fact in facts):  # made by hand, not collected by the plugin
        number(facts)
    tests = []
    for fact in sorted(facts, key=_order):
        k = fact.index
        if not fact.counted:
            continue  # named in the summary below, not in the total
        passed = fact.outcome == "passed"
        output = clean(fact.message) or ("passed" if passed else "failed (no message)")
        entry = {
            "name": f"{fact.problem}: {fact.title}",
            "number": f"{problem_number(fact.problem)}.{k}",
            "score": fact.points if passed else 0.0,
            "max_score": fact.points,
            "status": "passed" if passed else "failed",
            "output": output,
            "visibility": fact.visibility,
            "tags": [fact.problem],  # the problem, as a fact: per_problem reads it, never the name
        }
        entry["extra_data"] = {"test": node_id(fact.nodeid), "functions": list(fact.functions)}
        if fact.mistakes and not passed:  # what the class report ranks (grader/classreport)
            entry["extra_data"]["mistakes"] = [{"name": name, "handout": section(handout)}
                                               for name, handout in fact.mistakes]
        if fact.outcome == "not_run":
            entry["extra_data"]["outcome"] = "not_run"
        tests.append(entry)
    uncounted = [f"not counted: {f.problem}: {f.title}: {f.message}"
                 for f in sorted((f for f in facts if not f.counted), key=_order)]
    stake = stakes(facts)
    problems = (files or {}).get("problems", {})  # a helper -> the problems whose modules import it
    review = [{**n, "at_stake": sum(stake.get(p, 0.0) for p in problems.get(n["file"], [n["file"].removesuffix(".py")]))}
              for n in review]
    return assemble(tests, execution_time, [*notes, *uncounted], grader, violations, to_come, incidents, review,
                    files)


def node_id(nodeid: str) -> str:
    """A test's id as the rubric's history names it (tests/hidden/test_optim.py::test_x), from
    wherever the graded run's root was: `history` matches a test across grades by it."""
    at = nodeid.find("tests/")
    return nodeid[at:] if at >= 0 else nodeid


def stakes(facts) -> dict[str, float]:
    """problem -> the points a note in its module could have hidden something from: its tests
    that call a ruled function, and its checks of how the work is done."""
    out: dict[str, float] = {}
    for fact in facts:
        if fact.how or touched(fact.functions, RULED):
            out[fact.problem] = out.get(fact.problem, 0.0) + fact.points
    return out


def assemble(tests: list[dict], execution_time: float, notes: list[str], grader: dict | None = None,
             violations: dict[str, str] | None = None, to_come: dict[str, float] | None = None,
             incidents: dict[str, list[str]] | None = None, review: list[dict] = (),
             files: dict | None = None) -> dict:
    """results.json from its parts, for one grade (build_results) and for a merge of passes
    (batch/merge.py) alike: the score is the tests' sum, the ``output`` is ``summary``'s,
    ``extra_data`` keeps the grader's stamp, the honest-work rules broken and the notes (as
    data: merge and the score table read them there, never back out of the ``output``)."""
    violations = {f: one_line(used) for f, used in (violations or {}).items()}
    notes = [one_line(n) for n in notes]
    review = [{k: one_line(v) if isinstance(v, str) else v for k, v in n.items()} for n in review]
    results = {"score": sum(t["score"] for t in tests), "execution_time": round(execution_time, 3),
               "output": summary(tests, notes, violations, review), "tests": tests}
    results["extra_data"] = (({"grader": grader} if grader else {}) | {"notes": notes}
                             | ({"honest_work": dict(violations)} if violations else {})
                             | ({"review": review} if review else {})
                             | ({"to_come": {"tests": dict(to_come), "points": sum(to_come.values())}}
                                if to_come else {})
                             | ({"incidents": {k: list(v) for k, v in incidents.items()}} if incidents else {})
                             | ({"files": {"graded": list(files["graded"]), "ignored": [dict(i) for i in files["ignored"]]}}
                                if files else {}))
    return results


def to_come(results: dict) -> float:
    """The points of the GPU tests a CPU pass left for the GPU pass (0 once merged with it)."""
    return float(results.get("extra_data", {}).get("to_come", {}).get("points", 0.0))


def to_come_note(points: float, tests: int) -> str:
    """The one sentence a CPU pass's report, gradebook export and class summary say of them."""
    return (f"to come: {points:g} points in {tests} GPU test{'s' * (tests != 1)}, graded by the GPU pass "
            f"(--gpu only) and joined by merge (docs/grading.md: Bringing the GPU points back)")


def honest_lines(violations: dict[str, str]) -> list[str]:
    """The summary's first notes: each broken rule, once (seam/honest.py ``line``)."""
    return [line(f, used) for f, used in sorted(violations.items())]


def charge(tests: list[dict], violations: dict[str, str]) -> None:
    """Score 0 every test that called a function that broke its rule (merge: from any pass)."""
    for t in tests:
        broken = touched(t.get("extra_data", {}).get("functions", ()), violations)
        if broken and not not_run(t):
            t.update(score=0.0, status="failed", output=one_line(line(broken[0], violations[broken[0]])))


# The summary, built in one place from data: ``summary_lines`` is the only code that writes a
# results.json's ``output`` or the head of its score table (grade, merge and Gradescope all
# reach it through ``assemble``; the table reads the same data back from extra_data).
SHOWN_NOTES = 6  # review notes written out in a summary; the rest are counted (all are in extra_data)


def review_lines(review: list[dict]) -> list[str]:
    """The review notes (seam/review.py), one line each: ``SHOWN_NOTES`` of them, those seen at
    run time first and one of each kind in turn (review.ordered: a flood of one kind hides no
    other), then, where some are not shown, how many there are of each kind."""
    shown = ordered(review)[:SHOWN_NOTES]
    lines = [said(n) for n in shown]
    if len(review) > SHOWN_NOTES:
        lines.append(f"review: {tally(review)}; {len(review) - SHOWN_NOTES} not written out here "
                     f"(extra_data.review has them all)")
    return lines


def summary_lines(tests: list[dict], notes: list[str] = (), violations: dict[str, str] | None = None,
                  review: list[dict] = ()) -> list[str]:
    """results.json's ``output``, line by line: the score line first, and the only one; then
    each honest-work rule broken (``violations``), then the notes for review, then the notes
    (Gradescope's GPU note is its first). Every line is one line of the grader's, whatever names
    a submission gave its files (text.py), so none of them starts a line of its own."""
    said_ = [*honest_lines(violations or {}), *review_lines(list(review)), *notes]
    return [score_line(tests), *(one_line(n) for n in said_)]


def summary(tests: list[dict], notes: list[str] = (), violations: dict[str, str] | None = None,
            review: list[dict] = ()) -> str:
    """``summary_lines`` as results.json's ``output`` holds them."""
    return "\n".join(summary_lines(tests, notes, violations, review))


def notes_of(results: dict) -> list[str]:
    """The notes a results.json was assembled with (merge joins each pass's)."""
    return list(results.get("extra_data", {}).get("notes", ()))


def violations_of(results: dict) -> dict[str, str]:
    return dict(results.get("extra_data", {}).get("honest_work") or {})


def review_of(results: dict) -> list[dict]:
    """The notes for review a results.json holds (seam/review.py), as data."""
    return [dict(n) for n in results.get("extra_data", {}).get("review") or ()]


def not_run(test: dict) -> bool:
    return test.get("extra_data", {}).get("outcome") == "not_run"


def score_line(tests: list[dict]) -> str:
    """'Score: 199/199 graded (9 points in 6 tests not run: needs CUDA ...)', or 'Score: 5/8'."""
    score = sum(t["score"] for t in tests)
    graded = sum(t["max_score"] for t in tests if not not_run(t))
    skipped = [t for t in tests if not_run(t)]
    if not skipped:
        return f"Score: {score:g}/{graded:g}"
    reasons = "; ".join(dict.fromkeys(t["output"].removeprefix("not run: ") for t in skipped))
    points = sum(t["max_score"] for t in skipped)
    return (f"Score: {score:g}/{graded:g} graded ({points:g} points in {len(skipped)} "
            f"test{'s' * (len(skipped) != 1)} not run: {reasons})")


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(Path(SCHEMA).read_text())


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError unless ``results`` matches the repository's schema."""
    jsonschema.validate(results, _schema())


def write_results(results: dict, out: Path) -> Path:
    """Validate, then write results.json whole or not at all (files.write_atomically)."""
    validate(results)
    return _write_file(Path(out).resolve(), json.dumps(results, indent=2) + "\n")



def per_problem(results: dict) -> list[dict]:
    rows = {p: {"problem": p, "score": 0.0, "max": 0.0, "failed": [], "not_run": []} for p in PROBLEMS}
    for t in results["tests"]:
        row = rows[t["tags"][0]]
        if not_run(t):
            row["not_run"].append(t)
            continue
        row["score"] += t["score"]
        row["max"] += t["max_score"]
        if t["status"] != "passed":
            row["failed"].append(t)
    return [r for r in rows.values() if r["max"] or r["not_run"]]


def _failures(row: dict, max_lines: int) -> list[str]:
    """A problem's failures: one line when they all say the same (a missing or broken module),
    else each test with the first lines of its output."""
    failed = row["failed"]
    outputs = {t["output"] for t in failed}
    if len(failed) > 1 and len(outputs) == 1:
        points = sum(t["max_score"] for t in failed)
        return [f"\nFAIL {problem_number(row['problem'])} {row['problem']}: all {len(failed)} tests "
                f"({points:g} pt): {next(iter(outputs)).splitlines()[0]}"]
    out = []
    for t in failed:
        lines = t["output"].splitlines() or [""]
        shown = lines[:max_lines] + (["  ..."] if len(lines) > max_lines else [])
        out.append(f"\nFAIL {t['number']} {t['name']} ({t['max_score']:g} pt)")
        out.append(indent("\n".join(shown)))
    return out


def render_table(results: dict, max_lines: int = 6) -> str:
    """The score table for a terminal: what the summary says first (an unusable upload's cause,
    the sandbox), one row per problem, what failed and why, what did not run, the score last."""
    score, *head = summary_lines(results["tests"], notes_of(results), violations_of(results),
                                 review_of(results))  # the score line last here
    rows = per_problem(results)
    width = max(len(r["problem"]) for r in rows) if rows else 10
    out = head + ([""] if head else [])
    out.append(f"{'#':>2}  {'problem':<{width}}  {'points':>11}  {'failed':>6}  not run")
    for r in rows:
        skipped = sum(t["max_score"] for t in r["not_run"])
        line = (f"{problem_number(r['problem']):>2}  {r['problem']:<{width}}  "
                f"{r['score']:>5g} / {r['max']:<3g}  {len(r['failed']) or '':>6}  "
                + (f"{len(r['not_run'])} ({skipped:g} pt)" if r["not_run"] else ""))
        out.append(line.rstrip())
    for r in rows:
        out.extend(_failures(r, max_lines))
    skipped = [t for r in rows for t in r["not_run"]]
    if skipped:
        out.append("")
        for t in skipped:
            out.append(f"NOT RUN {t['number']} {t['name']} ({t['max_score']:g} pt)")
        for reason in dict.fromkeys(t["output"] for t in skipped):
            out.append(f"    {reason}")
    out.append("")
    out.append(score)
    return "\n".join(out)
