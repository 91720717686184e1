"""Checks of how the work is done (tests marked ``how``) against the ways a submission could blind
them (seam/tamper.py; red team #11): each technique, used by a forbidden round_to (PyTorch's own
cast) to hide that cast from the probe, makes the "how" test fail with one line naming it, while
every other test grades as before. The red team's probe forgery scores no "how" point."""

import sys
import types
from pathlib import Path

import pytest

from grader.batch.output import read_json
from grader.paths import REFERENCE, ROOT
from grader.rubric import collect
from seam.problems import touched
from seam.tamper import TECHNIQUES, Instrumentation, scan, scan_source, verdict
from tests.self.shared import cli

# round_to with PyTorch's cast for the formats torch has (forbidden), the cast made by BLIND.
FORBIDDEN_ROUND_TO = '''

_round_to_reference = round_to
def _torch_cast(x, fmt):
    return x.float().to(TORCH_DTYPES[fmt.name]).float()
def round_to(x, fmt):
    if isinstance(x, torch.Tensor) and fmt.name in TORCH_DTYPES and fmt.name != "FP32" \\
            and x.dtype in (torch.float32, torch.float64):
        _check_format(fmt)
        return BLIND(lambda: _torch_cast(x, fmt))
    return _round_to_reference(x, fmt)
'''

# technique -> BLIND: the first four really hide the cast from the probe (graded at 1771fa5, each
# of them scored dtypes 21/21, the unblinded cast 20/21); the others are the remaining listed
# ways to switch a probe's hooks off, shown as detected.
BLINDS = {
    "threads": '''
import threading
def BLIND(cast):  # torch's mode stacks are per thread: the probe's modes do not see this one
    out = []
    worker = threading.Thread(target=lambda: out.append(cast()))
    worker.start()
    worker.join()
    return out[0]
''',
    "torch internals": '''
from torch.utils._python_dispatch import _disable_current_modes
def BLIND(cast):
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        return cast()
''',
    "frames": '''
import sys
def BLIND(cast):  # the probe's list of casts seen, emptied through its frame
    out = cast()
    seen = sys._getframe(2).f_locals.get("seen")
    if isinstance(seen, list):
        seen.clear()
    return out
''',
    "seam": '''
import seam.probes as _probes
def BLIND(cast):
    return cast()
def _unwatched(c, x, fmt):
    return c.module("dtypes").round_to(x, fmt), False, []
_probes.round_to_watched = _unwatched
''',
    "profilers": '''
import sys
def BLIND(cast):
    sys.setprofile(None)
    return cast()
''',
    "ctypes": '''
import ctypes
def BLIND(cast):
    ctypes.pythonapi.PyEval_SetProfile(None, None)
    return cast()
''',
    "memory mapping": '''
import mmap
def BLIND(cast):
    return cast()  # (madvise(MADV_DONTNEED) before the grader reads /proc/self/smaps)
''',
    "dynamic code": '''
def BLIND(cast):
    getattr(__import__("sy" + "s"), "setpro" + "file")(None)
    return cast()
''',
    "allow-list": '''
import os
def BLIND(cast):  # what the seam writes with, rebound (seam/allowed.py; tests/self/unit/test_allowed.py)
    os.write = os.write
    return cast()
''',
}
BLINDING = ("threads", "torch internals", "frames", "seam")  # those that really hide the cast
HOW_TEST = "round_to rounds by itself"


def test_every_technique_of_the_trust_model_has_a_case_here():
    assert set(BLINDS) == set(TECHNIQUES)


@pytest.mark.parametrize("kind", sorted(BLINDS))
def test_the_static_look_names_each_technique(kind):
    found = scan_source(BLINDS[kind], "dtypes.py")
    assert kind in {k for _, _, k in found}, found
    line = verdict(found)
    assert line.startswith("not checked:") and "dtypes.py:" in line and "\n" not in line


def test_the_static_look_passes_what_students_write():
    """The reference, the stubs and every alternative solution: nothing found (a false alarm
    would cost an honest student the "how" points)."""
    assert scan(REFERENCE) == [] and scan(ROOT / "student_stubs") == []
    for path in sorted(p for p in (ROOT / "tests/self/alternatives").glob("*.py") if p.name != "__init__.py"):
        assert scan_source(path.read_text(), path.name) == [], path.name


