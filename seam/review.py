"""Review notes: constructs that could blind the honest-work watch, for a person to look at.

Points rest on evidence: what a function returned, forbidden code that is not in the worker
(seam/absent.py), a forbidden call seen to run (seam/honest.py). What a module's text might do is
suspicion, never evidence, so it takes no point: each construct below that could switch the
watch off (a thread, a profiler, a frame, gc, ctypes, torch's C internals, code objects, a
module imported by a name made at run time, code made from text, the grader's own modules) is a
note: file, line, what it is, and what to write instead. The grader adds the points that would be
at stake if it hid something (those of the module's ruled functions and "how" checks), and shows
it to the student in their own pytest and to the TA by name. A note belongs to the module whose
text holds it; it spreads to nothing else.

The look reads the syntax tree only (nothing runs): imports, attribute names, calls of a few
builtins, and strings that spell one of these names (also pieced together from constants:
``"se" + "am"``, ``"".join(["_", "C"])``). It is deliberately a short list of names, not a model
of what code may do: an honest line is never refused by it, and a determined student who hides a
name from it gains nothing, because the points are held by absence and behaviour.
"""

import ast
import hashlib
from pathlib import Path

from .problems import PROBLEMS

# kind -> (why it could blind the watch, what to write instead); docs/honest-work.md's table is made from this
KINDS = {
    "threads": ("work in another thread or process escapes the watch, which follows the calling thread",
                "do the work in the calling thread"),
    "profilers": ("a profiler or tracer of yours replaces the watch's own",
                  "leave sys.setprofile / settrace and sys.monitoring alone"),
    "frames": ("a frame reaches the locals and globals of the grader's code running around yours",
               "pass values as arguments; for a function's parameters use inspect.signature"),
    "gc": ("gc's object lists reach the grader's own objects (the watch's record)",
           "keep references to your own objects; gc.collect() is fine"),
    "ctypes": ("native calls can remove the watch's hooks or rewrite memory", "write it in Python or torch"),
    "torch internals": ("torch._C and the mode stacks switch off the modes that watch torch calls",
                        "use torch's public API"),
    "code objects": ("a function's code replaced or made by hand runs as no file of yours",
                     "write the function out"),
    "imports by name": ("a module reached by a name made at run time (importlib, pydoc.locate, "
                        "sys.modules, __import__, a path added to sys.path) can be the grader's own",
                        "import modules with an import statement"),
    "code from text": ("code made from a string or from pickled bytes runs in no file of yours",
                       "write the code out; load checkpoints with weights_only=True"),
    "the grader": ("the grader's own modules (seam) hold the watch and its record",
                   "nothing of the grader's is needed: the tests call your functions"),
}

# an import of one of these modules, or of a submodule
MODULES = {
    "threading": "threads", "_thread": "threads", "concurrent": "threads", "multiprocessing": "threads",
    "asyncio": "threads", "subprocess": "threads", "pty": "threads", "torch.multiprocessing": "threads",
    "ctypes": "ctypes", "_ctypes": "ctypes", "cffi": "ctypes",
    "torch._C": "torch internals", "torch.utils._python_dispatch": "torch internals",
    "torch.utils._mode_utils": "torch internals", "torch.overrides": "torch internals",
    "torch._dispatch": "torch internals",
    "importlib": "imports by name", "pydoc": "imports by name", "runpy": "imports by name",
    "pkgutil": "imports by name", "builtins": "imports by name",
    "pickle": "code from text", "_pickle": "code from text", "marshal": "code from text",
    "dill": "code from text", "cloudpickle": "code from text", "code": "code from text",
    "codeop": "code from text",
    "seam": "the grader",
}
# x.<name>, `from m import <name>`, or a string that spells <name>
ATTRIBUTES = {
    **dict.fromkeys(("threading", "_thread", "Thread", "start_new_thread", "_start_new_thread",
                     "start_joinable_thread", "ThreadPoolExecutor", "ProcessPoolExecutor", "Popen",
                     "fork", "forkpty", "posix_spawn", "posix_spawnp", "fork_exec"), "threads"),
    **dict.fromkeys(("setprofile", "settrace", "setprofile_all_threads", "settrace_all_threads",
                     "monitoring", "PyEval_SetProfile", "PyEval_SetTrace"), "profilers"),
    **dict.fromkeys(("_getframe", "_current_frames", "currentframe", "f_locals", "f_globals", "f_back",
                     "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame", "__globals__",
                     "__closure__", "cell_contents", "getouterframes", "getinnerframes", "walk_stack",
                     "walk_tb"), "frames"),
    **dict.fromkeys(("get_objects", "get_referrers", "get_referents"), "gc"),
    **dict.fromkeys(("ctypes", "pythonapi", "CDLL", "PyDLL", "cdll", "pydll"), "ctypes"),
    **dict.fromkeys(("_C", "_python_dispatch", "_mode_utils", "DisableTorchFunction",
                     "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "no_dispatch",
                     "_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_push_mode",
                     "_pop_torch_function_stack", "_pop_torch_dispatch_stack", "_set_torch_function_mode",
                     "__torch_function__", "__torch_dispatch__",
                     "_dispatch_tls_set_dispatch_key_excluded",
                     "_dispatch_tls_set_dispatch_key_included"), "torch internals"),
    **dict.fromkeys(("__code__", "co_code", "CodeType", "FunctionType"), "code objects"),
    **dict.fromkeys(("import_module", "__import__", "locate", "resolve_name", "find_class", "__builtins__",
                     "reload", "spec_from_file_location", "exec_module", "meta_path", "path_hooks",
                     "__subclasses__"), "imports by name"),
}
OF_MODULE = {("sys", "modules"): "imports by name", ("sys", "path"): "imports by name",
             ("os", "system"): "threads", ("os", "popen"): "threads", ("os", "execv"): "threads",
             ("os", "execve"): "threads", ("torch", "jit"): "code objects"}  # only on that module
