"""What could blind a "how" check, found in a submission without running it.

A "how" check (no narrow cast in round_to, a view that shares storage, only the sampled memmap
pages read, weights_only, synchronize before each clock read, the ledgers counted from real
tensors, no nn.Linear, no GradScaler) is measured by a probe in the student's own process
(seam/probes/). Code in that process can switch a probe off: patch the seam, run the work in
another thread (torch's mode stacks are per thread), disable torch's function or dispatch modes,
install a profiler, edit a probe's locals through its frame, drop pages before /proc is read.
Rather than trust such a measurement, the grader looks at the modules first (``scan``, ast only:
nothing runs) and, where one of these techniques appears, every probe with a "how" fails with one
line that names it (``Impl``). The worker re-checks its instrumentation after each such probe
(``Instrumentation``); the trust model (README) lists what neither catches.
"""

import ast
import hashlib
import sys
import threading
from pathlib import Path

from .allowed import _folded, check_tree
from .problems import PROBLEMS

# technique -> (why it can blind a check, how the grader sees it); the trust model's table
# (README, written by `python -m grader rubric --write`) is made from this.
TECHNIQUES = {
    "seam": ("it reaches the grader's own probes (seam), which can then be patched",
             "static: an import of seam; worker: any probe function or list of the seam replaced"),
    "threads": ("work in another thread or process escapes the watch on torch calls (per thread)",
                "static: threading, _thread, concurrent, multiprocessing, asyncio, subprocess, "
                "os.fork and friends; worker: a thread it started still running"),
    "ctypes": ("native calls can remove the grader's hooks (PyEval_SetProfile, memory unmapping)",
               "static: ctypes, _ctypes, cffi, PyEval_SetProfile / SetTrace"),
    "torch internals": ("torch._C / _python_dispatch can switch off the modes that watch torch calls",
                        "static: torch._C, DisableTorchFunction, _disable_current_modes, no_dispatch, "
                        "_python_dispatch, _mode_utils, torch.overrides, torch.jit (scripted code "
                        "escapes the function mode), __torch_function__ / __torch_dispatch__"),
    "profilers": ("sys.setprofile / settrace can replace or remove the grader's hooks",
                  "static: setprofile, settrace; worker: the profiler or tracer changed"),
    "frames": ("frame access (sys._getframe, f_locals, inspect, gc, a function's closure or defaults) "
               "can edit a probe's state or reach what the grader wrapped",
               "static: _getframe, f_locals, f_globals, f_back, tb_frame, __globals__, inspect, "
               "gc.get_referrers / get_objects, __closure__, cell_contents, __defaults__, __kwdefaults__"),
    "memory mapping": ("madvise / munmap / mmap can drop pages before the grader reads /proc",
                       "static: madvise, munmap, mmap, a memmap's _mmap"),
    "dynamic code": ("exec / eval / __import__ / importlib / sys.modules can hide all of the above",
                     "static: exec, eval, compile, vars, globals, __import__, importlib, builtins, "
                     "sys.modules, __dict__, __subclasses__, __code__, getattr & co. with a name "
                     "not written out, and any string naming one of the above"),
    "allow-list": ("rebinding what the seam calls at run time (os.write, json.dumps, torch.Tensor.tolist), "
                   "renaming a module or class (__name__, __module__) or reaching a namespace unnamed "
                   "(__dict__, globals(), a frame) changes what the probes and the honest-work watch see",
                   "static: each module's syntax tree against what a graded module may do "
                   "(seam/allowed.py; the allow-list table below)"),
}
WHY = {kind: why for kind, (why, _) in TECHNIQUES.items()}
NAMED = {"allow-list": "a construct outside the allow-list"}  # how a message names a technique


class Finding(tuple):
    """(file name, line, technique), and for the allow-list the construct in a few words
    (``what``: "a store on an attribute of the module os (os.write)"), which the messages name."""

    what = ""

    def __new__(cls, name: str, line: int, kind: str, what: str = ""):
        finding = super().__new__(cls, (name, line, kind))
        finding.what = what
        return finding

