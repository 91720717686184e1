"""The callee side of the seam: load an implementation folder as a package and answer requests.

The same code answers in-process (students' pytest, the reference in the grader) and inside the
sandbox worker (submissions being graded). A request is plain data:
    {"op": "call", "target": "tensors.view_strides", "args": [...], "kwargs": {...}}
    {"op": "map",  "target": "tensors.view_strides", "calls": [[...args], ...]}  (many calls,
                                                     one round trip: {"ok": [response, ...]})
    {"op": "get",  "target": "adamw_accounting.GPT2_XL"}
    {"op": "load", "target": "tensors"}             (import the module now; the sandbox uses it
                                                     to tell an import-time crash from a call's)
and so is the response: {"ok": value} or {"raised": {"type", "message", "where", "function", "at"}}
("where": the student's own frames, formatted; "function": the innermost one's name, e.g.
"optim.AdamW.step"; "at": its file:line).
"""

import contextlib
import errno
import os
import importlib
import linecache
import importlib.machinery
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from . import codec, helpers, probes
from .frames import MAX_FRAME, read_frame, write_frame
from .honest import Honest, Instrumentation
from .problems import PROBLEMS, STRUCT_MODULES
from .upload import graded_files

# Said after an EPERM in the sandbox (grader/sandbox/seccomp.py denies such calls with EPERM, whichever)
FORBIDDEN = ("perhaps a call the sandbox forbids (changing file modes, owners or times, sockets, "
             "keyrings, shared memory, namespaces), or a file it may not change")

# The exceptions a test may expect from student code, sent by name and rebuilt on the trusted side
# (seam.PASSTHROUGH); a student's subclass of one is sent as that one.
EXPECTED = (ValueError, IndexError, TypeError, KeyError, NotImplementedError, ZeroDivisionError)


class ModuleUnavailable(Exception):
    """A problem's module is missing or does not import; the message says which and why."""


def load_package(folder: Path, name: str, given: Path | None = None) -> ModuleType:
    """An empty package called ``name`` whose submodules are the .py files in ``folder``, and
    after them the handout's given code in ``given`` (the stubs): a module one problem's file
    imports from another (flops.py: ``from .adamw_accounting import TransformerConfig``) is the
    stub's where the upload lacks that file, so a partial upload grades what it holds.

    The folder's own ``__init__.py`` is not run: a submission is its problem modules and the
    helper modules they import from beside them (seam/upload.py ``graded_files``). A helper is the
    package's submodule (``from ._util import x``); where a module imports one absolutely
    (``from _util import x``), the folder's modules load with that import made relative
    (seam/helpers.py), never with the folder on ``sys.path``.
    """
    if name in sys.modules:
        return sys.modules[name]
    graded = graded_files(folder)
    if graded.absolute:
        helpers.install(folder, graded.absolute, graded.packages)
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    pkg = importlib.util.module_from_spec(spec)
    pkg.__path__ = [str(folder)] + ([str(given)] if given is not None else [])
    sys.modules[name] = pkg
    return pkg


MAX_FRAMES = 8  # the innermost ones: a runaway recursion must not flood the report


def student_frames(exc: BaseException, folder: Path) -> list[tuple[str, int, str, str]]:
    """The traceback's frames inside the implementation folder (the student's own files only,
    never the seam's or the tests'), outermost first: (file name, line, function, source)."""
    frames = []
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        path = Path(frame.f_code.co_filename)
        if path.parent == folder or path.parent.parent == folder:  # (a helper package's too)
            source = linecache.getline(str(path), lineno).strip()[:200]
            frames.append((path.relative_to(folder).as_posix(), lineno, frame.f_code.co_qualname, source))
    return frames


def format_frames(frames, prefix: str = "") -> str:
    """Python's traceback layout, the student's frames only; ``prefix`` is the folder to show."""
    shown = frames[-MAX_FRAMES:]
    lines = [f"  ... {len(frames) - len(shown)} more frame(s) in your code"] if len(frames) > len(shown) else []
    for name, lineno, func, source in shown:
        lines.append(f'  File "{prefix}{name}", line {lineno}, in {func}')
        if source:
            lines.append(f"    {source}")
    return "\n".join(lines)