CALLS = {"exec": "code from text", "eval": "code from text", "compile": "code from text",
         "__import__": "imports by name", "breakpoint": "frames"}  # a builtin called by its name
# a string is a note where it spells a name above that is no ordinary word
_SPELLED = {name: kind for name, kind in ATTRIBUTES.items()
            if name.startswith("_") or name[:1].isupper() or name in (
                "setprofile", "settrace", "currentframe", "get_objects", "get_referrers", "get_referents",
                "f_locals", "f_globals", "f_back", "tb_frame", "import_module", "pythonapi")}


def folded(node) -> str | None:
    """The string an expression of string constants makes ("_" + "C", an f-string of constants,
    "".join([...]) of constants), or None when it is not one."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded(node.left), folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [folded(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep, parts = folded(node.func.value), [folded(e) for e in node.args[0].elts]
        return sep.join(parts) if sep is not None and all(p is not None for p in parts) else None
    return None


def _module(name: str) -> str | None:
    for prefix, kind in MODULES.items():
        if name == prefix or name.startswith(prefix + "."):
            return kind
    return None


def _spelled(text: str) -> str | None:
    return _SPELLED.get(text) or ("the grader" if text == "seam" or text.startswith("seam.") else None)


def _construct(node, aliases: dict) -> tuple[str, str] | None:
    """(kind, the construct as written) for one node of the tree, or None; ``aliases``: the
    module each name an import binds stands for (``import sys as _sys``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if kind := _module(alias.name):
                return kind, f"import {alias.name}"
    elif isinstance(node, ast.ImportFrom) and node.module:
        for alias in node.names:
            kind = _module(node.module) or _module(f"{node.module}.{alias.name}") or ATTRIBUTES.get(alias.name)
            if kind:
                return kind, f"from {node.module} import {alias.name}"
    elif isinstance(node, ast.Attribute):
        kind = ATTRIBUTES.get(node.attr)
        if kind is None and isinstance(node.value, ast.Name):
            kind = OF_MODULE.get((aliases.get(node.value.id, node.value.id), node.attr))
        if kind:
            return kind, _dotted(node)
    if (named := _by_name(node)) is not None:  # the attribute asked for by a written-out name
        base, attr, written = named
        kind = ATTRIBUTES.get(attr) or (OF_MODULE.get((aliases.get(base, base), attr)) if base else None)
        if kind:
            return kind, written
    elif isinstance(node, ast.Name) and node.id in CALLS and node.id == "__import__":
        return CALLS[node.id], "__import__"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CALLS:
        return CALLS[node.func.id], f"{node.func.id}(...)"
    elif isinstance(node, ast.keyword) and node.arg == "weights_only" and not (
            isinstance(node.value, ast.Constant) and node.value.value is True):
        return "code from text", "torch.load(weights_only=...) that may unpickle"
    if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)):
        text = folded(node)
        if text and (kind := _spelled(text)):
            return kind, f"the string {text[:60]!r}"
    return None


