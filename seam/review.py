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

Three more notes are not about the watch. A module is read from its bytes as Python imports it
(its coding cookie, a BOM); one the look cannot decode is itself a note, since what it does went
unread. A run of lines as written in a module the rules take out of the sandbox (torch's Adam, the
FLOP counter: ``absent`` in seam/problems.py) is pasted code. And a function that a rule says must
go through einops, none of whose einops calls names an axis, computes with torch what the rule
says einops must.
"""

import ast
import hashlib
import importlib.machinery
import importlib.util
import io
import re
import tokenize
from pathlib import Path

from . import words
from .problems import PROBLEMS
from .upload import graded_files

# the kinds of note, in the order docs/honest-work.md's table lists them; each one's words (why it
# could blind the watch, what to write instead) are in seam/words.py, which no verdict hashes
KINDS = {kind: words.NOTES[kind] for kind in (
    "threads", "profilers", "frames", "gc", "ctypes", "torch internals", "code objects", "imports by name",
    "code from text", "unpickling", "the grader", "removed code", "unreadable module", "einops axes")}
# notes about the work, not the watch: they leave the watch as it is (``dynamic``)
NOT_THE_WATCH = ("removed code", "einops axes")

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
    "pickle": "unpickling", "_pickle": "unpickling", "marshal": "code from text",
    "dill": "unpickling", "cloudpickle": "unpickling", "code": "code from text",
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
        return "unpickling", "torch.load(weights_only=...) that may unpickle"
    if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)):
        text = folded(node)
        if text and (kind := _spelled(text)):
            return kind, f"the string {text[:60]!r}"
    return None


# Loading with weights_only off unpickles: the bytes may name any callable. A module that saves its
# own checkpoints (it calls torch.save) and loads one from a path or a buffer is resuming its own
# work: what it unpickles is what its own code pickled, and whatever that code does is written in
# the module, where this look and the run-time record see it. A load of bytes the module spells
# itself (a bytes constant, a decoder or a buffer fed text) is code from text whatever it saves.
FROM_TEXT = ("BytesIO", "b64decode", "b85decode", "a85decode", "b32decode", "b16decode", "fromhex",
             "unhexlify", "decompress", "encode", "bytes", "bytearray", "loads")


def _own_checkpoints(nodes: list, aliases: dict) -> set[int]:
    """The ids of the ``weights_only=`` keywords of loads of the module's own checkpoints: none
    unless the module calls ``torch.save``; then each ``weights_only`` of a call whose source (its
    first argument, or ``f=``) holds no bytes constant and no call of ``FROM_TEXT``."""
    torch_names = {name for name, module in aliases.items() if module == "torch"} | {"torch"}
    saves_from = {a.asname or a.name for n in nodes if isinstance(n, ast.ImportFrom) and n.module == "torch"
                  for a in n.names if a.name == "save"}

    def saves(call) -> bool:
        f = call.func
        return (isinstance(f, ast.Attribute) and f.attr == "save" and isinstance(f.value, ast.Name)
                and f.value.id in torch_names) or (isinstance(f, ast.Name) and f.id in saves_from)

    calls = [n for n in nodes if isinstance(n, ast.Call)]
    if not any(saves(c) for c in calls):
        return set()

    def from_text(source) -> bool:
        for n in ast.walk(source):
            if isinstance(n, ast.Constant) and isinstance(n.value, bytes):
                return True
            if isinstance(n, ast.Call):
                name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                if name in FROM_TEXT:
                    return True
        return False

    own = set()
    for call in calls:
        source = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "f"), None)
        if source is not None and not from_text(source):
            own |= {id(k) for k in call.keywords if k.arg == "weights_only"}
    return own


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


def scan_source(source: str | bytes, filename: str, pasted: bool = True) -> list[dict]:
    """The notes of one module: {"file", "line", "kind", "construct", "why", "instead"}, one per
    line and kind (the first construct of that kind on the line). ``source``: the file's bytes,
    read as Python reads them to import it (or its text, already decoded). ``pasted``: also
    compare its lines with the removed modules' files (see ``_pasted``)."""
    text, unread = (source, None) if isinstance(source, str) else _decoded(source)
    try:
        tree = ast.parse(source, filename)  # bytes: Python's own decoding (the cookie, a BOM)
    except SyntaxError:
        if unread:  # the bytes are not Python's to read: say so, whatever else is wrong
            return [note(filename, 1, "unreadable module", unread)]
        return []  # it does not import either: its tests fail for that
    except (RecursionError, MemoryError, ValueError):
        if unread:
            return [note(filename, 1, "unreadable module", unread)]
        return [note(filename, 1, "code from text", "a module too deeply nested to read")]
    nodes = list(ast.walk(tree))
    aliases = {a.asname: a.name for n in nodes if isinstance(n, ast.Import) for a in n.names if a.asname}
    found: dict[tuple, dict] = {}
    own = _own_checkpoints(nodes, aliases)
    for node in nodes:
        hit = _construct(node, aliases)
        if hit and id(node) in own:
            continue
        if hit:
            at = (getattr(node, "lineno", 1), hit[0])
            found.setdefault(at, note(filename, at[0], hit[0], hit[1]))
    more = _unnamed_axes(tree, filename)
    if unread:  # Python reads it, the look cannot decode it as Python does: what it holds is unread
        more.append(note(filename, 1, "unreadable module", unread))
    elif pasted:
        more += _pasted(text, filename)
    for n in more:
        found.setdefault((n["line"], n["kind"]), n)
    return sorted(found.values(), key=lambda n: (n["line"], n["kind"]))


