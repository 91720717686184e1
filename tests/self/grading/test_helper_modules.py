"""A student's helper module, graded through the command line (seam/helpers.py, seam/upload.py).

- the reference with its shared checks moved into ``_util.py``, imported by three problem
  modules in the three spellings students write, scores test for test as the reference does,
  with no note for review, and the report names the helper;
- a helper cannot launder a forbidden call (torch's AdamW, subclassed in ``_util.py``) past the
  honest-work watch, and files named like Python's modules, the libraries or the grader beside
  the modules replace none of them: they are not graded, and the report says why.
"""

import ast
from pathlib import Path

import pytest

from tests.self.shared import grade_cli, graded_reference
from tests.self.submissions import reference_text, reference_with

pytestmark = pytest.mark.e2e


def _without(text: str, name: str, instead: str) -> tuple[str, str]:
    """(``text`` with its top-level function ``name`` replaced by the line ``instead``, the function's source)."""
    tree = ast.parse(text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    source = ast.get_source_segment(text, fn)
    lines = text.splitlines(keepends=True)
    lines[fn.lineno - 1:fn.end_lineno] = [instead + "\n"]
    return "".join(lines), source


def helper_upload(dest: Path) -> Path:
    """The reference, its identical ``_check_real`` (flops, intensity) and ``_check_count``
    (flops, einops) moved into ``_util.py``: flops imports it relatively, intensity absolutely
    (``from _util import``), einops as a module (``import _util``)."""
    flops, check_real = _without(reference_text("flops"), "_check_real", "from ._util import _check_real")
    flops, check_count = _without(flops, "_check_count", "from ._util import _check_count")
    intensity, real_again = _without(reference_text("intensity"), "_check_real", "from _util import _check_real")
    einops, count_again = _without(reference_text("einops"), "_check_count",
                                   "import _util\n_check_count = _util._check_count")
    assert ast.dump(ast.parse(check_real)) == ast.dump(ast.parse(real_again))  # the same code, inlined twice
    assert ast.dump(ast.parse(check_count)) == ast.dump(ast.parse(count_again))
    folder = reference_with(dest, {"flops": flops, "intensity": intensity, "einops": einops})
    (folder / "_util.py").write_text(f'"""Checks shared by my modules."""\n\nimport math\n\n\n{check_real}\n\n\n{check_count}\n')
    return folder


def test_a_helper_module_grades_as_the_code_inlined(tmp_path, tmp_path_factory):
    reference, _ = graded_reference(tmp_path_factory)
    results, table = grade_cli(helper_upload(tmp_path / "up"), tmp_path / "results.json")
    assert [(t["number"], t["score"], t["status"]) for t in results["tests"]] == \
        [(t["number"], t["score"], t["status"]) for t in reference["tests"]]
    assert results["score"] == reference["score"]
    extra = results["extra_data"]
    assert "review" not in extra and "honest_work" not in extra and "incidents" not in extra
    assert extra["files"]["graded"][-1] == "_util.py" and len(extra["files"]["graded"]) == 13
    assert "_util.py (imported by flops.py, intensity.py, einops.py)" in table


def test_a_helper_launders_nothing_and_shadows_nothing(tmp_path):
    """optim.AdamW taken from ``_util.py``, a subclass of torch's: charged as the same subclass in
    optim.py is. Beside it, files named like what the grader imports: `import inspect` and
    `import torch` in optim.py stay Python's and torch's, and the files say why they were not graded."""
    shadows = ["inspect", "gc", "typing", "torch", "seam", "grader", "tests", "conftest"]
    folder = reference_with(tmp_path / "up", {"optim": reference_text("optim") + "\n\nimport inspect\nimport gc\n"
                                              "import typing\nfrom _util import AdamW\n"})
    (folder / "_util.py").write_text("import torch\n\n\nclass AdamW(torch.optim.AdamW):\n    pass\n")
    for name in shadows:
        (folder / f"{name}.py").write_text("raise SystemExit('the grader ran a shadowing file')\n")
    results, table = grade_cli(folder, tmp_path / "results.json", "--only", "optim")
    extra = results["extra_data"]
    assert "optim.AdamW" in extra.get("honest_work", {}), table
    adamw = [t for t in results["tests"] if "optim.AdamW" in t["extra_data"]["functions"]]
    assert adamw and all(t["score"] == 0 for t in adamw)
    assert any(t["score"] == t["max_score"] > 0 for t in results["tests"])  # (the rest of optim.py graded)
    assert "_util.py" in extra["files"]["graded"]
    ignored = {i["file"]: i["why"] for i in extra["files"]["ignored"]}
    for name in ("inspect", "gc", "typing", "torch"):
        assert ignored[f"{name}.py"].startswith(f"`import {name}` is the library's"), ignored
    for name in ("seam", "grader", "tests", "conftest"):
        assert ignored[f"{name}.py"] == "no problem module imports it"
    assert "shadowing" not in table