class Callee:
    def __init__(self, folder: Path, package: str, typecheck: bool = False, shown_as: str = "",
                 filtered: bool = False, watched: bool = True, given: Path | None = None):
        """given: the handout's stubs, for what one problem's module imports from another's
        that the upload lacks (``load_package``); never graded in the upload's place."""
        self.folder = Path(folder).resolve()
        self.filtered = filtered  # under the sandbox's syscall filter: an EPERM may be its doing
        self.shown_as = shown_as  # how tracebacks name the folder ("student_stubs/"; "" in the sandbox)
        self.package = package
        self.typecheck = typecheck
        self.given = given
        self.pkg = load_package(self.folder, package, given)
        self._failed: dict[str, str] = {}
        self.instrumentation = Instrumentation()  # before any student module is imported
        # the honest-work rules (seam/honest.py); off only for the reference in the tests' own process
        self.honest = Honest(self.folder) if watched else None
        self.kept: list = []  # what a probe keeps alive until the next request (a memmap to be read)

    def module(self, problem: str) -> ModuleType:
        """Import ``<package>.<problem>`` once; a failure is remembered and re-reported."""
        if problem not in PROBLEMS:
            raise ModuleUnavailable(f"no problem module named {problem!r}")
        qualified = f"{self.package}.{problem}"
        if problem in self._failed:
            raise ModuleUnavailable(self._failed[problem])
        if not (self.folder / f"{problem}.py").is_file():  # (before sys.modules: a sibling may have
            # imported the given stub in its place, which is never graded as theirs)
            msg = f"{problem}.py is missing from the submission"  # the layout is explained once, in the summary
            self._failed[problem] = msg
            raise ModuleUnavailable(msg)
        if qualified in sys.modules:
            return sys.modules[qualified]
        try:
            if self.typecheck:
                from jaxtyping import install_import_hook
                with install_import_hook(self.package, "beartype.beartype"):
                    module = importlib.import_module(qualified)
            else:
                module = importlib.import_module(qualified)
            if self.honest is not None:
                self.honest.bases(problem, module)
            return module
        except BaseException as e:  # SyntaxError, ImportError, SystemExit at import time, ...
            sys.modules.pop(qualified, None)
            if isinstance(e, KeyboardInterrupt):
                raise
            frames = student_frames(e, self.folder)
            if isinstance(e, SyntaxError) and e.lineno:  # the bad line is not a frame
                frames = [(Path(e.filename or problem).name, e.lineno, "<module>", (e.text or "").strip())]
            where = f", at {self.shown_as}{frames[-1][0]}:{frames[-1][1]}" if frames else ""
            detail = f"{type(e).__name__}: {e}"[:500]
            msg = f"{problem}.py could not be imported ({detail}{where})"
            self._failed[problem] = msg
            raise ModuleUnavailable(msg) from None

    def _struct(self, name: str, fields: dict):
        """A given dataclass, rebuilt as the module that defines it has it: the upload's, or the
        given stub's where the upload lacks that module (its siblings import it from there)."""
        problem = STRUCT_MODULES[name]
        if (self.folder / f"{problem}.py").is_file() or self.given is None:
            return getattr(self.module(problem), name)(**fields)
        try:
            module = importlib.import_module(f"{self.package}.{problem}")
        except Exception as e:
            raise ModuleUnavailable(f"{problem}.py is missing and its given code did not import ({e})") from None
        return getattr(module, name)(**fields)

    def _resolve(self, target: str):
        head, _, attr = target.partition(".")
        if not attr or "." in attr or attr.startswith("_"):
            raise ModuleUnavailable(f"bad target {target!r}")
        if head == "probes":
            fn = getattr(probes, attr, None)
            if fn is None or attr not in probes.__all__:
                raise ModuleUnavailable(f"no probe named {attr!r}")
            if attr in probes.HOW:
                return lambda *a, **k: self._watched(probes.problem_of(target), fn, *a, **k)
            return lambda *a, **k: fn(self, *a, **k)
        mod = self.module(head)
        if not hasattr(mod, attr):
            raise AttributeError(f"{head}.py has no attribute {attr!r} (keep the stub's names)")
        return getattr(mod, attr)

    def _watched(self, problem: str, fn, *args, **kwargs):
        """A "how" probe, and a look at its instrumentation after it: what changed (a thread of
        theirs still running, a profiler, the seam) is a note for review, sent with the reply."""
        before = self.instrumentation.before()
        try:
            return fn(self, *args, **kwargs)
        finally:
            changed = self.instrumentation.broken(before)
            if changed and self.honest is not None:
                self.honest.note(*changed, None, [f"{problem}."])

    def handle(self, request) -> dict:
        self.kept.clear()
        self.ran: set[str] = set()
        response = self._handle(request)
        if self.honest is not None:
            self.honest.after()
        if self.honest is not None and self.honest.violations:  # every reply: one may go unread
            response["violations"] = dict(self.honest.violations)  # (the sandbox's "load" reply)
        if self.honest is not None and self.honest.notes:
            response["notes"] = list(self.honest.notes.values())
        if self.ran:  # the ruled functions a probe drove besides those it names (AdamW in memory_by_stage)
            response["ran"] = sorted(self.ran)
        return response

    def _watch(self, target: str):
        """The honest-work watch over what this request runs, or None (no rule covers it)."""
        if self.honest is None:
            return None
        return self.honest.watch(probes.problem_of(target), probes.student_name(target).split(" / "))

    def _handle(self, request) -> dict:
        try:
            if type(request) is not dict or request.get("op") not in ("call", "map", "get", "load"):
                raise codec.DecodeError("bad request")
            target = request.get("target")
            if type(target) is not str:
                raise codec.DecodeError("bad target")
            if request["op"] == "load":
                self.module(target)
                return {"ok": None}
            obj = self._resolve(target)
            if request["op"] == "get":
                return {"ok": codec.to_plain(obj)}
            if request["op"] == "map":
                calls = request.get("calls")
                if type(calls) is not list:
                    raise codec.DecodeError("bad calls")
                if any(type(c) is not dict for c in calls):
                    raise codec.DecodeError("bad calls")
            watch = self._watch(target)
            try:
                with watch or contextlib.nullcontext():
                    if request["op"] == "map":
                        return {"ok": [self._call(obj, c, watch) for c in calls]}
                    return self._call(obj, request, watch)
            finally:
                if watch is not None:
                    self.ran = watch.ran
                    self.honest.check(list(watch.ran | set(watch.direct)))
        except BaseException as e:  # a missing attribute, an unencodable constant, ...
            return self._raised(e)

    def _call(self, obj, request: dict, watch=None) -> dict:
        """One call; the result or what it raised, as plain data."""
        try:
            args = codec.from_plain(request.get("args", []), self._struct)
            kwargs = codec.from_plain(request.get("kwargs", {}), self._struct)
            if type(args) is not list or type(kwargs) is not dict:
                raise codec.DecodeError("bad arguments")
            result = obj(*args, **kwargs)
            if watch is not None:
                watch.returned(result)
            return {"ok": codec.to_plain(result)}
        except BaseException as e:
            return self._raised(e)

    def _raised(self, e: BaseException) -> dict:
        if isinstance(e, KeyboardInterrupt):
            raise e
        if isinstance(e, ModuleUnavailable):
            kind, msg = "ModuleUnavailable", str(e)
        elif isinstance(e, codec.Unsupported):
            kind, msg = "Unsupported", str(e)
        elif isinstance(e, SystemExit):
            kind, msg = "SystemExit", f"called sys.exit({e.code!r})"
        else:  # a subclass of ValueError is a ValueError: the nearest built-in a test may expect
            kind = next((k.__name__ for k in type(e).__mro__ if k in EXPECTED), type(e).__name__)
            msg = str(e)
            if self.filtered and isinstance(e, OSError) and e.errno == errno.EPERM:
                msg += f" ({FORBIDDEN})"
        frames = student_frames(e, self.folder)
        # "function": the innermost student frame, named as the student wrote it ("optim.AdamW.step")
        function = f"{Path(frames[-1][0]).stem}.{frames[-1][2]}" if frames else ""
        at = f"{self.shown_as}{frames[-1][0]}:{frames[-1][1]}" if frames else ""
        return {"raised": {"type": kind, "message": msg[:2000], "function": function, "at": at,
                           "where": format_frames(frames, self.shown_as)}}


