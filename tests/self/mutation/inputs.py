"""What a problem's recorded verdicts depend on, as one hash per problem (``tests_hash``).

A mutant's verdict (tests/self/mutation) and a shortcut's kept points (tests/self/behaviour.py)
come from grading a submission on one problem's graded tests. What can move them:

- the submission itself: the mutant's own module is hashed apart (its ``source``); the
  submission's other modules are the reference's (``reference_with``): those the module imports
  (``_imported_modules``: the worker loads a problem's module only when its tests call it) are
  hashed here byte for byte;
- the problem's own files of the layout that the grade reads (seam/problems.py ``LAYOUT``): its
  public and hidden tests, snapshot, helpers and probe;
- of the registry (seam/problems.py), only what concerns the problem (``registry_part``);
- the graded machinery the run actually imports: the import closure (``closure``) of those
  files and of the runner's own modules (grade.py, the seam, the sandbox's worker), followed
  through every module of the repository and cut down to the graded files
  (grader/provenance.py ``graded_files``). A module nothing of the run imports (seam/check.py,
  the students' own command) is not in it; another problem's layout files (its tests, its
  probe: the probes' package imports them all) are left out, as they decide no verdict here.

Python files of the machinery are hashed by their syntax tree without docstrings
(grader/provenance.py ``syntax``: no comments, no layout, no line numbers, no docstrings), so an
edit to a comment, a docstring or whitespace moves no hash; the words of a note for review are in
a module of words that no hash covers (grader/provenance.py ``WORDING``, seam/words.py), so
rewording one moves none either. A string in code (a name the review looks for, a message built
in a function) is in the tree and does. The registry part and data files are hashed as text.
A graded test file is hashed without its points markers' numbers (grader/provenance.py ``unweighted``): points decide
no mutant's verdict and no shortcut's, so a re-weighting restales neither record (the grades'
tests hash, grader/provenance.py, does move: a class's scores do).
"""

import ast
import hashlib
from functools import lru_cache
from pathlib import Path

from grader.paths import REFERENCE, ROOT, SEAM, problem_file
from grader.provenance import graded_files, syntax, unweighted, weighed
from grader.scaffold import REGISTRY, registry_lines
from seam.problems import LAYOUT, folder, owner
from tests.self.imports import graph, modules

# The packages a grade's imports can reach in the repository (the project's own suite is not
# imported by a graded test: left out, it is most of the reading).
TOPS, SKIP = ("grader", "seam", "tests"), ("tests/self",)

# What the runner loads to grade without importing it by name: grade.run_tests and InProcess in
# this process, the conftest pytest loads, and the sandbox's worker scripts, which are run.
RUNNER = ("grader/grade.py", "seam/__init__.py", "seam/impl.py", "tests/conftest.py", "grader/sandbox/worker.py",
          "grader/sandbox/zygote_server.py",
          "grader/sandbox/spawn.py")


def registry_part(text: str, problem: str) -> str:
    """The registry's text as it concerns ``problem``: its lines less those that concern other
    problems only (grader/scaffold.py ``registry_lines``: their entries, NO_RULE lines, rules)."""
    owned = registry_lines(text)
    others = set().union(*(lines for p, lines in owned.items() if p != problem)) - owned.get(problem, set())
    return "".join(line for i, line in enumerate(text.splitlines(keepends=True)) if i not in others)


@lru_cache(maxsize=None)
def _house(root: Path) -> tuple[dict[str, Path], dict[str, set[str]]]:
    """The repository's modules (dotted name -> file) and who imports whom (tests/self/imports.py:
    read with ast, a lazy import inside a function counting too), read once per process."""
    return modules(root, TOPS, SKIP), graph(root, TOPS, SKIP)


def closure(starts, root: Path | None = None) -> set[Path]:
    """Every file of the repository that importing ``starts`` loads, themselves included: what
    they import, and the packages above each (Python runs a package's __init__.py before its
    modules; pytest imports a test file's packages). A package whose __init__.py imports by a
    name made at run time (importlib.import_module: seam/probes/) loads its every module."""
    root = ROOT if root is None else root
    files, edges = _house(root)
    names = {path: name for name, path in files.items()}
    todo = [names[Path(p)] for p in starts if Path(p) in names]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += edges.get(name, ())
        todo += [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        if files[name].name == "__init__.py" and "import_module(" in files[name].read_text():
            todo += [n for n in files if n.rpartition(".")[0] == name]
    return {files[n] for n in seen} | {Path(p) for p in starts if Path(p).is_file()}


def own_files(problem: str) -> list[Path]:
    """The problem's files of the layout that a grade reads (less its reference module)."""
    out = []
    for kind in LAYOUT:
        if kind.graded and kind.kind != "reference":
            path = problem_file(problem, kind.kind)
            if path.exists():
                out.append(path)
    return out


def hashed_files(problem: str) -> list[Path]:
    """What decides the verdicts on ``problem``, less its own reference module (hashed apart):
    its own graded files, the submission's other modules that its module imports, and the graded
    machinery its run imports, less the layout files of other problems."""
    def ours(path: Path) -> bool:
        found = owner(path.relative_to(ROOT))
        return found is None or found[1] == problem
    graded = set(graded_files())
    reached = closure([*own_files(problem), *(ROOT / r for r in RUNNER)])
    machinery = {f for f in reached & graded if not f.is_relative_to(REFERENCE) and ours(f)}
    submission = _imported_modules(problem_file(problem, "reference")) - {problem_file(problem, "reference")}
    return sorted(machinery | submission | set(own_files(problem)))


def _imported_modules(module: Path) -> set[Path]:
    """The submission's modules that grading ``module``'s problem loads: itself and what it imports
    from the package, relatively (flops.py's ``from .adamw_accounting import ...``), and so on.
    The worker imports each problem's module when its tests first call it, so a module no import
    reaches moves no verdict here (and a new problem's module stales no other problem)."""
    seen, todo = set(), [module]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                todo += [path.parent / f"{n.split('.')[0]}.py" for n in names]
    return seen


def _content(path: Path, problem: str) -> bytes:
    if path == ROOT / REGISTRY:
        return registry_part(path.read_text(), problem).encode()
    if weighed(path):
        return unweighted(path.read_bytes())
    if path.suffix == ".py" and not path.is_relative_to(REFERENCE):
        return syntax(path.read_bytes())
    return path.read_bytes()


def tests_hash(problem: str) -> str:
    h = hashlib.sha256()
    for f in hashed_files(problem):
        h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + _content(f, problem) + b"\0")
    return h.hexdigest()[:16]


def seam_files_outside(problem: str) -> list[Path]:
    """The seam's modules that no verdict on ``problem`` depends on (for the docs and tests)."""
    kept = set(hashed_files(problem))
    return sorted(f for f in SEAM.rglob("*.py") if f not in kept and "__pycache__" not in f.parts)
