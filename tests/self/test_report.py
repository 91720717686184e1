"""report.py's pure functions: facts -> results.json (schema-valid) -> score table."""

import json

import jsonschema
import pytest

from grader.plugin import Fact
from grader.report import build_results, render_table, validate, write_atomically


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
    results = build_results(facts(), 1.5, ["note"], "auto")
    validate(results)
    assert results["score"] == 5
    assert [t["number"] for t in results["tests"]] == ["1.1", "3.1", "3.2", "8.1"]
    assert [t["name"] for t in results["tests"]][:2] == ["tensors: offsets", "flops: linear"]
    gpu = results["tests"][-1]
    assert gpu["status"] == "failed" and gpu["score"] == 0 and "not run" in gpu["output"]
    assert results["output"].startswith("Score: 5/8") and "1 GPU test(s) not run" in results["output"]


def test_table_shows_expected_and_got():
    table = render_table(build_results(facts(), 1.0, [], "auto"))
    assert "expected: 6" in table and "got:      7" in table
    assert "Score: 5/8" in table.splitlines()[-1] or "Score: 5/8" in table


@pytest.mark.parametrize("mutate", [
    lambda r: r.pop("tests"), lambda r: r.update(score="5"), lambda r: r["tests"][0].update(status="ok"),
    lambda r: r["tests"][0].update(visibility="public"), lambda r: r["tests"][0].pop("max_score"),
    lambda r: r.update(extra=1)])
def test_schema_rejects_malformed(mutate):
    results = build_results(facts(), 1.0, [], "auto")
    mutate(results)
    with pytest.raises(jsonschema.ValidationError):
        validate(results)


def test_write_is_atomic_and_validated(tmp_path):
    out = tmp_path / "deep" / "results.json"
    good = build_results(facts(), 1.0, [], "auto")
    write_atomically(good, out)
    assert json.loads(out.read_text()) == good
    bad = dict(good, score=-1)
    with pytest.raises(jsonschema.ValidationError):
        write_atomically(bad, out)
    assert json.loads(out.read_text()) == good          # the old file is untouched
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]  # no temp file left
