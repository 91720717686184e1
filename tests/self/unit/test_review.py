"""Notes for review (seam/review.py): a construct that could blind the honest-work watch is named
for a person, file and line, and takes no point. Each kind below, used by a forbidden round_to
(PyTorch's own cast) to hide that cast from the watch, is a note; the upload scores no more than
the same upload with the forbidden route deleted (the reference), and honest code gets no note."""

import sys
import types
from pathlib import Path

import pytest

from grader.batch.output import class_summary, read_json
from grader.paths import REFERENCE, ROOT
from seam import review
from seam.honest import Instrumentation
from seam.review import KINDS, scan, scan_source
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

# kind of note -> BLIND: the first four really hide the cast from the probe and the watch; the
# others are the remaining ways to switch the watch off.
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
    "the grader": '''
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
    "imports by name": '''
def BLIND(cast):
    getattr(__import__("sy" + "s"), "setpro" + "file")(None)
    return cast()
''',
    "gc": '''
import gc
def BLIND(cast):  # the watch's record, found among every object and emptied
    out = cast()
    for o in gc.get_objects():
        if type(o).__name__ == "Honest":
            o.violations.clear()
    return out
''',
    "code objects": '''
def BLIND(cast):
    return cast()
BLIND.__code__ = (lambda cast: cast()).__code__
''',
    "code from text": '''