_MODULES = {  # an import of one of these (or of a submodule) is a finding
    "seam": "seam", "threading": "threads", "_thread": "threads", "concurrent": "threads",
    "multiprocessing": "threads", "asyncio": "threads", "ctypes": "ctypes", "_ctypes": "ctypes",
    "cffi": "ctypes", "inspect": "frames", "mmap": "memory mapping",
    "importlib": "dynamic code", "builtins": "dynamic code", "torch._C": "torch internals",
    "torch.utils._python_dispatch": "torch internals", "torch.utils._mode_utils": "torch internals",
    "torch.multiprocessing": "threads", "torch.overrides": "torch internals", "torch.jit": "torch internals",
    "subprocess": "threads", "pty": "threads",
}
_ATTRIBUTES = {  # x.<name>, or the string "<name>" (getattr(x, "name"))
    "_C": "torch internals", "_python_dispatch": "torch internals", "_mode_utils": "torch internals",
    "DisableTorchFunction": "torch internals", "DisableTorchFunctionSubclass": "torch internals",
    "_DisableTorchDispatch": "torch internals", "no_dispatch": "torch internals",
    "_disable_current_modes": "torch internals", "_pop_mode": "torch internals",
    "_push_mode": "torch internals", "_get_current_function_mode_stack": "torch internals",
    "setprofile": "profilers", "settrace": "profilers", "PyEval_SetProfile": "ctypes",
    "PyEval_SetTrace": "ctypes", "_getframe": "frames", "f_locals": "frames", "f_globals": "frames",
    "f_back": "frames", "tb_frame": "frames", "gi_frame": "frames", "cr_frame": "frames",
    "__globals__": "frames", "currentframe": "frames", "get_referrers": "frames",
    "get_referents": "frames", "get_objects": "frames", "__closure__": "frames", "cell_contents": "frames",
    "__defaults__": "frames", "__kwdefaults__": "frames",
    "madvise": "memory mapping", "munmap": "memory mapping", "_mmap": "memory mapping",
    "__builtins__": "dynamic code", "__import__": "dynamic code", "__code__": "dynamic code",
    "__subclasses__": "dynamic code", "__dict__": "dynamic code", "__torch_function__": "torch internals",
    "__torch_dispatch__": "torch internals",
}
# Attributes that are findings only on their module (``os.system``, ``torch.jit``): elsewhere
# they are ordinary words (cfg.overrides, a "system" role, gc.collect).
_OF_MODULE = {("os", "fork"): "threads", ("os", "forkpty"): "threads", ("os", "posix_spawn"): "threads",
              ("os", "posix_spawnp"): "threads", ("os", "spawnv"): "threads", ("os", "spawnl"): "threads",
              ("os", "execv"): "threads", ("os", "execve"): "threads", ("os", "system"): "threads",
              ("os", "popen"): "threads", ("sys", "modules"): "dynamic code", ("torch", "jit"): "torch internals",
              ("torch", "overrides"): "torch internals"}
_CALLS = {"exec": "dynamic code", "eval": "dynamic code", "compile": "dynamic code", "vars": "dynamic code",
          "globals": "dynamic code", "locals": "dynamic code", "breakpoint": "frames"}  # when called
_NAMES = {"__import__": "dynamic code", "__builtins__": "dynamic code"}                 # any use
_NAMED_BY_STRING = ("getattr", "setattr", "delattr", "hasattr")
_HIDING_PLACES = ("sys", "os", "builtins", "__builtins__", "importlib")  # getattr(sys, name): hidden
# Strings that are findings when a whole string equals them: the distinctive names only.
_STRINGS = {k: v for k, v in _ATTRIBUTES.items()} | {m: v for m, v in _MODULES.items()
                                                     if "." in m or m in ("seam", "ctypes", "threading")}


def _module_finding(name: str) -> str | None:
    for prefix, kind in _MODULES.items():
        if name == prefix or name.startswith(prefix + "."):
            return kind
    return None


# The techniques that already make every ruled function "not checked" (seam/impl.py BLINDS_RULES,
# less the allow-list): a line one of them names needs no second finding from the allow-list.
_ALSO_BLINDING = ("seam", "ctypes", "torch internals", "frames")


