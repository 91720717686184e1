"""Notes for review (seam/review.py): a construct that could blind the honest-work watch is named
for a person, file and line, and takes no point. Each kind below, used by a forbidden round_to
(PyTorch's own cast) to hide that cast from the watch, is a note; the upload scores no more than
the same upload with the forbidden route deleted (the reference), and honest code gets no note."""

import ast
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
    "unpickling": '''
import pickle
def BLIND(cast):  # a callable the pickled bytes name, called by the unpickler
    return pickle.loads(pickle.dumps(cast))()
''',
}
BLINDING = ("threads", "torch internals", "frames", "the grader")  # those that really hide the cast
HOW_TEST = "round_to rounds by itself"



# an honest sample -> the problem module it would be (an alternative's name says it: einops__x.py)
HONEST_AS = {"attention_einops.py": "einops.py", "foreach_adamw.py": "optim.py"}
# kind of note -> (the module, its text) for the notes about the work rather than the watch
WORK = {
    "removed code": lambda: ("optim.py", "import torch\nfrom torch import Tensor\n\n"
                             + _torch_function("optim/adam.py", "_single_tensor_adam")),
    "unreadable module": lambda: ("dtypes.py", b"# -*- coding: nonsense -*-\nx = 1\n"),
    "einops axes": lambda: ("einops.py", _einops_with(THROWAWAY_REARRANGE)),
}


def test_every_kind_of_note_has_a_case_here():
    assert set(BLINDS) | set(WORK) == set(KINDS) and not set(BLINDS) & set(WORK)


@pytest.mark.parametrize("kind", sorted(set(BLINDS) | set(WORK)))
def test_the_look_names_each_kind_with_its_place_and_what_to_write_instead(kind):
    file, source = WORK[kind]() if kind in WORK else ("dtypes.py", BLINDS[kind])
    found = scan_source(source, file)
    assert kind in {n["kind"] for n in found}, found
    n = next(n for n in found if n["kind"] == kind)
    line = review.said({**n, "at_stake": 3})
    assert line.startswith(f"review (in the text): {file}:") and "\n" not in line
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
    a TA reads for nothing), read as the file it is and as the problem's module it would be."""
    assert scan(REFERENCE) == [] and scan(ROOT / "student_stubs") == []
    for folder in ("alternatives", "honest_samples"):
        for path in sorted(p for p in (ROOT / "tests/self" / folder).glob("*.py") if p.name != "__init__.py"):
            assert scan_source(path.read_bytes(), path.name) == [], path.name
            module = HONEST_AS.get(path.name, path.name.partition("__")[0] + ".py")
            if review.problem_of(module):
                assert scan_source(path.read_bytes(), module) == [], (path.name, module)


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


RESUME = '''import torch
def save_checkpoint(model, optimizer, step, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, path)
def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]
'''


def test_a_checkpoint_the_module_saves_itself_loads_with_weights_only_off_without_a_note():
    """Resuming its own checkpoint (the module calls torch.save) unpickles what its own code pickled:
    no note. A load where the module saves nothing, or of bytes it spells itself, is one; so is
    pickle.loads of bytes made from a string; exec is code from text, another kind."""
    kinds = lambda text: [n["kind"] for n in scan_source(text, "training.py")]  # noqa: E731
    assert kinds(RESUME) == []
    assert kinds("from torch import save as keep\n" + RESUME.replace("torch.save(", "keep(")) == [], \
        "torch.save under another name"
    assert kinds(RESUME.replace("torch.save(", "print(")) == ["unpickling"], "a file it never wrote"
    assert kinds(RESUME + "def hidden():\n    return torch.load(io.BytesIO(b'\\x80\\x02c'), weights_only=False)\n") \
        == ["unpickling"], "bytes spelled in the module, whatever it saves"
    assert kinds(RESUME + "import base64\nx = torch.load(io.BytesIO(base64.b64decode('gAJj')), weights_only=False)\n") \
        == ["unpickling"], "bytes decoded from a string"
    assert kinds("import pickle\nf = pickle.loads('cos\\nsystem\\n'.encode('latin-1'))\n") == ["unpickling"]
    assert kinds("exec(compile('x = 1', 'x', 'exec'))\n") == ["code from text"]


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
    assert any(line.startswith("act on: notes for review") for line in summary), summary
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


