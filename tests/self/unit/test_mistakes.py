"""Named mistakes (tests.checks.Mistake): how a wrong answer is matched to one, and that every
mistake the tests know points at words its handout really has and is shown by a planted bug.
(That each such bug's failure names its mistake is checked in test_planted_bugs.)"""

import importlib
import pkgutil
import shutil

import pytest

import tests.common
from grader.paths import REFERENCE, ROOT
from seam import InProcess
from seam.problems import PROBLEMS, dotted, files, section
from tests.checks import Mistake, case, check_cases
from tests.self.bugs import all_bugs


def known_mistakes() -> list[Mistake]:
    """Every Mistake defined in tests/common/ or tests/hidden/<problem>_mistakes.py (module attributes,
    or inside their lists and dicts)."""
    found: dict[int, Mistake] = {}

    def walk(value):
        if isinstance(value, Mistake):
            found[id(value)] = value
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    names = [f"tests.common.{i.name}" for i in pkgutil.iter_modules(tests.common.__path__)]
    names += [dotted(files(p).mistakes) for p in PROBLEMS if (ROOT / files(p).mistakes).is_file()]
    for name in names:
        for value in vars(importlib.import_module(name)).values():
            walk(value)
    return list(found.values())


MISTAKES = known_mistakes()


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name[:60] for m in MISTAKES])
def test_mistake_quotes_its_handout(mistake):
    text = " ".join((ROOT / section(mistake.handout)).read_text().split())
    assert " ".join(mistake.quote.split()) in text, (
        f"{mistake.name!r} quotes {mistake.quote!r}, which is not in {section(mistake.handout)}")


def test_every_mistake_has_a_planted_bug():
    named = [b.mistake for b in all_bugs() if b.mistake]
    lonely = [m.name for m in MISTAKES if not any(m.name.startswith(n) for n in named)]
    assert MISTAKES and not lonely, f"mistakes no planted bug makes: {lonely}"


# ---- how a wrong answer is matched (one problem's functions, patched) -----------------------------

@pytest.fixture(scope="module")
def ref():
    return InProcess(REFERENCE, package="mistakes_ref")


def patched(tmp_path, code: str) -> InProcess:
    folder = tmp_path / "sub"
    shutil.copytree(REFERENCE, folder)
    (folder / "flops.py").write_text((folder / "flops.py").read_text() + "\n" + code)
    return InProcess(folder, package=f"mistakes_{tmp_path.name}")


def failure(fn) -> str:
    with pytest.raises(pytest.fail.Exception) as e:
        fn()
    return str(e.value)


HALF = Mistake("a multiply-add as 1 FLOP", lambda m, k, n: m * k * n, "Count 2.", "flops", "2·m·k·n")
OFF = Mistake("one more", lambda m, k, n: 2 * m * k * n + 1, "No.", "flops", "2·m·k·n")
CASES = [(1, 1, 1), (2, 3, 4), (5, 1, 7)]


def test_a_wrong_answer_that_fits_is_named(tmp_path, ref):
    sub = patched(tmp_path, "def matmul_flops(m, k, n):\n    return m * k * n\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", CASES, ref=ref, mistakes=[OFF, HALF]))
    assert "known mistake: a multiply-add as 1 FLOP. Count 2." in text and "one more" not in text
    assert 'See assignment/problems/flops.md: "2·m·k·n"' in text


def test_a_partial_mistake_is_named_when_it_explains_every_wrong_answer(tmp_path, ref):
    # right on the first case, the mistake's answer on the others
    sub = patched(tmp_path, "def matmul_flops(m, k, n):\n    return 2 if m == 1 else m * k * n\n")
    assert "known mistake: a multiply-add" in failure(
        lambda: check_cases(sub, "flops.matmul_flops", CASES, ref=ref, mistakes=[HALF]))


def test_no_name_when_one_wrong_answer_is_unexplained(tmp_path, ref):
    sub = patched(tmp_path, "def matmul_flops(m, k, n):\n    return 7 if m == 5 else m * k * n\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", CASES, ref=ref, mistakes=[HALF, OFF]))
    assert "known mistake" not in text


def test_two_mistakes_that_both_fit_are_both_named(tmp_path, ref):
    same = Mistake("the same slip, another name", lambda m, k, n: m * k * n, "Also.", "flops", "2·m·k·n")
    sub = patched(tmp_path, "def matmul_flops(m, k, n):\n    return m * k * n\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", CASES, ref=ref, mistakes=[HALF, same]))
    assert "a multiply-add as 1 FLOP" in text and "the same slip, another name" in text


def test_a_mistake_within_the_tolerance_is_named(tmp_path, ref):
    near = Mistake("off by a hair", lambda *a: 2.0 * a[0] * a[1] * a[2] * (1 + 1e-7) + 5, "Hm.", "flops", "2·m·k·n")
    sub = patched(tmp_path, "def matmul_flops(m, k, n):\n    return 2.0 * m * k * n + 5\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", [case(2, 3, 4, want=48.0)], rtol=1e-6,
                                       mistakes=[near]))
    assert "known mistake: off by a hair" in text and "tolerance: rtol=1e-06" in text


def test_a_correct_submission_never_sees_a_mistake(ref):
    check_cases(ref, "flops.matmul_flops", CASES, ref=ref, mistakes=[HALF, OFF])
