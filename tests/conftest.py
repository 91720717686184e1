"""Fixtures for every test: ``impl`` (the code under test, through the seam) and ``ref``.

Students: `pytest` runs tests/public against student_stubs/; `pytest --impl=DIR` against any
folder laid out like it. The grader passes its own ``impl`` (a sandboxed submission).
"""

from pathlib import Path

import pytest

from tests.seam import GRADED_IMPL, InProcess

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--impl", default="student_stubs",
                     help="folder with the problem modules to test (default: student_stubs)")


def pytest_configure(config):
    config.addinivalue_line("markers", "points(n): points this test is worth in the grade")
    config.addinivalue_line("markers", "gpu: needs CUDA; graded on a CUDA runner")
    config.addinivalue_line("markers", "gpu_peak: an MFU test: needs the GPU in the reference's peak "
                                       "table (otherwise not run and not counted)")
    config.addinivalue_line("markers", "time_limit(seconds): wall-clock limit for this test when graded")


@pytest.fixture(scope="session")
def impl(request):
    graded = request.config.stash.get(GRADED_IMPL, None)
    if graded is not None:
        return graded
    folder = Path(request.config.getoption("--impl"))
    folder = folder if folder.is_absolute() else (Path.cwd() / folder)
    if not folder.is_dir():
        raise pytest.UsageError(f"--impl {folder}: no such folder")
    return InProcess(folder.resolve(), package=f"impl_{folder.name}")


@pytest.fixture(scope="session")
def ref():
    """The reference solution, in this process (hidden tests only: students have no reference).

    Not type-checked here: bad-input tests pass wrong types on purpose and expect ValueError.
    `python -m grader snapshots` runs it under jaxtyping + beartype instead."""
    return InProcess(ROOT / "reference", package="reference_plain")