# What a forger in the worker writes where words could go: markup, a terminal's escapes (clear the
# screen, write the clipboard), a bidi override, a line break, and a claim in the grader's voice.
FORGED = "<b onmouseover=alert(1)>\x1b[2J\x1b]52;c;cHduZWQ=\x07\u202eharness thread, not the student\u2028"


def test_notes_a_worker_forges_come_back_in_the_graders_words_only():
    """The worker is the student's process: what it sends as notes may be anything. A note is kept
    only as a known kind, in one of the upload's problem modules, at an int line, under an id of
    review.RUNTIME of that kind; it is written in the grader's words for that id (nothing else the
    worker sent reaches it), at most MAX_NOTES of them, and charges no function. The report made
    from them holds none of the forger's text and a bounded summary."""
    import json
    from grader.plugin import Fact
    from grader.report import SHOWN_NOTES, build_results
    from seam.impl import Impl

    words = dict.fromkeys(("construct", "why", "instead", "seen"), FORGED)
    flood = [{"file": "optim.py", "line": i, "kind": "threads", "what": "thread ran", **words} for i in range(100)]
    forged = [
        {"file": "optim.py", "line": 1, "kind": "threads", "what": "harness thread, not the student"},  # unknown id
        {"file": "optim.py", "line": 1, "kind": "threads", "what": FORGED},
        {"file": "optim.py", "line": 1, "kind": "threads", "construct": "harness thread, not the student"},  # words
        {"file": "optim.py", "line": 2, "kind": "gc", "what": "thread ran"},          # an id of another kind
        {"file": "optim.py", "line": 1, "kind": "made up", "what": "seen"},
        {"file": "optim.py", "line": 1, "kind": ["threads"], "what": "seen"},        # (unhashable: no crash)
        {"file": "optim.py", "line": 1, "kind": "threads", "what": ["seen"]},
        {"file": "../etc/passwd", "line": 1, "kind": "threads", "what": "seen"},
        {"file": "optim.py" + FORGED, "line": 1, "kind": "threads", "what": "seen"},
        {"file": "optim.py", "line": "1", "kind": "gc", "what": "seen"},
        {"file": "optim.py", "line": True, "kind": "gc", "what": "seen"},
        "not a dict", None, [FORGED]]

    class Forger(Impl):
        def _send(self, request):
            return {"ok": None, "notes": forged + flood}

    impl = Forger()
    impl.get("optim.AdamW")
    notes = impl.notes()
    assert impl.violations() == {}
    assert 0 < len(notes) <= Impl.MAX_NOTES and {n["line"] for n in notes} <= set(range(100))
    threads = review.note("optim.py", 0, "threads", review.RUNTIME["thread ran"][1], seen="at run time")
    assert all(n == {**threads, "line": n["line"]} for n in notes), notes[0]
    results = build_results([Fact("tests/hidden/test_optim.py::a", "optim", "adamw", 1, "after_published",
                                  False, "passed")], 1.0, [], review=notes)
    text = json.dumps(results, ensure_ascii=False)
    assert not any(part in text for part in ("<b", "\x1b", "\u202e", "\u2028", "harness thread", "cHduZWQ")), text
    output = results["output"].splitlines()
    assert len(output) == 1 + SHOWN_NOTES + 1 and output[-1].startswith(f"review: {len(notes)} notes: {len(notes)} threads")


