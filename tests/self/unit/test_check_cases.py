"""The one case-checking helper (tests/checks.py: check_cases): what each case is due, how the
reference is held to the oracle, and what a student reads when a case fails."""

import shutil

import pytest

from grader.paths import REFERENCE
from seam import InProcess
from tests.checks import case, check_cases, raises, returns


@pytest.fixture(scope="module")
def ref():
    return InProcess(REFERENCE, package="cases_ref")


def patched(tmp_path, module: str, code: str) -> InProcess:
    folder = tmp_path / "sub"
    shutil.copytree(REFERENCE, folder)
    (folder / f"{module}.py").write_text((folder / f"{module}.py").read_text() + "\n" + code)
    return InProcess(folder, package=f"cases_{tmp_path.name}")


def failure(fn) -> str:
    with pytest.raises(pytest.fail.Exception) as e:
        fn()
    return str(e.value)


def test_the_reference_passes_against_want_oracle_and_itself(ref):
    got = check_cases(ref, "flops.matmul_flops", [case(2, 3, 4, want=48), case(-1, 2, 3, want=raises(ValueError))])
    assert got[0] == 48 and isinstance(got[1], ValueError)
    check_cases(ref, "flops.matmul_flops", [(m, 5, 7) for m in range(1, 6)], oracle=lambda m, k, n: 2 * m * k * n,
                ref=ref)
    check_cases(ref, "flops.matmul_flops", [(3, 4, 5), (0, 1, 1)], ref=ref)


def test_keyword_arguments_cross_the_seam(ref):
    check_cases(ref, "tensors.element_offset", [case((3, 4), (4, 1), (1, 2), storage_offset=5, want=11)])


def test_a_wrong_value_names_the_call_and_both_answers(tmp_path, ref):
    sub = patched(tmp_path, "flops", "def matmul_flops(m, k, n):\n    return m * k * n\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", [(0, 3, 4), (2, 3, 4)], ref=ref))
    assert text.splitlines()[0] == "flops.matmul_flops(2, 3, 4)"
    assert "expected: 48" in text and "got:      24" in text


def test_a_missing_exception_and_an_unexpected_one(tmp_path, ref):
    sub = patched(tmp_path, "flops", "def matmul_flops(m, k, n):\n    return 2 * m * k * n\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", [(-1, 2, 3)], ref=ref))
    assert "expected: raises ValueError" in text and "returned -12, no exception" in text
    text = failure(lambda: check_cases(ref, "flops.matmul_flops", [case(-1, 2, 3, want=5)]))
    assert "expected: 5" in text and "raised ValueError" in text


def test_a_reference_that_disagrees_with_the_oracle_blames_the_test(ref):
    with pytest.raises(AssertionError, match="the test is wrong, not the submission"):
        check_cases(ref, "flops.matmul_flops", [(1, 2, 3)], ref=ref, oracle=lambda m, k, n: m * k * n)


def test_tolerance_is_stated_and_custom_comparisons_are_used(tmp_path, ref):
    sub = patched(tmp_path, "benchmarking", "def mfu(flops, seconds, peak_flops):\n"
                                             "    return flops / seconds / peak_flops * 1.01\n")
    text = failure(lambda: check_cases(sub, "benchmarking.mfu", [(1e12, 1.0, 2e12)], ref=ref, rtol=1e-6))
    assert "tolerance: rtol=1e-06" in text
    seen = []
    check_cases(sub, "benchmarking.mfu", [(1e12, 1.0, 2e12)], ref=ref,
                compare=lambda got, due, what: seen.append((got, due, what)))
    assert seen == [(pytest.approx(0.505), 0.5, "benchmarking.mfu(1000000000000.0, 1.0, 2000000000000.0)")]


def test_returns_asks_only_that_a_valid_input_returns(tmp_path, ref):
    check_cases(ref, "flops.matmul_flops", [case(0, 0, 0, want=returns()), case(1, 2, 3, want=returns(int))], ref=ref)
    text = failure(lambda: check_cases(ref, "flops.matmul_flops", [case(-1, 2, 3, want=returns())]))
    assert "expected: returns (a valid input)" in text and "raised ValueError" in text
    sub = patched(tmp_path, "flops", "def matmul_flops(m, k, n):\n    return float(2 * m * k * n)\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", [case(1, 2, 3, want=returns(int))]))
    assert "expected int, got float" in text


def test_a_memoised_implementation_answers_each_request_once(tmp_path):
    """The reference's memo (batch jobs ask it the same questions for every student): a repeated
    request is answered from memory, a new one is computed; without memo every call runs."""
    folder = tmp_path / "counting"
    folder.mkdir()
    (folder / "flops.py").write_text("CALLS = []\ndef matmul_flops(m, k, n):\n    CALLS.append(m)\n"
                                     "    return len(CALLS)\n")
    memo = InProcess(folder, package="cases_memo", memo=True)
    assert [memo.flops.matmul_flops(1, 1, 1) for _ in range(3)] == [1, 1, 1]
    assert memo.flops.matmul_flops(2, 1, 1) == 2
    plain = InProcess(folder, package="cases_plain")
    assert [plain.flops.matmul_flops(1, 1, 1) for _ in range(2)] == [1, 2]


def test_a_stub_is_a_to_do_not_a_wrong_answer():
    """A stub's NotImplementedError goes up as itself, so the student's run lists the function as
    not implemented instead of showing a failed comparison."""
    stubs = InProcess(REFERENCE.parent / "student_stubs", package="cases_stubs")
    with pytest.raises(NotImplementedError) as e:
        check_cases(stubs, "flops.matmul_flops", [case(1, 2, 3, want=12)])
    assert e.value.not_implemented == "flops.matmul_flops"


def test_an_unexpected_exception_shows_the_students_own_frames(tmp_path, ref):
    sub = patched(tmp_path, "flops", "def matmul_flops(m, k, n):\n    return helper(m)\n\n"
                                     "def helper(m):\n    return 1 / 0\n")
    text = failure(lambda: check_cases(sub, "flops.matmul_flops", [(2, 3, 4)], ref=ref))
    assert "got:      raised ZeroDivisionError: division by zero" in text
    assert "Traceback (your code, most recent call last):" in text and "in helper" in text and "1 / 0" in text