def scan_source(source: str, filename: str) -> list[tuple[str, int, str]]:
    """(file name, line, technique) for each use of a listed technique in one module's source,
    then each construct outside the allow-list (seam/allowed.py: "allow-list", a ``Finding``
    that says what it is), read from the same syntax tree."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError:
        return []  # it does not import either: its tests fail for that
    except (RecursionError, MemoryError, ValueError):
        return [(filename, 1, "dynamic code")]  # too deep to read: it cannot be checked
    found = []
    for node in ast.walk(tree):
        kind = None
        if isinstance(node, ast.Import):
            kind = next(filter(None, (_module_finding(a.name) for a in node.names)), None)
        elif isinstance(node, ast.ImportFrom) and node.module:
            kind = _module_finding(node.module) or next(filter(None, (
                _module_finding(f"{node.module}.{a.name}") or _ATTRIBUTES.get(a.name)
                or _OF_MODULE.get((node.module, a.name)) for a in node.names)), None)
        elif isinstance(node, ast.Attribute):
            kind = _ATTRIBUTES.get(node.attr)
            if isinstance(node.value, ast.Name):
                kind = kind or _OF_MODULE.get((node.value.id, node.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            kind = _CALLS.get(node.func.id)
            if node.func.id in _NAMED_BY_STRING and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id in _HIDING_PLACES and _folded(node.args[1]) is None:
                kind = "dynamic code"  # getattr(sys, name): which attribute is not written out
        if kind is None and isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)):
            text = _folded(node)  # "_" + "C", f"{'_'}C", "".join(["_", "C"]): a name in pieces
            kind = _STRINGS.get(text) if text else None
        elif isinstance(node, ast.Name):
            kind = _NAMES.get(node.id)
        elif isinstance(node, ast.Constant) and type(node.value) is str:
            kind = _STRINGS.get(node.value) or (_module_finding(node.value) if node.value.startswith("seam.") else None)
        if kind:
            found.append((filename, getattr(node, "lineno", 1), kind))
    named = {line for _, line, kind in found if kind in _ALSO_BLINDING}
    return found + [Finding(name, line, "allow-list", what) for name, line, what in check_tree(tree, filename)
                    if line not in named]


def _modules(folder: Path):
    """(file name, source) of each problem module in ``folder`` a worker could import (4 MiB at most)."""
    for problem in PROBLEMS:
        path = Path(folder) / f"{problem}.py"
        try:
            if path.is_file() and path.stat().st_size <= 4 << 20:
                yield path.name, path.read_text(errors="replace")
        except OSError:
            continue


# One module's findings by the hash of its text: uploads share most modules with each other and
# the suite grades the reference with one module replaced a hundred times, so each distinct text
# is parsed once per process (oldest forgotten first, past MEMO_SIZE texts).
MEMO_SIZE = 512
_memo: dict[tuple, tuple] = {}


def _remembered(finder, source: str, filename: str) -> list:
    key = (finder.__name__, hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest(), filename)
    if key not in _memo:
        if len(_memo) >= MEMO_SIZE:
            del _memo[next(iter(_memo))]
        _memo[key] = tuple(finder(source, filename))
    return list(_memo[key])


def scan(folder: Path) -> list[tuple[str, int, str]]:
    """Findings in the problem modules of ``folder`` (the files a worker can import), by file
    and line; every module counts for every problem, since all of them share one process."""
    return sorted({f for name, source in _modules(folder) for f in _remembered(scan_source, source, name)})


# Where code reaches torch's objects by a name it computes (getattr(torch, name), attrgetter, a
# pickle's globals). Not a finding: the honest-work watch then runs its profiler everywhere
# (seam/honest.py Honest.dynamic), since a watch by modes alone relies on the static look naming
# every switch that pops the modes. ``getattr(cfg, name)`` on their own objects is ordinary code.
_BY_NAME_CALLS = frozenset(_NAMED_BY_STRING)
_BY_NAME_ATTRIBUTES = frozenset({"attrgetter", "methodcaller", "__getattribute__", "getattr_static",
                                 "find_class", "import_module", "reload", "resolve_name", "locate"})
_BY_NAME_MODULES = ("pickle", "_pickle", "marshal", "copyreg", "shelve", "dill", "cloudpickle", "pydoc",
                    "runpy", "pkgutil", "joblib")
_UNPICKLING = {"weights_only": True, "allow_pickle": False}  # torch.load / np.load: anything else unpickles


def _root(node) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def names_at_run_time(folder: Path) -> list[tuple[str, int]]:
    """(file name, line) where the problem modules of ``folder`` reach torch by a computed name,
    alias ``getattr``, unpickle, or hide names (the dynamic-code and profiler findings count too)."""
    found = []
    for name, source in _modules(folder):  # each module read once, for both looks
        found += [(name, line) for _, line, kind in _remembered(scan_source, source, name)
                  if kind in ("dynamic code", "profilers")]
        found += _remembered(_by_name, source, name)
    return sorted(set(found))


def _by_name(source: str, filename: str) -> list[tuple[str, int]]:
    """names_at_run_time's own findings in one module's source."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return []
    nodes = list(ast.walk(tree))
    found = []
    torch_names = {"torch"} | {a.asname or a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import)
                               for a in n.names if a.name.split(".")[0] == "torch"} | {
        a.asname or a.name for n in nodes if isinstance(n, ast.ImportFrom)
        and (n.module or "").split(".")[0] == "torch" for a in n.names}
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    for node in nodes:
        hit = False
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in _BY_NAME_CALLS and node.args:
                hit = _root(node.args[0]) in torch_names and (len(node.args) < 2 or _folded(node.args[1]) is None)
            hit = hit or any(k.arg in _UNPICKLING and not (isinstance(k.value, ast.Constant)
                                                           and k.value.value is _UNPICKLING[k.arg])
                             for k in node.keywords)
        elif isinstance(node, ast.Name) and node.id in _BY_NAME_CALLS:  # g = getattr; map(getattr, ...)
            hit = id(node) not in called
        elif isinstance(node, ast.Attribute):
            hit = node.attr in _BY_NAME_ATTRIBUTES
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            hit = any(n.split(".")[0] in _BY_NAME_MODULES for n in names) or (
                isinstance(node, ast.ImportFrom) and any(a.name in _BY_NAME_ATTRIBUTES | _BY_NAME_CALLS
                                                         for a in node.names))
        if hit:
            found.append((filename, getattr(node, "lineno", 1)))
    return found


