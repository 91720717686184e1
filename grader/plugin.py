"""The grader's pytest plugin: hooks that collect facts about each test, nothing more.

Points, problem and visibility are read from the test itself (its ``points`` marker, its file
``tests/<public|hidden>/test_<problem>.py``); outcomes come from pytest's reports. The facts go to
report.py, whose pure functions turn them into results.json and the score table.
"""

import contextlib
import dataclasses
import re
import sys

import pytest

from seam import GPU_NOT_RUN, GRADER_PLUGIN, Impl, SandboxFailure, describe
from seam.probes import student_name
from seam.problems import PROBLEMS, any_problem, line, owner, problem_number, touched
from tests.checks import NAMED
from .report import number
from .gpu import unknown_gpu_message
from .gpulock import device_lock



@dataclasses.dataclass
class Fact:
    nodeid: str
    problem: str
    title: str
    points: float
    visibility: str            # "visible" (public tests) or "after_published" (hidden)
    gpu: bool
    outcome: str = "failed"    # "passed" | "failed" | "not_run"
    message: str = ""
    needs_peak: bool = False   # marker gpu_peak: an MFU test, needs the GPU in the peak table
    how: str = ""              # marker how: checks how the work is done (seam/review.py): "detected",
                               # or "caught" (how("caught"): the grader reads it from outside)
    counted: bool = True       # False: reported in the summary, left out of the total
    waited: float = 0.0        # seconds a GPU test waited for another grader's (gpu.device_lock)
    index: int | None = None   # k in the test's number <problem>.<k>, counted over every
                               # collected test, so a --gpu skip and a --gpu only pass number
                               # their tests as one full run does (merge relies on it)
    functions: tuple = ()      # the student functions it called ("optim.AdamW.step"): a broken
                               # honest-work rule of one of them scores it 0 (seam/honest.py)
    mistakes: tuple = ()       # the named mistakes (tests/checks.py Mistake) its failure names


def _how(item) -> str:
    marker = item.get_closest_marker("how")
    if marker is None:
        return ""
    if marker.args not in ((), ("caught",)):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.how takes no argument or 'caught'")
    return marker.args[0] if marker.args else "detected"


def fact_for(item) -> Fact:
    """Read the grading facts from a collected test item; raise UsageError if any is missing."""
    root = item.config.rootpath
    found = owner(item.path.relative_to(root)) if item.path.is_relative_to(root) else None
    kind, problem = found or ("", "")
    if kind not in ("public_test", "hidden_test") or problem not in PROBLEMS:
        raise pytest.UsageError(f"{item.nodeid}: graded tests live in {any_problem('public_test')} "
                                f"or {any_problem('hidden_test')}")
    marker = item.get_closest_marker("points")
    if marker is None or len(marker.args) != 1 or not isinstance(marker.args[0], (int, float)) \
            or marker.args[0] <= 0:
        raise pytest.UsageError(f"{item.nodeid}: every graded test needs @pytest.mark.points(n), n > 0")
    doc = (getattr(item.function, "__doc__", None) or "").strip().splitlines()
    title = doc[0].strip() if doc else item.name
    return Fact(nodeid=item.nodeid, problem=problem, title=title, points=float(marker.args[0]),
                visibility="visible" if kind == "public_test" else "after_published",
                gpu=item.get_closest_marker("gpu") is not None,
                needs_peak=item.get_closest_marker("gpu_peak") is not None,
                how=_how(item))


def failure_text(excinfo, longrepr=None) -> str:
    """What the student sees: the assertion message, or what their code raised with their own
    frames (``describe``), never test source; probes are named by the student's API they drive."""
    if excinfo is not None:
        if excinfo.errisinstance((pytest.fail.Exception, pytest.skip.Exception, SandboxFailure)):
            text = str(excinfo.value)
        elif hasattr(excinfo.value, "seam_call"):  # raised by the submission, rebuilt by the seam
            text = describe(excinfo.value)
        else:
            text = excinfo.exconly()
    else:
        text = str(longrepr)
    text = re.sub(r"\bprobes\.(\w+)", lambda m: student_name(m.group(0)), text)
    return text.strip()[:3000] or f"failed ({type(excinfo.value).__name__ if excinfo else 'no message'})"


