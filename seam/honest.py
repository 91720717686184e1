"""Honest work: the registry's rules (seam/problems.py ``Rule``), charged on a forbidden call seen to run.

While a request of a problem with rules runs (a seam call of a ruled function, or a probe that
may drive one), a ``Watch`` looks at what actually executes, in the student's process, whatever
names the code used:

- a profiler (``sys.setprofile``) sees every Python function that runs (its module, told by the
  code object's file, never by ``__name__`` (``Modules``), decides), every C function called from
  Python by name (``Tensor.stride``, ``torch._C._nn.linear``), an ATen overload called in Python;
- a TorchDispatchMode for casts into a narrow float format (``cast_in``), also those made in
  C++; a TorchFunctionMode for what einops' code computes with torch, and what is computed from
  that (``must``);
- the profiler runs only for rules that need it, or everywhere where the text holds a note for
  review (``Honest.dynamic``): under a Python mode it would triple each op's cost;
- a class of theirs derived from a class of a forbidden module is found when its module is
  imported (``Honest.bases``).

An event counts only when the student's own code is on the stack, at any depth (or torch's code
runs for an instance of their class): the probes and the tests use PyTorch freely.

The watch runs in the student's process, so it can be blinded; what could blind it (a thread
started or running while a function is watched, ``sys.setprofile``, torch's mode stacks popped,
a ``DisableTorchFunction`` block, the rules or the watch changed) is a note for review
(``Honest.note``, seam/review.py), never a charge. The points rest on absence (seam/absent.py)
and on cases the library cannot answer; a forbidden call the watch does see is evidence.

A violation is (function, what it used); the trusted side (``seam.Impl``) keeps them, and every
graded test of that function scores 0 (``touched``), with one line (``line``): both in
seam/problems.py, beside the rules, so a report says them without torch.
"""

import _signal
import contextlib
import functools
import os
import sys
import threading
from types import FunctionType, MappingProxyType

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .problems import PROBLEMS, RULED, Rule, files, section
from .rule_check import torch_refusal
from . import public_names, review

# a rule whose ops torch does not have would watch nothing: refused when the watch is imported
for _rule in dict.fromkeys(RULED.values()):
    if _refused := torch_refusal(_rule):
        raise ValueError(_refused)


# ---- casts into a narrow float format (the dtypes rule; probes/dtypes.py measures the same) -----
NARROW = frozenset(getattr(torch, name) for name in (
    "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2") if hasattr(torch, name))
BIT_VIEWS = frozenset({"view"})  # reinterpreting bits is not rounding
PYTHON_DATA = frozenset({"lift_fresh", "lift", "lift_fresh_copy"})
CONVERSIONS = frozenset({"to", "_to_copy", "type", "copy_", "copy", "half", "bfloat16",
                         "to_dtype", "_to_dtype", "convert_element_type"})


def _tensors(values) -> list:
    if isinstance(values, torch.Tensor):  # the common cases without pytree (it runs for every op)
        return [values]
    if type(values) in (tuple, list) and all(not isinstance(v, (tuple, list, dict)) for v in values):
        return [v for v in values if isinstance(v, torch.Tensor)]
    return [leaf for leaf in tree_leaves(values) if isinstance(leaf, torch.Tensor)]


def cast_in(name: str, args, kwargs, result) -> str | None:
    """The narrow dtype this operation converted values into, or None.

    A cast: the operation returns a tensor of a narrow float dtype, it is not a bit view, and the
    values came from elsewhere: from Python data (no tensor inputs: ``torch.tensor(...,
    dtype=torch.float16)``, ``torch.empty(..., dtype=...)``), from a wider floating tensor
    (``x.to(...)``, ``copy_``), or from an integer tensor through a conversion. Masks and
    indices applied to a tensor that already is narrow do not count."""
    if isinstance(result, torch.Tensor) and result.dtype not in NARROW:
        return None  # (most ops: nothing narrow came out)
    base = name.split(".")[0]
    if base in BIT_VIEWS:
        return None
    out = [t.dtype for t in _tensors(result) if t.dtype in NARROW]
    if not out:
        return None
    # lift_fresh: the ATen op by which Python data becomes a tensor (torch.tensor(..., dtype=...))
    ins = [] if base in PYTHON_DATA else [t.dtype for t in _tensors((args, kwargs or {}))]
    if not ins or any(d not in NARROW and (d.is_floating_point or base in CONVERSIONS) for d in ins):
        return str(out[0])
    return None


def op_name(func) -> str:
    """The name PyTorch dispatches, whatever the caller called it: ``linear`` for F.linear, an
    alias of it and ``torch.ops.aten.linear.default``; ``T`` for the property ``x.T``."""
    name = str(getattr(func, "__name__", "") or func)
    if name == "__get__":  # a property of Tensor, seen by the function mode as its getter
        name = str(getattr(getattr(func, "__self__", None), "__name__", name))
    return name.split(".")[0]


