"""What a TA must act on after a batch, as pure functions of the class's results: the uploads at
or near zero, the gradings that did not finish, what hung and the points it cost, and the GPU
points a CPU pass left for later.

Both ends of a batch read these: its closing summary (output.class_summary, which must not load
the class report's libraries) and the class report's "What to act on" panel
(grader/classreport/actions.py). Notes for review and likely copies are the class report's own
(seam/review.py, similarity.py): they come in there.
"""

from collections import Counter

from ..report import not_run, per_problem

NEAR_ZERO = 0.10  # under this share of the points graded: "near zero", less than about one
                  # problem's worth (the twelve problems are 5% to 12% of the points each). An
                  # upload that never imports, or is the wrong files, scores there; a student
                  # genuinely that low is worth a look anyway

# what an upload's status says about it, and what to do
UNUSABLE = {"not found": "no submission found in the upload",
            "empty": "an empty upload",
            "ambiguous": "more than one candidate submission (graded as neither)"}
UNFINISHED = {"crashed": "the grading crashed", "interrupted": "the grading was interrupted"}


def graded_points(results: dict) -> float:
    """The points a grading graded: every test but those that did not run."""
    return sum(float(t["max_score"]) for t in results["tests"] if not not_run(t))


def _calls(test: dict, what: str) -> bool:
    """The test ran ``what``: a function it called (or a method of it), or the module ``x.py``
    of its problem."""
    if what.endswith(".py"):
        return (test.get("tags") or [""])[0] == what[:-3]
    return any(f == what or f.startswith(what + ".") for f in test.get("extra_data", {}).get("functions") or ())


def incident_points(results: dict, what: str) -> float:
    """The points a student lost to what hung or crashed (an incident's key: "f1 / f2", a
    function, or "x.py"): the failed tests that call it. "the submission" (its time budget spent)
    names no function: 0."""
    parts = what.split(" / ")
    return sum(float(t["max_score"]) for t in results["tests"]
               if t["status"] != "passed" and not not_run(t) and any(_calls(t, p) for p in parts))


def how_said(how: list) -> str:
    """What happened, how often, from (what, times) pairs: "it timed out ×2 / it ran out of memory"."""
    return " / ".join(h + (f" ×{k}" if k > 1 else "") for h, k in how)


def incidents(results: dict) -> list[dict]:
    """A grading's incidents (results.json ``extra_data.incidents``): what, how (counted), and
    the points it cost."""
    return [{"what": what, "how": Counter(how).most_common(), "points": incident_points(results, what)}
            for what, how in sorted((results.get("extra_data", {}).get("incidents") or {}).items())]


def lost(results: dict) -> float:
    """The points a grading lost to everything that hung or crashed, each failed test once."""
    return incident_points(results, " / ".join(results.get("extra_data", {}).get("incidents") or {}))


def pending(results: dict) -> dict[str, float]:
    """test number -> points of each test this grading left out: a CPU pass's GPU tests
    (``extra_data.to_come``) and those not run for want of CUDA (``outcome: not_run``)."""
    out = {t["number"]: float(t["max_score"]) for t in results["tests"] if not_run(t)}
    out |= {n: float(p) for n, p in (results.get("extra_data", {}).get("to_come", {}).get("tests") or {}).items()}
    return out


def gpu_pending(graded: dict[str, dict]) -> tuple[dict | None, list[str]]:
    """The GPU points a pass left, said once for the class: (points, tests, how many students,
    of how many, "to come" when the pass left them for the GPU pass or "not run" when it had no
    CUDA), or None; and the students whose tests left out differ from the class's (named)."""
    sets = {k: pending(r) for k, r in graded.items()}
    common = Counter(tuple(sorted(p.items())) for p in sets.values() if p).most_common(1)
    if not common:
        return None, []
    tests = dict(common[0][0])
    shared = [k for k, p in sets.items() if p == tests]
    coming = all(graded[k].get("extra_data", {}).get("to_come") for k in shared)
    return ({"points": sum(tests.values()), "tests": sorted(tests, key=_number), "students": len(shared),
             "of": len(graded), "kind": "to come" if coming else "not run"},
            sorted(k for k, p in sets.items() if p and p != tests))


def _number(n: str) -> list[int]:
    return [int(x) if x.isdigit() else 0 for x in n.split(".")]


def gpu_line(gpu: dict) -> str:
    """One sentence for the page and the terminal."""
    per = "per student" if gpu["students"] == gpu["of"] else f"for {gpu['students']} of {gpu['of']} students"
    tests = ", ".join(gpu["tests"][:8]) + (f" and {len(gpu['tests']) - 8} more" if len(gpu["tests"]) > 8 else "")
    if gpu["kind"] == "to come":
        return (f"GPU points to come: {gpu['points']:g} points {per} (tests {tests}): this was a CPU pass; "
                f"the GPU pass (--gpu only) grades them and merge joins them")
    return (f"GPU tests not run: {gpu['points']:g} points {per} (tests {tests}): there was no CUDA; grade "
            f"them on a GPU machine (--gpu only) and merge")


def problem_points(results_list: list[dict]) -> dict[str, float]:
    """problem -> the most points it was graded for in the class."""
    out: dict[str, float] = {}
    for r in results_list:
        for row in per_problem(r):
            out[row["problem"]] = max(out.get(row["problem"], 0.0), row["max"])
    return out
