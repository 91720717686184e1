"""A finished grade rescored after a re-weighting, instead of graded again.

Where the tests moved since a student was graded and only their points did (provenance.py
``reweighted``: the same grader version, the same verdicts hash), every verdict in their
results.json still holds: which tests passed, failed, were charged or not run. What each is worth
is read from the points markers now (``weights``: one pytest collection, no grading), and
``rescore`` rebuilds results.json from the same parts through ``report.assemble``, the code every
grade ends with. A rescored results.json is the one a regrade would write (tests/self/unit/
test_rescore.py builds both from the same facts), at the cost of reading a file instead of
grading the upload: seconds for a class, not an hour.

What it cannot rebuild exactly it does not rescore (None: the student is graded again): a test
it does not know by its id, a test the grade left uncounted (an MFU test on a GPU the peak table
lacks: its facts are not in results.json), a note on a helper module (its points at stake are
those of the problems that import it, which results.json does not keep).
"""

from typing import NamedTuple

from seam.problems import PROBLEMS, RULED, problem_number, touched
from ..report import assemble, node_id, number, review_of, to_come_note, validate, violations_of

UNCOUNTED = "not counted: "  # report.build_results's note for a test left out of the total


class Weight(NamedTuple):
    points: float   # what the test is worth now
    how: bool       # it checks how the work is done (its points are at stake in a note for review)
    number: str     # its <problem>.<k>, as every grade numbers it (a CPU pass's tests to come are
                    # named by it alone)


def weights(facts=None) -> dict[str, Weight]:
    """Each graded test's id (as results.json names it) -> its Weight now, from ``facts`` (default:
    a collection of the tests, which imports them, and torch with them)."""
    if facts is None:
        from ..rubric import collect
        facts = number(collect())
    return {node_id(f.nodeid): Weight(float(f.points), bool(f.how), f"{problem_number(f.problem)}.{f.index}")
            for f in facts}


def rescore(results: dict, now: dict[str, Weight], grader: dict) -> dict | None:
    """``results`` with each test worth what ``now`` says, stamped ``grader``; None where that
    cannot be the regrade's results.json exactly (see the module's docstring)."""
    extra = results.get("extra_data", {})
    notes = list(extra.get("notes", ()))
    if any(n.startswith(UNCOUNTED) for n in notes):
        return None
    tests, how = [], {}
    for t in results["tests"]:
        node = t.get("extra_data", {}).get("test")
        if node not in now:
            return None
        weight = now[node]
        if weight.number != t["number"]:
            return None
        how[t["number"]] = weight.how
        tests.append({**t, "score": weight.points if t["status"] == "passed" else 0.0, "max_score": weight.points})
    to_come = None
    if "to_come" in extra:  # numbers of tests not run, in ``tests`` or left out (a --gpu skip pass)
        worth = {w.number: w.points for w in now.values()}
        if not set(extra["to_come"]["tests"]) <= set(worth):
            return None
        to_come = {n: worth[n] for n in extra["to_come"]["tests"]}
        said = to_come_note(extra["to_come"]["points"], len(to_come))
        if said not in notes:
            return None
        notes[notes.index(said)] = to_come_note(sum(to_come.values()), len(to_come))
    stake: dict[str, float] = {}   # report.stakes, from the tests' recorded calls and the markers now
    for t in tests:
        if how[t["number"]] or touched(t["extra_data"].get("functions", ()), RULED):
            stake[t["tags"][0]] = stake.get(t["tags"][0], 0.0) + t["max_score"]
    review = []
    for n in review_of(results):
        problem = n["file"].removesuffix(".py")
        if problem not in PROBLEMS:
            return None
        review.append({**n, "at_stake": stake.get(problem, 0.0)})
    rescored = assemble(tests, results["execution_time"], notes, grader, violations_of(results), to_come,
                        extra.get("incidents"), review, extra.get("files"))
    validate(rescored)
    return rescored