def _decoded(data: bytes) -> tuple[str | None, str | None]:
    """(the text of a module's bytes decoded as Python decodes a source file, None), or (None,
    why it cannot be): the coding cookie or BOM of its first two lines, UTF-8 without one."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), None
    except (SyntaxError, LookupError) as e:
        return None, f"its encoding cannot be read ({str(e)[:60]})"
    except UnicodeDecodeError as e:
        return None, f"its bytes are not {e.encoding} (byte {e.start})"


# Pasted code: the upload's lines, each without spaces or comments, are looked up among those of
# the files of the modules the rules take out of the sandbox (their functions and module-level
# code; a class's body is left out, since an honest optimizer repeats torch's Optimizer idioms:
# the input checks, the closure, the loop over param_groups). A line of fewer than PASTE_CHARS
# characters is no evidence either way (``else:``, ``return loss``) and is passed over. A note
# needs PASTE_LINES lines found there, each at most PASTE_GAP lines of the upload after the last.
# Measured with torch 2.13: the honest AdamWs (the reference, its idioms, the alternatives, the
# _foreach_ sample, a CS336-style AdamW with torch's input checks) reach 6 such lines (the moments
# and bias corrections written as torch's single-tensor path writes them); a paste of
# _single_tensor_adam's body 112, edited every fourth line 102, its plain branch alone 14; torch's
# mm and bmm formulas 12, sdpa_flop_count 17.
PASTE_CHARS, PASTE_GAP, PASTE_LINES = 12, 1, 10
_removed: dict[str, str] | None = None  # a removed module's line -> the module: read once per process


def _lines(text: str) -> list[tuple[int, str]]:
    """(line number, the line without spaces and comments) of each line that holds a token;
    a string spanning lines counts on its first."""
    by_line: dict[int, list[str]] = {}
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in skip:
                by_line.setdefault(tok.start[0], []).append(re.sub(r"\s+", "", tok.string))
    except (tokenize.TokenError, SyntaxError):  # (Python parsed it: tokenize's own limits)
        return [(i, re.sub(r"\s+", "", line.split("#")[0]))
                for i, line in enumerate(text.splitlines(), 1) if line.split("#")[0].strip()]
    return [(i, "".join(parts)) for i, parts in sorted(by_line.items())]


def _removed_file(name: str) -> Path | None:
    """The source file of module ``name`` where this process's Python would find it, without
    importing it (nor asking sys.modules, where seam/absent.py may have put a stand-in)."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), spec.submodule_search_locations)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _removed_lines() -> dict[str, str]:
    global _removed
    if _removed is None:
        found: dict[str, str] = {}
        for name in sorted({a for p in PROBLEMS.values() for r, _ in p.rules for a in r.absent
                            if not a.startswith("aten.")}):
            path = _removed_file(name)
            try:
                text = path.read_text("utf-8") if path else ""
                tree = ast.parse(text)
            except (OSError, SyntaxError, ValueError):
                continue
            classes = {n for c in tree.body if isinstance(c, ast.ClassDef) for n in range(c.lineno, c.end_lineno + 1)}
            for number, line in _lines(text):
                if number not in classes and len(line) >= PASTE_CHARS:
                    found.setdefault(line, name)
        _removed = found
    return _removed


