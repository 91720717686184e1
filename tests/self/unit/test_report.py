"""report.py's pure functions: facts -> results.json (schema-valid) -> score table."""

import json

import jsonschema
import pytest

from grader.plugin import Fact
from grader.report import build_results, render_table, validate, write_results


def facts():
    return [
        Fact("tests/hidden/test_flops.py::b", "flops", "hidden flops", 2, "after_published", False, "passed"),
        Fact("tests/public/test_tensors.py::a", "tensors", "offsets", 1, "visible", False, "failed",
             "element_offset((3, 4), (4, 1), (1, 2))\n  expected: 6\n  got:      7"),
        Fact("tests/public/test_flops.py::a", "flops", "linear", 3, "visible", False, "passed"),
        Fact("tests/hidden/test_optim.py::g", "optim", "gpu memory", 2, "after_published", True, "not_run",
             "not run: needs CUDA"),
    ]


def test_build_results_scores_numbers_and_orders():
    results = build_results(facts(), 1.5, ["note"])
    validate(results)
    assert results["score"] == 5
    assert [t["number"] for t in results["tests"]] == ["1.1", "3.1", "3.2", "8.1"]
    assert [t["name"] for t in results["tests"]][:2] == ["tensors: offsets", "flops: linear"]
    gpu = results["tests"][-1]
    assert gpu["status"] == "failed" and gpu["score"] == 0 and "not run" in gpu["output"]
    assert gpu["extra_data"] == {"outcome": "not_run", "functions": []}
    assert results["tests"][0]["extra_data"] == {"functions": []}
    assert results["output"].splitlines()[0] == "Score: 5/6 graded (2 points in 1 test not run: needs CUDA)"


def test_table_shows_expected_and_got():
    table = render_table(build_results(facts(), 1.0, []))
    assert "expected: 6" in table and "got:      7" in table
    assert table.splitlines()[-1].startswith("Score: 5/6 graded")


def test_not_run_is_shown_as_not_run_not_as_a_failure():
    """A GPU test on a CPU machine: NOT RUN with its reason, never FAIL; the score line keeps it
    apart from what was graded (a reference solution must not look broken)."""
    table = render_table(build_results(facts(), 1.0, ["sandbox: test"]))
    assert "NOT RUN 8.1 optim: gpu memory (2 pt)" in table and "FAIL 8.1" not in table
    assert "not run: needs CUDA" in table
    assert table.splitlines()[0] == "sandbox: test"
    all_ran = [f for f in facts() if f.outcome != "not_run"]
    line = build_results(all_ran, 1.0, [])["output"]
    assert line == "Score: 5/6"


def test_an_unusable_submission_reads_cause_first_and_one_line_per_problem():
    missing = [Fact(f"tests/public/test_{p}.py::t{i}", p, f"t{i}", 1, "visible", False, "failed",
                    f"{p}.py is missing from the submission") for p in ("tensors", "flops") for i in range(5)]
    cause = "no problem modules found in the submission (it is empty). Expected layout: ..."
    results = build_results(missing, 1.0, [cause])
    table = render_table(results)
    lines = table.splitlines()
    assert lines[0] == cause and table.count(cause) == 1
    fails = [line for line in lines if line.startswith("FAIL")]
    assert fails == ["FAIL 1 tensors: all 5 tests (5 pt): tensors.py is missing from the submission",
                     "FAIL 3 flops: all 5 tests (5 pt): flops.py is missing from the submission"]
    assert table.count("is missing") == 2


@pytest.mark.parametrize("mutate", [
    lambda r: r.pop("tests"), lambda r: r.update(score="5"), lambda r: r["tests"][0].update(status="ok"),
    lambda r: r["tests"][0].update(visibility="public"), lambda r: r["tests"][0].pop("max_score"),
    lambda r: r.update(extra=1), lambda r: r["tests"][0].update(extra_data={"outcome": "skipped"})])
def test_schema_rejects_malformed(mutate):
    results = build_results(facts(), 1.0, [])
    mutate(results)
    with pytest.raises(jsonschema.ValidationError):
        validate(results)


def test_write_is_atomic_and_validated(tmp_path):
    out = tmp_path / "deep" / "results.json"
    good = build_results(facts(), 1.0, [])
    write_results(good, out)
    assert json.loads(out.read_text()) == good
    bad = dict(good, score=-1)
    with pytest.raises(jsonschema.ValidationError):
        write_results(bad, out)
    assert json.loads(out.read_text()) == good          # the old file is untouched
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]  # no temp file left


def test_a_named_mistake_is_a_field_of_the_failed_test_only():
    """results.json names a failure's mistake as data (the class report ranks them), with its
    handout section; a passed test carries none, whatever it recorded."""
    mistake = (("a multiply-add as 1 FLOP", "flops"),)
    facts = [Fact("tests/hidden/test_flops.py::m", "flops", "matmul", 2, "after_published", False, "failed",
                  "got 1\nexpected 2", mistakes=mistake),
             Fact("tests/hidden/test_flops.py::n", "flops", "linear", 2, "after_published", False, "passed",
                  mistakes=mistake)]
    results = build_results(facts, 0.0, [])
    validate(results)
    by_title = {t["name"]: t["extra_data"] for t in results["tests"]}
    assert by_title["flops: matmul"]["mistakes"] == [{"name": "a multiply-add as 1 FLOP",
                                                      "handout": "assignment/problems/flops.md"}]
    assert "mistakes" not in by_title["flops: linear"]


def test_a_note_for_review_takes_no_point_and_says_what_is_at_stake():
    """A note (seam/review.py) is kept in extra_data.review with the points of its module's ruled
    functions and how checks; the score is the same as without it; the summary says it under the
    score line; a merge of two passes keeps each note once."""
    from grader.batch.merge import join_results
    from seam.review import note
    graded = facts()
    graded[0].functions = ("flops.matmul_flops",)   # a ruled function: its 2 points are at stake
    graded[2].how = "detected"                      # a how check: its 3 points too
    noted = [note("flops.py", 9, "threads", "threading.Thread"), note("tensors.py", 1, "gc", "gc.get_objects")]
    plain, results = build_results(graded, 1.0, []), build_results(graded, 1.0, [], review=noted)
    validate(results)
    assert results["score"] == plain["score"] and [t["score"] for t in results["tests"]] == [
        t["score"] for t in plain["tests"]]
    assert [(n["file"], n["at_stake"]) for n in results["extra_data"]["review"]] == [("flops.py", 5.0), ("tensors.py", 0.0)]
    lines = results["output"].splitlines()
    assert lines[0] == plain["output"].splitlines()[0]
    assert lines[1].startswith("review (in the text): flops.py:9: threads (threading.Thread)")
    assert "5 points would be at stake" in lines[1] and "no point is taken" in lines[1]
    merged = join_results("s", [("cpu", results), ("again", {**results, "tests": []})])
    assert len(merged["extra_data"]["review"]) == 2