def answer(callee: Callee, req_fd: int, resp_fd: int, *, _read=read_frame, _write=write_frame,
           _loads=codec.loads, _dumps=codec.dumps, _exit=os._exit, _type=type, _dict=dict, _len=len,
           _str=str) -> None:
    """The worker's loop: each request answered on ``resp_fd`` until ``req_fd`` closes (then the
    process exits). What reads, encodes and writes the frames is bound here, when the seam is
    imported (the defaults), before any student module: a submission that rebinds ``os.write``,
    ``sys.stdout``, ``json.dumps``, ``codec.dumps`` or ``frames.write_frame`` afterwards changes
    no byte of a reply (the suite's reply-channel test)."""
    while True:
        try:
            request = _loads(_read(req_fd))
        except EOFError:
            _exit(0)
        response = callee.handle(request)
        rid = request.get("id") if _type(request) is _dict else None
        try:
            payload = _dumps({**response, "id": rid})
            if _len(payload) > MAX_FRAME:
                raise ValueError(f"the result is too large to send back ({_len(payload) >> 20} MiB; "
                                 f"the limit is {MAX_FRAME >> 20} MiB)")
        except (TypeError, ValueError, MemoryError) as e:
            payload = _dumps({"raised": {"type": "Unsupported", "message": _str(e)[:500], "where": ""},
                              "id": rid})
        _write(resp_fd, payload)
