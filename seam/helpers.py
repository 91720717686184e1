"""A student's helper modules: a module the problem modules import from beside them
(``_util.py``, or a small package folder ``helpers/``), graded with them.

Which files are helpers is read from the problem modules' text, never run: each import of theirs
(at any depth: a function's own ``import`` too) that names a file beside them. Three spellings:

    from ._util import clamp        # relative: the package's own submodule, as students are told
    from _util import clamp         # absolute, as a script beside its helper would write it
    import _util

The relative spelling needs nothing: the submission is a package whose ``__path__`` is its
folder (seam/callee.py load_package). The absolute one would need the folder on ``sys.path``,
where any file of the upload could stand in for a library (a ``torch.py``, an ``inspect.py``) or
for the grader's own modules. It is never put there: instead the package's modules are compiled
with each absolute import of one of its helpers rewritten to the relative one (``HelperLoader``),
so the helper is the package's submodule and nothing outside the package ever sees it under a
top-level name. Only names that are no module of Python's own (``sys.stdlib_module_names``) and
none of the grader's or the assignment's libraries (``RESERVED``) are rewritten: ``import
inspect`` is Python's inspect, beside an ``inspect.py`` or not, in the student's pytest and in
the grader alike (the same code loads both: seam/callee.py). A helper imported by a name made at
run time (``importlib.import_module("_u" + "til")``) is found by no reading of the text: it is not
copied, and the import itself is a note for review as before (seam/review.py).
"""

import ast
import hashlib
import importlib.machinery
import sys
from pathlib import Path

from .problems import PROBLEMS

# Top-level names a helper may never take for the absolute spelling: the grader's and the
# assignment's own packages and the libraries the graded code runs on. (Python's own modules are
# added below; a relative import of a helper so named is still the package's submodule, harmless.)
RESERVED = frozenset({
    "seam", "grader", "tests", "conftest", "reference", "student_stubs", "submission", "assignment",
    "torch", "torchgen", "functorch", "einops", "jaxtyping", "beartype", "numpy", "typing_extensions",
    "wadler_lindig", "pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "sympy", "mpmath",
    "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "triton", "setuptools", "pkg_resources",
    "pip", "_distutils_hack", "site", "sitecustomize", "usercustomize", "yaml", "tqdm", "copydetect",
    "pygments", "limits", "landlock", "seccomp", "worker", "zygote", "zygote_server", "spawn",
})


def reserved(name: str) -> bool:
    """Whether ``import name`` must stay the library's (or Python's) whatever the upload holds."""
    return (name in RESERVED or name in sys.stdlib_module_names or name in sys.builtin_module_names
            or name.startswith("__") or name in PROBLEMS)


_MEMO: dict[tuple, tuple[frozenset[str], frozenset[str]]] = {}  # by the text's hash: each upload is read
MEMO_SIZE = 512                                                   # several times (locate, copy, review, load)


def imported(source: bytes | str, level: int = 1) -> tuple[frozenset[str], frozenset[str]]:
    """``_imported``, once per text."""
    data = source.encode() if isinstance(source, str) else source
    key = (hashlib.sha256(data).digest(), level)
    if key not in _MEMO:
        if len(_MEMO) >= MEMO_SIZE:
            del _MEMO[next(iter(_MEMO))]
        relative, absolute = _imported(data, level)
        _MEMO[key] = frozenset(relative), frozenset(absolute)
    return _MEMO[key]


