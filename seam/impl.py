"""The trusted side of the seam: ``Impl`` (a test's handle on the code under test), ``InProcess``,
and the exceptions rebuilt from a reply. Read through the package (``from seam import
InProcess``): seam/__init__.py imports this module, and torch with it, on first use."""

import contextlib
from pathlib import Path

import torch

from . import codec, smaps
from .callee import EXPECTED, Callee
from .codec import Struct
from .problems import PROBLEMS, RULED
from .probes import student_name
from . import review

# The name the grader's pytest plugin is registered under; tests/conftest.py asks pytest for it
# (its ``impl`` is then the sandboxed submission, and the student-facing output stays quiet).
GRADER_PLUGIN = "cs336-grader"

# What a GPU-marked test reports on a machine without CUDA (a student's pytest, or a CPU grader).
GPU_NOT_RUN = "not run: needs CUDA (GPU tests are graded on a CUDA runner)"

# Exceptions a test may expect from student code, rebuilt by name on the trusted side.
PASSTHROUGH = {e.__name__: e for e in EXPECTED}


class SubmissionError(Exception):
    """Student code raised something a test does not expect, or returned a bad value."""


class ModuleUnavailableError(SubmissionError):
    """A problem's module is missing or does not import: every test of the problem fails with
    this one message (never taken for the outcome a test expects, not even in ``map``)."""


class SandboxFailure(Exception):
    """The student process crashed, hung or was killed; the message says how."""


