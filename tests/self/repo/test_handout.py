"""The handout agrees with the rubric (the points markers on the tests); test_snapshots.py checks the snapshots."""

import re
from pathlib import PurePosixPath

import pytest

from grader.paths import ROOT
from grader.rubric import HANDOUT, collect, handout_table, points_by_problem, stale
from seam.problems import PROBLEMS, problem_number, section

@pytest.fixture(scope="module")
def facts():
    return collect()


def test_every_problem_is_graded(facts):
    table = points_by_problem(facts)
    assert all(row["public"] > 0 and row["hidden"] > 0 for row in table.values()), table


def test_handout_is_generated_from_registry_and_rubric(facts):
    """The problem table and every section's heading and points line, as `rubric --write` writes them."""
    assert stale(facts) == [], "run `python -m tests.self.regen` (it runs `python -m grader rubric --write` after the behaviour record it reads)"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_section_states_its_points(facts, problem):
    """The points line reads what the tests' markers add up to (independently of rubric.py's writer)."""
    text = (ROOT / section(problem)).read_text()
    link = PurePosixPath(section(problem)).relative_to(HANDOUT.parent.relative_to(ROOT).as_posix())
    assert text.startswith(f"# {problem_number(problem)}. {problem} — {PROBLEMS[problem].title}\n")
    row = points_by_problem(facts)[problem]
    m = re.search(r"\*\*Points: ([\d.]+)\*\* \(public ([\d.]+), hidden ([\d.]+)\)", text)
    assert m, f"{section(problem)} needs a '**Points: T** (public P, hidden H)' line"
    assert tuple(map(float, m.groups())) == (row["public"] + row["hidden"], row["public"], row["hidden"])
    assert f"| {problem_number(problem)} | `{problem}` | [{PROBLEMS[problem].title}]({link}) " \
        f"| {row['public']:g} | {row['hidden']:g} |" in handout_table()



def test_the_gradescope_settings_match_the_rubric_and_the_limits(facts):
    """docs/deploy.md's Gradescope settings: the total to enter is the rubric's CPU points (the figures are
    generated: test_handout_is_generated_from_registry_and_rubric keeps them current; this reads
    them independently of the writer), and the timeout chosen by hand covers the worst case the
    limits allow, to the second."""
    from grader.rubric import worst_case
    from grader.sandbox.limits import Limits
    readme = (ROOT / "docs" / "deploy.md").read_text()
    start = readme.index("## Gradescope settings")
    end = readme.find("\n## ", start)
    block = readme[start:end if end > 0 else None]
    total, gpu = sum(f.points for f in facts), sum(f.points for f in facts if f.gpu)
    assert f"| total points | **{total - gpu:g}** | the rubric's {total:g} less the {gpu:g} GPU points" in block
    minutes = float(re.search(r"\| autograder timeout \| ([\d.]+) minutes \|", block).group(1))
    assert minutes * 60 >= worst_case(Limits()), "the autograder timeout must cover the limits' worst case"
