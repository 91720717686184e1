"""The class report spends bounded time on one student's text: a module longer than
similarity.LARGEST is not fingerprinted nor parsed, and the report says "too large to compare".
Unbounded, one student's twelve padded 1 MB modules take the report of a class from 2 s to 80 s."""

import json
import time

import pytest

from grader.classreport import similarity, write
from grader.classreport.similarity import LARGEST
from seam.problems import PROBLEMS
from tests.self.synthetic_class import Student, make_class, variants, write_batch

SIZE = 12      # students in the class without the padded one
PADDED = 1_000_000  # characters of each padded module (the batch keeps modules up to 1 MiB)


def _fake_tests(problem: str) -> list[dict]:
    return [{"name": f"{problem}: test {k}", "number": f"{list(PROBLEMS).index(problem) + 1}.{k}", "score": 1.0,
             "max_score": 1.0, "status": "passed", "output": "passed", "visibility": "visible",
             "tags": [problem], "extra_data": {"functions": []}} for k in (1, 2)]


def _padded(text: str) -> str:
    """The module with dead code after it up to PADDED characters: what a tokeniser must read."""
    pad, size, i = [text, "\n"], len(text) + 1, 0
    while size < PADDED:
        pad.append(f"def _unused_{i}(a, b):\n    return a * {i} + b - {i}\n")
        size += len(pad[-1])
        i += 1
    return "".join(pad)[:PADDED]


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    pool = variants()
    graded = {(v.problem, v.label): _fake_tests(v.problem) for v in pool}
    plain = make_class(SIZE, seed=5, pool=pool)
    reference = {v.problem: v for v in pool if v.label == "reference"}
    padder = Student("s9999", dict(reference), {p: _padded(v.text) for p, v in reference.items()}, {})
    root = tmp_path_factory.mktemp("large")
    return write_batch(root / "plain", plain, graded), write_batch(root / "padded", plain + [padder], graded)


def _seconds(out) -> float:
    similarity._MADE.clear()  # no fingerprint made by an earlier report
    start = time.perf_counter()
    write(out)
    return time.perf_counter() - start


@pytest.mark.e2e  # five reports of a class (~40 s): not in the fast loop
def test_one_padded_student_costs_the_report_at_most_twice_its_time(classes):
    plain, padded = classes
    _seconds(plain)  # imports and the stubs' syntax trees, once
    times = {"plain": [], "padded": []}
    for _ in range(2):  # alternated, the best of two each (a shared machine)
        times["plain"].append(_seconds(plain))
        times["padded"].append(_seconds(padded))
    ratio = min(times["padded"]) / min(times["plain"])
    print(f"class report of {SIZE} students: {min(times['plain']):.2f} s; with one student's twelve "
          f"{PADDED // 1000} KB modules beside them: {min(times['padded']):.2f} s (x{ratio:.2f})")
    assert ratio <= 2.0, times
    report = json.loads((padded / "report.json").read_text())
    assert report["similarity"]["too_large"] == [{"student": "s9999", "problem": p} for p in PROBLEMS]
    page = (padded / "report.html").read_text()
    assert "Too large to compare (over 64 KB, not fingerprinted): Student s9999 (s9999) (tensors.py, " in page
    # the padded modules are no stub as given: attempted, counted in their problems' figures
    assert report["problems"] and all("s9999" not in row["not_attempted"] for row in report["problems"])


def test_a_module_at_the_bound_is_compared_and_one_past_it_is_not():
    text = "def f(a, b):\n    return a + b\n"
    body = (text * (LARGEST // len(text) + 1))
    at, past = body[:LARGEST], body[:LARGEST + 1]
    found = similarity.similar("tensors", {"at": at, "past": past}, "", None)
    assert found["too_large"] == ["past"]