def test_each_thing_the_watch_notes_has_an_id_of_its_kind():
    """Every description seam/honest.py's watch passes to Honest.note (those made from its tables
    here, and every one written out in seam/honest.py and seam/callee.py) has an id of its own kind
    in review.RUNTIME (the catch-all "seen" is for a description the table lacks); an id passes as
    itself, and is refused under another kind."""
    from seam.honest import _DISABLERS, BLINDING_C, BLINDING_PY, BY_STACK
    assert all(kind is None or kind in KINDS for kind, _ in review.RUNTIME.values())
    described = [("the grader", "the grader's rules or its watch changed"),
                 ("the grader", "the grader's probes changed (seam.smaps.resident_bytes)"),
                 ("torch internals", "PyTorch's modes left switched off"),
                 ("profilers", "a profiler of theirs in place of the watch's"),
                 ("threads", "a thread of theirs ran while the function was watched"),
                 ("threads", "2 thread(s) it started still running"),
                 ("profilers", "a profiler or tracer installed"),
                 ("torch internals", "the watch's torch modes not in place"),
                 ("profilers", "the watch's profiler not in place"),
                 *(("torch internals", f"{module}.{qual}") for module, qual in BLINDING_PY),
                 *(("torch internals", f"torch._C.{t.__name__}") for t in _DISABLERS),
                 *(("threads" if name in BY_STACK else "profilers" if name.startswith(("setprofile", "settrace"))
                    else "torch internals", f"{words} ({name})") for name, words in BLINDING_C.items())]
    import ast
    for path in ("seam/honest.py", "seam/callee.py"):  # every note written out there, as an id or words
        for call in ast.walk(ast.parse((ROOT / path).read_text())):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "note" \
                    and len(call.args) >= 2 and all(isinstance(a, ast.Constant) for a in call.args[:2]):
                described.append((call.args[0].value, call.args[1].value))
    for kind, words in described:
        found = review.runtime_id(kind, words)
        assert found != "seen" and review.RUNTIME[found][0] == kind, (kind, words, found)
    assert review.runtime_id("threads", "thread ran") == "thread ran"
    assert review.runtime_id("gc", "thread ran") == "seen" and review.runtime_id("gc", FORGED) == "seen"
    assert review.sent("optim.py", 3, "threads", "another thread (start_new_thread)") == {
        "file": "optim.py", "line": 3, "kind": "threads", "what": "thread started"}


def test_the_worker_sends_ids_and_the_grader_writes_the_words(tmp_path):
    """A profiler of theirs switched on inside a watched function: the worker's reply names each
    note by its RUNTIME id, kind, file and line only; the note the grader keeps is in RUNTIME's
    words."""
    import torch
    from seam import InProcess
    from tests.self.submissions import reference_text, reference_with
    own = "\nimport torch\ndef round_to(x, fmt):\n    import sys; sys.setprofile(None)\n" \
          "    return x.float().to(torch.float16).float()\n"
    folder = reference_with(tmp_path / "s", {"dtypes": reference_text("dtypes") + own})
    impl = InProcess(folder, package=f"review_ids_{tmp_path.name}")
    impl.dtypes.round_to(torch.tensor([1.0]), impl.get("dtypes.FP16"))
    sent = list(impl.callee.honest.notes.values())
    assert sent and all(set(n) == {"file", "line", "kind", "what"} and n["what"] in review.RUNTIME for n in sent)
    kept = list(impl._seen.values())  # (impl.notes() leaves out those at a line the text's notes name)
    assert {(n["line"], n["construct"], n["seen"]) for n in kept} == {
        (n["line"], review.RUNTIME[n["what"]][1], "at run time") for n in sent}
    assert review.RUNTIME["profiler set"][1] in {n["construct"] for n in kept}


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


# --- the module's bytes as Python reads them ------------------------------------------------------

LATIN1 = "# -*- coding: latin-1 -*-\nimport gc\ncafé = gc.get_objects()\n".encode("latin-1")


def test_a_module_is_read_as_python_reads_it(tmp_path):
    """A module is read from its bytes as Python's import reads it (its coding cookie, a BOM): gc's
    object lists in a Latin-1 module with its cookie are a note, where its text decoded as UTF-8 is
    no Python at all (the look used to find nothing there). Bytes the look cannot decode as Python
    does are a note of their own ("save it as UTF-8"); a genuine syntax error is none (the module
    does not import: its tests fail for that)."""
    compile(LATIN1, "dtypes.py", "exec")  # what Python imports
    assert scan_source(LATIN1.decode("utf-8", "replace"), "dtypes.py") == []  # the text read as UTF-8
    (tmp_path / "dtypes.py").write_bytes(LATIN1)
    assert [(n["line"], n["kind"]) for n in scan(tmp_path)] == [(3, "gc")]
    bom = b"\xef\xbb\xbfimport gc\nobjects = gc.get_objects()\n"
    compile(bom, "dtypes.py", "exec")
    assert [(n["line"], n["kind"]) for n in scan_source(bom, "dtypes.py")] == [(2, "gc")]
    # bytes no UTF-8 in a comment: Python imports it, the look cannot decode it; its tree is still read
    odd = b"import gc\n# caf\xe9\nobjects = gc.get_objects()\n"
    compile(odd, "dtypes.py", "exec")
    assert [(n["line"], n["kind"]) for n in scan_source(odd, "dtypes.py")] == [(1, "unreadable module"), (3, "gc")]
    for unreadable in (b"# -*- coding: nonsense -*-\nimport gc\n", "import gc\ngc.get_objects()\n".encode("utf-16")):
        assert [n["kind"] for n in scan_source(unreadable, "dtypes.py")] == ["unreadable module"], unreadable
    (tmp_path / "dtypes.py").write_bytes(b"# -*- coding: nonsense -*-\nx = 1\n")
    assert review.dynamic(tmp_path)  # what it holds went unread: the watch runs its profiler
    assert scan_source(b"def broken(:\n", "dtypes.py") == []


