"""The class report's first screen, "What to act on" (grader/batch/firstscreen.py, with the
likely copies of grader/classreport/actions.py): one test per section, the class with nothing to
act on, partial uploads apart from zeros, the page and the terminal saying the same, a CPU pass,
and small classes where no test may be called doubtful."""

import re
from html.parser import HTMLParser

import pytest

from grader.batch import attention, firstscreen
from grader.classreport import build, stats, summary
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
    return [s["kind"] for s in report["act_on"]["sections"]]


def _section(report: dict, kind: str) -> dict:
    return next(s for s in report["act_on"]["sections"] if s["kind"] == kind)


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
    assert report["act_on"]["sections"] == [] and report["act_on"]["gpu"] is None
    page = _page(report)
    assert page.first == "act", "the panel is the page's first section"
    checked = ("no one charged; every module imported; no timeout or crash; no note for review; no upload at zero; "
               "no likely copy")
    assert page.text == f"What to act on Nothing to act on: {checked}."
    assert summary(report)[1] == f"act on: nothing ({checked})"


def test_a_note_for_review_names_the_student_its_modules_stake_once_and_each_kinds_advice():
    from seam.review import KINDS, note
    notes = [{**note("flops.py", 3, "threads", "threading"), "at_stake": 7.0},
             {**note("flops.py", 9, "ctypes", "ctypes"), "at_stake": 7.0},
             {**note("optim.py", 1, "gc", "gc"), "at_stake": 5.0}]
    students = _class()
    students[4] = _student("s04", [True] * 10, extra={"review": notes})
    report = build(students)
    assert _kinds(report) == ["review"]
    section = _section(report, "review")
    entry, = section["entries"]
    assert (entry["students"], entry["points"]) == (["s04"], 12.0), "flops.py's 7 points once, optim.py's 5"
    assert entry["text"] == "Name s04 (s04): flops.py:3 threads; flops.py:9 ctypes; optim.py:1 gc: 12 points at stake"
    assert section["advice"] == [f"{k}: {KINDS[k][1]}" for k in ("ctypes", "gc", "threads")]
    page = _page(report)
    assert "notes for review (no point taken): 1 student(s)" in page.text and entry["text"] in page.text
    assert f"advice: threads: {KINDS['threads'][1]}" in page.text
    assert "review" in page.links and "review" in page.ids


def test_every_kind_of_note_has_its_own_advice_and_execs_is_not_torch_loads():
    """Each kind of review note says what to write instead, its own words; code run from text
    (exec) and a checkpoint loaded with weights_only off are different kinds with different advice."""
    from seam.review import KINDS, scan_source
    assert all(firstscreen.advice(k) == KINDS[k][1] and KINDS[k][1].strip() for k in KINDS)
    assert len({instead for _, instead in KINDS.values()}) == len(KINDS), "no two kinds share their advice"
    executed, = scan_source("exec('x = 1')\n", "flops.py")
    loaded, = scan_source("import torch, io\nx = torch.load(io.BytesIO(b'..'), weights_only=False)\n", "training.py")
    assert executed["kind"] != loaded["kind"]
    assert firstscreen.advice(executed["kind"]) != firstscreen.advice(loaded["kind"])
    assert "torch.load" not in firstscreen.advice(executed["kind"]) and "torch.load" in firstscreen.advice(loaded["kind"])


def _two(key: str, flops: list[bool] | None, tensors: list[bool] | None, **kw) -> dict:
    """A student of a class graded on flops (10 points) and tensors (10 points); None: the
    module not handed in (its tests fail, as the grader fails a missing module's)."""
    tests = _tests(flops or [False] * 10) + _tests(tensors or [False] * 10, problem="tensors", number=1)
    code = {p: REFERENCE for p, got in (("flops", flops), ("tensors", tensors)) if got is not None}
    return {**_student(key, [], tests=tests, **kw), "code": code}


