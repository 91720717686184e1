"""Every alternative correct solution (tests/self/alternatives/) gets full marks on its problem,
in-process, on the public and hidden tests that run without CUDA."""

import pytest

from grader.grade import run_tests
from seam import InProcess
from seam.problems import PROBLEMS
from tests.self.alternatives import all_alternatives, build

ALTERNATIVES = all_alternatives()


def test_every_problem_has_two_alternatives():
    counts = {p: sum(a[0] == p for a in ALTERNATIVES) for p in PROBLEMS}
    assert all(n >= 2 for n in counts.values()), f"problems with fewer than 2 alternatives: {counts}"


@pytest.mark.parametrize("problem, how, path", ALTERNATIVES, ids=[f"{p}:{h}" for p, h, _ in ALTERNATIVES])
def test_alternative_gets_full_marks(problem, how, path, tmp_path):
    folder = build(problem, path, tmp_path / "submission")
    impl = InProcess(folder, package=f"alt_{tmp_path.name}")
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[problem]).facts.values()
    lost = {f.title: f.message.splitlines()[:6] for f in facts if f.outcome != "passed"}
    assert not lost, f"the correct alternative {path.name} lost points: {lost}"