def test_the_memo_is_kept_by_the_bytes(tmp_path, monkeypatch):
    """A module whose bytes changed is read again, also where its text decoded with replacement
    characters would not have changed."""
    monkeypatch.setattr(review, "_memo", {})
    read = []
    real = review.scan_source
    monkeypatch.setattr(review, "scan_source", lambda data, name, pasted=True: read.append(data) or real(data, name, pasted))
    versions = (b"# coding: latin-1\ncaf\xe9 = 1\n", b"# coding: latin-1\ncaf\xe8 = 1\n")
    assert len({v.decode("utf-8", "replace") for v in versions}) == 1
    for data in (*versions, versions[1]):
        (tmp_path / "dtypes.py").write_bytes(data)
        assert scan(tmp_path) == []
    assert read == list(versions)


# --- code pasted from the modules the rules take out of the sandbox ------------------------------

def _torch_function(relative: str, name: str) -> str:
    """The text of a module-level function of torch's file ``relative`` (read, not imported)."""
    import torch
    text = (Path(torch.__file__).parent / relative).read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return "\n".join(text.splitlines()[node.lineno - 1:node.end_lineno]) + "\n"


def _edited(text: str, every: int) -> str:
    """``text`` with every ``every``-th line of code edited as a student edits what they paste."""
    out = []
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if i % every == 0 and not line.lstrip().startswith(("def ", "if ", "for ", "else", "elif", ")")):
            line = line.replace("1 - ", "1.0 - ").replace("grad", "g").replace("param", "w")
        out.append(line)
    return "".join(out)


# the plain (not capturable) branch of _single_tensor_adam, pasted into a step of their own
PLAIN_BRANCH = '''import torch


class AdamW(torch.optim.Optimizer):
    def step(self):
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, state_steps = self._collect(group)
            lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            maximize = False
            for i, param in enumerate(params):
                grad = grads[i] if not maximize else -grads[i]
                exp_avg = exp_avgs[i]
                exp_avg_sq = exp_avg_sqs[i]
                step_t = state_steps[i]
                step_t += 1
                if weight_decay != 0:
                    param.mul_(1 - lr * weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = step_t.item()
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                param.addcdiv_(exp_avg, denom, value=-step_size)
'''

# an honest AdamW as students write it after reading torch's: its input checks word for word, the
# closure and param_groups loop, the moments and bias corrections as torch's single-tensor path
CS336_ADAMW = '''import torch


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                step = state["step"]
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss
'''


def _honest_texts():
    """(module name, text) of every honest module of the corpora, as the problem's module."""
    from tests.self.honest_idioms import all_idioms
    yield from ((p.name, p.read_text()) for p in sorted(REFERENCE.glob("*.py")) if review.problem_of(p.name))
    for folder in ("alternatives", "honest_samples"):
        for p in sorted((ROOT / "tests/self" / folder).glob("*.py")):
            module = HONEST_AS.get(p.name, p.name.partition("__")[0] + ".py")
            if review.problem_of(module):
                yield module, p.read_text()
    yield from ((f"{i.problem}.py", i.text()) for i in all_idioms())
    yield "optim.py", CS336_ADAMW