def test_zeros_are_apart_from_partial_uploads_which_are_counted_below_without_summed_points():
    """At zero: an unusable upload, the stubs as given, a total under a tenth where what was handed
    in does not work either. A partial upload (a problem not handed in, what was handed in works,
    whatever it totals) is named below, counted, its own points alone; exactly a tenth is not near zero."""
    students = [_two(f"s{i:02d}", [True] * 10, [True] * 10) for i in range(10)]
    students[1] = _student("s01", [], status="empty", code="")
    students[2] = {**_two("s02", None, None), "code": {"flops": STUB}}
    students[3] = _two("s03", [False] * 10, [False] * 10)        # everything handed in, nothing works
    students[4] = _two("s04", [True, True] + [False] * 8, [False] * 10)   # 2 of 20: a tenth, not under it
    students[5] = _two("s05", [True] * 10, None)                  # half handed in, all of it right: partial
    students[6] = _two("s06", [True] + [False] * 9, None)         # half handed in, a tenth of it works: partial
    students[7] = _two("s07", [False] * 10, None)                 # half handed in, none of it works: zero
    report = build(students)
    assert _kinds(report) == ["zero"]
    zero = _section(report, "zero")
    assert [e["text"] for e in zero["entries"]] == [
        "Name s01 (s01): an empty upload: 20 points lost",
        "Name s02 (s02): the stubs as given (no problem attempted): 20 points lost",
        "Name s03 (s03): 0 of 20 points", "Name s07 (s07): 0 of 20 points; 1 of 2 problems handed in"]
    partial = report["act_on"]["partial"]
    assert [e["text"] for e in partial["entries"]] == [
        "Name s05 (s05): 1 of 2 problems handed in (not: tensors); 10 of 20 points",
        "Name s06 (s06): 1 of 2 problems handed in (not: tensors); 1 of 20 points"]
    assert partial["head"].endswith(": 2")
    said = summary(report)
    assert said[1].startswith("act on: at zero or near zero (under 10% of the points, and what was handed in does "
                              "not work): 4 student(s) (")
    assert said[6].startswith("below: partial uploads") and said[6].endswith(": 2: Name s05 (s05); Name s06 (s06)")
    assert "points at stake" not in " ".join(said[:7])
    page = _page(report)
    assert "Below: partial uploads" in page.text and "Name s06 (s06)" in page.text and "s04" not in page.text
    assert {"low", "partial"} <= set(page.links) and {"low", "partial"} <= page.ids


def test_charged_students_are_named_with_their_functions_and_the_points_taken():
    tests = _tests([True, False, False], functions=["flops.matmul_flops"])
    tests[0]["extra_data"]["functions"] = ["flops.linear_flops"]
    students = _class(passed=[True] * 3)
    students[2] = _student("s02", [], tests=tests, extra={"honest_work": {"flops.matmul_flops": "torch.matmul's FLOP counter"}})
    report = build(students)
    assert _kinds(report) == ["charged"]
    entry, = _section(report, "charged")["entries"]
    assert entry["text"] == "Name s02 (s02): flops.matmul_flops used torch.matmul's FLOP counter: 2 points taken"
    page = _page(report)
    assert entry["text"] in page.text and "charged" in page.links and "charged" in page.ids


def test_a_module_that_does_not_import_is_on_the_first_screen_and_not_again_at_zero():
    tests = _tests([False] * 10)
    for t in tests:
        t["output"] = "flops.py could not be imported (SyntaxError: invalid syntax (flops.py, line 3), at flops.py:3)"
    students = _class()
    students[3] = _student("s03", [], tests=tests)
    report = build(students)
    assert _kinds(report) == ["broken"], "named once: why it scored 0 is that its module does not import"
    entry, = _section(report, "broken")["entries"]
    assert entry["text"] == ("Name s03 (s03): flops.py does not import (SyntaxError: invalid syntax (flops.py, line 3), "
                             "at flops.py:3): 10 points lost")
    assert entry["text"] in _page(report).text


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
    assert _kinds(report) == ["broken"]
    assert [e["text"] for e in _section(report, "broken")["entries"]] == [
        "Name s01 (s01): flops.matmul_flops: it timed out ×2; flops.py: kills the worker: 2 points lost",
        "Name s02 (s02): the grading crashed (the job was killed (signal 9)): no grade yet, run the batch again: 4 points not graded",
        "Name s03 (s03): the grading was interrupted: no grade yet, run the batch again: 4 points not graded"]
    assert attention.incident_points(students[1]["results"], "flops.matmul_flops") == 1.0  # 3.2 alone
    page = _page(report)
    assert "did not import, hung, crashed or killed the grader's worker: 3 student(s)" in page.text
    assert "incidents" in page.ids


