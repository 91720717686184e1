"""Honest idioms cost nothing: uploads of the reference carrying the idioms of
tests/self/honest_idioms/ (one per module, many modules per upload), graded through the sandbox,
get the reference's score on every test. A test that loses points names the idiom in its module."""

from pathlib import Path

import pytest

from tests.self.honest_idioms import all_idioms, build, packed, static_charge
from tests.self.shared import grade_cli, graded_reference

UPLOADS = packed(all_idioms())


def lost_points(results: dict, reference: dict, upload: dict, scratch: Path) -> list[str]:
    """One line per problem whose tests scored below the reference's: the points lost, the idiom
    in that module (or none), and the first such test's output; then each idiom the static look
    charges (a charge of one module's text costs other modules' tests too)."""
    due = {t["name"]: t["score"] for t in reference["tests"]}
    by_problem: dict[str, list[dict]] = {}
    for t in results["tests"]:
        if t["score"] < due.get(t["name"], 0):
            by_problem.setdefault(t["tags"][0], []).append(t)
    lines = []
    for problem, tests in by_problem.items():
        idiom = upload.get(problem)
        lost = sum(due[t["name"]] - t["score"] for t in tests)
        first = tests[0]["output"].strip().splitlines()[:2]
        lines.append(f"{problem}: {lost:g} points in {len(tests)} tests; idiom here: "
                     f"{idiom.name if idiom else 'none'}; e.g. {tests[0]['name']}: {' '.join(first)[:300]}")
    if lines:
        lines += [f"charged by the static look: {problem}: {idiom.name}" for problem, idiom in upload.items()
                  if static_charge(problem, idiom.text(), scratch / problem)]
    return lines


@pytest.mark.parametrize("upload", UPLOADS, ids=[f"upload{k}" for k in range(len(UPLOADS))])
def test_an_upload_of_honest_idioms_gets_the_references_scores(upload, tmp_path, tmp_path_factory):
    reference, _ = graded_reference(tmp_path_factory)
    results, _ = grade_cli(build(upload, tmp_path / "upload"), tmp_path / "results.json")
    assert {t["name"] for t in results["tests"]} == {t["name"] for t in reference["tests"]}
    lines = lost_points(results, reference, upload, tmp_path / "static")
    assert not lines and results["score"] == reference["score"], \
        f"honest idioms lost {reference['score'] - results['score']:g} points:\n" + "\n".join(lines)
