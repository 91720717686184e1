"""Problems graded apart: a problem's module never needs another problem's module to
import. What one module imports from another is the handout's given code (the stubs define it),
and the sandbox's worker supplies that code where the upload lacks the module
(seam/callee.py load_package): a partial upload earns every point of the problems it holds.

- every import of one problem's module by another, in the reference, the stubs and the
  alternatives, names only what the imported module's stub defines;
- each problem's reference module, uploaded alone, imports (the given code behind it);
- each such import, uploaded alone and graded through the sandbox, gets its problem's full
  marks, and the module it lacks is reported missing (never graded as the stub).
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grade import grade
from grader.paths import REFERENCE, ROOT, STUBS
from seam.problems import PROBLEMS, files
from tests.self.submissions import reference_with

pytestmark = pytest.mark.e2e


def _sources() -> list[Path]:
    alternatives = sorted((ROOT / "tests/self/alternatives").glob("*__*.py"))
    return [*sorted(REFERENCE.glob("*.py")), *sorted(STUBS.glob("*.py")), *alternatives]


def cross_imports() -> list[tuple[Path, str, list[str]]]:
    """(file, the problem module it imports, the names) for each ``from .<problem> import``."""
    out = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in PROBLEMS:
                out.append((path, node.module, [a.name for a in node.names]))
    return out


def _defined(problem: str) -> set[str]:
    tree = ast.parse((STUBS / files(problem).module).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_a_module_imports_from_another_only_what_its_stub_gives():
    found = cross_imports()
    assert any(p.parent == REFERENCE for p, _, _ in found), "the corpus lost its cross-module import"
    for path, module, names in found:
        missing = set(names) - _defined(module)
        assert not missing, f"{path.relative_to(ROOT)} imports {sorted(missing)} from {module}.py, which its stub does not give"


def test_each_reference_module_alone_imports(tmp_path):
    """Each problem's reference module in a folder of its own (one Python, a package each)."""
    folders = {p: reference_with(tmp_path / p, problems=[p]) for p in PROBLEMS}
    code = ("from seam.callee import Callee\n"
            f"for p, folder in {({p: str(f) for p, f in folders.items()})!r}.items():\n"
            f"    Callee(folder, 'alone_' + p, given={str(STUBS)!r}, watched=False).module(p)\n"
            "print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.stdout.strip().endswith("ok"), run.stderr[-2000:]


@pytest.mark.parametrize("importer", sorted({p.stem for p, _, _ in cross_imports() if p.parent == REFERENCE}))
def test_a_one_module_upload_gets_its_problems_full_marks(importer, tmp_path):
    imported = sorted({m for p, m, _ in cross_imports() if p.parent == REFERENCE and p.stem == importer})
    folder = reference_with(tmp_path / "s", problems=[importer])
    out = tmp_path / "results.json"
    assert grade(folder, out, gpu="skip", quiet=True, problems=[importer, *imported]) == 0
    results = json.loads(out.read_text())
    mine = [t for t in results["tests"] if t["tags"] == [importer]]
    assert mine and all(t["score"] == t["max_score"] for t in mine), \
        [(t["name"], t.get("output", "")[:200]) for t in mine if t["score"] != t["max_score"]]
    for module in imported:
        theirs = [t for t in results["tests"] if t["tags"] == [module]]
        assert theirs and all(t["score"] == 0 and f"{module}.py is missing" in t["output"] for t in theirs)