def _pasted(text: str, filename: str) -> list[dict]:
    """A note at the first line of the first run of the upload's lines found in a removed
    module's file (PASTE_LINES of them, PASTE_GAP apart at most), or none."""
    removed = _removed_lines()
    if not removed:
        return []
    run: list[tuple[int, str]] = []
    missed = 0
    for number, line in _lines(text):
        if len(line) < PASTE_CHARS:
            continue
        if line in removed:
            run, missed = run + [(number, line)], 0
            if len(run) >= PASTE_LINES:
                first, module = run[0][0], removed[run[0][1]]
                written = re.split(r"\r\n|\r|\n", text)[first - 1].strip()  # (the lines tokenize counts)
                return [note(filename, first, "removed code", f"{module}'s lines from here on: {written[:60]}")]
        else:
            missed += 1
            if missed > PASTE_GAP:
                run = []
    return []


# einops' functions and layers -> where each takes its pattern: a position (-1: the last one)
EINOPS_PATTERN = {"rearrange": 1, "reduce": 1, "repeat": 1, "einsum": -1, "pack": 1, "unpack": 2,
                  "parse_shape": 1, "Rearrange": 0, "Reduce": 0, "EinMix": 0}


def _unnamed_axes(tree: ast.Module, filename: str) -> list[dict]:
    """A note at each function a ``must`` rule covers in this module that returns a value and
    whose einops calls (its own, and those of the module's functions and names it uses) name no
    axis: none at all, or each pattern a constant string of nothing but ``...``, brackets, digits
    and spaces. A pattern made at run time, or an einops function passed on rather than called,
    may name any: no note."""
    problem = problem_of(filename)
    covered = {name for r, names in (PROBLEMS[problem].rules if problem else ()) if r.must == "einops"
               for name in names}
    if not covered:
        return []
    bound: dict[str, str] = {}  # a name the module binds -> the einops module or function it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "einops" or a.name.startswith("einops."):
                    bound[a.asname or "einops"] = a.name if a.asname else "einops"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "einops" or node.module.startswith("einops.")):
            for a in node.names:
                if a.name == "*":
                    bound.update({f: f"{node.module}.{f}" for f in EINOPS_PATTERN})
                else:
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"
    top: dict[str, list] = {}  # the module's own functions and names, by name: what a function may use
    blocks = list(tree.body)
    while blocks:
        node = blocks.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    top.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            blocks += [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
                       *(s for h in getattr(node, "handlers", ()) for s in h.body)]

    def einops_function(node) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in bound:
            return None
        name = ".".join([bound[node.id], *reversed(parts)]).rpartition(".")[2]
        return name if name in EINOPS_PATTERN else None

    def names_an_axis(call: ast.Call, function: str) -> bool:
        pattern = next((k.value for k in call.keywords if k.arg == "pattern"), None)
        if pattern is None:
            where = EINOPS_PATTERN[function]
            if any(isinstance(a, ast.Starred) for a in call.args) or not call.args or where >= len(call.args):
                return True  # spread or missing: cannot tell
            pattern = call.args[where]
        text = folded(pattern)
        return text is None or re.search(r"[^\W\d_]", text.replace("...", "")) is not None

    def named(function) -> bool | None:
        """True: an einops call names an axis (or may); False: einops calls, none naming one;
        None: no einops call."""
        seen, todo, called = {id(function)}, [function], None
        while todo:
            nodes = list(ast.walk(todo.pop()))
            funcs = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
            for node in nodes:
                if isinstance(node, ast.Call) and (name := einops_function(node.func)):
                    if names_an_axis(node, name):
                        return True
                    called = False
                elif isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in funcs \
                        and einops_function(node):
                    return True  # passed on (functools.partial, map): its pattern is given elsewhere
                if isinstance(node, ast.Name) and node.id in top:
                    for used in top[node.id]:
                        if id(used) not in seen:
                            seen.add(id(used))
                            todo.append(used)
        return called

    def returns(function) -> bool:  # (one that returns nothing is unwritten: its tests say so)
        return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(function))

    out = []
    for name in sorted(covered):
        for function in top.get(name, ()):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and returns(function) \
                    and not (found := named(function)):
                what = "no einops call" if found is None else "einops calls whose patterns name no axis"
                out.append(note(filename, function.lineno, "einops axes", f"def {name}: {what}"))
    return out


