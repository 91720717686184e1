"""The handout agrees with the rubric (the points markers on the tests), and snapshots are current."""

import re

import pytest

from grader.paths import ROOT
from grader.rubric import collect, handout_table, points_by_problem, render
from grader.snapshots import check
from tests.seam.layout import PROBLEMS

SECTIONS = ROOT / "assignment" / "problems"


@pytest.fixture(scope="module")
def facts():
    return collect()


def test_every_problem_is_graded(facts):
    table = points_by_problem(facts)
    assert all(row["public"] > 0 and row["hidden"] > 0 for row in table.values()), table


def test_handout_points_table_matches_rubric(facts):
    assert handout_table() == render(facts), "run `python -m grader rubric --write`"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_section_states_its_points(facts, problem):
    n = PROBLEMS.index(problem) + 1
    [section] = SECTIONS.glob(f"{n:02d}_{problem}.md")
    text = section.read_text()
    assert text.startswith(f"# {n}. {problem}")
    row = points_by_problem(facts)[problem]
    m = re.search(r"\*\*Points: ([\d.]+)\*\* \(public ([\d.]+), hidden ([\d.]+)\)", text)
    assert m, f"{section.name} needs a '**Points: T** (public P, hidden H)' line"
    assert tuple(map(float, m.groups())) == (row["public"] + row["hidden"], row["public"], row["hidden"])


def test_snapshots_are_current():
    assert check() == []