class Impl:
    """An implementation under test. Subclasses decide where the code runs (``_send``)."""

    label = "implementation"
    folder: Path | None = None     # the modules under test, read (never run) by ``notes``
    _scanned: list | None = None   # the notes of their text (seam/review.py), read once

    MAX_NOTES = 64  # notes kept from the worker's replies (the student's process: anything may come)

    def __init__(self):
        self.called: set[str] = set()    # student names called since the plugin last cleared it
        self._violations: dict[str, str] = {}  # ruled function -> what it used (the worker saw it)
        self._seen: dict[tuple, dict] = {}      # notes the worker sent, by (file, line, kind)
        self._recorded_notes: dict[tuple, dict] = {}  # notes of the worker's record (grader-worded)
        self._recorded_charges: dict[str, str] = {}  # ruled function -> charged, by that record

    def violations(self) -> dict[str, str]:
        """Each ruled function that broke its rule -> what it used: a forbidden call the worker
        saw run for it (seam/honest.py), or a stand-in of absent code it used (seam/absent.py).
        Evidence only: what the text might do is a note (``notes``), never a charge."""
        return {**self._recorded_charges, **self._violations}  # (the reply's words where it said them)

    def notes(self) -> list[dict]:
        """Constructs that could have blinded the watch, for a person to review (seam/review.py):
        those of the modules' text, then those the worker saw at run time."""
        if self._scanned is None:
            self._scanned = review.scan(self.folder) if self.folder else []
        said = {(n["file"], n["line"], n["kind"]) for n in self._scanned}
        recorded = list(self._recorded_notes.values())
        said |= {(n["file"], n["line"], n["kind"]) for n in recorded}
        return [*recorded, *self._scanned, *(n for k, n in self._seen.items() if k not in said)]

    MAX_RECORDED = 256  # notes of the record kept: the hook sends at most as many distinct events

    RECORDED_CHARGE = "a forbidden call seen to run (the worker's record of what ran; its reply did not say it)"

    def _recorded(self, notes: list[dict], charges=()) -> None:
        """Notes made by the grader from the worker's record of what ran (grader/sandbox/record.py):
        kept apart from what the worker says, so no flood of its own can crowd them out; and the
        charges it holds, which the reply may not unsay (``violations``)."""
        for function in charges:
            if function in RULED:
                self._recorded_charges.setdefault(function, self.RECORDED_CHARGE)
        for n in notes:
            if len(self._recorded_notes) < self.MAX_RECORDED:
                self._recorded_notes.setdefault((n["file"], n["line"], n["kind"], n["construct"]), n)

    def functions(self) -> list[str]:
        """The student functions called since ``called`` was cleared ("optim.AdamW.step" ...)."""
        return sorted({name for target in self.called for name in student_name(target).split(" / ")})

    @contextlib.contextmanager
    def deadline_for(self, seconds: float):
        """The running test's time limit, handed over by the grader's plugin for the test's
        length (its time_limit marker or --time-limit); code in this process has no deadline."""
        yield

    def resident_bytes(self, device: int, inode: int) -> int | None:
        """The resident bytes of the implementation's mappings of a file (a probe's memmap, still
        mapped: see probes/training.py), read from outside its process where that is possible;
        None where it is not (the caller then has only the probe's own reading)."""
        return None

    def __getattr__(self, name):
        if name in PROBLEMS or name == "probes":
            return _Namespace(self, name)
        raise AttributeError(name)

    def call(self, target: str, *args, **kwargs):
        self.called.add(target)
        request = {"op": "call", "target": target,
                   "args": codec.to_plain(list(args)), "kwargs": codec.to_plain(kwargs)}
        try:
            return self._unwrap(target, self._exchange(request))
        except (SubmissionError, *PASSTHROUGH.values()) as e:
            # describe shows the call; a probe's arguments are not those it called them with
            if hasattr(e, "seam_call") and not isinstance(e, ModuleUnavailableError) and not target.startswith("probes."):
                e.seam_args = shown_call(student_name(target), args, kwargs)
            raise

    def map(self, target: str, calls, kwargs=None) -> list:
        """``target(*args, **kw)`` for each args tuple in ``calls`` (and dict in ``kwargs``, if
        given), in one round trip. Each item is the value returned, or the exception raised
        (rebuilt here, as ``call`` would raise it)."""
        kwargs = kwargs if kwargs is not None else [{}] * len(calls)
        self.called.add(target)
        request = {"op": "map", "target": target,
                   "calls": [{"args": codec.to_plain(list(a)), "kwargs": codec.to_plain(k)}
                             for a, k in zip(calls, kwargs, strict=True)]}
        response = self._exchange(request)
        if type(response) is dict and set(response) == {"ok"} and type(response["ok"]) is list \
                and len(response["ok"]) == len(request["calls"]):
            out = []
            for item in response["ok"]:
                try:
                    out.append(self._unwrap(target, item))
                except ModuleUnavailableError:
                    raise
                except (SubmissionError, NotImplementedError, *PASSTHROUGH.values()) as e:
                    out.append(e)
            return out
        if type(response) is dict and set(response) == {"raised"}:
            self._unwrap(target, response)  # the whole batch failed: raises what it raised
        raise SubmissionError(f"{student_name(target)}: malformed response from the implementation")

    def get(self, target: str):
        self.called.add(target)
        return self._unwrap(target, self._exchange({"op": "get", "target": target}))

    def _send(self, request: dict) -> dict:
        raise NotImplementedError

    def _exchange(self, request: dict):
        """``_send``, and what the worker says it saw (violations, notes), kept for good."""
        response = self._send(request)
        if type(response) is dict and "violations" in response:
            seen = response.pop("violations")
            for function, used in (seen.items() if type(seen) is dict else ()):
                if function in RULED and type(used) is str:  # (the worker is the student's process)
                    self._violations.setdefault(function, used[:200])
        if type(response) is dict and "ran" in response:
            ran = response.pop("ran")
            self.called.update(f for f in (ran if type(ran) is list else ()) if f in RULED)
        if type(response) is dict and "notes" in response:
            seen = response.pop("notes")
            for n in (seen[:self.MAX_NOTES] if type(seen) is list else ()):
                n = review.valid(n)
                if n is not None and len(self._seen) < self.MAX_NOTES:
                    self._seen.setdefault((n["file"], n["line"], n["kind"]), n)
        return response

    def _unwrap(self, target: str, response):
        if type(response) is dict and set(response) == {"ok"}:
            try:
                return codec.from_plain(response["ok"])
            except codec.DecodeError as e:
                raise SubmissionError(f"{student_name(target)} returned data the grader cannot read: {e}") from None
        if type(response) is dict and set(response) == {"raised"} and type(response["raised"]) is dict:
            raise rebuild(target, response["raised"])
        raise SubmissionError(f"{student_name(target)}: malformed response from the implementation")