exec("def BLIND(cast):\\n    return cast()\\n")
''',
}
BLINDING = ("threads", "torch internals", "frames", "the grader")  # those that really hide the cast
HOW_TEST = "round_to rounds by itself"



def test_every_kind_of_note_has_a_case_here():
    assert set(BLINDS) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(BLINDS))
def test_the_look_names_each_kind_with_its_place_and_what_to_write_instead(kind):
    found = scan_source(BLINDS[kind], "dtypes.py")
    assert kind in {n["kind"] for n in found}, found
    n = next(n for n in found if n["kind"] == kind)
    line = review.said({**n, "at_stake": 3})
    assert line.startswith("review (in the text): dtypes.py:") and "\n" not in line
    assert "no point is taken" in line and "3 points would be at stake" in line and KINDS[kind][1] in line


def test_a_note_takes_no_point(tmp_path):
    """The look's notes are notes: no ruled function is charged for them."""
    from seam import InProcess
    from tests.self.submissions import reference_text, reference_with
    folder = reference_with(tmp_path / "s", {"memory": reference_text("memory") + "\nimport seam.probes as _p\n"})
    impl = InProcess(folder, package=f"review_{tmp_path.name}")
    assert impl.violations() == {}
    assert [(n["file"], n["kind"]) for n in impl.notes()] == [("memory.py", "the grader")]


def test_what_students_write_gets_no_note():
    """The reference, the stubs, every alternative and honest sample: no note (each would be a line
    a TA reads for nothing)."""
    assert scan(REFERENCE) == [] and scan(ROOT / "student_stubs") == []
    for folder in ("alternatives", "honest_samples"):
        for path in sorted(p for p in (ROOT / "tests/self" / folder).glob("*.py") if p.name != "__init__.py"):
            assert scan_source(path.read_text(), path.name) == [], path.name


def test_a_remembered_scan_follows_the_text_of_the_module(tmp_path, monkeypatch):
    """Notes are kept by a module's text: a module changed in place, or another upload's module of
    the same name, is read again; past MEMO_SIZE texts the oldest is forgotten."""
    monkeypatch.setattr(review, "_memo", {})
    monkeypatch.setattr(review, "MEMO_SIZE", 3)
    module = tmp_path / "dtypes.py"
    module.write_text("x = 1\n")
    assert scan(tmp_path) == [] and not review.dynamic(tmp_path)
    module.write_text(BLINDS["frames"])
    assert {n["kind"] for n in scan(tmp_path)} == {"frames"}
    module.write_text("import torch\nf = getattr(torch, 'float' + str(16))\n")
    assert scan(tmp_path) == [] and not review.dynamic(tmp_path)
    module.write_text("x = 1\n")
    assert scan(tmp_path) == [] and len(review._memo) == 3


def test_the_look_sees_names_hidden_in_strings_and_imports():
    kinds = lambda text: {n["kind"] for n in scan_source(text, "x.py")}  # noqa: E731
    assert kinds('import importlib\nm = importlib.import_module("seam.probes")\n') == {"imports by name", "the grader"}
    assert kinds('getattr(sys, "_getframe")(0)\n') == {"frames"}
    assert kinds("from torch import _C\n") == {"torch internals"}
    assert kinds("import os\nos.fork()\n") == {"threads"}
    assert kinds("import logging\nt = logging.threading.Thread\n") == {"threads"}
    assert kinds('import pydoc\npydoc.locate("se" + "am.honest._ACTIVE")\n') == {"imports by name", "the grader"}
    assert kinds("import itertools, torch\nlist(itertools.starmap(torch._C._pop_torch_function_stack, [()]))\n") \
        == {"torch internals"}
    assert kinds("import sys\nlist(map(sys.setprofile, [None]))\n") == {"profilers"}
    assert kinds('getattr(torch, "".join(["_", "C"]))\n') == {"torch internals"}
    assert kinds("@torch.jit.script\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x\n") == {"code objects"}
    assert scan_source("def broken(:\n", "x.py") == []  # does not import either: its own failure


@pytest.mark.parametrize("honest", [
    "import gc\ngc.collect()\n", "def fit(model, eval=False):\n    return eval\n", "cfg.overrides = {}\n",
    "message = {'role': 'system'}\nmode = 'inspect'\n", "f = torch.compile(f)\n", "value = getattr(cfg, 'lr')\n",
    "data = np.memmap(path, dtype=np.uint32, mode='r')\n", "import inspect\ninspect.signature(f).bind(1)\n",
    "import functools\n@functools.wraps(f)\ndef g(): pass\n", "d = vars(self)\n",
    "for name in ('has_inf', 'has_nan'):\n    getattr(fmt, name)\n", "setattr(cfg, k, v)\n",
    "import timeit\ntimeit.timeit(fn, number=3)\n", "torch.backends.cuda.matmul.allow_tf32 = ALLOW\n",
    "__email__ = 'a@b.c'\n", "torch.load(path, weights_only=True)\n", "x = torch.stack([a, b])\n",
    "class A:\n    def __init_subclass__(cls, **kw):\n        super().__init_subclass__(**kw)\n"])
def test_the_look_leaves_honest_code_alone(honest):
    assert scan_source(honest, "x.py") == []


def test_the_worker_sees_its_instrumentation_change():
    import seam.smaps as smaps
    look = Instrumentation()
    before = look.before()
    assert look.broken(before) is None
    real = smaps.resident_bytes
    smaps.resident_bytes = lambda *a: 0
    try:
        assert look.broken(before)[0] == "the grader" and "seam.smaps.resident_bytes" in look.broken(before)[1]
    finally:
        smaps.resident_bytes = real
    for swap in (types.ModuleType("seam.smaps"), None):  # the module replaced, or dropped, whole
        if swap is None:
            del sys.modules["seam.smaps"]
        else:
            sys.modules["seam.smaps"] = swap
        try:
            assert "seam.smaps.resident_bytes" in look.broken(before)[1]
        finally:
            sys.modules["seam.smaps"] = smaps
    import threading
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert look.broken(before)[0] == "threads"
    finally:
        stop.set()
        thread.join()
    previous = sys.getprofile()
    sys.setprofile(lambda *a: None)
    try:
        assert look.broken(before)[0] == "profilers"
    finally:
        sys.setprofile(previous)
    assert look.broken(before) is None


# The red team's probe forgery: three forbidden shortcuts (the cast in round_to, np.asarray of the
# whole memmap, weights_only=False), then lines patching seam.probes in the worker.
FORBIDDEN_TRAINING = (("np.asarray(data[index], dtype=np.int64)", "np.asarray(data, dtype=np.int64)[index]"),
                      ('map_location="cpu", weights_only=True)\n', 'map_location="cpu", weights_only=False)\n'))
FORGE_TRAINING = '''
import seam.probes as _probes
import seam.probes.training as _pt
_pt._mapped_bytes = lambda path: 0
_load_checkpoint_unsafe = load_checkpoint
def load_checkpoint(*args, **kwargs):
    step = _load_checkpoint_unsafe(*args, **kwargs)
    _pt._UNPICKLED.clear()
    return step
