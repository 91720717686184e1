"""The class report's first screen, "What to act on" (grader/classreport/actions.py, from the
facts of grader/batch/attention.py): one test per kind, the class with nothing to act on, a CPU
pass, and small classes where no test may be called doubtful."""

import re
from html.parser import HTMLParser

import pytest

from grader.batch import attention
from grader.classreport import build, stats, summary
from grader.classreport.actions import act_on
from grader.classreport.html import render
from grader.classreport.similarity import ARCHIVE_NAME, REFERENCE_NAME
from grader.paths import problem_file

REFERENCE = problem_file("flops", "reference").read_text()
STUB = problem_file("flops", "stub").read_text()


def _tests(passed: list[bool], functions=(), problem: str = "flops", number: int = 3) -> list[dict]:
    return [{"name": f"{problem}: test {k}", "number": f"{number}.{k}", "score": 1.0 if ok else 0.0,
             "max_score": 1.0, "status": "passed" if ok else "failed", "output": "passed" if ok else "wrong",
             "visibility": "visible", "tags": [problem], "extra_data": {"functions": list(functions)}}
            for k, ok in enumerate(passed, 1)]


def _student(key: str, passed: list[bool], status: str = "graded", code: str = REFERENCE, extra=None,
             tests=None, error=None) -> dict:
    tests = tests if tests is not None else _tests(passed)
    results = {"score": sum(t["score"] for t in tests), "tests": tests, "extra_data": extra or {}}
    return {"key": key, "status": status, "who": [f"Name {key}"], "code": {"flops": code} if code else {},
            "results": results if status == "graded" else None, "repeats": [], "previous": None, "error": error}


def _class(n: int = 10, passed=(True,) * 10) -> list[dict]:
    return [_student(f"s{i:02d}", list(passed)) for i in range(n)]


def _kinds(report: dict) -> list[str]:
    return [item["kind"] for item in report["act_on"]["items"]]