def test_code_pasted_from_a_removed_module_is_a_note(monkeypatch):
    """torch's _single_tensor_adam pasted into optim.py (as it is, edited every fourth line, or
    only its plain branch in a step of their own) and the FLOP counter's mm and bmm formulas pasted
    into flops.py are notes, at the first line found in torch's file. The honest AdamWs share up
    to 6 lines in a run with torch's (the moments and bias corrections as its single-tensor path
    writes them), and torch's Optimizer idioms (the input checks, the closure) are not compared:
    no honest module is a note, even with PASTE_LINES at 7."""
    body = "import torch\nfrom torch import Tensor\n\n" + _torch_function("optim/adam.py", "_single_tensor_adam")
    flops = "import torch\n\n" + "\n\n".join(_torch_function("utils/flop_counter.py", f)
                                             for f in ("mm_flop", "bmm_flop"))
    for file, text, first in (("optim.py", body, "from torch import Tensor"),
                              ("optim.py", _edited(body, 4), "from torch import Tensor"),
                              ("optim.py", PLAIN_BRANCH, "for i, param in enumerate(params):"),
                              ("flops.py", flops, "def mm_flop(")):
        found = [n for n in scan_source(text, file) if n["kind"] == "removed code"]
        assert len(found) == 1, (file, text[:200], found)
        assert text.splitlines()[found[0]["line"] - 1].strip().startswith(first)
        assert first[:30] in found[0]["construct"] and "torch." in found[0]["construct"]
    monkeypatch.setattr(review, "PASTE_LINES", 7)
    for module, text in _honest_texts():
        assert not [n for n in scan_source(text, module) if n["kind"] == "removed code"], module
    monkeypatch.setattr(review, "PASTE_LINES", 100)  # a verbatim paste has more than a hundred
    assert [n["kind"] for n in scan_source(body, "optim.py")].count("removed code") == 1


def test_the_removed_files_are_found_without_importing_them(monkeypatch):
    """The lines compared are those of the files this process's Python would load for the absent
    modules of the rules, found without asking sys.modules (where the sandbox's stand-ins are),
    and read once per process."""
    import torch.optim.adam  # noqa: F401
    real = Path(sys.modules["torch.optim.adam"].__file__)
    monkeypatch.setattr(review, "_removed", None)
    monkeypatch.setitem(sys.modules, "torch.optim.adam", types.ModuleType("torch.optim.adam"))  # a stand-in
    assert review._removed_file("torch.optim.adam") == real
    lines = review._removed_lines()
    assert set(lines.values()) == {"torch.optim.adam", "torch.optim.adamw", "torch.utils.flop_counter"}
    assert "exp_avg_sq.mul_(beta2).addcmul_(grad,grad,value=1-beta2)" in lines
    assert review._removed_lines() is lines


def test_notes_about_the_work_leave_the_watch_as_it_is(tmp_path):
    """Pasted code and unnamed einops axes are notes, but nothing that could blind the watch: they
    do not switch its profiler on for every rule (and the worker, which asks, reads no torch file)."""
    from tests.self.submissions import reference_with
    body = "import torch\nfrom torch import Tensor\n\n" + _torch_function("optim/adam.py", "_single_tensor_adam")
    body = body.replace("torch.jit.is_scripting()", "False")  # (torch.jit is a note of its own)
    folder = reference_with(tmp_path / "s", {"optim": body, "einops": _einops_with(THROWAWAY_REARRANGE)})
    assert {n["kind"] for n in scan(folder)} == {"removed code", "einops axes"}
    assert not review.dynamic(folder)


# --- einops' "must": the axes named -------------------------------------------------------------

# split_heads as plain torch behind a throw-away rearrange that names no axis
THROWAWAY_REARRANGE = (
    '    return rearrange(x, "batch seq (heads dim) -> batch heads seq dim", heads=num_heads)\n',
    '    b, s, hidden = x.shape\n    x = rearrange(x, "... -> (...)").view(b, s, hidden)\n'
    '    return x.view(b, s, num_heads, hidden // num_heads).transpose(1, 2)\n')
MERGE = '    return rearrange(x, "batch heads seq dim -> batch seq (heads dim)")\n'
SCORES = '    return einsum(query, key, "batch seq1 head dim, batch seq2 head dim -> batch head seq1 seq2")\n'
MEAN = '    return reduce(x, f"batch seq hidden -> {kept}", "mean")\n'
IMPORTS = "from einops import einsum, rearrange, reduce\n"