def note(filename: str, line: int, kind: str, construct: str, seen: str = "in the text") -> dict:
    why, instead = KINDS[kind]
    return {"file": filename, "line": int(line), "kind": kind, "construct": construct[:120],
            "why": why, "instead": instead, "seen": seen}


def _modules(folder: Path):
    """(file name, bytes) of each file of ``folder`` a worker could import: the problem modules and
    the helpers they import (seam/upload.py ``graded_files``, within its limits), by their path in
    the folder ("_util.py"); the bytes, which Python decodes itself when it imports them."""
    graded = graded_files(folder)
    for path in graded.files:
        try:
            yield graded.name(path), path.read_bytes()
        except OSError:
            continue


# A module's notes by the hash of its text: uploads share most modules and the suite grades the
# reference with one module replaced a hundred times, so each text is read once per process.
MEMO_SIZE = 512
_memo: dict[tuple, tuple] = {}


def scan(folder: Path, pasted: bool = True) -> list[dict]:
    """The notes of the problem modules of ``folder`` (the files a worker can import); ``pasted``:
    also those of code pasted from the removed modules (which reads torch's files)."""
    out = []
    for name, data in _modules(folder):
        key = (hashlib.sha256(data).digest(), name, pasted)
        if key not in _memo:
            if len(_memo) >= MEMO_SIZE:
                del _memo[next(iter(_memo))]
            _memo[key] = tuple(scan_source(data, name, pasted))
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


def at_run_time(n: dict) -> bool:
    """Whether a note was seen at run time (by the watch, or in the record of what ran), not read
    in the text."""
    return str(n.get("seen", "")).startswith("at run time")


def ordered(notes: list[dict]) -> list[dict]:
    """The notes in the order a summary shows them: one of each kind in turn, so that many of one
    kind cannot push another kind out of the lines shown; in each turn (and within a kind) the
    notes seen at run time first, then those of the text, each in the order given."""
    runtime_first = sorted(notes, key=lambda n: not at_run_time(n))
    turn: dict[str, int] = {}
    ranked = []
    for i, n in enumerate(runtime_first):
        turn[n["kind"]] = turn.get(n["kind"], -1) + 1
        ranked.append((turn[n["kind"]], not at_run_time(n), i))
    return [runtime_first[i] for *_, i in sorted(ranked)]


def tally(notes: list[dict]) -> str:
    """How many notes of each kind, across files: "9 notes: 6 frames, 2 threads, 1 gc"."""
    kinds: dict[str, int] = {}
    for n in notes:
        kinds[n["kind"]] = kinds.get(n["kind"], 0) + 1
    by_count = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    return (f"{len(notes)} note{'s' * (len(notes) != 1)}: "
            + ", ".join(f"{count} {kind}" for kind, count in by_count))