class _Page(HTMLParser):
    """The page's ids, its links to them, and the text of the panel (the first <section>)."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.panel, self._in, self.first = set(), [], [], False, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if self._in and tag in ("h2", "p", "li", "ul"):
            self.panel.append(" ")
        if self.first is None and tag in ("h2", "section"):
            self.first = attrs.get("id")
        self._in = self._in or tag == "section"

    def handle_endtag(self, tag):
        self._in = self._in and tag != "section"

    def handle_data(self, data):
        if self._in:
            self.panel.append(data)


def _page(report: dict) -> _Page:
    parser = _Page()
    parser.feed(render(report, {}))
    parser.text = " ".join("".join(parser.panel).split())
    return parser


def test_nothing_to_act_on_is_one_line():
    report = build(_class(), {"threshold": 0.5, "compared": 45, "candidates": 0, "pairs": []})
    assert report["act_on"]["items"] == [] and report["act_on"]["gpu"] is None
    page = _page(report)
    assert page.first == "act", "the panel is the page's first section"
    assert page.text == ("What to act on Nothing to act on: no note for review; no upload at zero, near zero or half missing; "
                         "no timeout or crash; no likely copy.")
    assert summary(report)[1] == ("act on: nothing (no note for review; no upload at zero, near zero or half missing; no timeout or "
                                  "crash; no likely copy)")


def test_a_note_for_review_names_the_student_and_its_modules_stake_once():
    from seam.review import note
    notes = [{**note("flops.py", 3, "threads", "threading"), "at_stake": 7.0},
             {**note("flops.py", 9, "ctypes", "ctypes"), "at_stake": 7.0},
             {**note("optim.py", 1, "gc", "gc"), "at_stake": 5.0}]
    students = _class()
    students[4] = _student("s04", [True] * 10, extra={"review": notes})
    report = build(students)
    assert _kinds(report) == ["review"]
    item = report["act_on"]["items"][0]
    assert (item["students"], item["points"]) == (1, 12.0), "flops.py's 7 points once, optim.py's 5"
    assert item["entries"][0]["what"] == "flops.py:3 threads; flops.py:9 ctypes; optim.py:1 gc"
    page = _page(report)
    assert "Notes for review: 1 (12 points at stake)" in page.text and "Name s04 (s04)" in page.text
    assert "review" in page.links and "review" in page.ids


def test_zero_and_near_zero_uploads_with_why_and_what_is_at_stake():
    """Unusable uploads (their status), the stubs as given, and a graded total under a tenth of
    the points; exactly a tenth is not near zero."""
    students = _class(passed=[True] * 10)
    students[1] = _student("s01", [False] * 10, status="empty", code="")
    students[2] = _student("s02", [False] * 10, code=STUB)
    students[3] = _student("s03", [False] * 10)
    students[4] = _student("s04", [True] + [False] * 9)   # 1 of 10: a tenth, not under it
    report = build(students)
    assert report["low"] == [
        {"student": "s01", "why": "an empty upload", "score": 0.0, "possible": 10.0},
        {"student": "s02", "why": "the stubs as given", "score": 0.0, "possible": 10.0},
        {"student": "s03", "why": "0 of 10 points", "score": 0.0, "possible": 10.0}]
    assert _kinds(report) == ["low"] and report["act_on"]["items"][0]["points"] == 30.0
    page = _page(report)
    assert ("Zero, near zero or half missing (under 10% of the points, or half the problems missing or the "
            "stub as given): 3 (30 points at stake)") in page.text
    assert "Name s02 (s02): the stubs as given" in page.text and "s04" not in page.text
    assert "low" in page.links and "low" in page.ids
    assert attention.low([("x", "graded", {"score": 0.9, "tests": _tests([True] * 10)})], possible=10.0) == [
        {"student": "x", "why": "0.9 of 10 points", "score": 0.9, "possible": 10.0}]


def test_an_upload_missing_half_its_problems_is_named_whatever_it_scored():
    """Two problems of twelve handed in, both right: 31 of 213 points is over a tenth, yet the
    upload is most likely the wrong files or a partial one; five of twelve missing is not named."""
    results = {"score": 31.0, "tests": _tests([True] * 31)}
    entries = [("knuth", "graded", results), ("most", "graded", results)]
    assert attention.low(entries, possible=213.0, unattempted={"knuth": (10, 12), "most": (5, 12)}) == [
        {"student": "knuth", "why": "10 of 12 problems missing or the stub as given; 31 of 213 points",
         "score": 31.0, "possible": 213.0}]


def test_timeouts_and_crashes_count_each_lost_test_once():
    """A function that timed out and its module that broke the worker lost the same failed test:
    counted once; a crashed and an interrupted grading have no grade: every point."""
    tests = _tests([True, False, False, True], functions=["flops.matmul_flops"])
    tests[2]["extra_data"]["functions"] = ["flops.linear_flops"]
    students = _class(passed=[True] * 4)
    students[1] = _student("s01", [], tests=tests, extra={"incidents": {
        "flops.matmul_flops": ["it timed out", "it timed out"], "flops.py": ["kills the worker"]}})
    students[2] = _student("s02", [], status="crashed", error="the job was killed (signal 9)")
    students[3] = _student("s03", [], status="interrupted")
    report = build(students)
    assert report["lost"] == {"s01": 2.0, "s02": 4.0, "s03": 4.0}
    item = report["act_on"]["items"][0]
    assert _kinds(report) == ["incidents"] and item["points"] == 10.0
    assert [e["what"] for e in item["entries"]] == [
        "flops.matmul_flops: it timed out ×2; flops.py: kills the worker",
        "the grading: the job was killed (signal 9)", "the grading: interrupted"]
    assert attention.incident_points(students[1]["results"], "flops.matmul_flops") == 1.0  # 3.2 alone
    page = _page(report)
    assert "Timeouts and crashes: 3 (10 points at stake)" in page.text and "incidents" in page.ids


def _pair(problem, a, b, score=0.9):
    return {"problem": problem, "a": a, "b": b, "score": score, "a_share": score, "b_share": score}


def test_likely_copies_between_uploads_and_with_the_archive_by_name_with_their_points():
    students = _class()
    sim = {"threshold": 0.5, "compared": 45, "candidates": 3,
           "pairs": [_pair("flops", "s01", "s07", 0.97), _pair("flops", "s02", ARCHIVE_NAME + "2025/bob/flops.py")]}
    report = build(students, sim)
    assert _kinds(report) == ["copies"]
    item = report["act_on"]["items"][0]
    assert (item["students"], item["points"]) == (3, 20.0), "each pair: the flops module's 10 points"
    page = _page(report)
    assert "Likely copies: 2 (20 points at stake)" in page.text
    assert "Name s01 (s01) ~ Name s07 (s07): flops (0.97)" in page.text
    assert "Name s02 (s02) ~ /archive/2025/bob/flops.py: flops (0.90)" in page.text
    assert "similar" in page.links and "similar" in page.ids


def test_close_to_the_reference_names_a_few_and_counts_most_of_the_class():
    few = build(_class(), {"threshold": 0.5, "compared": 10, "candidates": 2,
                           "pairs": [_pair("flops", "s03", REFERENCE_NAME)]})
    assert _kinds(few) == ["reference"] and few["act_on"]["items"][0]["entries"][0]["students"] == ["s03"]
    most = build(_class(), {"threshold": 0.5, "compared": 10, "candidates": 6,
                            "pairs": [_pair("flops", f"s{i:02d}", REFERENCE_NAME) for i in range(6)]})
    assert _kinds(most) == [], "most of the class close to the reference: nobody in particular, nothing to act on"
    assert ("6 of 10 uploads close to the reference solution, most of the class: its natural form"
            in _page(most).text)
    assert "s05" not in _page(most).text


def test_a_cpu_pass_says_its_gpu_points_once_and_names_nobody_under_not_run():
    """--gpu skip leaves the GPU tests to come (extra_data.to_come); auto without CUDA runs them
    as not run: one line for the class either way. Only a student whose left-out tests differ
    is named."""
    to_come = {"to_come": {"tests": {"3.9": 2.0, "3.10": 3.0}, "points": 5.0}}
    students = [_student(f"s{i:02d}", [True] * 4, extra=to_come) for i in range(28)]
    report = build(students)
    assert report["gpu"] == {"points": 5.0, "tests": ["3.9", "3.10"], "students": 28, "of": 28, "kind": "to come"}
    assert "not run" not in report["statuses"]
    line = "GPU points to come: 5 points per student (tests 3.9, 3.10)"
    page = render(report, {})
    assert page.count(line) == 1 and "s07" not in page
    assert any(s.startswith(line) for s in summary(report))
    # auto without CUDA: the same tests not run; one student ran them (named: it differs)
    tests = _tests([True, True, False, False])
    for t in tests[2:]:
        t["extra_data"]["outcome"] = "not_run"
    students = [_student(f"s{i:02d}", [], tests=[dict(t) for t in tests]) for i in range(5)]
    students.append(_student("s99", [True] * 4))
    report = build(students)
    assert report["gpu"] == {"points": 2.0, "tests": ["3.3", "3.4"], "students": 5, "of": 6, "kind": "not run"}
    assert report["statuses"] == {}
    assert "GPU tests not run: 2 points for 5 of 6 students (tests 3.3, 3.4)" in render(report, {})


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_class_of_one_to_three_calls_no_test_doubtful(n):
    """Every student fails 3.1, and the weaker ones pass 3.2 while the stronger fail it: in a class
    of three or fewer that is nothing to doubt a test for, and the page says why."""
    students = [_student(f"s{i}", [False, i == 0] + [True] * i) for i in range(n)]
    report = build(students)
    assert report["doubt"] == [] and all(i["flags"] == [] and not i["judged"] for i in report["items"])
    page = render(report, {})
    assert "too few to judge by discrimination" in page and "Tests to doubt</h2>" not in page


def test_a_single_student_never_makes_a_test_doubtful():
    """17 students; the strongest alone fails a correct test: its discrimination (r = -z / sqrt(n - 1))
    is past NEGATIVE, yet one student is no evidence. Three strong students failing it are."""
    totals = {f"s{i:02d}": float(i) for i in range(16)} | {"s16": 60.0}  # far ahead of the class
    one = {"1.1": {s: s != "s16" for s in totals}}
    got = stats.item_analysis(one, {"1.1": 1.0}, totals)["1.1"]
    assert got["discrimination"] <= min(stats.NEGATIVE, -stats.noise(17)), "past every bound on r alone"
    assert got["flags"] == []
    three = {"1.1": {s: s not in ("s14", "s15", "s16") for s in totals}}
    assert stats.item_analysis(three, {"1.1": 1.0}, totals)["1.1"]["flags"][0].startswith("negative discrimination")


def test_redundant_tests_are_one_folded_note_not_tests_to_doubt():
    students = [_student(f"s{i:02d}", [True, i % 2 == 0, i % 2 == 0, i % 3 == 0, i % 3 == 0]) for i in range(24)]
    report = build(students)
    assert report["redundant"] == [{"name": "flops: test 2", "tests": ["3.2", "3.3"]},
                                   {"name": "flops: test 4", "tests": ["3.4", "3.5"]}]
    assert report["doubt"] == []
    page = render(report, {})
    assert re.search(r"<details><summary>Tests with the same outcome for every student \(2 groups\)</summary>", page)
    assert "Tests to doubt</h2>" not in page
    assert not any(line.startswith("doubt") for line in summary(report))


def test_every_link_of_the_panel_has_its_section():
    from seam.review import note
    students = _class()
    students[1] = _student("s01", [True] * 10, extra={"review": [{**note("flops.py", 3, "threads", "t"), "at_stake": 1.0}]})
    students[2] = _student("s02", [False] * 10, extra={"incidents": {"flops.matmul_flops": ["it timed out"]}})
    report = build(students, {"threshold": 0.5, "compared": 45, "candidates": 1,
                              "pairs": [_pair("flops", "s03", "s04")]})
    assert _kinds(report) == ["review", "low", "incidents", "copies"]
    page = _page(report)
    assert set(page.links) >= {"review", "low", "incidents", "similar"} and set(page.links) <= page.ids