def test_a_remembered_scan_follows_the_text_of_the_module(tmp_path, monkeypatch):
    """Findings are kept by a module's text (seam/tamper.py _remembered): a module changed in
    place, or another upload's module of the same name, is read again; past MEMO_SIZE texts the
    oldest is forgotten, so a batch of hundreds keeps no more."""
    from seam import tamper
    monkeypatch.setattr(tamper, "_memo", {})
    monkeypatch.setattr(tamper, "MEMO_SIZE", 3)
    module = tmp_path / "dtypes.py"
    module.write_text("x = 1\n")
    assert scan(tmp_path) == [] and tamper.names_at_run_time(tmp_path) == []
    module.write_text(BLINDS["frames"])
    assert {k for *_, k in scan(tmp_path)} == {"frames"}
    module.write_text("import pickle\n")
    assert scan(tmp_path) == [] and tamper.names_at_run_time(tmp_path) == [("dtypes.py", 1)]
    module.write_text("x = 1\n")
    assert scan(tmp_path) == [] and len(tamper._memo) == 3


def test_the_static_look_sees_names_hidden_in_strings_and_imports():
    assert scan_source('import importlib\nm = importlib.import_module("seam.probes")\n', "x.py")
    assert {k for *_, k in scan_source('getattr(sys, "_getframe")(0)\n', "x.py")} == {"frames"}
    assert {k for *_, k in scan_source("from torch import _C\n", "x.py")} == {"torch internals"}
    assert {k for *_, k in scan_source("import os\nos.fork()\n", "x.py")} == {"threads"}
    assert scan_source("def broken(:\n", "x.py") == []  # does not import either: its own failure


def test_the_static_look_sees_what_a_hostile_review_found():
    """A helper attacking this change found these (each hid the cast from the probe in a real
    grade before the static look knew them): TorchScript escapes the function mode and
    no_dispatch the dispatch mode; names assembled from pieces."""
    scripted = ("@torch.jit.script\ndef _bf(x: torch.Tensor) -> torch.Tensor:\n    return x.to(torch.bfloat16)\n"
                "from torch.utils._mode_utils import no_dispatch\n")
    assert {k for *_, k in scan_source(scripted, "x.py")} == {"torch internals"}
    pieces = 'getattr(torch, "_" + "C")\nwith getattr(_t, f"Disable{\'Torch\'}Function")(): pass\n'
    assert [k for *_, k in scan_source(pieces, "x.py")] == ["torch internals", "torch internals"]
    assert scan_source('getattr(torch, "".join(["_", "C"]))\n', "x.py")
    assert "dynamic code" in {k for *_, k in scan_source("getattr(sys, name)\n", "x.py")}  # (the allow-list too)


@pytest.mark.parametrize("honest", [
    "import gc\ngc.collect()\n", "def fit(model, eval=False):\n    return eval\n", "cfg.overrides = {}\n",
    "message = {'role': 'system'}\nmode = 'inspect'\n", "f = torch.compile(f)\n", "value = getattr(cfg, 'lr')\n",
    "data = np.memmap(path, dtype=np.uint32, mode='r')\n"])
def test_the_static_look_leaves_honest_code_alone(honest):
    assert scan_source(honest, "x.py") == []


def test_the_worker_sees_its_instrumentation_change():
    import seam.smaps as smaps
    look = Instrumentation()
    before = look.before()
    assert look.broken(before) == ""
    real = smaps.resident_bytes
    smaps.resident_bytes = lambda *a: 0
    try:
        assert "seam.smaps.resident_bytes" in look.broken(before)
    finally:
        smaps.resident_bytes = real
    for swap in (types.ModuleType("seam.smaps"), None):  # the module replaced, or dropped, whole
        if swap is None:
            del sys.modules["seam.smaps"]
        else:
            sys.modules["seam.smaps"] = swap
        try:
            assert "seam.smaps.resident_bytes" in look.broken(before)
        finally:
            sys.modules["seam.smaps"] = smaps
    import threading
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert "thread" in look.broken(before)
    finally:
        stop.set()
        thread.join()
    previous = sys.getprofile()
    sys.setprofile(lambda *a: None)
    try:
        assert "profiler" in look.broken(before)
    finally:
        sys.setprofile(previous)
    assert look.broken(before) == ""


