"""What the seam says when student code fails or returns the wrong type: the student's own names
and frames, one wording for a missing exception, never an empty message."""

import shutil

import pytest

from grader.paths import REFERENCE, STUBS
from grader.plugin import failure_text
from seam import InProcess, SubmissionError, describe
from tests.checks import case, check_cases, expect_equal, expect_error, expect_raises, raises
from seam.probes import student_name


def impl_with(tmp_path, module: str, code: str, name: str) -> InProcess:
    folder = tmp_path / name
    shutil.copytree(REFERENCE, folder)
    path = folder / f"{module}.py"
    path.write_text(path.read_text() + "\n" + code)
    return InProcess(folder, package=f"msg_{name}")


def failed(fn) -> str:
    with pytest.raises(pytest.fail.Exception) as e:
        fn()
    return str(e.value)


def test_a_stub_method_is_named_as_the_student_wrote_it():
    impl = InProcess(STUBS, package="msg_stubs")
    with pytest.raises(NotImplementedError) as e:
        impl.probes.adamw_closure()  # a probe drives the student's AdamW: the message names AdamW
    assert str(e.value).startswith("optim.AdamW.__init__ is not implemented yet (")
    assert "optim.py:" in str(e.value) and "probes" not in str(e.value)
    assert student_name("probes.adamw_run") == "optim.AdamW"
    assert student_name("probes.checkpoint_resume") == \
        "training.save_checkpoint / training.load_checkpoint / training.train_step"


def test_an_error_shows_only_the_students_frames(tmp_path):
    impl = impl_with(tmp_path, "flops", '''
def _inner(m):
    raise RuntimeError()
def matmul_flops(m, k, n):
    return _inner(m)
''', "frames")
    with pytest.raises(SubmissionError) as e:
        impl.flops.matmul_flops(1, 2, 3)
    text = describe(e.value)
    lines = text.splitlines()
    assert lines[0] == "flops.matmul_flops raised RuntimeError (no message)"  # never an empty ": "
    assert lines[1] == "  the call: flops.matmul_flops(1, 2, 3)"
    assert lines[2] == "Traceback (your code, most recent call last):"
    assert [line.strip().split(", in ")[-1] for line in lines[3::2]] == ["matmul_flops", "_inner"]
    assert "seam/" not in text and "callee" not in text


def test_the_grader_report_names_the_students_api_not_probes():
    longrepr = "timed out after 30 s in probes.adamw_run; the worker was restarted"
    assert failure_text(None, longrepr) == "timed out after 30 s in optim.AdamW; the worker was restarted"


def test_a_wrong_type_names_both_types():
    assert "expected int, got float 2.0" in failed(lambda: expect_equal(2.0, 2, "f()"))
    assert "at [1]: expected int, got float 2.0" in failed(lambda: expect_equal((1, 2.0), (1, 2), "f()"))
    assert "expected int, got bool True" in failed(lambda: expect_equal(True, 1, "f()"))
    expect_equal(3, 3.0, "an int is a float's promise kept")


def test_subclasses_cross_as_the_builtin_type_in_process_too(tmp_path):
    """The rule of the handout, through the seam (the grader's worker uses the same codec)."""
    impl = impl_with(tmp_path, "tensors", '''
_transpose = transpose
def transpose(shape, strides, dim0, dim1):
    import torch
    s, st = _transpose(shape, strides, dim0, dim1)
    return torch.Size(s), torch.Size(st)
''', "size")
    got = impl.tensors.transpose((3, 4), (4, 1), 0, 1)
    expect_equal(got, ((4, 3), (1, 4)), "transpose returning torch.Size")


MISSING = "\n  expected: raises ValueError\n  got:      "


def test_one_wording_for_a_missing_exception(tmp_path):
    assert failed(lambda: expect_error(0, ValueError, "f(-1)")) == f"f(-1){MISSING}returned 0, no exception"
    assert failed(lambda: expect_error(KeyError("k"), ValueError, "f(-1)")) == f"f(-1){MISSING}raised KeyError: 'k'"
    assert failed(lambda: expect_raises(ValueError, lambda: 0, "f(-1)")) == f"f(-1){MISSING}returned 0, no exception"
    check = lambda impl: check_cases(impl, "benchmarking.mfu", [case(1.0, 0.0, 1.0, want=raises(ValueError))])  # noqa: E731
    lax = impl_with(tmp_path, "benchmarking", "def mfu(flops, seconds, peak_flops):\n    return 0.5\n", "lax")
    ref = InProcess(REFERENCE, package="msg_ref")
    assert failed(lambda: check(lax)) == f"benchmarking.mfu(1.0, 0.0, 1.0){MISSING}returned 0.5, no exception"
    text = failed(lambda: check_cases(lax, "benchmarking.mfu", [(1.0, 0.0, 1.0)], ref=ref))
    assert text == f"benchmarking.mfu(1.0, 0.0, 1.0){MISSING}returned 0.5, no exception"


def test_a_module_that_does_not_import_fails_every_call_the_same_way(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "flops.py").write_text("def matmul_flops(:\n")
    impl = InProcess(folder, package="msg_broken")
    with pytest.raises(SubmissionError) as one:
        impl.flops.matmul_flops(1, 2, 3)
    with pytest.raises(SubmissionError) as batch:  # map too: never taken for an expected ValueError
        impl.map("flops.matmul_flops", [(-1, 2, 3)])
    assert str(one.value) == str(batch.value) and str(one.value).startswith("flops.py could not be imported (SyntaxError")


def test_a_subclass_of_an_expected_exception_counts_as_it(tmp_path):
    """A student's own `class ShapeError(ValueError)` is a ValueError, as pytest.raises would say."""
    impl = impl_with(tmp_path, "flops", "class ShapeError(ValueError):\n    pass\n\n"
                                        "def matmul_flops(m, k, n):\n    raise ShapeError(f'bad size {m}')\n", "sub")
    [got] = impl.map("flops.matmul_flops", [(-1, 2, 3)])
    assert type(got) is ValueError and str(got) == "bad size -1"


def test_a_raised_exception_shows_the_call_with_its_arguments(tmp_path):
    """A failure says which call raised: a get_batch that raises for batch_size=1,
    context_length=1 is reported with those arguments, whatever the exception; a probe's own
    parameters are never shown as the student's call."""
    impl = impl_with(tmp_path, "intensity", '''
def ridge_point(peak_flops, bandwidth):
    raise TypeError("not for these")
''', "call_args")
    with pytest.raises(TypeError) as e:
        impl.intensity.ridge_point(1e15, 3e12)
    text = describe(e.value)
    assert "intensity.ridge_point raised TypeError: not for these" in text
    assert "the call: intensity.ridge_point(1000000000000000.0, 3000000000000.0)" in text
    with pytest.raises(ValueError) as e:  # an exception a test may expect keeps its call too
        impl_with(tmp_path, "intensity", "", "call_args_ok").intensity.ridge_point(-1.0, 3e12)
    assert "the call: intensity.ridge_point(-1.0, 3000000000000.0)" in describe(e.value)
    stubs = InProcess(STUBS, package="msg_stub_call")
    with pytest.raises(NotImplementedError) as e:
        stubs.intensity.ridge_point(1.0, 2.0)
    assert "the call" not in describe(e.value)  # a to-do is not a failure to explain