def rebuild(target: str, info: dict) -> Exception:
    """The exception the student's code raised, rebuilt from plain data on the trusted side.

    Its message names the student's function (never a probe); ``student_traceback`` holds their
    own frames (their files only), which ``describe`` shows under the message."""
    kind, msg, where, function, at = (str(info.get(k, ""))[:2000]
                                      for k in ("type", "message", "where", "function", "at"))
    name = student_name(target)
    if kind == "ModuleUnavailable":
        e = ModuleUnavailableError(msg)
    elif kind == "NotImplementedError":
        e = NotImplementedError(f"{function or name} is not implemented yet" + (f" ({at})" if at else ""))
        e.not_implemented = function or name
        where = ""  # the stub's line is in the message; no traceback for a to-do
    elif kind in PASSTHROUGH:
        e = PASSTHROUGH[kind](msg)
    elif kind == "Unsupported":
        e = SubmissionError(f"{name}: {msg or 'returned a value that cannot cross the seam'}")
    else:
        e = SubmissionError(f"{name} raised {kind}" + (f": {msg}" if msg else " (no message)"))
    e.student_traceback = where
    e.seam_call = name
    return e


def describe(e: BaseException) -> str:
    """What a student reads about an exception from their code: one line, the call that raised it
    with its arguments (``seam_args``, where a test made one call), then their frames."""
    if getattr(e, "not_implemented", ""):
        return str(e)
    if isinstance(e, SubmissionError):
        head = str(e)
    else:
        call = getattr(e, "seam_call", "")
        head = f"{call} raised {type(e).__name__}" + (f": {e}" if str(e) else " (no message)")
    if getattr(e, "seam_args", ""):
        head += f"\n  the call: {e.seam_args}"
    where = getattr(e, "student_traceback", "")
    return f"{head}\nTraceback (your code, most recent call last):\n{where}" if where else head


MAX_SHOWN = 300  # characters of a call shown in a failure (its arguments abbreviated past that)


def shown_call(name: str, args=(), kwargs=None) -> str:
    """``name(args, key=value)`` as a student reads it: tensors by dtype and shape, long values cut."""
    def shown(value) -> str:
        if isinstance(value, torch.Tensor):
            return f"tensor(dtype={value.dtype}, shape={tuple(value.shape)})"
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    parts = [shown(a) for a in args] + [f"{k}={shown(v)}" for k, v in (kwargs or {}).items()]
    text = f"{name}({', '.join(parts)})"
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 4] + "...)"


class _Namespace:
    """``impl.tensors.view_strides(...)`` == ``impl.call("tensors.view_strides", ...)``."""

    def __init__(self, impl: Impl, module: str):
        self._impl, self._module = impl, module

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._impl.call(f"{self._module}.{name}", *args, **kwargs)


class InProcess(Impl):
    """Runs the folder's code in this process; the JSON round trip keeps results plain.

    ``memo``: remember every answer, for the life of the process, keyed by the folder and the
    request. Only for trusted code whose answers depend on the request alone (the reference on a
    CPU run): a batch job then computes the reference's answers once for the whole class, not
    once per student. Never for a submission, and never where answers are measurements."""

    _memo: dict[tuple[str, bytes], bytes] = {}
    MEMO_ENTRY = 16 << 20  # larger answers are recomputed, not kept

    def __init__(self, folder: Path, package: str, typecheck: bool = False, memo: bool = False,
                 watched: bool = True):
        """watched: the honest-work rules are watched (seam/honest.py); False only for the
        reference in the tests' own process, which the grader's run of it checks instead."""
        super().__init__()
        self.folder = Path(folder)
        self.label = package
        self.memo = memo
        self._memo_folder = str(self.folder.resolve())  # the memo's key: which code answered
        self.callee = Callee(self.folder, package, typecheck=typecheck, shown_as=_shown_as(self.folder),
                             watched=watched)

    def resident_bytes(self, device: int, inode: int) -> int | None:
        return smaps.resident_bytes("self", device, inode)  # (one process: the same reading)

    def _send(self, request: dict) -> dict:
        text = codec.dumps(request)
        key = (self._memo_folder, text)
        answer = InProcess._memo.get(key) if self.memo else None
        if answer is None:
            answer = codec.dumps(self.callee.handle(codec.loads(text)))
            if self.memo and len(answer) <= self.MEMO_ENTRY:
                InProcess._memo[key] = answer
        return codec.loads(answer)


def _shown_as(folder: Path) -> str:
    """The folder as a student types it: relative to where pytest runs, when it is inside."""
    try:
        return f"{folder.relative_to(Path.cwd().resolve()).as_posix()}/"
    except ValueError:
        return f"{folder}/"
