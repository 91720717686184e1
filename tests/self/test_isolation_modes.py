"""The sandbox's weaker modes (used where namespaces or root are not available) still contain
crashes and hangs and give the same answers; the strongest mode hides what it must."""

import os

import pytest

from grader.paths import ROOT
from grader.sandbox import Isolation, Limits, Sandbox, WORKER_UID, _exposures
from tests.seam import SandboxFailure

MODULE = '''
import os
def ridge_point(peak, bw):
    return peak / bw
def matmul_intensity(*a):
    os._exit(4)
def elementwise_intensity(*a):
    n = 0
    while True:
        n += 1
def roofline_seconds(*a):
    out = {"uid": os.getuid(), "cwd": os.getcwd()}
    for name in ("reference", "tests"):
        try:
            out[name] = sorted(os.listdir(os.path.join(%r, name)))
        except OSError as e:
            out[name] = type(e).__name__
    return out
''' % str(ROOT)

MODES = {
    "namespaces": Isolation.detect(),
    "process only": Isolation(namespaces=False, user_ns=False, uid=None),
}
if os.geteuid() == 0 and not _exposures(WORKER_UID):
    MODES["unprivileged uid, no namespaces"] = Isolation(namespaces=False, user_ns=False, uid=WORKER_UID)


@pytest.fixture(params=sorted(MODES))
def sandbox(request, tmp_path):
    (tmp_path / "intensity.py").write_text(MODULE)
    box = Sandbox(tmp_path, Limits(time_per_test=2), isolation=MODES[request.param])
    yield request.param, box
    box.close()


def test_answers_crashes_and_hangs(sandbox):
    mode, box = sandbox
    assert box.intensity.ridge_point(989e12, 3.35e12) == 989e12 / 3.35e12
    with pytest.raises(SandboxFailure, match="exited with status 4"):
        box.intensity.matmul_intensity(1, 2, 3, 4)
    with pytest.raises(SandboxFailure, match="timed out after 2 s"):
        box.intensity.elementwise_intensity(1, 2, 3)
    assert box.intensity.ridge_point(2.0, 1.0) == 2.0   # a fresh worker took over
    assert box.starts == 3


def test_what_the_worker_sees(sandbox):
    mode, box = sandbox
    seen = box.intensity.roofline_seconds(1, 2, 3, 4)
    assert seen["cwd"].startswith(str(box.root))
    if box.isolation.uid is not None:
        assert seen["uid"] == WORKER_UID
    if box.isolation.namespaces or box.isolation.uid is not None:
        assert seen["reference"] == seen["tests"] == "PermissionError", seen
