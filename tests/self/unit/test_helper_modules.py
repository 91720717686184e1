"""A student's helper modules (seam/helpers.py, seam/upload.py ``graded_files``): which files are
graded beside the problem modules, how each spelling of the import resolves, and what a helper
named like a library, Python's own module or the grader's cannot do.

The end-to-end grade of an upload with a helper is tests/self/grading/test_helper_modules.py.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.paths import ROOT, STUBS
from seam import review
from seam.check import describe
from seam.problems import PROBLEMS
from seam.upload import MAX_HELPER_FILES, MAX_MODULE_BYTES, graded_files
from tests.self.submissions import reference_with

UTIL = "def clamp(x):\n    return max(0, x)\n"


def _upload(tmp_path: Path, imports: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    """The reference, with ``imports[problem]`` appended to that module, and ``extra`` files."""
    folder = reference_with(tmp_path / "up")
    for problem, line in imports.items():
        path = folder / f"{problem}.py"
        path.write_text(path.read_text() + "\n" + line + "\n")
    for name, text in (extra or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("spelling", ["from ._util import clamp", "from . import _util", "from _util import clamp",
                                      "import _util", "import _util as u",
                                      "def f():\n    from _util import clamp\n    return clamp"])
def test_each_spelling_grades_the_helper(tmp_path, spelling):
    folder = _upload(tmp_path, {"flops": spelling, "intensity": "from ._util import clamp"},
                     {"_util.py": UTIL, "scratch.py": "x = 1\n"})
    graded = graded_files(folder)
    assert {graded.name(h): by for h, by in graded.helpers.items()} == {"_util.py": ["flops.py", "intensity.py"]}
    assert [graded.name(f) for f in graded.files][-1] == "_util.py" and len(graded.modules) == len(PROBLEMS)
    assert dict(graded.ignored) == {"scratch.py": "no problem module imports it"}
    assert graded.absolute == ({"_util"} if "from ._util" not in spelling and "from . " not in spelling else set())


def test_helpers_of_helpers_and_a_package(tmp_path):
    folder = _upload(tmp_path, {"flops": "from ._util import clamp", "optim": "from helpers.maths import twice"},
                     {"_util.py": "from _deep import k\n" + UTIL, "_deep.py": "k = 1\n",
                      "helpers/__init__.py": "", "helpers/maths.py": "from .._util import clamp\ndef twice(x):\n    return 2 * x\n",
                      "helpers/data.txt": "not code", "unused/__init__.py": ""})
    graded = graded_files(folder)
    by = {graded.name(h): v for h, v in graded.helpers.items()}
    assert by == {"_util.py": ["flops.py", "helpers/maths.py"], "helpers/__init__.py": ["optim.py"],
                  "helpers/maths.py": ["optim.py"], "_deep.py": ["_util.py"]}
    assert graded.packages == ["helpers"] and graded.absolute == {"helpers", "_deep"}
    assert graded.problems(folder / "_deep.py") == ["flops", "optim"]
    assert dict(graded.ignored) == {"helpers/data.txt": "in a helper package but not one of its .py files: not graded",
                                    "unused/": "no problem module imports it"}


def test_limits_apply_to_helpers(tmp_path):
    many = "\n".join(f"from ._h{i} import x" for i in range(MAX_HELPER_FILES + 3))
    folder = _upload(tmp_path, {"flops": many, "intensity": "from ._big import y"},
                     {**{f"_h{i}.py": "x = 1\n" for i in range(MAX_HELPER_FILES + 3)}, "_big.py": "y = 1\n"})
    os.truncate(folder / "_big.py", MAX_MODULE_BYTES + 1)
    (folder / "_h0.py").unlink()
    (folder / "_h0.py").symlink_to(folder / "_h1.py")
    graded = graded_files(folder)
    assert len(graded.helpers) == MAX_HELPER_FILES
    ignored = dict(graded.ignored)
    assert "MiB" in ignored["_big.py"] and "symbolic link" in ignored["_h0.py"]
    assert sum("helper files graded" in why for why in ignored.values()) == 2  # (the 33rd and 34th of 35)


@pytest.mark.parametrize("name", ["inspect", "gc", "typing", "torch", "seam", "grader", "tests", "conftest",
                                  "einops", "submission"])
def test_a_helper_named_like_a_library_is_never_the_library(tmp_path, name):
    """`import inspect` beside an inspect.py is Python's inspect (as in the student's own pytest):
    the file is not graded, and says why; imported relatively, it is the package's own submodule."""
    folder = _upload(tmp_path, {"flops": f"import {name}"}, {f"{name}.py": "HIJACKED = True\n"} if name != "einops" else {})
    graded = graded_files(folder)
    assert not graded.helpers and not graded.absolute
    if name != "einops":  # (einops.py is a problem module)
        assert f"`import {name}` is the library's" in dict(graded.ignored)[f"{name}.py"]
        relative = _upload(tmp_path / "rel", {"flops": f"from .{name} import HIJACKED"}, {f"{name}.py": "HIJACKED = True\n"})
        assert [h.name for h in graded_files(relative).helpers] == [f"{name}.py"]


