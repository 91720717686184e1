"""A student's folders as deep as they like: a chain of 3,000 folders in the scratch (past
Python's recursion limit, and its paths past PATH_MAX) is measured by the grader while the worker
runs, emptied by the zygote after it, and removed with the zygote's folder: nothing trusted
recurses on a student's tree, and the zygote goes on to serve the next student."""

import os
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.folders import allocated_bytes, empty, remove
from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import Limits
from grader.sandbox.sandbox import Sandbox
from grader.sandbox.zygote import Zygote
from tests.self.shared import unnamespaced_modes
from tests.self.submissions import reference_text

VEHICLE = "intensity"
DEPTH = 3000
DEEP = f'''
import os as _os
def ridge_point(peak_flops, bandwidth):
    start = _os.getcwd()
    for _ in range({DEPTH}):   # one name at a time: no path ever names the whole chain
        _os.mkdir("d")
        _os.chdir("d")
    with open("bottom", "wb") as f:
        f.write(b"x" * 5000)
    _os.chdir(start)
    return -1.0
'''


def _chain(top: Path, depth: int = DEPTH) -> None:
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("bottom").write_bytes(b"x" * 5000)
    finally:
        os.chdir(here)


def test_the_walks_take_no_recursion_and_no_long_path(tmp_path):
    """The measure counts the bottom file's blocks (os.walk in 3.11 recurses and stops at PATH_MAX);
    emptying and removing leave nothing (shutil.rmtree raises RecursionError)."""
    top = tmp_path / "scratch"
    top.mkdir()
    try:
        _chain(top)
        assert allocated_bytes(top) >= DEPTH * 512 + 4096
        empty(top)
        assert top.is_dir() and not list(top.iterdir())
        _chain(top, 50)
        remove(top)
        assert not top.exists()
    finally:  # (pytest's own clean-up of old temporary folders recurses)
        remove(top)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the chain is another uid's, as a worker's is")
def test_a_deep_chain_left_in_a_shared_folder_is_measured_and_swept_without_recursion(tmp_path):
    """A uid-mode worker may leave a 3,000-deep chain in /tmp: the grader counts it against the disk
    limit and sweeps it after the worker, with no recursion (shutil.rmtree raised RecursionError)."""
    from grader.sandbox.outside import Outside
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    top = shared / "left"
    top.mkdir()
    uid = 64123  # no leased uid is this: a stranger's files beside it stay
    try:
        _chain(top)
        os.chown(top, uid, uid)  # (the top is the uid's: the sweep removes it and all below)
        (shared / "stranger").write_text("x")
        outside = Outside(uid, tops=(str(shared),))
        assert outside.bytes() >= DEPTH * 512
        assert outside.sweep() == [str(top)]
        assert not top.exists() and (shared / "stranger").exists()
    finally:
        remove(top)


@pytest.mark.parametrize("isolation", [pytest.param(None, id="auto"), *unnamespaced_modes()])
def test_a_3000_deep_chain_costs_the_zygote_nothing(tmp_path, monkeypatch, isolation):
    # The zygote's folder on a tmpfs: this disk takes ~3 ms per rmdir whatever the depth, and the
    # walk's depth, not the disk, is under test here.
    shm = Path(tempfile.mkdtemp(prefix="deep-scratch-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    os.chmod(shm, 0o711)  # (as /tmp lets a leased worker cross to its own folders)
    monkeypatch.setattr(tempfile, "tempdir", str(shm))
    deep, honest = tmp_path / "deep", tmp_path / "honest"
    for folder, text in ((deep, DEEP), (honest, reference_text(VEHICLE))):
        folder.mkdir()
        (folder / f"{VEHICLE}.py").write_text(text)
    zygote = Zygote(Limits(time_per_test=60), isolation or Isolation.detect())
    try:
        box = Sandbox(deep, zygote=zygote)
        try:
            assert box.intensity.ridge_point(1.0, 1.0) == -1.0   # measured while it ran, without a crash
        finally:
            box.close()                                            # the zygote empties the scratch
        first = zygote.proc.pid
        assert not list(zygote.work.iterdir()) or zygote.isolation.namespaces
        box = Sandbox(honest, zygote=zygote)
        try:
            assert box.intensity.ridge_point(4.0, 2.0) == 2.0     # the next student, the same zygote
        finally:
            box.close()
        assert zygote.proc.pid == first, "the zygote was started again"
    finally:
        zygote.close()                                             # its folder goes, scratch and all
        assert not zygote.root.exists()
        remove(shm)