def _pair(problem, a, b, score=0.9):
    return {"problem": problem, "a": a, "b": b, "score": score, "a_share": score, "b_share": score}


def test_likely_copies_between_uploads_and_with_the_archive_by_name_with_their_points():
    students = _class()
    sim = {"threshold": 0.5, "compared": 45, "candidates": 3,
           "pairs": [_pair("flops", "s01", "s07", 0.97), _pair("flops", "s02", ARCHIVE_NAME + "2025/bob/flops.py")]}
    report = build(students, sim)
    assert _kinds(report) == ["copies"]
    section = _section(report, "copies")
    assert section["head"] == "likely copies: 3 student(s), 2 pair(s)"
    page = _page(report)
    assert "Name s01 (s01) ~ Name s07 (s07): flops (0.97): 10 points" in page.text
    assert "Name s02 (s02) ~ /archive/2025/bob/flops.py: flops (0.90): 10 points" in page.text
    assert "similar" in page.links and "similar" in page.ids


def test_close_to_the_reference_names_a_few_and_counts_most_of_the_class():
    few = build(_class(), {"threshold": 0.5, "compared": 10, "candidates": 2,
                           "pairs": [_pair("flops", "s03", REFERENCE_NAME)]})
    assert _kinds(few) == ["reference"] and _section(few, "reference")["entries"][0]["students"] == ["s03"]
    most = build(_class(), {"threshold": 0.5, "compared": 10, "candidates": 6,
                            "pairs": [_pair("flops", f"s{i:02d}", REFERENCE_NAME) for i in range(6)]})
    assert _kinds(most) == [], "most of the class close to the reference: nobody in particular, nothing to act on"
    assert ("6 of 10 uploads close to the reference solution, most of the class: its natural form"
            in _page(most).text)
    assert "s05" not in _page(most).text


def test_the_terminal_and_the_page_say_the_same_first_screen():
    """One summary, computed once: every line the terminal prints of it is on the page, in the
    page's panel, and the students each names are the same; the batch's own closing summary (no
    similarity) is the report's without the copies."""
    from seam.review import note
    students = _class()
    students[1] = _student("s01", [True] * 10, extra={"review": [{**note("flops.py", 3, "code from text", "exec(...)"),
                                                                   "at_stake": 1.0}]})
    students[2] = _student("s02", [False] * 10, extra={"incidents": {"flops.matmul_flops": ["it timed out"]}})
    students[3] = _two("s03", [True] * 10, None)
    students[5] = _student("s05", [False] * 10, status="ambiguous", code="")
    sim = {"threshold": 0.5, "compared": 45, "candidates": 1, "pairs": [_pair("flops", "s06", "s07")]}
    report = build(students, sim)
    assert _kinds(report) == ["broken", "review", "zero", "copies"]
    said = summary(report)
    screen = [line for line in said if line.startswith(("act on:", "  ", "below:"))]
    assert screen == firstscreen.lines(report["act_on"])
    page = _page(report)
    for line in screen:
        if line.startswith("  "):
            assert line.strip() in page.text, line
    for s in report["act_on"]["sections"]:
        assert s["head"] in page.text and s["todo"] in page.text
    named = firstscreen.named(report["act_on"])
    assert named == {"broken": ["s02"], "review": ["s01"], "zero": ["s05"], "copies": ["s06", "s07"], "partial": ["s03"]}
    for kind, keys in named.items():
        assert all(f"Name {k} ({k})" in page.text for k in keys), kind
    batch = firstscreen.first_screen([{"key": s["key"], "who": s["who"], "status": s["status"], "results": s["results"],
                                       "missing": ["tensors"] if s["key"] == "s03" else []} for s in students])
    assert firstscreen.named(batch) == {k: v for k, v in named.items() if k != "copies"}
    assert [s for s in report["act_on"]["sections"] if s["kind"] != "copies"] == batch["sections"]


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
    assert _kinds(report) == ["broken", "review", "copies"], "s02 at zero is named once, under what hung"
    page = _page(report)
    assert set(page.links) >= {"review", "incidents", "similar"} and set(page.links) <= page.ids