# What the watch notes at run time (seam/honest.py): id -> (its kind, the grader's words for it,
# from seam/words.py; None: any kind). The worker sends the id with kind, file and line, never words:
# ``valid`` writes the note from this table, so nothing the student's process says reaches a report.
# A new one is a line here and its words there; the worker notes it with
# ``Honest.note(kind, id, frame, functions)``.
RUNTIME = {what: (kind, words.RUNTIME[what]) for what, kind in {
    "watch changed": "the grader",
    "probes changed": "the grader",
    "modes left off": "torch internals",
    "watch modes missing": "torch internals",
    "modes popped": "torch internals",
    "torch function disabled": "torch internals",
    "mode stack popped": "torch internals",
    "mode replaced": "torch internals",
    "dispatch key changed": "torch internals",
    "profiler replaced": "profilers",
    "profiler set": "profilers",
    "profiler left": "profilers",
    "watch profiler missing": "profilers",
    "thread ran": "threads",
    "thread started": "threads",
    "process started": "threads",
    "thread left running": "threads",
    "seen": None,
}.items()}
# The descriptions seam/honest.py's watch passes to ``Honest.note`` (its first words, or a name in
# them) -> the id each is noted under; a description none of these matches is noted as "seen".
_DESCRIBED = (("the grader's rules or its watch", "watch changed"), ("the grader's probes changed", "probes changed"),
              ("PyTorch's modes left switched off", "modes left off"), ("torch._C.", "torch function disabled"),
              ("_disable_current_modes", "modes popped"), ("_pop_mode", "modes popped"),
              ("no_dispatch", "modes popped"), ("torch's function-mode stack", "mode stack popped"),
              ("torch's dispatch-mode stack", "mode stack popped"), ("torch's function mode replaced", "mode replaced"),
              ("a dispatch key", "dispatch key changed"), ("a profiler of theirs in place", "profiler replaced"),
              ("sys.setprofile", "profiler set"), ("sys.settrace", "profiler set"),
              ("a profiler or tracer installed", "profiler left"), ("a thread of theirs ran", "thread ran"),
              ("another thread", "thread started"), ("another process", "process started"),
              ("thread(s) it started still running", "thread left running"),
              ("the watch's torch modes not in place", "watch modes missing"),
              ("the watch's profiler not in place", "watch profiler missing"))


def runtime_id(kind: str, what: str) -> str:
    """The RUNTIME id a note of ``kind`` seen at run time is sent under: ``what`` itself where it
    is one (of that kind), else the id of the watch's description ``what``, else "seen"."""
    if what in RUNTIME and RUNTIME[what][0] in (None, kind):
        return what
    for words, found in _DESCRIBED:
        if words in what and RUNTIME[found][0] == kind:
            return found
    return "seen"


def sent(file: str, line: int, kind: str, what: str) -> dict:
    """A note seen at run time as the worker sends it: where, the kind, the RUNTIME id."""
    return {"file": file, "line": int(line), "kind": kind, "what": runtime_id(kind, what)}


def valid(n) -> dict | None:
    """A note the worker sent (the student's process: anything may come), or None: its kind,
    problem module, line and RUNTIME id checked, and the note written in the grader's own words
    for that id (whatever else it held, text included, is dropped)."""
    if type(n) is not dict:
        return None
    kind, file, line, what = n.get("kind"), n.get("file"), n.get("line"), n.get("what")
    if type(kind) is not str or kind not in KINDS or type(what) is not str or what not in RUNTIME \
            or RUNTIME[what][0] not in (None, kind):
        return None
    if type(file) is not str or problem_of(file) is None or type(line) is not int:
        return None
    return note(f"{problem_of(file)}.py", max(0, min(line, 10**7)), kind, RUNTIME[what][1], seen="at run time")


def dynamic(folder: Path) -> bool:
    """Whether the watch should run its profiler for every rule: the text holds a note of what
    could blind it (run in the worker, it reads no removed module's file)."""
    return any(n["kind"] not in NOT_THE_WATCH for n in scan(folder, pasted=False))
