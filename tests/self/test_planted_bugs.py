"""Every planted bug loses points on its own problem (in-process, that problem's graded tests);
one that is a named misconception is told so, by name, in a failure message."""

import pytest

from grader.grade import run_tests
from seam import InProcess
from seam.problems import PROBLEMS
from tests.self.bugs import all_bugs

BUGS = all_bugs()


def test_every_problem_has_three_bugs():
    counts = {p: sum(b.problem == p for b in BUGS) for p in PROBLEMS}
    thin = {p: n for p, n in counts.items() if n < 3}
    assert not thin, f"problems with fewer than 3 planted bugs: {thin}"


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_bug_loses_points_on_its_problem(bug, tmp_path):
    folder = bug.build(tmp_path / "submission")
    impl = InProcess(folder, package=f"bug_{tmp_path.name}")
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True,
                      problems=[bug.problem]).facts.values()
    lost = [f for f in facts if f.outcome != "passed"]
    assert lost, f"planted bug {bug.id!r} passed every test of {bug.problem}"
    if bug.mistake:
        named = f"known mistake: {bug.mistake}"
        assert any(named in f.message for f in lost), (
            f"no failure of {bug.id!r} says {named!r}: " + " | ".join(f.message[:400] for f in lost))