def _einops_with(*edits) -> str:
    from tests.self.submissions import reference_text
    text = reference_text("einops")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _unnamed(text: str, file: str = "einops.py") -> list[tuple[int, str]]:
    return [(n["line"], n["construct"].split(":")[0]) for n in scan_source(text, file) if n["kind"] == "einops axes"]


def _line_of(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(start))


@pytest.mark.parametrize("edits, function", [
    ((THROWAWAY_REARRANGE,), "split_heads"),
    (((MERGE, '    return einops.rearrange(x, "...->...").transpose(1, 2).flatten(2)\n'),
      (IMPORTS, "import einops\n" + IMPORTS)), "merge_heads"),
    (((SCORES, '    return r(query, "()...->...").transpose(1, 2) @ key.permute(0, 2, 3, 1)\n'),
      (IMPORTS, "from einops import rearrange as r\n" + IMPORTS)), "attention_scores"),
    (((SCORES, '    return E.einsum(query.transpose(1, 2), key.permute(0, 2, 3, 1), "...1, ...1 -> ...")\n'),
      (IMPORTS, "import einops as E\n" + IMPORTS)), "attention_scores"),
    (((MEAN, "    return x.mean(dim=AXES.index(axis))\n"),), "mean_over"),
])
def test_a_ruled_function_whose_einops_calls_name_no_axis_is_a_note(edits, function):
    """The einops rule says each ruled function's result comes from einops with its axes named: one
    that computes with torch behind an einops call naming no axis (``...``, brackets, digits),
    through any import of einops, or with no einops call at all, is a note at its def."""
    text = _einops_with(*edits)
    assert _unnamed(text) == [(_line_of(text, f"def {function}("), f"def {function}")]
    assert _unnamed(text, "scaling.py") == []  # only the einops module's ruled functions


@pytest.mark.parametrize("edits", [
    ((MERGE, '    return _merged(x)\n'),  # a helper of theirs
     ("def mean_over(", 'def _merged(t):\n    return rearrange(t, "b h s d -> b s (h d)")\n\n\ndef mean_over(')),
    ((MERGE, "    return rearrange(x, MERGED)\n"),  # a pattern kept in a name
     ("AXES = (", 'MERGED = "b h s d -> b s (h d)"\nAXES = (')),
    ((MERGE, '    return Rearrange("b h s d -> b s (h d)")(x)\n'),  # einops' layer
     (IMPORTS, "from einops.layers.torch import Rearrange\n" + IMPORTS)),
    ((SCORES, '    return ein.einsum(query, key, "b i h d, b j h d -> b h i j")\n'),
     (IMPORTS, "import einops as ein\n" + IMPORTS)),
    ((SCORES, '    q = rearrange(query, "b i h d -> b h i d")\n'
              '    return q @ rearrange(key, "b j h d -> b h d j")\n'),),
    ((MEAN, '    return functools.partial(reduce, reduction="mean")(x, f"batch seq hidden -> {kept}")\n'),
     (IMPORTS, "import functools\n" + IMPORTS)),
])
def test_einops_with_named_axes_is_no_note(edits):
    """Honest einops: helpers, patterns in names or made at run time, einops' layers, any alias,
    a rearrange before ``@`` (what torch computes from an einops result counts as einops')."""
    assert _unnamed(_einops_with(*edits)) == []


def test_honest_einops_is_no_note():
    """The reference, the alternatives, the honest sample and idioms as einops.py, and the stubs
    (an unwritten function returns nothing: its tests say so)."""
    from tests.self.honest_idioms import all_idioms
    texts = [(REFERENCE / "einops.py").read_text(), (ROOT / "student_stubs/einops.py").read_text(),
             (ROOT / "tests/self/honest_samples/attention_einops.py").read_text(),
             *(p.read_text() for p in (ROOT / "tests/self/alternatives").glob("einops__*.py")),
             *(i.text() for i in all_idioms() if i.problem == "einops")]
    assert len(texts) >= 6
    for text in texts:
        assert _unnamed(text) == [], text[:200]