def named(found: list[tuple[str, int, str]], most: int = 4) -> str:
    """Each technique found with where, for a message: "threads (dtypes.py:3, dtypes.py:9) and a
    construct outside the allow-list (dtypes.py:12: a store on an attribute of the module os
    (os.write))"; past ``most`` places of one technique, how many more."""
    parts = []
    for kind in dict.fromkeys(kind for _, _, kind in found):
        at = [f for f in found if f[2] == kind]
        where = ("; " if any(getattr(f, "what", "") for f in at) else ", ").join(
            f"{f[0]}:{f[1]}" + (f": {f.what}" if getattr(f, "what", "") else "") for f in at[:most])
        parts.append(f"{NAMED.get(kind, kind)} ({where}{f' and {len(at) - most} more' if len(at) > most else ''})")
    return " and ".join(parts)


def verdict(found: list[tuple[str, int, str]]) -> str:
    """The one line a "how" test fails with; "" when nothing was found."""
    if not found:
        return ""
    most = 2 if any(getattr(f, "what", "") for f in found) else 4  # (an allow-list finding says more)
    return (f"not checked: how your code works cannot be verified, because your modules use "
            f"{named(found, most)}: {WHY[found[0][2]]}. Checks of how the work is done "
            f"score 0 while that code is there; remove it to earn them")


class Instrumentation:
    """The worker's own look around each "how" probe: its seam unchanged (every function, class
    and list of every seam module, by identity, as it was before any student module was
    imported), no thread left running that was not there before the call, no profiler or tracer
    installed by it."""

    def __init__(self):
        # the seam's modules as they were: a module removed or replaced later changes the print
        self.modules = [name for name in list(sys.modules) if name == "seam" or name.startswith("seam.")]
        self.seam = self._fingerprint()

    def _fingerprint(self) -> dict:
        return {(name, key): id(value) for name in self.modules if (module := sys.modules.get(name)) is not None
                for key, value in list(vars(module).items()) if callable(value) or type(value) is list}

    def before(self) -> tuple:
        return threading.active_count(), sys.getprofile(), sys.gettrace()

    def broken(self, before: tuple) -> str:
        """What the call changed, or ""."""
        now = self._fingerprint()
        changed = sorted(f"{m}.{k}" for (m, k), v in self.seam.items() if now.get((m, k)) != v)
        if changed:
            return f"the grader's probes were changed ({', '.join(changed[:3])})"
        threads, profile, trace = before
        if threading.active_count() > threads:
            return f"{threading.active_count() - threads} thread(s) it started were still running"
        if (sys.getprofile(), sys.gettrace()) != (profile, trace):
            return "a profiler or tracer was installed"
        return ""