def _by_name(node) -> tuple[str | None, str, str] | None:
    """(the name of the object, the attribute, as written) of ``getattr(x, "name")``,
    ``vars(x)["name"]`` and ``x.__dict__["name"]``: the same attribute as ``x.name`` (so
    ``getattr(sys, "modules")`` is ``sys.modules``, though "modules" alone is an ordinary word)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2:
        owner, attr = node.args[0], folded(node.args[1])
    elif isinstance(node, ast.Subscript) and (
            isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "vars" and len(node.value.args) == 1
            or isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__"):
        owner = node.value.args[0] if isinstance(node.value, ast.Call) else node.value.value
        attr = folded(node.slice)
    else:
        return None
    if attr is None:
        return None
    base = owner.id if isinstance(owner, ast.Name) else None
    return base, attr, f"{base or '(...)'}.{attr} by its name"


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "(...)")
    return ".".join(reversed(parts))


def scan_source(source: str, filename: str) -> list[dict]:
    """The notes of one module's text: {"file", "line", "kind", "construct", "why", "instead"},
    one per line and kind (the first construct of that kind on the line)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError:
        return []  # it does not import either: its tests fail for that
    except (RecursionError, MemoryError, ValueError):
        return [note(filename, 1, "code from text", "a module too deeply nested to read")]
    nodes = list(ast.walk(tree))
    aliases = {a.asname: a.name for n in nodes if isinstance(n, ast.Import) for a in n.names if a.asname}
    found: dict[tuple, dict] = {}
    for node in nodes:
        hit = _construct(node, aliases)
        if hit:
            at = (getattr(node, "lineno", 1), hit[0])
            found.setdefault(at, note(filename, at[0], hit[0], hit[1]))
    return sorted(found.values(), key=lambda n: (n["line"], n["kind"]))


def note(filename: str, line: int, kind: str, construct: str, seen: str = "in the text") -> dict:
    why, instead = KINDS[kind]
    return {"file": filename, "line": int(line), "kind": kind, "construct": construct[:120],
            "why": why, "instead": instead, "seen": seen}


def _modules(folder: Path):
    """(file name, source) of each problem module in ``folder`` a worker could import (4 MiB at most)."""
    for problem in PROBLEMS:
        path = Path(folder) / f"{problem}.py"
        try:
            if path.is_file() and path.stat().st_size <= 4 << 20:
                yield path.name, path.read_text(errors="replace")
        except OSError:
            continue


# A module's notes by the hash of its text: uploads share most modules and the suite grades the
# reference with one module replaced a hundred times, so each text is read once per process.
MEMO_SIZE = 512
_memo: dict[tuple, tuple] = {}


def scan(folder: Path) -> list[dict]:
    """The notes of the problem modules of ``folder`` (the files a worker can import)."""
    out = []
    for name, source in _modules(folder):
        key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest(), name)
        if key not in _memo:
            if len(_memo) >= MEMO_SIZE:
                del _memo[next(iter(_memo))]
            _memo[key] = tuple(scan_source(source, name))
        out += [dict(n) for n in _memo[key]]
    return out


def problem_of(filename: str) -> str | None:
    """The problem whose module ``filename`` is ("optim.py" -> "optim"), or None."""
    stem = filename.removesuffix(".py")
    return stem if filename.endswith(".py") and stem in PROBLEMS else None


def said(n: dict) -> str:
    """One line for a person: where, what, what could follow, what to write instead, and the
    points at stake where the grader has counted them."""
    stake = n.get("at_stake")
    stake_text = (f"; {stake:g} points would be at stake if it hid something" if stake else "")
    where = f"{n['file']}:{n['line']}" if n.get("line") else n["file"]
    return (f"review ({n.get('seen', 'in the text')}): {where}: {n['kind']} ({n['construct']}): "
            f"{n['why']}; no point is taken for it, a person reviews the line{stake_text}. "
            f"Instead: {n['instead']}")


def valid(n) -> dict | None:
    """A note as the worker sent it (the student's process: anything may come), checked and cut
    to plain data, or None."""
    if type(n) is not dict or n.get("kind") not in KINDS:
        return None
    file, line, construct = n.get("file"), n.get("line"), n.get("construct")
    if type(file) is not str or problem_of(file) is None or type(line) is not int or type(construct) is not str:
        return None
    return note(file, max(0, min(line, 10**7)), n["kind"], construct, seen="at run time")


def dynamic(folder: Path) -> bool:
    """Whether the watch should run its profiler for every rule: the text holds a note."""
    return bool(scan(folder))