def _load(folder: Path, code: str) -> subprocess.CompletedProcess:
    """``code`` run after the submission's package is made (as the worker makes it), in a fresh Python."""
    prelude = ("import sys\nfrom seam.callee import Callee\n"
               f"callee = Callee({str(folder)!r}, 'submission', given={str(STUBS)!r}, watched=False)\n")
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_absolute_imports_stay_inside_the_package(tmp_path):
    """The absolute spelling is made relative when the module is compiled: the helper is the
    package's submodule, and no top-level name of it exists for a library to find; a helper named
    like Python's own module, imported relatively, replaces nothing in sys.modules."""
    folder = _upload(tmp_path, {"flops": "from _util import clamp\nimport fancylib\nimport _util as u\nimport inspect",
                                "intensity": "from .json import LOADS\nimport fancylib.inner\nFI = fancylib"},
                     {"_util.py": UTIL, "fancylib/__init__.py": "", "fancylib/inner.py": "V = 3\n",
                      "json.py": "LOADS = 'mine'\n", "inspect.py": "HIJACKED = True\n"})
    run = _load(folder, """
        import importlib, inspect, json
        flops, intensity = callee.module("flops"), callee.module("intensity")
        assert flops.clamp is sys.modules["submission._util"].clamp and flops.u is sys.modules["submission._util"]
        assert flops.fancylib is sys.modules["submission.fancylib"] and intensity.FI is flops.fancylib
        assert flops.fancylib.inner.V == 3 and intensity.LOADS == "mine"
        assert flops.inspect is inspect and not hasattr(inspect, "HIJACKED") and json.loads("1") == 1
        assert not {"_util", "fancylib", "fancylib.inner"} & set(sys.modules), sorted(sys.modules)
        for name in ("_util", "fancylib"):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError:
                continue
            raise AssertionError(f"{name} found outside the package")
        print("ok")
    """)
    assert run.stdout.strip() == "ok", run.stderr[-3000:]


def test_lines_and_frames_are_the_students(tmp_path):
    """A rewritten module keeps its lines; a helper's frames are shown as the student's."""
    folder = _upload(tmp_path, {"flops": "from _util import boom\nBOOM = boom()"},
                     {"_util.py": "def boom():\n    raise RuntimeError('in the helper')\n"})
    line = len((folder / "flops.py").read_text().splitlines())
    run = _load(folder, """
        import traceback
        try:
            callee.module("flops")
        except Exception as e:
            print(e)
        print("----")
        try:
            import submission.flops
        except RuntimeError as e:
            print([(f.filename.rsplit('/', 1)[-1], f.lineno) for f in traceback.extract_tb(e.__traceback__)][-2:])
    """)  # (one Python for both: each start imports torch)
    said, _, frames = run.stdout.partition("----\n")
    assert f"at _util.py:2" in said and "RuntimeError: in the helper" in said, run.stdout + run.stderr
    assert frames.strip() == str([("flops.py", line), ("_util.py", 2)]), run.stdout + run.stderr


def test_a_helper_is_reviewed_like_a_module(tmp_path):
    """Its text is read for notes (at its own file); a helper imported by a name made at run
    time is not graded, and that import is a note, as before."""
    folder = _upload(tmp_path, {"flops": "from ._util import clamp",
                                "intensity": "import importlib\n_h = importlib.import_module('_hid' + 'den')"},
                     {"_util.py": "import importlib\n" + UTIL + "M = importlib.import_module('to' + 'rch')\n",
                      "_hidden.py": "x = 1\n"})
    notes = review.scan(folder)
    assert {n["file"] for n in notes} == {"_util.py", "intensity.py"}, notes
    assert dict(graded_files(folder).ignored)["_hidden.py"] == "no problem module imports it"


def test_check_names_every_file(tmp_path):
    folder = _upload(tmp_path, {"flops": "import _util"}, {"_util.py": UTIL, "scratch.py": "", "notes.txt": "hi"})
    lines, files, _ = describe(folder)
    text = "\n".join(lines)
    assert "_util.py (" in text and "imported by flops.py" in text and len(files) == len(PROBLEMS) + 1  # (the helper too)
    assert "scratch.py: no problem module imports it" in text and "notes.txt: not a Python module" in text