class GraderPlugin:
    def __init__(self, impl: Impl, gpu: str, cuda: bool, time_limit: float,
                 unknown_gpu: str | None = None, gpu_uuid: str | None = None):
        """unknown_gpu: the name of this machine's GPU when the reference's peak table lacks it
        (see gpu.py); its MFU tests are then not run and not counted. gpu_uuid: the device whose
        lock each GPU-marked test holds (gpu.device_lock), None: no lock."""
        self.__name__ = GRADER_PLUGIN  # pluggy registers a plugin under its __name__; conftest looks it up
        self.impl, self.gpu, self.cuda, self.time_limit = impl, gpu, cuda, time_limit
        self.unknown_gpu, self.gpu_uuid = unknown_gpu, gpu_uuid
        self._held = contextlib.ExitStack()
        self.facts: dict[str, Fact] = {}
        self.to_come: dict[str, float] = {}  # test number -> points of a GPU test a --gpu skip pass left out
        self.collection_errors: list[str] = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {str(report.longrepr)[-500:]}")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        kept = []
        facts = number([fact_for(item) for item in items])
        for item, fact in zip(items, facts):
            if (fact.gpu and self.gpu == "skip") or (not fact.gpu and self.gpu == "only"):
                if fact.gpu:  # a CPU pass: the GPU pass grades it (merge), "to come" till then
                    self.to_come[f"{problem_number(fact.problem)}.{fact.index}"] = fact.points
                continue  # left out by request: --gpu skip drops GPU tests, --gpu only the rest
            self.facts[item.nodeid] = fact
            if fact.gpu and not self.cuda and self.gpu == "auto":
                # reported "not run" here, and still to come: a later --gpu only pass grades it and
                # merge puts its outcome in place of this one
                self.to_come[f"{problem_number(fact.problem)}.{fact.index}"] = fact.points
            if fact.gpu and fact.needs_peak and self.cuda and self.unknown_gpu:
                # no peak, no MFU, not even the reference's: say so, never charge the student
                fact.outcome, fact.counted = "not_run", False
                fact.message = unknown_gpu_message(self.unknown_gpu)
                continue
            kept.append(item)
        if len(kept) < len(items):
            config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept

    def pytest_runtest_setup(self, item):
        fact = self.facts[item.nodeid]
        if fact.gpu and not self.cuda:
            pytest.skip(GPU_NOT_RUN)
        if fact.gpu and self.gpu_uuid:  # taken before the deadline starts: a wait is not the student's
            fact.waited = self._held.enter_context(device_lock(self.gpu_uuid))
        marker = item.get_closest_marker("time_limit")
        limit = float(marker.args[0]) if marker else self.time_limit
        self._held.enter_context(self.impl.deadline_for(limit))  # ends at teardown, before the lock
        NAMED.clear()

    def pytest_runtest_teardown(self, item):
        self._held.close()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.excinfo is not None and not hasattr(report, "_grader_text"):  # (conftest's how gate)
            # Only the text is kept: an exception holds its frames, and they every value decoded
            # from the student's replies (pytest would keep each failing test's to the end).
            report._grader_text = failure_text(call.excinfo)
            if report.failed:  # (a skip's longrepr is pytest's (path, line, reason) tuple)
                report.longrepr = report._grader_text
            sys.last_type = sys.last_value = sys.last_traceback = None
            if hasattr(sys, "last_exc"):
                sys.last_exc = None

    @staticmethod
    def _text(report) -> str:
        return getattr(report, "_grader_text", None) or failure_text(None, report.longrepr)

    def pytest_runtest_logreport(self, report):
        fact = self.facts.get(report.nodeid)
        if fact is None:
            return
        if report.when == "call":
            fact.functions = tuple(self.impl.functions())
        if report.skipped and fact.gpu and not self.cuda:
            fact.outcome, fact.message = "not_run", GPU_NOT_RUN
        elif report.failed:
            fact.outcome, fact.message = "failed", self._text(report)
            fact.mistakes = tuple(dict.fromkeys((m.name, m.handout) for m in NAMED))
        elif report.when == "call" and report.passed:
            fact.outcome, fact.message = "passed", ""
        elif report.skipped:  # a skip is never a pass
            fact.outcome, fact.message = "failed", f"skipped: {self._text(report)}"

    def pytest_sessionfinish(self, session):
        """A function that broke its honest-work rule scores as if unwritten: every test that
        called it fails with the rule's line, also those that ran before it was seen."""
        violations = self.impl.violations()
        for fact in self.facts.values():
            broken = touched(fact.functions, violations)
            if broken and fact.outcome != "not_run":
                fact.outcome, fact.message = "failed", line(broken[0], violations[broken[0]])
                fact.mistakes = ()  # it fails for the rule, not for what its text said