def _imported(source: bytes, level: int) -> tuple[set[str], set[str]]:
    """(names imported relatively from the submission's folder, names imported absolutely): the
    first part of each, as a file beside the problem modules would be named. ``level``: the dots
    that reach that folder from the module (1; 2 from a module of a helper package). A module that
    does not parse imports nothing (its import fails in the grader as in the student's pytest)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(), set()
    relative, absolute = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            absolute |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                absolute.add(node.module.partition(".")[0])
            elif node.level == level and node.module:
                relative.add(node.module.partition(".")[0])
            elif node.level == level:  # from . import _util
                relative |= {a.name for a in node.names if a.name != "*"}
    return relative, absolute


class _Rewrite(ast.NodeTransformer):
    """Each absolute import of a helper (a name of ``names``), made relative: ``level`` dots reach
    the submission package from the module being compiled (1 from a module of its folder, 2 from
    a module of a helper package's)."""

    def __init__(self, names: frozenset[str], level: int):
        self.names, self.level = names, level

    def _ours(self, dotted: str | None) -> bool:
        return dotted is not None and dotted.partition(".")[0] in self.names

    def visit_ImportFrom(self, node):
        if node.level == 0 and self._ours(node.module):
            return ast.copy_location(ast.ImportFrom(module=node.module, names=node.names, level=self.level), node)
        return node

    def visit_Import(self, node):
        if not any(self._ours(a.name) for a in node.names):
            return node
        out = []
        for a in node.names:
            head, _, rest = a.name.partition(".")
            if head not in self.names:
                out.append(ast.Import(names=[a]))
            elif not rest:                       # import _util [as u]
                out.append(ast.ImportFrom(module=None, names=[ast.alias(head, a.asname)], level=self.level))
            elif a.asname:                       # import helpers.maths as m
                parent, _, leaf = a.name.rpartition(".")
                out.append(ast.ImportFrom(module=parent, names=[ast.alias(leaf, a.asname)], level=self.level))
            else:                                # import helpers.maths: loads it, binds helpers
                parent, _, leaf = a.name.rpartition(".")
                hidden = "_helper_import_" + a.name.replace(".", "_")
                out += [ast.ImportFrom(module=parent, names=[ast.alias(leaf, hidden)], level=self.level),
                        ast.ImportFrom(module=None, names=[ast.alias(head)], level=self.level),
                        ast.Delete(targets=[ast.Name(hidden, ast.Del())])]
        return [ast.copy_location(n, node) for n in out]


def rewritten(source: bytes, path: str, names: frozenset[str], level: int):
    """The module's code, each absolute import of a helper of ``names`` made relative (the lines
    and the file name as written: tracebacks and the watch see the student's own lines)."""
    if not names:
        return compile(source, path, "exec", dont_inherit=True)
    tree = ast.parse(source, path)
    tree = ast.fix_missing_locations(_Rewrite(names, level).visit(tree))
    return compile(tree, path, "exec", dont_inherit=True)


class HelperLoader(importlib.machinery.SourceFileLoader):
    """The loader of the submission's files: Python's, but each module compiled by ``rewritten``
    from its text every time (a cached .pyc, the student's own or an older one, is never read:
    it would hold the imports unrewritten)."""

    names: frozenset[str] = frozenset()
    level = 1

    def get_code(self, fullname):
        path = self.get_filename(fullname)  # (a package's __init__ is one level further down)
        return rewritten(self.get_data(path), path, self.names, self.level + self.is_package(fullname))


def finder(folder: Path, names: frozenset[str], level: int):
    """A FileFinder for ``folder`` whose .py files load with ``HelperLoader`` (``names``: the
    helpers an absolute import may name)."""
    loader = type("HelperLoader", (HelperLoader,), {"names": names, "level": level})
    return importlib.machinery.FileFinder(str(folder), (loader, [".py"]))


def install(folder: Path, names: frozenset[str], packages: list[str]) -> None:
    """Make the package folder ``folder`` (and the helper package folders ``packages`` in it)
    load through ``HelperLoader``: their entries in the path finders' cache, where the
    package's ``__path__`` is looked up. No other folder, and no other import, is touched."""
    sys.path_importer_cache[str(folder)] = finder(folder, names, 1)
    for package in packages:
        sys.path_importer_cache[str(Path(folder) / package)] = finder(Path(folder) / package, names, 2)