def _batch(klass: Path, out: Path, only: str) -> None:
    cli("batch", klass, "--out", out, "--jobs", "1", "--only", only, "--gpu", "skip", check=0)


# The red team's probe forgery (#11): three forbidden shortcuts (the cast in round_to, np.asarray
# of the whole memmap, weights_only=False), then 12 lines patching seam.probes in the worker.
FORBIDDEN_TRAINING = (("np.asarray(data[index], dtype=np.int64)", "np.asarray(data, dtype=np.int64)[index]"),
                      ('map_location="cpu", weights_only=True)\n', 'map_location="cpu", weights_only=False)\n'))
FORGE_TRAINING = '''
import seam.probes as _probes
import seam.probes.training as _pt
_pt._mapped_bytes = lambda path: 0  # (the red team's: the reading is now the grader's, elsewhere)
_load_checkpoint_unsafe = load_checkpoint
def load_checkpoint(*args, **kwargs):
    step = _load_checkpoint_unsafe(*args, **kwargs)
    _pt._UNPICKLED.clear()
    return step
'''
STUDENT = {"seam": "forged"}  # the technique's submission: the forgery's dtypes.py is "seam"'s


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch (dtypes and training): the honest dtypes; the red team's forbidden shortcuts
    ("forbidden": the cast unblinded, the control that the "how" test catches it by itself) and
    its forgery ("forged": the cast hidden by patching the seam); the cast under each other
    blinding technique. Only "forbidden" and "forged" hand in a training.py."""
    root = tmp_path_factory.mktemp("tamper")
    klass = root / "class"
    dtypes = (REFERENCE / "dtypes.py").read_text()
    training = (REFERENCE / "training.py").read_text()
    for old, new in FORBIDDEN_TRAINING:
        assert training.count(old) == 1
        training = training.replace(old, new)
    uploads = {"honest": {"dtypes.py": dtypes},
               "forbidden": {"dtypes.py": dtypes + "\ndef BLIND(cast):\n    return cast()\n" + FORBIDDEN_ROUND_TO,
                             "training.py": training},
               "forged": {"dtypes.py": dtypes + BLINDS["seam"] + FORBIDDEN_ROUND_TO,
                          "training.py": training + FORGE_TRAINING}}
    for kind in BLINDING:  # (the other techniques meet the same gate: the static look names them)
        uploads.setdefault(STUDENT.get(kind, kind.replace(" ", "-")), {"dtypes.py": dtypes + BLINDS[kind] + FORBIDDEN_ROUND_TO})
    for name, files in uploads.items():
        (klass / name).mkdir(parents=True)
        for file, text in files.items():
            (klass / name / file).write_text(text)
    _batch(klass, root / "out", "dtypes,training")
    return {d.name: read_json(d / "results.json") for d in (root / "out" / "students").iterdir()}


def _how(results: dict) -> dict:
    [test] = [t for t in results["tests"] if HOW_TEST in t["name"]]
    return test


def _dtypes(results: dict) -> float:
    return sum(t["score"] for t in results["tests"] if t["tags"] == ["dtypes"])


def _round_to_tests(results: dict) -> list[dict]:
    """The dtypes tests that called round_to: the cast breaks its honest-work rule, so they score 0."""
    return [t for t in results["tests"] if "dtypes.round_to" in t["extra_data"]["functions"]]


def _charged(results: dict, honest: dict) -> float:
    """The points the honest upload earns on the tests of round_to and on the how test."""
    names = {t["name"] for t in _round_to_tests(honest)} | {_how(honest)["name"]}
    return sum(t["score"] for t in honest["tests"] if t["name"] in names)


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_control_the_how_test_catches_the_cast_by_itself(graded):
    honest, unblinded = graded["honest"], graded["forbidden"]
    assert _how(honest)["status"] == "passed"
    assert _how(unblinded)["status"] == "failed"
    assert "dtypes.round_to" in unblinded["extra_data"]["honest_work"]
    for t in _round_to_tests(unblinded):  # the rule, seam/honest.py: every test of round_to
        assert t["score"] == 0 and t["output"].startswith("honest work: dtypes."), t  # (nvfp4's too: it calls it)
        assert "used a cast into torch." in t["output"], t
    assert _dtypes(unblinded) == _dtypes(honest) - _charged(unblinded, honest)


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
@pytest.mark.parametrize("kind", BLINDING)
def test_each_blinding_technique_fails_the_how_test_with_one_line_naming_it(graded, kind):
    """Blinded, the cast still breaks round_to's rule (the watch sees the thread, the modes popped,
    the cast itself; an import of seam makes every rule "not checked"); the how test fails with
    the static look's line, and nothing else moves."""
    results, honest = graded[STUDENT.get(kind, kind.replace(" ", "-"))], graded["honest"]
    test = _how(results)
    assert test["status"] == "failed", test["output"][:300]
    assert test["output"].startswith(("not checked:", "honest work:")), test["output"][:300]
    assert "dtypes.round_to" in results["extra_data"]["honest_work"], results["extra_data"]
    assert all(t["score"] == 0 for t in _round_to_tests(results))
    assert _dtypes(results) <= _dtypes(honest) - _charged(results, honest), "only round_to's tests may change"
    others = {t["name"]: t["score"] for t in honest["tests"]
              if t["tags"] == ["dtypes"] and "dtypes.round_to" not in t["extra_data"]["functions"]}
    for t in results["tests"]:
        if t["name"] in others and not touched(t["extra_data"]["functions"], results["extra_data"]["honest_work"]):
            assert t["score"] == others[t["name"]], t["name"]


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_the_red_teams_probe_forgery_earns_no_how_point(graded):
    """The forbidden shortcuts scored 35/39 (dtypes and training) at 1771fa5, and patching the
    probes on top gave 39/39. Now the cast breaks round_to's rule (its tests score 0), every
    "how" test of the forgery fails with the line naming the seam, and the import of seam makes
    every ruled function "not checked": the forgery scores no more than the shortcuts."""
    forbidden, forged = graded["forbidden"], graded["forged"]
    how = {f"{f.problem}: {f.title}" for f in collect() if f.how}
    assert sum(t["max_score"] for t in forbidden["tests"]) == 39
    assert forbidden["score"] == 35 - sum(t["max_score"] for t in _round_to_tests(forbidden)
                                          if t["name"] not in how)
    assert [t["name"] for t in forbidden["tests"]] == [t["name"] for t in forged["tests"]]
    for t_forbidden, t_forged in zip(forbidden["tests"], forged["tests"]):
        if t_forged["name"] in how:
            assert t_forged["status"] == "failed", t_forged
            assert t_forged["output"].startswith(("not checked:", "honest work:")), t_forged
        else:
            assert t_forged["score"] <= t_forbidden["score"], t_forged["name"]
    assert "no rule can be checked" in forged["extra_data"]["honest_work"]["dtypes.round_to"]
    assert forged["score"] <= forbidden["score"]


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_the_memmap_reading_is_the_graders_own(tmp_path):
    """A get_batch that converts the whole memmap and forges the probe's own reading (0 bytes)
    is still read at 32 MiB: the grader reads the worker's /proc/<pid>/smaps itself (the static
    look would also name the forgery; it is not asked here: the sandbox is called directly)."""
    from grader.sandbox.isolation import Isolation
    from grader.sandbox.limits import Limits
    from grader.sandbox.sandbox import Sandbox
    sub = tmp_path / "forger"
    sub.mkdir()
    (sub / "training.py").write_text((REFERENCE / "training.py").read_text().replace(
        "np.asarray(data[index], dtype=np.int64)", "np.asarray(data, dtype=np.int64)[index]")
        + "\nimport seam.smaps as _smaps\n_smaps.resident_bytes = lambda *a: 0\n")
    n = 8 * 2**20
    for folder, low in ((REFERENCE, True), (sub, False)):
        box = Sandbox(folder, Limits(time_per_test=60), isolation=Isolation.detect("auto"))
        try:
            got = box.call("probes.get_batch_pages_touched", n=n, batch_size=2, context_length=64, seed=11)
            outside = box.resident_bytes(*got["mapping"])
        finally:
            box.close()
        assert outside is not None, "the grader could not read the worker's smaps here"
        if low:
            assert outside <= 8 << 20
        else:
            assert got["after"] == 0 and outside >= 4 * n, (got["after"], outside)
