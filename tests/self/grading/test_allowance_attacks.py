"""Each allowance (seam/allowances.py) attacked: a submission that tries to do the forbidden work
through the door the allowance leaves open, graded in process (the student's own pytest: nothing
absent, the watch and the look for review as they are), must be charged, noted for review, or
score no more than the function left unwritten.

An attack is code appended to the reference module of its problem; its definition of the
attacked function replaces the reference's (the honest work is gone: only the route is left).
"""

import dataclasses

import pytest

from grader.grade import run_tests
from seam import InProcess
from tests.self.shortcuts import stub_definition
from tests.self.submissions import reference_text, reference_with


@dataclasses.dataclass(frozen=True)
class Attack:
    allowance: str  # its id in seam/allowances.py
    problem: str
    function: str   # the ruled function it rewrites
    code: str


# FP16 and BF16 by torch's rounding; the formats torch has no dtype for are left undone
NARROW = 'NARROW = {"FP16": torch.float16, "BF16": torch.bfloat16}\n'
ATTACKS = [
    Attack("bit views", "dtypes", "round_to", NARROW + '''
def round_to(x, fmt):
    # a narrow tensor made by a bit view (allowed), then filled by copy_: torch rounds
    out = torch.zeros(x.shape, dtype=torch.int16).view(NARROW[fmt.name])
    out.copy_(x.float())
    return out.float()
'''),
    Attack("narrow to narrow", "dtypes", "round_to", NARROW + '''
def round_to(x, fmt):
    # a narrow zero by a bit view, then each value added as a Python number: every tensor of the
    # op is narrow already, and torch rounds the sum into the format
    out = torch.zeros(x.numel(), dtype=torch.int16).view(NARROW[fmt.name])
    for i, v in enumerate(x.float().flatten().tolist()):
        out[i].add_(v)
    return out.float().reshape(x.shape)
'''),
    Attack("ordinary words", "tensors", "is_contiguous", '''
import logging as _logging
# the thread class reached through strings that are ordinary words, or pieced together at run time
_threads = _logging.__dict__.get("threading")
_Worker = vars(_threads).get("".join(map(str, ["Th", "read"])))
def is_contiguous(shape, strides):
    out = []
    t = _Worker(target=lambda: out.append(torch.empty(0).as_strided(tuple(shape), tuple(strides)).is_contiguous()))
    t.start()
    t.join()
    return bool(out[0])
'''),
    Attack("attributes of other objects", "dtypes", "round_to", NARROW + '''
import sys as _sys
# the grader's watch reached through sys.modules asked by name, and its record emptied after the cast
_grader = getattr(_sys, "modules")["".join(reversed("tsenoh.maes"))]
def round_to(x, fmt):
    out = x.float().to(NARROW[fmt.name]).float()
    for watch in _grader._ACTIVE:
        watch.honest.violations.clear()
    return out
'''),
]


def _score(folder, problem: str, package: str) -> tuple[float, InProcess]:
    impl = InProcess(folder, package=package)
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[problem]).facts.values()
    return sum(f.points for f in facts if f.outcome == "passed"), impl


def _module(problem: str, appended: str) -> str:
    return reference_text(problem) + "\n\n# ---- appended ----\nimport torch\n\n" + appended.strip("\n") + "\n"


@pytest.mark.parametrize("attack", [pytest.param(a, marks=pytest.mark.attack(a.allowance), id=a.allowance)
                                    for a in ATTACKS])
def test_an_allowance_attacked_is_charged_noted_or_gains_nothing(attack, tmp_path):
    got, impl = _score(reference_with(tmp_path / "attack", {attack.problem: _module(attack.problem, attack.code)}),
                       attack.problem, f"allowance_{tmp_path.name}")
    if f"{attack.problem}.{attack.function}" in impl.violations():
        return  # charged: every test of the function scores 0
    if any(n["file"] == f"{attack.problem}.py" for n in impl.notes()):
        return  # a note for review names the student and the line
    unwritten, _ = _score(reference_with(tmp_path / "unwritten", {attack.problem: _module(
        attack.problem, stub_definition(attack.problem, attack.function))}), attack.problem,
        f"allowance_unwritten_{tmp_path.name}")
    assert got <= unwritten, (f"the allowance {attack.allowance!r} lets {attack.problem}.{attack.function} "
                              f"gain: {got:g} points, {unwritten:g} unwritten, neither charged nor noted")
