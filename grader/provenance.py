"""Which grader made a grade: its version and a hash of what decides every point.

``stamp()`` goes into every results.json (top-level ``extra_data.grader``, a key Gradescope
keeps) and every batch.json. The hash covers the graded tests with their points markers (the
rubric), their snapshots and helpers, the seam and its probes, and the reference the tests
compare against: change any of them and the hash changes, so a rerun of a batch regrades
everyone (batch.py) and `merge` refuses to join passes graded by different tests.

A second hash, ``verdicts``, reads the same files with the graded tests' points markers left out
(``unweighted``): where only it stands still, the tests were re-weighted and nothing else, every
verdict of an earlier grade still holds, and a rerun of the batch rescores those students from
their results.json instead of grading them again (grader/batch/rescore.py).

What a person reads and no verdict reads is not hashed, so rewording it regrades no class and
restales no record: a Python file is hashed by its syntax tree (``syntax``: no comments, no
layout, no docstrings), and the modules of words (``WORDING``: literal text only, which
tests/self/repo/test_wording.py keeps so) are left out. A string a verdict compares (a name the
review looks for, a tolerance's key) is code, not wording, and stays in the tree.
"""

import ast
import hashlib
import importlib.metadata
import json
import os
import tomllib
from functools import lru_cache
from pathlib import Path

from .paths import ROOT, SEAM, TEST_SUPPORT
from seam.problems import LAYOUT, folder

PACKAGE = "cs336-accounting-grader"

# Modules of words a person reads (a note's why and what instead), which decide no verdict: no
# hash covers them. Each holds only assignments of literal text (tests/self/repo/test_wording.py).
WORDING = ("seam/words.py",)


@lru_cache(maxsize=1)
def version() -> str:
    """pyproject.toml's version (the checkout's, which is what runs), else the installed one."""
    try:
        return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return importlib.metadata.version(PACKAGE)


def graded_files() -> list:
    """Every file whose change can change a grade, sorted (relative to ROOT): the seam, the test
    support, and the folders of the kinds of problem file the layout marks ``graded``
    (seam/problems.py: the reference, the tests, their snapshots, helpers and probes)."""
    roots = [*(ROOT / folder(k.kind) for k in LAYOUT if k.graded), SEAM, *(ROOT / rel for rel in TEST_SUPPORT)]
    files = set()
    for root in roots:
        if root.is_file():
            files.add(root)
        elif root.is_dir():
            files.update(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                         and p.suffix in (".py", ".json"))
    return sorted(files - {ROOT / rel for rel in WORDING})


def _undocumented(tree: ast.AST) -> ast.AST:
    """``tree`` less its docstrings (a module's, a class's, a function's first bare string)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return tree


@lru_cache(maxsize=4096)
def syntax(data: bytes) -> bytes:
    """What of a Python file can decide a verdict: its syntax tree without comments, layout, line
    numbers or docstrings (a test's docstring is its title in a report: words, not a verdict);
    its bytes if it does not parse."""
    try:
        return syntax_of(ast.parse(data))
    except (SyntaxError, ValueError):
        return data


def syntax_of(tree: ast.Module) -> bytes:
    """``syntax`` of a tree already parsed (and perhaps edited: tests/self/mutation/inputs.py)."""
    return ast.dump(_undocumented(tree)).encode()


def content(path) -> bytes:
    """What the hash reads of a graded file: a Python file's ``syntax``, any other file's bytes."""
    data = path.read_bytes()
    return syntax(data) if path.suffix == ".py" else data


# Parsing every graded file takes about a second, paid by every `grade` and every batch job:
# what each file's bytes hash to (sha256 of the bytes -> sha256 of ``content``) is kept here
# between runs. Content-addressed, so a stale entry cannot exist; an unreadable or unwritable
# cache is only slower.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cs336-grader" / "syntax.json"


@lru_cache(maxsize=4096)
def unweighted(data: bytes) -> bytes:
    """A graded test file's ``syntax`` with the number in each ``pytest.mark.points(N)`` marker
    left out: a test's points decide no verdict (whether it passed, a mutant killed, the tests a
    shortcut passes), only what a verdict is worth. A marker given anything but one number (an
    expression a test could also read) keeps it. Its bytes if it does not parse."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return data
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "points" \
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "mark" \
                and not node.keywords and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
                and type(node.args[0].value) in (int, float):
            node.args = []
    return syntax_of(tree)


# The graded tests' folders (the layout's kinds, not spelled here): where points markers are.
TEST_FOLDERS = tuple(ROOT / folder(kind) for kind in ("public_test", "hidden_test"))


def weighed(path: Path) -> bool:
    """A graded test file: its points markers are read by ``tests_hash``, not by ``verdicts_hash``."""
    return path.suffix == ".py" and path.name.startswith("test_") and path.parent in TEST_FOLDERS


def _digests(paths, unweigh: bool = False) -> list[bytes]:
    """Each file's digest, a Python file's of its ``syntax`` (``unweigh``: a graded test file's of
    its ``unweighted`` syntax, kept in the cache under a key of its own)."""
    try:
        known = json.loads(CACHE.read_text())
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    out, fresh = [], {}
    for path in paths:
        data = path.read_bytes()
        if path.suffix != ".py":
            out.append(hashlib.sha256(data).digest())
            continue
        plain = unweigh and weighed(path)
        key = ("unweighted:" if plain else "") + hashlib.sha256(data).hexdigest()
        value = known.get(key)
        if not (isinstance(value, str) and len(value) == 64):
            value = fresh[key] = hashlib.sha256(unweighted(data) if plain else syntax(data)).hexdigest()
        out.append(bytes.fromhex(value))
    if fresh:
        try:
            from .files import write_atomically
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            keep = {k: v for k, v in known.items() if isinstance(v, str)}
            keep = dict(list(keep.items())[-4096:])  # bounded: old trees' files go first
            write_atomically(CACHE, json.dumps({**keep, **fresh}))
        except OSError:
            pass
    return out


def _hash(unweigh: bool) -> str:
    digest = hashlib.sha256()
    paths = graded_files()
    for path, each in zip(paths, _digests(paths, unweigh)):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(each)
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def tests_hash() -> str:
    return _hash(unweigh=False)


@lru_cache(maxsize=1)
def verdicts_hash() -> str:
    """``tests_hash`` with the points markers left out: what decides each test's verdict."""
    return _hash(unweigh=True)


def stamp() -> dict:
    return {"version": version(), "tests": tests_hash(), "verdicts": verdicts_hash()}


def same_grader(a: dict | None, b: dict | None) -> bool:
    """Two stamps of one grader and one set of tests (``verdicts`` is not compared: a stamp
    written before it was kept has none, and it moves only with ``tests``)."""
    return bool(a) and bool(b) and (a.get("version"), a.get("tests")) == (b.get("version"), b.get("tests"))


def reweighted(old: dict | None, new: dict) -> bool:
    """The tests moved since ``old`` and only their points did: every verdict of a grade stamped
    ``old`` still holds (the same grader version, the same ``verdicts``)."""
    return bool(old) and old.get("version") == new["version"] and old.get("tests") != new["tests"] \
        and old.get("verdicts") == new["verdicts"]
