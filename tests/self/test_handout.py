"""The handout agrees with the rubric (the points markers on the tests); test_snapshots.py checks the snapshots."""

import re

import pytest

from grader.paths import ROOT
from grader.rubric import collect, handout_table, points_by_problem, stale
from seam.problems import PROBLEMS, problem_number, section

@pytest.fixture(scope="module")
def facts():
    return collect()


def test_every_problem_is_graded(facts):
    table = points_by_problem(facts)
    assert all(row["public"] > 0 and row["hidden"] > 0 for row in table.values()), table


def test_handout_is_generated_from_registry_and_rubric(facts):
    """The problem table and every section's heading and points line, as `rubric --write` writes them."""
    assert stale(facts) == [], "run `python -m grader rubric --write`"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_section_states_its_points(facts, problem):
    """The points line reads what the tests' markers add up to (independently of rubric.py's writer)."""
    text = (ROOT / section(problem)).read_text()
    assert text.startswith(f"# {problem_number(problem)}. {problem} — {PROBLEMS[problem].title}\n")
    row = points_by_problem(facts)[problem]
    m = re.search(r"\*\*Points: ([\d.]+)\*\* \(public ([\d.]+), hidden ([\d.]+)\)", text)
    assert m, f"{section(problem)} needs a '**Points: T** (public P, hidden H)' line"
    assert tuple(map(float, m.groups())) == (row["public"] + row["hidden"], row["public"], row["hidden"])
    assert f"| {problem_number(problem)} | `{problem}` | [{PROBLEMS[problem].title}](problems/{problem}.md) " \
        f"| {row['public']:g} | {row['hidden']:g} |" in handout_table()

