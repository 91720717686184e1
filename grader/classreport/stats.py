"""The class's figures, as pure functions of plain numbers: distributions and item analysis.

Item analysis treats each graded test as an item a student passes (1) or fails (0):

- difficulty: the pass rate p among the students the test ran for;
- discrimination: the corrected point-biserial correlation between the item and the rest of
  the total (the student's total minus this test's own points), and the same against the rest
  of the test's own problem ("within": the problems test different skills, so a wrong test
  shows most clearly against the other tests of its problem). Corrected, because the plain
  point-biserial correlates the item with a total that contains it: a 10-point test would look
  discriminating by its own weight. r = (M1 - M0) / s * sqrt(p * (1 - p)), with M1 and M0 the
  mean rest-score of those who passed and who failed, s its (population) standard deviation;
  undefined (None) when everybody or nobody passed, or every rest-score is equal.

A test to doubt is flagged: nobody passes it (of at least ``MIN_NOBODY`` students); or its
discrimination is negative beyond noise (the students who do better elsewhere fail it more: a
wrong expectation, as a correct solution failing and a named mistake passing would give). Beyond
noise means all of: at least ``MIN_STUDENTS`` took it, at least ``MIN_GROUP`` passed it and as
many failed it, and r is at or below both ``NEGATIVE`` and two standard errors of an item that
has nothing to do with the rest (about 1/sqrt(n) each: ``noise``). The within-problem
discrimination flags under the same rules, while the overall one is negative too.

Tests whose outcome is the same as another test's for every student (while varying) are
reported as such (``same_as``): one of them adds nothing in this class, or they share one cause.
That is a fact about the suite, never a reason to doubt either test, so it is no flag.
"""

import math
import statistics

NEGATIVE = -0.2    # discrimination at or below this is flagged (below ~0.2 an item is "poor"; a
                   # negative one beyond noise is a test the better students fail more)
MIN_STUDENTS = 10  # fewer students took a test: its discrimination is not computed. Its standard
                   # error is about 1/sqrt(n): 0.33 at 9, so two of them span most of [-1, 0]
MIN_GROUP = 3      # fewer passed it, or fewer failed it: not flagged for its discrimination. One
                   # strong student's slip (or a pair who copied one mistake) makes a correct
                   # test's r as negative as a wrong test's: r = -z / sqrt(n - 1) for a single
                   # failing student z deviations above the mean
MIN_NOBODY = 5     # fewer took it: "nobody passes it" is not said (three students all failing a
                   # test half the class passes happens one time in eight)
BINS = 10
SMALL = 20         # fewer graded students than this: the page folds its item analysis


def describe(values: list[float], maximum: float) -> dict:
    """Mean, median, quartiles, extremes, how many at full marks and at 0, and a histogram of
    ``BINS`` equal bins over [0, maximum] (the last bin holds ``maximum``)."""
    if not values:
        return {"n": 0}
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else (values[0],) * 3
    return {"n": len(values), "max_possible": maximum, "mean": statistics.fmean(values),
            "median": statistics.median(values), "q1": q1, "q3": q3, "min": min(values), "max": max(values),
            "full": sum(1 for v in values if maximum and v >= maximum), "zero": sum(1 for v in values if v == 0),
            "histogram": histogram(values, maximum)}


def histogram(values: list[float], maximum: float, bins: int = BINS) -> dict:
    edges = [maximum * i / bins for i in range(bins + 1)]
    counts = [0] * bins
    for v in values:
        i = min(int(v * bins / maximum + 1e-9), bins - 1) if maximum > 0 else 0  # (an edge in its own bin)
        counts[max(i, 0)] += 1
    return {"edges": edges, "counts": counts}


def point_biserial(items: list[int], rest: list[float]) -> float | None:
    """The correlation of a 0/1 item with the rest-scores (see the module's docstring)."""
    n = len(items)
    if n < MIN_STUDENTS:
        return None
    passed = [r for i, r in zip(items, rest) if i]
    failed = [r for i, r in zip(items, rest) if not i]
    if not passed or not failed:
        return None
    s = statistics.pstdev(rest)
    if s == 0:
        return None
    p = len(passed) / n
    return (statistics.fmean(passed) - statistics.fmean(failed)) / s * math.sqrt(p * (1 - p))


def noise(n: int) -> float:
    """Two standard errors of the point-biserial of an item unrelated to the rest, about 2/sqrt(n):
    a discrimination above -noise(n) is no evidence against a test."""
    return 2 / math.sqrt(n)


def negative(r: float | None, items: list[int]) -> bool:
    """Negative beyond noise (the module's docstring): enough students, on both sides, and r at
    or below NEGATIVE and below two standard errors."""
    passed = sum(items)
    return (r is not None and len(items) >= MIN_STUDENTS and min(passed, len(items) - passed) >= MIN_GROUP
            and r <= min(NEGATIVE, -noise(len(items))))


def item_analysis(outcomes: dict[str, dict[str, bool]], points: dict[str, float],
                  totals: dict[str, float], problems: dict[str, dict[str, float]] | None = None,
                  problem_of: dict[str, str] | None = None) -> dict[str, dict]:
    """Per test: ``outcomes[test][student]`` (True passed; a test that did not run for a student
    is absent there), ``points[test]``, ``totals[student]`` (the graded total), and optionally
    ``problems[problem][student]`` (the problem's score) with ``problem_of[test]``. Returns, per
    test, its n, pass rate, discrimination against the rest of the total and, where given, against
    the rest of its own problem (``within``: problems test different skills, so a test's own
    problem is where a miskeyed test shows first), its flags (strings), whether it had enough
    students to be judged by its discrimination (``judged``) and, for the second and later of
    tests with one outcome pattern, the first of them (``same_as``)."""
    out = {}
    patterns: dict[tuple, list[str]] = {}
    everyone = sorted(totals)
    for test, by_student in outcomes.items():
        students = [s for s in everyone if s in by_student]
        items = [int(by_student[s]) for s in students]
        rest = [totals[s] - points[test] * by_student[s] for s in students]
        r = point_biserial(items, rest)
        within = None
        if problems is not None and problem_of is not None and problem_of.get(test) in problems:
            own = problems[problem_of[test]]
            within = point_biserial(items, [own.get(s, 0.0) - points[test] * by_student[s] for s in students])
        p = sum(items) / len(items) if items else None
        flags = []
        if len(items) >= MIN_NOBODY and not any(items):
            flags.append("nobody passes it")
        if negative(r, items):
            flags.append(f"negative discrimination ({r:.2f}): the students who score better elsewhere fail it more")
        elif negative(within, items) and r is not None and r < 0:
            # alone, "within" is misled by two mistakes that exclude each other (each then looks
            # like the other's wrong test): it counts where the total agrees in sign
            flags.append(f"negative discrimination ({within:.2f} within its problem, {r:.2f} overall): "
                         f"the students who do better on the rest of its problem fail it more")
        out[test] = {"n": len(items), "pass_rate": p, "discrimination": r, "within": within, "flags": flags,
                     "judged": len(items) >= MIN_STUDENTS}
        if items and 0 < sum(items) < len(items):  # a varying pattern: the same one twice is redundant
            patterns.setdefault(tuple((s, by_student[s]) for s in students), []).append(test)
    for same in patterns.values():
        for test in same[1:]:
            out[test]["same_as"] = same[0]
    return out
