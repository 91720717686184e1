"""Honest students get full marks: two complete solutions written from the handout alone
(assignment/README.md and assignment/problems/*.md, the stubs' names and signatures kept), one per
style in tests/self/honest_solutions/ (``functional/``: plain functions, comprehensions, reduce,
_foreach_ AdamW; ``objects/``: dataclasses, NamedTuples, enums, slots, a validating decorator,
logging, warnings, Protocols, a small trainer class), graded by the command line without a GPU,
pass every test the reference passes: the reference's CPU total (computed from its graded report,
not written down), no note for review and no honest-work charge."""

from pathlib import Path

import pytest

from grader.report import review_of, violations_of
from seam.problems import PROBLEMS
from tests.self.shared import grade_cli, graded_reference

SOLUTIONS = Path(__file__).resolve().parents[1] / "honest_solutions"
STYLES = ("functional", "objects")


def test_each_style_solves_every_problem():
    for style in STYLES:
        missing = [p for p in PROBLEMS if not (SOLUTIONS / style / f"{p}.py").is_file()]
        assert not missing, f"honest_solutions/{style}/ lacks {missing}"


@pytest.mark.parametrize("style", STYLES)
def test_an_honest_solution_gets_the_full_cpu_score_and_no_note(style, tmp_path, tmp_path_factory):
    reference, _ = graded_reference(tmp_path_factory)
    cpu_total = sum(t["max_score"] for t in reference["tests"])
    assert reference["score"] == cpu_total, "the reference itself lost points without a GPU"

    results, _ = grade_cli(SOLUTIONS / style, tmp_path / "results.json")
    assert {t["name"] for t in results["tests"]} == {t["name"] for t in reference["tests"]}
    lost = [f"{t['number']} {t['name']} ({t['score']:g}/{t['max_score']:g}): "
            + " ".join(t["output"].strip().splitlines()[:3])[:400]
            for t in results["tests"] if t["status"] != "passed" or t["score"] < t["max_score"]]
    assert not lost, f"the honest {style} solution lost points:\n" + "\n".join(lost)
    assert results["score"] == cpu_total
    assert review_of(results) == [], f"honest code got notes for review: {review_of(results)}"
    assert violations_of(results) == {}, f"honest code was charged: {violations_of(results)}"