'''
STUDENT = {"the grader": "forged"}  # the kind's upload: the forgery's dtypes.py is the grader's


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch (dtypes and training): the honest dtypes; the red team's forbidden shortcuts
    ("forbidden": the cast unblinded, which the watch sees run) and its forgery ("forged": the
    cast hidden by patching the seam); the cast under each other blinding kind."""
    root = tmp_path_factory.mktemp("review")
    klass = root / "class"
    dtypes = (REFERENCE / "dtypes.py").read_text()
    training = (REFERENCE / "training.py").read_text()
    for old, new in FORBIDDEN_TRAINING:
        assert training.count(old) == 1
        training = training.replace(old, new)
    uploads = {"honest": {"dtypes.py": dtypes},
               "forbidden": {"dtypes.py": dtypes + "\ndef BLIND(cast):\n    return cast()\n" + FORBIDDEN_ROUND_TO,
                             "training.py": training},
               "forged": {"dtypes.py": dtypes + BLINDS["the grader"] + FORBIDDEN_ROUND_TO,
                          "training.py": training + FORGE_TRAINING}}
    for kind in BLINDING:
        uploads.setdefault(STUDENT.get(kind, kind.replace(" ", "-")), {"dtypes.py": dtypes + BLINDS[kind] + FORBIDDEN_ROUND_TO})
    for name, files in uploads.items():
        (klass / name).mkdir(parents=True)
        for file, text in files.items():
            (klass / name / file).write_text(text)
    out = root / "out"
    cli("batch", klass, "--out", out, "--jobs", "1", "--only", "dtypes,training", "--gpu", "skip", check=0)
    results = {d.name: read_json(d / "results.json") for d in (out / "students").iterdir()}
    return results, class_summary(out)


def _round_to_tests(results: dict) -> list[dict]:
    return [t for t in results["tests"] if "dtypes.round_to" in t["extra_data"]["functions"]]


@pytest.mark.e2e  # it grades end to end: not in the fast loop
def test_the_cast_seen_to_run_costs_round_to_and_nothing_else(graded):
    results, _ = graded
    honest, unblinded = results["honest"], results["forbidden"]
    assert "dtypes.round_to" in unblinded["extra_data"]["honest_work"]
    for t in _round_to_tests(unblinded):  # the rule: every test of round_to (nvfp4's too: it calls it)
        assert t["score"] == 0 and t["output"].startswith("honest work: dtypes."), t
    others = {t["name"]: t["score"] for t in honest["tests"] if "dtypes.round_to" not in t["extra_data"]["functions"]}
    for t in unblinded["tests"]:
        if t["name"] in others and t["tags"] == ["dtypes"]:
            assert t["score"] == others[t["name"]], t["name"]


@pytest.mark.e2e  # it grades end to end: not in the fast loop
@pytest.mark.parametrize("kind", BLINDING)
def test_a_blinded_cast_gains_nothing_and_is_a_note_naming_the_student(graded, kind):
    """Blinded, the cast may go unseen: no point is taken for the construct, the upload scores no
    more than with the forbidden route deleted (the honest upload), and a note for review names
    the construct, file and line, in results.json and at the top of the batch's summary."""
    results, summary = graded
    name = STUDENT.get(kind, kind.replace(" ", "-"))
    got, honest = results[name], results["honest"]
    dtypes = lambda r: sum(t["score"] for t in r["tests"] if t["tags"] == ["dtypes"])  # noqa: E731
    assert dtypes(got) <= dtypes(honest)
    notes = got["extra_data"]["review"]
    assert kind in {n["kind"] for n in notes}, notes
    assert all(n["file"].endswith(".py") and n["at_stake"] > 0 for n in notes)
    assert any(line.strip().startswith(f"{name} ({name}):") for line in summary), summary
    assert summary[0].startswith("review:")
    assert "review (in the text): dtypes.py:" in got["output"]


@pytest.mark.e2e  # it grades end to end: not in the fast loop
def test_the_red_teams_probe_forgery_gains_nothing_over_the_honest_code(graded):
    results, _ = graded
    forged, honest = results["forged"], results["honest"]
    assert forged["score"] <= honest["score"] + sum(t["score"] for t in forged["tests"] if t["tags"] == ["training"])
    assert {n["kind"] for n in forged["extra_data"]["review"]} >= {"the grader"}
    assert {n["file"] for n in forged["extra_data"]["review"]} == {"dtypes.py", "training.py"}


@pytest.mark.e2e  # it grades end to end: not in the fast loop
def test_the_memmap_reading_is_the_graders_own(tmp_path):
    """A get_batch that converts the whole memmap and forges the probe's own reading (0 bytes)
    is still read at 32 MiB: the grader reads the worker's /proc/<pid>/smaps itself."""
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


def test_notes_a_worker_forges_are_bounded_checked_and_cost_nothing():
    """The worker is the student's process: what it sends as notes may be anything. Only notes of
    a known kind in one of the upload's problem modules are kept, at most MAX_NOTES, each as plain
    data; they reach the report through the sanitiser and charge no function."""
    from grader.text import one_line
    from seam.impl import Impl

    class Forger(Impl):
        def _send(self, request):
            good = {"file": "optim.py", "line": 3, "kind": "threads", "construct": "x\x1b[2J\u202e" * 50}
            return {"ok": None, "notes": [good | {"line": i} for i in range(500)] + [
                {"file": "../etc/passwd", "line": 1, "kind": "threads", "construct": "x"},
                {"file": "optim.py", "line": 1, "kind": "made up", "construct": "x"},
                {"file": "optim.py", "line": "1", "kind": "gc", "construct": "x"}, "not a dict"]}

    impl = Forger()
    impl.get("optim.AdamW")
    notes = impl.notes()
    assert len(notes) == Impl.MAX_NOTES and {n["file"] for n in notes} == {"optim.py"}
    assert all(n["seen"] == "at run time" and len(n["construct"]) <= 120 for n in notes)
    assert impl.violations() == {}
    line = one_line(review.said(notes[0]))
    assert "\x1b" not in line and "\u202e" not in line


@pytest.mark.parametrize("source, kind, on_another_object", [
    ('import sys\nm = getattr(sys, "modules")', "imports by name", []),
    ('import sys as s\nm = vars(s)["path"]', "imports by name", []),
    ('import sys\nm = sys.__dict__["modu" + "les"]', "imports by name", []),
    ('import logging\nt = getattr(logging, "threading")', "threads", ["threads"]),
])
def test_an_attribute_asked_by_its_written_name_is_the_attribute(source, kind, on_another_object):
    """getattr(x, "name"), vars(x)["name"] and x.__dict__["name"] are x.name: a note where x.name
    is one (the allowance for ordinary words covers the string, not the attribute it reaches);
    sys.modules is one only on sys, as written out."""
    assert [n["kind"] for n in scan_source(source, "scaling.py")] == [kind]
    elsewhere = source.replace("import sys as s", "").replace("import sys", "").replace("import logging", "")
    elsewhere = elsewhere.replace("(sys", "(cfg").replace("(s)", "(cfg)").replace("sys.", "cfg.").replace("logging", "cfg")
    assert [n["kind"] for n in scan_source(elsewhere, "scaling.py")] == on_another_object, elsewhere
