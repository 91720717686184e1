"""Every planted bug loses points on its own problem (in-process, that problem's graded tests);
one that is a named misconception is told so, by name, in a failure message. Every planted
shortcut (tests/self/shortcuts/) scores no more than its function left unwritten, and is told
which rule it broke."""

import pytest

from grader.grade import run_tests
from seam import InProcess
from seam.problems import PROBLEMS
from seam.problems import RULED
from tests.self.bugs import all_bugs
from tests.self.shared import graded_reference, once
from tests.self.shortcuts import all_shortcuts

BUGS = all_bugs()
SHORTCUTS = all_shortcuts()


def test_every_problem_has_three_bugs():
    counts = {p: sum(b.problem == p for b in BUGS) for p in PROBLEMS}
    thin = {p: n for p, n in counts.items() if n < 3}
    assert not thin, f"problems with fewer than 3 planted bugs: {thin}"


@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_bug_loses_points_on_its_problem(bug, tmp_path):
    folder = bug.build(tmp_path / "submission")
    impl = InProcess(folder, package=f"bug_{tmp_path.name}")
    # A bug that names no mistake needs one failure to be caught: stop there. A named one needs
    # them all (every failure that says the name must carry it as a field).
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[bug.problem],
                      first_failure=not bug.mistake).facts.values()
    lost = [f for f in facts if f.outcome != "passed"]
    assert lost, f"planted bug {bug.id!r} passed every test of {bug.problem}"
    if bug.mistake:
        named = f"known mistake: {bug.mistake}"
        assert any(named in f.message for f in lost), (
            f"no failure of {bug.id!r} says {named!r}: " + " | ".join(f.message[:400] for f in lost))
        # and results.json names it as a field (the class report ranks them), for the failures that say it
        assert all(any(n.startswith(bug.mistake) for n, _ in f.mistakes) for f in lost if named in f.message), (
            f"{bug.id!r}: a failure names {bug.mistake!r} in its text only: {[f.mistakes for f in lost]}")


def _score(folder, problem: str, package: str, only: set[str]):
    impl = InProcess(folder, package=package)
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[problem],
                      only=only).facts.values()
    return sum(f.points for f in facts if f.outcome == "passed"), list(facts), impl


def _calling(problem: str, function: str, tmp_path_factory) -> set[str]:
    """The names of the tests of ``problem`` whose run of the reference calls ``function`` (the
    graded reference's ``functions``, which counts a call from another of its functions too).

    A shortcut and its function unwritten are graded on these tests only, and what holds there
    holds for the problem: each is the reference but for that function, so a test that never
    calls it runs the reference's code alike in both; unwritten it earns its full points, and a
    shortcut earns no more than full. (Tensors' other tests are two thirds of its time.)"""
    results, _ = graded_reference(tmp_path_factory)
    qualified = f"{problem}.{function}"
    names = {t["extra_data"]["test"].split("::")[-1] for t in results["tests"] if t["tags"] == [problem]
             and any(f == qualified or f.startswith(qualified + ".") for f in t["extra_data"]["functions"])}
    assert names, f"no test of {problem} calls {qualified} on the reference"
    return names


def _unwritten(problem: str, function: str, tmp_path_factory) -> float:
    """What the tests that call ``function`` score with it as the stub leaves it: once per test run."""
    shortcut = next(s for s in SHORTCUTS if (s.problem, s.function) == (problem, function))

    def score() -> float:
        folder = shortcut.build_unwritten(tmp_path_factory.mktemp(f"unwritten_{function}"))
        return _score(folder, problem, f"unwritten_{problem}_{function}",
                      _calling(problem, function, tmp_path_factory))[0]
    return once(tmp_path_factory, f"unwritten-{problem}-{function}", score)


def test_every_rule_has_its_shortcuts():
    """Two per rule at least, and for each rule one in a thread and one under torch's switches."""
    by_rule: dict[str, list] = {}
    for s in SHORTCUTS:
        by_rule.setdefault(RULED[s.qualified].name, []).append(s.name)
    rules = {r.name for r in RULED.values()}
    assert set(by_rule) == rules, f"rules without a planted shortcut: {rules - set(by_rule)}"
    for rule, names in by_rule.items():
        assert len(names) >= 2, f"{rule}: only {names}"
        assert any("thread" in n for n in names), f"{rule}: no shortcut in a thread"
        assert any("Disable" in n or "_disable" in n for n in names), f"{rule}: none under DisableTorchFunction"


@pytest.mark.parametrize("shortcut", SHORTCUTS, ids=[s.id for s in SHORTCUTS])
def test_shortcut_is_charged_or_noted(shortcut, tmp_path_factory):
    """In the student's own process (nothing absent there), on the tests that call its function
    (``_calling``): a shortcut the watch sees run is charged, scores no more than its function
    unwritten and is told its rule; one that blinds the
    watch (a thread, torch's switches) is no charge but a note for review naming the construct.
    What such a shortcut keeps in the sandbox is the behaviour record's (tests/self/behaviour.py)."""
    tmp = tmp_path_factory.mktemp("shortcut")
    got, facts, impl = _score(shortcut.build(tmp / "submission"), shortcut.problem, f"shortcut_{tmp.name}",
                              _calling(shortcut.problem, shortcut.function, tmp_path_factory))
    if shortcut.qualified not in impl.violations():
        notes = impl.notes()
        assert any(n["file"] == f"{shortcut.problem}.py" for n in notes), (
            f"{shortcut.id}: neither charged nor noted (saw {impl.violations()}, notes {notes})")
        return
    unwritten = _unwritten(shortcut.problem, shortcut.function, tmp_path_factory)
    assert got <= unwritten, f"{shortcut.id} scores {got:g}, more than {shortcut.function} unwritten ({unwritten:g})"
    rule = RULED[shortcut.qualified]
    named = [f for f in facts if f.outcome == "failed" and rule.name in f.message and rule.quote in f.message]
    assert named, f"{shortcut.id}: no failure names the rule {rule.name!r}"