# ---- what switches the watch off ----------------------------------------------------------------
# C functions (by name) that start other threads or processes (counted when the student's code is
# on the stack: threading.py makes the call), or remove the profiler or torch's modes (counted when
# the student's code makes the call itself: torch pops its modes too, e.g. in handle_torch_function).
BY_STACK = frozenset({"start_new_thread", "start_new", "start_joinable_thread", "fork", "forkpty",
                      "posix_spawn", "posix_spawnp", "fork_exec"})
BLINDING_C = MappingProxyType({
    "start_new_thread": "another thread", "start_new": "another thread",
    "start_joinable_thread": "another thread", "fork": "another process", "forkpty": "another process",
    "posix_spawn": "another process", "posix_spawnp": "another process", "fork_exec": "another process",
    "setprofile": "sys.setprofile", "settrace": "sys.settrace",
    "setprofile_all_threads": "sys.setprofile", "settrace_all_threads": "sys.settrace",
    "_pop_torch_function_stack": "torch's function-mode stack popped",
    "_pop_torch_dispatch_stack": "torch's dispatch-mode stack popped",
    "_set_torch_function_mode": "torch's function mode replaced",
    "_dispatch_tls_set_dispatch_key_excluded": "a dispatch key excluded",
    "_dispatch_tls_set_dispatch_key_included": "a dispatch key included",
})
# Python functions (module, qualified name) that pop or disable the modes, when the student's code
# calls them (through contextlib's ``with`` at most): torch's own calls are its business.
BLINDING_PY = frozenset({
    ("torch.utils._python_dispatch", "_disable_current_modes"), ("torch.utils._python_dispatch", "_pop_mode"),
    ("torch.utils._python_dispatch", "_pop_mode_temporarily"), ("torch.overrides", "_pop_mode"),
    ("torch.overrides", "_pop_mode_temporarily"), ("torch.utils._mode_utils", "no_dispatch"),
})
_DISABLERS = tuple(t for t in (getattr(torch._C, n, None) for n in (
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch")) if isinstance(t, type))
_PYTHON_KEY = torch._C.DispatchKey.Python
_ENABLED, _EXCLUDED = torch._C._is_torch_function_enabled, torch._C._dispatch_tls_is_dispatch_key_excluded


_ACTIVE: list = []  # the watch running now (at most one: requests do not nest)


def _captured(setprofile=sys.setprofile, getprofile=sys.getprofile, audit=sys.audit,
              function_depth=torch._C._len_torch_function_stack, function_at=torch._C._get_function_stack_at,
              dispatch_depth=torch._C._len_torch_dispatch_stack, dispatch_at=torch._C._get_dispatch_stack_at,
              function_enter=TorchFunctionMode.__enter__, function_exit=TorchFunctionMode.__exit__,
              dispatch_enter=TorchDispatchMode.__enter__, dispatch_exit=TorchDispatchMode.__exit__):
    """The functions the watch depends on, as they were when the seam was imported (before any
    student module): a submission that rebinds ``sys.setprofile`` or ``TorchFunctionMode.__enter__``
    afterwards changes none of them here. Defaults, not globals: rebinding a module's global makes
    no audit event; changing a function's defaults does (seam/audit.py records it)."""
    return (setprofile, getprofile, audit, function_depth, function_at, dispatch_depth, dispatch_at,
            function_enter, function_exit, dispatch_enter, dispatch_exit)


def _kernel_tables(_dump=torch._C._dispatch_dump_table) -> tuple:
    """The dispatch tables of every overload of the ATen ops the rules refuse (seam/absent.py
    registers a refusing kernel for each backend): destroying what keeps those registrations
    (reached through a frame or gc) changes them."""
    names = [a.partition(".")[2] for rule in dict.fromkeys(RULED.values()) for a in rule.absent
             if a.startswith("aten.")]
    out = []
    for name in names:
        packet = getattr(torch.ops.aten, name, None)
        for overload in (packet.overloads() if packet is not None else ()):
            out.append(_dump(f"aten::{name}" + ("" if overload == "default" else f".{overload}")))
    return tuple(out)


def _handlers(_get=_signal.getsignal, _signals=tuple(_signal.valid_signals())) -> tuple:
    """Each signal's handler: a handler of theirs is handed the frame it interrupts."""
    return tuple(_get(n) for n in _signals)


@contextlib.contextmanager
def entered(*modes, _c=_captured()):
    """``with`` each of ``modes`` (TorchFunctionMode or TorchDispatchMode instances, outermost
    first), entered and left by torch's own ``__enter__``/``__exit__`` as they were when the seam
    was imported, and checked on their stacks with C functions taken then: a submission that makes
    ``TorchFunctionMode.__enter__`` a no-op, or rebinds what it calls, blinds no probe unseen."""
    (_, _, _, function_depth, function_at, dispatch_depth, dispatch_at,
     function_enter, function_exit, dispatch_enter, dispatch_exit) = _c
    done = []
    try:
        for mode in modes:
            function = isinstance(mode, TorchFunctionMode)
            (function_enter if function else dispatch_enter)(mode)
            done.append(mode)
            depth = function_depth() if function else dispatch_depth()
            if depth == 0 or (function_at if function else dispatch_at)(depth - 1) is not mode:
                checked("modes-gone")
        yield modes[0] if len(modes) == 1 else modes
    finally:
        for mode in reversed(done):
            function = isinstance(mode, TorchFunctionMode)
            (function_exit if function else dispatch_exit)(mode, None, None, None)


def checked(code: str, _audit=sys.audit) -> None:
    """A check of the watch's own failed: said to the worker's record of what ran (seam/audit.py
    ``CHECK_EVENT``), which the student's code can neither remove nor edit, as well as noted."""
    _audit("seam.check", code)


def covered(names, ruled=RULED) -> dict[str, Rule]:
    """The ruled functions among a request's student names ("optim.AdamW.step" is AdamW's)."""
    out = {}
    for name in names:
        for function, rule in ruled.items():
            if name == function or name.startswith(function + "."):
                out[function] = rule
    return out


def _student(frame, files, others=None, modules=None) -> bool:
    """A frame of their files anywhere on the stack (no depth limit: an op buried under a
    thousand frames of theirs, or of torch's recursion, is still theirs; a deep stack costs time,
    never a verdict). With ``others`` and ``modules`` (the watch's): code that is not provably a
    library's or the grader's is theirs too (``_theirs_frame``)."""
    while frame is not None:
        if _theirs_frame(frame, files, others, modules):
            return True
        frame = frame.f_back
    return False


def _theirs_frame(frame, files, others, modules) -> bool:
    """One frame of theirs: of their files, or (with ``others`` and ``modules``) not provably a
    library's or the grader's. Provably: its file is a library module's (``modules`` names it)
    and it runs in that module's own globals, or file and globals are those of a frame on the
    stack when the worker started (``others``: (file, id of the globals) pairs, to which what is
    proved is added). So code in no file (compiled from a string: "<string>", "<timeit-src>"), a
    module of theirs written to the scratch, and a function of theirs relabelled with a
    library's file name are all theirs."""
    name = frame.f_code.co_filename
    if name in files:
        return True
    if others is None or (name, id(frame.f_globals)) in others:
        return False
    if not name.startswith("<frozen ") and not _library(name, frame.f_globals, modules):
        return True
    others.add((name, id(frame.f_globals)))
    return False


def _library(filename: str, namespace: dict, modules) -> bool:
    """Code of a library module's file, running in that module's own globals."""
    dotted = modules.of(filename)
    module = sys.modules.get(dotted) if dotted else None
    return module is not None and getattr(module, "__dict__", None) is namespace


class Modules:
    """Whose code a code object is, from its file, never from a name the module could reassign
    (``__name__``, ``__module__``): the dotted name of the file below the folders of ``sys.path``
    as they were when the worker started, deepest folder first (site-packages before the standard
    library that holds it). "" for a file below none (their files, the seam's scratch)."""

    def __init__(self):
        # ("" on sys.path is the working folder; the folder holding the seam is always a root, so
        # the grader's own files are never taken for code in no library's file)
        roots = {os.path.realpath(p or os.curdir) for p in sys.path if os.path.isdir(p or os.curdir)}
        roots.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        self.roots = tuple(sorted(roots, key=len, reverse=True))
        self._names: dict[str, str] = {}

    def of(self, filename: str) -> str:
        name = self._names.get(filename)
        if name is None:
            name = self._names[filename] = self._name(filename)
        return name

    def _name(self, filename: str) -> str:
        if not filename.endswith(".py"):
            return ""  # <frozen ...>, <string>: no file of a library
        path = os.path.realpath(filename)
        for root in self.roots:
            if path.startswith(root + os.sep):
                parts = path[len(root) + 1:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                return ".".join(parts) if all(p.isidentifier() for p in parts) else ""
        return ""


def _bound_class(value) -> type | None:
    """The class a ruled name is bound to: itself, or the class a ``functools.partial`` calls."""
    for _ in range(8):
        if isinstance(value, type):
            return value
        if not isinstance(value, functools.partial):
            return None
        value = value.func
    return None


def _is_torch(fn) -> bool:
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, torch.Tensor) or str(getattr(fn, "__module__", None) or "").startswith("torch")


class Honest:
    """The worker's record: what each ruled function used (first seen), and a ``watch`` per request."""

    def __init__(self, folder):
        # the student's files, as their code objects name them -> the problem module
        self.files = {f"{folder}/{files(p).module}": p for p in PROBLEMS}
        self.modules = Modules()  # whose code runs, by its file (taken before any student module)
        # (file, id of the globals) of code seen on a stack that is a library's or the grader's;
        # first, those of every frame on the stack now, before any student module is imported: the
        # grader's own (its worker script runs as __main__, under a path a namespaced view does not
        # resolve; pytest's, in-process)
        self.others: set[tuple[str, int]] = set()
        frame = sys._getframe()
        while frame is not None:
            self.others.add((frame.f_code.co_filename, id(frame.f_globals)))
            frame = frame.f_back
        self.classes: dict[type, str] = {}  # each ruled class of theirs, as its module was imported
        self.violations: dict[str, str] = {}
        self.notes: dict[tuple, dict] = {}  # what could have blinded the watch, seen at run time
        self.trusted_threads = set(sys._current_frames())  # the harness's own (pytest, execnet)
        # names computed at run time (getattr(torch, "_" + "C"), exec, importlib) or a profiler of
        # theirs: what switches the watch off could then go unnamed, so every watch runs the
        # profiler, from the start (without them, the static look names every such switch)
        self.dynamic = review.dynamic(folder)
        self.intact = _integrity()  # taken before any student module is imported
        self.ruled = dict(RULED)     # the rules as they were then (rebinding seam's names changes nothing)
        self.tables, self.handlers = _kernel_tables(), _handlers()  # likewise

    def check(self, functions) -> None:
        """After a watched request: the rules and the watch's own code as they were (a note if
        not: what changed them cannot be told from here)."""
        if _integrity() != self.intact:
            checked("watch-changed")
            self.note("the grader", "the grader's rules or its watch changed", None, functions)

    def after(self, functions=()) -> None:
        """After every request: the refused kernels still refuse, and no signal handler of theirs
        was set (each is recorded, seam/audit.py, and noted; the grader puts it on the request's
        problem)."""
        if _kernel_tables() != self.tables:
            checked("kernels-back")
            self.tables = _kernel_tables()  # said once
        if _handlers() != self.handlers:
            checked("signals")
            self.handlers = _handlers()

    MAX_NOTES = 64  # a worker's notes (the rest are alike: the first say where to look)

    def note(self, kind: str, what: str, frame=None, functions=()) -> None:
        """A construct that could blind the watch, seen at run time: a note for review at the
        first line of their files on the stack, else in the module of the first function named,
        never a charge (seam/review.py). ``what``: an id of review.RUNTIME (or the watch's
        description of it, ``review.runtime_id``); the reply carries the id, never words."""
        file, line = "", 0
        while frame is not None:
            if frame.f_code.co_filename in self.files:
                file, line = f"{self.files[frame.f_code.co_filename]}.py", frame.f_lineno or 0
                break
            frame = frame.f_back
        if not file:
            file = f"{next(iter(functions), 'seam.').partition('.')[0]}.py"
        if review.problem_of(file) and len(self.notes) < self.MAX_NOTES:
            self.notes.setdefault((file, line, kind), review.sent(file, line, kind, what))

    def absent_used(self, rule: Rule, what: str, frame) -> None:
        """A stand-in of seam/absent.py was used (the forbidden code is not in the sandbox):
        charged to the functions of that rule whose code is on the stack, else to those the
        request calls."""
        if _ACTIVE:
            watch = _ACTIVE[0]
            watch.hit([f for f, r in watch.rules.items() if r is rule], f"{what} (not in the sandbox)", frame)

    def record(self, function: str, used: str, _audit=sys.audit) -> None:
        """A charge: kept for the reply, and said at once to the record of what ran (seam/audit.py),
        where code that edits the reply cannot take it back."""
        self.violations.setdefault(function, used[:200])
        _audit("seam.charge", function)

    def bases(self, problem: str, module) -> None:
        """Class ancestry, when a module is imported: a ruled class derived from a class of a
        module its rule forbids (``class AdamW(torch.optim.AdamW)``), or bound to one (``AdamW =
        functools.partial(torch.optim.AdamW)``: no frame of theirs ever runs), breaks the rule."""
        for function, rule in self.ruled.items():
            mod_name, _, name = function.partition(".")
            cls = _bound_class(getattr(module, name, None)) if mod_name == problem else None
            if cls is None:
                continue
            self.classes.setdefault(cls, function)  # the class object itself: no name to reassign
            for base in cls.__mro__ if rule.modules else ():
                if _in(str(getattr(base, "__module__", "")), rule.modules):
                    self.record(function, f"{public_names.of_class(base)} as "
                                          + ("a base class" if base is not cls else "the class itself"))

    def watch(self, problem: str, names) -> "Watch | None":
        """The watch over one request of ``problem``: every ruled function of the problem may run
        in it (a probe of memory_by_stage drives AdamW too); ``names``: those the request calls."""
        direct = covered(names, self.ruled)
        # numbers-only functions (Rule.numbers) are watched where the request calls them: no probe
        # drives one unnamed, and their tripwires would arm the profiler at every torch op
        rules = {f: r for f, r in self.ruled.items()
                 if f.partition(".")[0] == problem and not r.numbers} | direct
        return Watch(self, rules, direct=list(direct), names=names) if rules else None


def _integrity() -> tuple:
    """The registry's rules and the identity of every function of the watch (and of the seam's
    classes): what a submission would have to change to switch the rules off."""
    classes = [Honest, Watch, _FunctionMode, _DispatchMode]
    callee = sys.modules.get("seam.callee")
    if callee is not None:
        classes.append(callee.Callee)
    methods = tuple((c.__name__, k, id(v)) for c in classes for k, v in sorted(vars(c).items()))
    functions = tuple((k, id(v)) for k, v in sorted(globals().items()) if callable(v))
    problems = sys.modules.get("seam.problems")
    return (tuple(RULED.items()), id(RULED), id(getattr(problems, "RULED", None)), methods, functions,
            id(BLINDING_C), id(BLINDING_PY))


def _in(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


class Watch:
    """One request's watch over the functions it covers (``rules``: function -> rule)."""

    def __init__(self, honest: Honest, rules: dict[str, Rule], direct: list[str], names=()):
        self.honest, self.rules, self.files, self.direct = honest, rules, honest.files, direct
        self.names = list(names)  # every student name the request calls, ruled or not
        self.ops = {op: [f for f, r in rules.items() if op in r.ops] for r in rules.values() for op in r.ops}
        self.modules = {f: r.modules for f, r in rules.items() if r.modules}
        self.casts = [f for f, r in rules.items() if r.casts]
        self.must = {f: r.must for f, r in rules.items() if r.must and f in direct}
        # modes only where arguments or results matter (casts, what einops produced): every
        # named op is a C call the profiler sees, or an OpOverload call it sees in Python
        self.modes = bool(self.casts or self.must)
        # the profiler sees what no mode does (Python code of a forbidden module, C calls by name);
        # casts and einops' results are the modes' alone. A profiler under a Python mode triples
        # each op's cost (every Python call in torch's mode machinery becomes events), so it runs
        # only where a rule needs it, or where the text holds a note for review (Honest.dynamic)
        needs = [r for r in rules.values() if r.modules or r.ops]
        self.profiled = bool(needs) or honest.dynamic
        # rules over numbers only: no profiler until a torch op runs (a mode sees it); pure Python
        # code (millions of calls in the tensors tests) then pays nothing
        self.lazy = bool(needs) and all(r.numbers for r in needs) and not self.modes and not honest.dynamic
        self.ran: set[str] = set()  # the ruled functions whose code ran (a test of them is theirs)
        self._kinds: dict = {}     # code object -> what running it means ("" nothing)
        self._owners: dict = {}    # class -> the ruled functions (classes) of theirs it is
        self.module_of = honest.modules.of  # a code object's file -> its module's dotted name
        self.produced: dict = {}   # id -> tensor: what the ``must`` module's functions returned, and
                                   # what torch ops computed from that (the function mode sees them)

    # ---- the result --------------------------------------------------------------------------
    def hit(self, functions, used: str, frame=None) -> None:
        """Charge ``used`` to the functions of ``functions`` it belongs to: each whose code is on
        the stack (a ruled function that hands the work to another function of theirs still did
        it), or that a frame on the stack runs for (torch's code for an instance of a class of
        theirs derived from torch's; a function of theirs handed such an instance first, as a
        method bound to a module-level function is). With none: a frame of theirs that is no
        function the request calls, under no such function (a helper called by the seam, by
        torch's hooks, code compiled from a string) charges those of ``functions`` the request
        calls itself; one under a function the request calls that no rule here covers (their
        memory_by_stage stepping torch's AdamW, or a helper of it) charges nobody. ``frame`` None
        (what the watch sees at its end, no stack to read): every one of ``functions``."""
        if frame is None:
            charged = list(functions)
        else:
            charged, loose = self._on_stack(functions, frame)
            if not charged and loose:
                charged = [f for f in functions if f in self.direct]
        self.ran.update(charged)  # it ran in this request (without a profiler, no one else says so)
        for f in charged:
            self.honest.record(f, used)

    def _on_stack(self, functions, frame) -> tuple[list[str], bool]:
        """(the functions of ``functions`` the stack shows at work, whether a frame of theirs on
        it is code of no function the request calls with none outside it)."""
        files, others, modules = self.files, self.honest.others, self.honest.modules
        called = [*self.names, *self.rules]
        found, loose = [], False
        while frame is not None:
            code = frame.f_code
            if code.co_filename in files:
                qual = f"{files[code.co_filename]}.{code.co_qualname}"
                mine = [f for f in functions if qual == f or qual.startswith(f + ".")]
                if mine:
                    found += mine
                elif any(qual == n or qual.startswith(n + ".") for n in called):
                    loose = False  # a function the request calls: what runs below it is its work
                else:  # a helper: of the ruled class whose instance it was handed first, if any
                    found += [f for f in self._owner(frame, first=True) if f in functions]
                    loose = loose or not found
            else:
                found += [f for f in self._owner(frame) if f in functions]
                loose = loose or (not found and _theirs_frame(frame, files, others, modules))
            frame = frame.f_back
        return list(dict.fromkeys(found)), loose

    def returned(self, value) -> None:
        """A covered function returned ``value``: for ``must``, it must come from an einops call."""
        if self.must and isinstance(value, torch.Tensor) and self.produced.get(id(value)) is not value:
            for f, module in self.must.items():
                self.honest.record(f, f"a tensor that no {module} call returned")
        self.produced.clear()

    # ---- switching on and off ----------------------------------------------------------------
    def __enter__(self, _c=_captured()):
        (setprofile, getprofile, _, function_depth, function_at, dispatch_depth, dispatch_at,
         function_enter, _, dispatch_enter, _) = _c
        self._stack = []
        self.base = sys._getframe(1)  # the seam's frame that runs the request
        if self.lazy:  # tripwires: the first torch op, from Python or (under DisableTorchFunction) ATen
            self._stack = [_FunctionMode(self.tripped), _DispatchMode(self.tripped)]
        elif self.modes:  # casts: the dispatch mode sees every ATen op, also from C++ (one mode is
            # enough, and each costs a Python call per op); einops: what torch computes from its results
            self._stack = ([_FunctionMode(self.through)] * bool(self.must)
                           + [_DispatchMode(self.through)] * bool(self.casts))
        before = (function_depth(), dispatch_depth())
        for mode in self._stack:  # entered by torch's own __enter__, as it was at import
            (function_enter if isinstance(mode, _FunctionMode) else dispatch_enter)(mode)
        self.depths = (function_depth(), dispatch_depth())
        # each mode really on its stack, on top: checked with C functions taken at import
        functions = [m for m in self._stack if isinstance(m, _FunctionMode)]
        dispatches = [m for m in self._stack if isinstance(m, _DispatchMode)]
        if self.depths != (before[0] + len(functions), before[1] + len(dispatches)) or (
                functions and function_at(self.depths[0] - 1) is not functions[-1]) or (
                dispatches and dispatch_at(self.depths[1] - 1) is not dispatches[-1]):
            checked("modes-gone")
            self.honest.note("torch internals", "the watch's torch modes not in place", None, self.direct)
        self.threads = {tid: (frame, frame.f_lasti) for tid, frame in sys._current_frames().items()
                        if tid not in self.honest.trusted_threads and tid != threading.get_ident()}
        self.previous = getprofile()
        self._profile = self._profiler()
        self.armed = False
        if self.profiled and not self.lazy:
            self.arm()
        _ACTIVE.append(self)
        return self

    def arm(self, _c=_captured()) -> None:
        """The profiler on, from now to the end of the request; checked in place at once."""
        setprofile, getprofile = _c[0], _c[1]
        if not self.armed:
            self.armed = True
            setprofile(self._profile)
            if getprofile() is not self._profile:
                checked("profiler-gone")
                self.honest.note("profilers", "the watch's profiler not in place", None, self.direct)

    def __exit__(self, *exc, _c=_captured()):
        setprofile, getprofile, function_depth, dispatch_depth = _c[0], _c[1], _c[3], _c[5]
        function_exit, dispatch_exit = _c[8], _c[10]
        _ACTIVE.clear()
        removed = self.armed and getprofile() is not self._profile
        setprofile(self.previous)
        everything = list(self.ran | set(self.direct))
        if self._stack and (not _ENABLED()
                           or _EXCLUDED(_PYTHON_KEY)
                           or function_depth() < self.depths[0]
                           or dispatch_depth() < self.depths[1]):
            checked("modes-gone")
            self.honest.note("torch internals", "PyTorch's modes left switched off", None, everything)
        for mode in reversed(self._stack):
            try:
                (function_exit if isinstance(mode, _FunctionMode) else dispatch_exit)(mode, None, None, None)
            except Exception:  # the student popped it already: that was recorded
                pass
        if removed:
            checked("profiler-gone")
            self.honest.note("profilers", "a profiler of theirs in place of the watch's", None, everything)
        now = sys._current_frames()
        for tid, (frame, lasti) in self.threads.items():
            if tid in now and (now[tid] is not frame or frame.f_lasti != lasti):
                self.honest.note("threads", "a thread of theirs ran while the function was watched",
                                 None, everything)
                break
        self.produced.clear()
        self.base = None
        return False

    # ---- the profiler ------------------------------------------------------------------------
    def _profiler(self):
        """The profile function: a closure over locals, since it runs for every call (millions in
        a grade); anything to look at goes to the methods below."""
        kinds, classify, python, blinding, named = self._kinds, self._classify, self._python, self._blinding_c, self._named
        watched = frozenset(BLINDING_C) | {"__exit__", "__enter__"}
        ops = self.ops

        def profile(frame, event, arg):
            if event == "c_call":
                name = arg.__name__
                if name in watched:
                    blinding(frame, name, arg)
                elif name in ops:
                    named(frame, name, arg)
            elif event == "call":
                kind = kinds.get(frame.f_code)
                if kind is None:
                    kind = kinds[frame.f_code] = classify(frame)
                if kind:
                    python(frame, event, kind, arg)
        return profile

    def _settled(self, name: str) -> bool:
        """Every ruled function ``name`` could be charged to is charged already and ran in this
        request: another charge would change nothing, so its stack walk is spared (a shortcut
        calls the op once per case, thousands of times a test)."""
        violations, ran = self.honest.violations, self.ran
        return all(f in violations and f in ran for f in self.ops[name])

    def _named(self, frame, name, arg) -> None:
        if _is_torch(arg) and not self._settled(name) and self._theirs(frame):
            self.hit(self.ops[name], f"torch's {name}", frame)

    def _student(self, frame) -> bool:
        """Their code on the stack, as the watch judges it (``_student`` with its worker's record)."""
        return _student(frame, self.files, self.honest.others, self.honest.modules)

    def _theirs(self, frame) -> bool:
        """Their code is on the stack: a frame of theirs (``_theirs_frame``), or torch's code
        running for an object of theirs (a module method of their class applied by torch's
        machinery, which calls it with no frame of theirs above). One walk for both."""
        files, others, modules = self.files, self.honest.others, self.honest.modules
        while frame is not None:
            if _theirs_frame(frame, files, others, modules) or (
                    frame.f_code.co_filename not in files and self._owner(frame)):
                return True
            frame = frame.f_back
        return False

    def _classify(self, frame):
        code = frame.f_code
        if code.co_filename in self.files:  # theirs: which ruled function's code is this?
            qual = f"{self.files[code.co_filename]}.{code.co_qualname}"
            return [f for f in self.rules if qual == f or qual.startswith(f + ".")] or ""
        module = self.module_of(code.co_filename)
        if (module, frame.f_code.co_qualname) in BLINDING_PY:
            return "blinding"
        if self.ops and module == "torch._ops" and frame.f_code.co_qualname in ("OpOverload.__call__",
                                                                                "OpOverloadPacket.__call__"):
            return "overload"
        if any(_in(module, mods) for mods in self.modules.values()):
            return "forbidden"
        return ""

    def _python(self, frame, event, kind, arg) -> None:
        if type(kind) is list:  # a ruled function of theirs runs
            self.ran.update(kind)
            return
        if kind == "overload":  # torch.ops.aten.<op>.default(...): the op by its name
            if event == "call":
                name = op_name(frame.f_locals.get("self"))
                if name in self.ops and not self._settled(name) and self._student(frame.f_back):
                    self.hit(self.ops[name], f"torch's {name}", frame)
            return
        if event != "call":
            return
        module, qual = self.module_of(frame.f_code.co_filename), frame.f_code.co_qualname
        if kind == "blinding":
            caller = frame.f_back
            while caller is not None and self.module_of(caller.f_code.co_filename) == "contextlib":
                caller = caller.f_back
            if caller is not None and caller.f_code.co_filename in self.files:
                self.honest.note("torch internals", f"{module}.{qual}", frame, self.rules)
            return
        functions = [f for f, mods in self.modules.items() if _in(module, mods)]
        owner = self._owner(frame)  # torch's code run for a class of theirs (class AdamW(torch.optim.AdamW))
        if owner:
            self.ran.update(f for f in owner if f in functions)
            for f in owner:
                if f in functions:
                    self.honest.record(f, public_names.of_code(frame.f_code, frame.f_globals, module))
        elif self._theirs(frame.f_back):
            named = all(f in self.honest.violations for f in functions)  # (first seen is kept)
            self.hit(functions, "" if named else self._called(frame, functions), frame)

    def _called(self, frame, functions) -> str:
        """The public name of the forbidden function their code called, for the charge: the
        outermost frame of the forbidden modules below theirs (np.polyfit, not the dispatcher or
        the _sum it runs), named as the student writes it (seam/public_names.py)."""
        forbidden = [m for f in functions for m in self.modules[f]]
        files, others, modules = self.files, self.honest.others, self.honest.modules
        try:
            start = public_names.entry(frame, lambda f: _in(self.module_of(f.f_code.co_filename), forbidden),
                                       lambda f: _theirs_frame(f, files, others, modules))
            return public_names.of_code(start.f_code, start.f_globals, self.module_of(start.f_code.co_filename))
        except Exception:  # the name is for the reader: a charge never waits on it
            return f"{self.module_of(frame.f_code.co_filename)}.{frame.f_code.co_qualname}"

    def _owner(self, frame, first: bool = False) -> list[str]:
        """The ruled functions (classes) of theirs whose instance this torch code runs for (its
        ``self``); ``first``: whatever the first parameter is called (a frame of theirs)."""
        code = frame.f_code
        if first and code.co_argcount:
            name = code.co_varnames[0]
        elif "self" in code.co_varnames[:1]:
            name = "self"
        else:
            return []
        cls = type(frame.f_locals.get(name))
        found = self._owners.get(cls)
        if found is None:
            found = self._owners[cls] = self._ruled_class(cls)
        return found

    def _ruled_class(self, cls) -> list[str]:
        """The ruled classes of theirs ``cls`` is or derives from: the class objects their modules
        held when imported (``Honest.bases``), and the classes whose methods' code objects lie in
        their files (file and qualified name), which no assignment to ``__module__`` or
        ``__qualname__`` changes."""
        out = [f for klass in cls.__mro__ if (f := self.honest.classes.get(klass)) in self.rules]
        for klass in cls.__mro__:
            for value in vars(klass).values():  # (exact types: no code of theirs runs here)
                if type(value) in (staticmethod, classmethod):
                    value = value.__func__
                elif type(value) is property:
                    value = value.fget
                if type(value) is not FunctionType or value.__code__.co_filename not in self.files:
                    continue
                code = value.__code__
                qual = f"{self.files[code.co_filename]}.{code.co_qualname.rpartition('.')[0]}"
                out += [f for f in self.rules if qual == f or qual.startswith(f + ".")]
        return sorted(set(out))

    def _blinding_c(self, frame, name, arg) -> None:
        if name in ("__exit__", "__enter__"):  # a DisableTorchFunction block, with or without `with`
            if isinstance(getattr(arg, "__self__", None), _DISABLERS) and frame.f_code.co_filename in self.files:
                self.honest.note("torch internals", f"torch._C.{type(arg.__self__).__name__}", frame, self.rules)
            return
        if self._student(frame) if name in BY_STACK else frame.f_code.co_filename in self.files:
            kind = ("threads" if name in BY_STACK else "profilers" if name.startswith(("setprofile", "settrace"))
                    else "torch internals")
            self.honest.note(kind, f"{BLINDING_C[name]} ({name})", frame, self.rules)

    # ---- the modes ---------------------------------------------------------------------------
    def tripped(self, func, args, kwargs):
        """A torch op under a watch of numbers-only rules (a tripwire mode saw it): switch the
        profiler on, look at the op by its name (the profiler missed its C call: it was not
        running yet), and run it."""
        self.arm()
        name = op_name(func)
        if name in self.ops and not self._settled(name):
            frame = sys._getframe(2)  # (the mode's method, then the caller)
            if self._theirs(frame):
                self.hit(self.ops[name], f"torch's {name}", frame)
        return func(*args, **(kwargs or {}))

    def through(self, func, args, kwargs):
        """An op either mode intercepted: run it, then look at what went in and came out."""
        result = func(*args, **(kwargs or {}))
        self.seen(func, args, kwargs, result)
        return result

    def seen(self, func, args, kwargs, result) -> None:
        if not self.armed:  # no profiler says which ruled functions of theirs run: the stack does
            self._running(sys._getframe(3))
        if self.must:
            if self._from_must(sys._getframe(3)) or (self.produced and any(
                    self.produced.get(id(t)) is t for t in _tensors(args) + _tensors(kwargs or ()))):
                for t in _tensors(result):  # made by einops, or computed from what it made
                    self.produced[id(t)] = t
        if self.casts:
            name = op_name(func)
            dtype = cast_in(name, args, kwargs, result)
            if dtype is not None:
                frame = sys._getframe(3)  # (seen, through, the mode's method, then the caller)
                if self._theirs(frame):
                    self.hit(self.casts, f"a cast into {dtype} ({name})", frame)


    def _running(self, frame) -> None:
        """The ruled functions of theirs on the stack ran (a test that made them run is theirs:
        nvfp4_dequantize's, when it calls a round_to that casts for other formats)."""
        files, kinds, base = self.files, self._kinds, self.base
        while frame is not None and frame is not base:  # (theirs are all above the seam's frame)
            code = frame.f_code
            if code.co_filename in files:
                kind = kinds.get(code)
                if kind is None:
                    kind = kinds[code] = self._classify(frame)
                if kind:
                    self.ran.update(kind)
            frame = frame.f_back

    def _from_must(self, frame) -> bool:
        """Whether the torch op the function mode saw was called by the ``must`` module's code
        (einops' torch backend; through torch's own Python wrappers, like ``torch.einsum``)."""
        for _ in range(8):
            if frame is None:
                return False
            module = self.module_of(frame.f_code.co_filename)
            if not _in(module, ("torch",)):
                return any(_in(module, (m,)) for m in self.must.values())
            frame = frame.f_back
        return False


class _FunctionMode(TorchFunctionMode):
    """Every torch function of the request, handed to ``handle(func, args, kwargs)``: the watch's
    ``tripped`` (a tripwire) or ``through``."""

    def __init__(self, handle):
        super().__init__()
        self.handle = handle

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.handle(func, args, kwargs)


class _DispatchMode(TorchDispatchMode):
    """Every ATen op of the request (also those C++ makes), handed to ``handle`` likewise."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # nothing here is compiled (see probes/dtypes.py)

    def __init__(self, handle):
        super().__init__()
        self.handle = handle

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.handle(func, args, kwargs)


class Instrumentation:
    """The worker's own look around each "how" probe: its seam unchanged (every function, class
    and list of every seam module, by identity, as before any student module was imported), no
    thread left running that was not there before the call, no profiler or tracer installed."""

    def __init__(self):
        self.modules = [name for name in list(sys.modules) if name == "seam" or name.startswith("seam.")]
        self.seam = self._fingerprint()

    def _fingerprint(self) -> dict:
        return {(name, key): id(value) for name in self.modules if (module := sys.modules.get(name)) is not None
                for key, value in list(vars(module).items()) if callable(value) or type(value) is list}

    def before(self) -> tuple:
        return threading.active_count(), sys.getprofile(), sys.gettrace()

    def broken(self, before: tuple) -> tuple[str, str] | None:
        """(kind, what) of what the call changed (seam/review.py's kinds), or None."""
        now = self._fingerprint()
        changed = sorted(f"{m}.{k}" for (m, k), v in self.seam.items() if now.get((m, k)) != v)
        if changed:
            return "the grader", f"the grader's probes changed ({', '.join(changed[:3])})"
        threads, profile, trace = before
        if threading.active_count() > threads:
            return "threads", f"{threading.active_count() - threads} thread(s) it started still running"
        if (sys.getprofile(), sys.gettrace()) != (profile, trace):
            return "profilers", "a profiler or tracer installed"
        return None

