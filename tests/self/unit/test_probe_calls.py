"""What a test called is recorded, not declared: each probe's ``calls`` (what
``extra_data.functions`` names, what the honest-work watch covers while it runs, what a failure
names) is exactly the student functions and classes it reached, as recorded while the graded
tests drive it on the reference. A probe that drives train_step but names only the checkpoint
functions would charge, time and explain the wrong function."""

import collections

import pytest

from grader.grade import run_tests
from grader.paths import REFERENCE
from seam import InProcess
from seam import callee
from seam.probes import CALLS, PROBLEM_OF


@pytest.fixture(scope="module")
def reached(tmp_path_factory):
    """probe -> the student names it reached (an attribute of their module that they defined and
    that is callable), over every graded CPU test of each problem with probes."""
    found, running = collections.defaultdict(set), [None]
    module, resolve = callee.Callee.module, callee.Callee._resolve

    class Recording:
        def __init__(self, mod, problem):
            self._mod, self._problem = mod, problem

        def __getattr__(self, name):
            value = getattr(self._mod, name)
            if running[0] and callable(value) and getattr(value, "__module__", "") == self._mod.__name__:
                found[running[0]].add(f"{self._problem}.{name}")
            return value

    def recorded_module(self, problem):
        return Recording(module(self, problem), problem)

    def recorded_resolve(self, target):
        fn = resolve(self, target)

        def run(*args, **kwargs):
            running[0] = target.removeprefix("probes.") if target.startswith("probes.") else None
            try:
                return fn(*args, **kwargs)
            finally:
                running[0] = None
        return run

    patch = pytest.MonkeyPatch()
    patch.setattr(callee.Callee, "module", recorded_module)
    patch.setattr(callee.Callee, "_resolve", recorded_resolve)
    try:
        for problem in sorted(set(PROBLEM_OF.values())):
            run_tests(InProcess(REFERENCE, package=f"probe_calls_{problem}", watched=False), gpu="skip",
                      cuda=False, time_limit=120, quiet=True, problems=[problem])
    finally:
        patch.undo()
    return dict(found)


# Reached and not named, with the reason. The optimizer these probes hand to optimizer_state_bytes
# or memory_by_stage is sometimes their AdamW and sometimes torch's (the test's ``kind``): named,
# AdamW would be a function of the tests that step torch's optimizers only. Where their AdamW is
# handed over, the watch records that its code ran, and the test names it (the test below).
UNNAMED = {probe: {"optim.AdamW"} for probe in ("state_bytes", "state_bytes_only", "memory_stages", "memory_ledger")}


@pytest.mark.e2e  # it runs every problem's graded tests, a whole grade in-process: not in the fast loop
def test_each_probe_names_what_it_reached(reached):
    assert len(reached) >= 25, sorted(reached)  # the graded CPU tests drive nearly every probe
    for probe, names in reached.items():
        declared = {name.rsplit(".", 1)[0] if name.count(".") == 2 else name  # AdamW.step: of AdamW
                    for name in CALLS[probe].split(" / ")}
        assert names == declared | UNNAMED.get(probe, set()), \
            f"probe {probe} declares {sorted(declared)} and reached {sorted(names)}"


def test_a_test_names_their_adamw_exactly_when_it_ran(tmp_path):
    """Recorded, not declared: the memory tests that hand over their AdamW name it, those that
    hand over torch's do not (a broken AdamW costs the first, never the second)."""
    facts = run_tests(InProcess(REFERENCE, package=f"adamw_ran_{tmp_path.name}"), gpu="skip", cuda=False,
                      time_limit=120, quiet=True, problems=["optim"]).facts.values()
    functions = {f.nodeid.split("::")[-1]: set(f.functions) for f in facts}
    assert functions["test_notes_three_stages"] == {"optim.memory_by_stage", "optim.AdamW"}
    assert functions["test_notes_three_stages_adamw_layout"] == {"optim.memory_by_stage"}
    assert functions["test_memory_by_stage_bad_input"] == {"optim.memory_by_stage"}


def test_an_honest_linear_keeps_its_point_while_cruncher_is_unwritten(tmp_path):
    """Each handout requirement in one test: "no nn.Linear" is checked of Linear and of
    Cruncher apart, so an unwritten Cruncher costs Linear nothing."""
    from tests.self.shortcuts import stub_definition
    from tests.self.submissions import reference_text, reference_with
    folder = reference_with(tmp_path / "s", {"modules": reference_text("modules") + "\n\n"
                                             + stub_definition("modules", "Cruncher") + "\n"})
    facts = run_tests(InProcess(folder, package=f"cruncher_{tmp_path.name}"), gpu="skip", cuda=False,
                      time_limit=60, quiet=True, problems=["modules"]).facts.values()
    outcome = {f.nodeid.split("::")[-1]: f.outcome for f in facts}
    assert outcome["test_linear_does_not_use_torch_linear"] == "passed"
    assert outcome["test_cruncher_does_not_use_torch_linear"] == "failed"
