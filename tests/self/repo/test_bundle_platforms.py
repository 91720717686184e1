"""Students run the bundle on Windows and macOS too: its seam and test support must import, and a
public test run, where the Unix-only modules are not there. In a fresh interpreter, those modules
are refused to every import written in the bundle's own files (a library that imports one on
Linux alone, torch's or pytest's own choice, is not the bundle's doing); then every module of the
shipped seam and test support is imported, and one problem's public tests run against the
reference."""

import json
import subprocess
import sys

from grader.paths import REFERENCE
from grader.release import release_student

# CPython's modules that exist on Unix alone (Windows has none of them); macOS lacks /proc, which
# the seam reads behind a fallback (seam/smaps.py), never by an import
UNIX_ONLY = ("posix", "pwd", "grp", "fcntl", "termios", "tty", "pty", "resource", "syslog", "spwd", "crypt",
             "nis", "ossaudiodev", "readline", "_posixsubprocess", "_posixshmem", "_curses")
PROBLEM = "tensors"  # the quickest problem's public tests: the run shows the fixtures and probes work

RUN = r'''
import builtins, importlib, json, os, pkgutil, sys
bundle, blocked, reference, problem = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3], sys.argv[4]
refused = []


def refuse(name, importer):
    # ``importer``: the globals of the module whose code imports ``name``
    where = str((importer or {}).get("__file__") or "")
    if name.partition(".")[0] in blocked and where.startswith(bundle + os.sep):
        refused.append(f"{os.path.relpath(where, bundle)} imports {name}")
        raise ModuleNotFoundError(f"No module named {name!r} (not on Windows)", name=name)


# Both ways a module imports another: the statement (builtins.__import__, which also meets a module
# some library loaded already) and importlib.import_module (its caller's globals)
real_import, real_import_module = builtins.__import__, importlib.import_module

def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0:
        refuse(name, globals)
    return real_import(name, globals, locals, fromlist, level)

def guarded_import_module(name, package=None):
    if not name.startswith("."):
        refuse(name, sys._getframe(1).f_globals)
    return real_import_module(name, package)

builtins.__import__, importlib.import_module = guarded_import, guarded_import_module
os.chdir(bundle)
sys.path.insert(0, bundle)
failed = {}
for info in pkgutil.walk_packages([os.path.join(bundle, "seam")], "seam."):
    try:
        importlib.import_module(info.name)
    except Exception as e:
        failed[info.name] = f"{type(e).__name__}: {e}"
for name in ("tests.checks", "tests.snapshot", "tests.conftest") + tuple(
        f"tests.common.{f[:-3]}" for f in sorted(os.listdir("tests/common")) if f.endswith(".py")):
    try:
        importlib.import_module(name)
    except Exception as e:
        failed[name] = f"{type(e).__name__}: {e}"
import pytest
code = pytest.main(["-q", "-p", "no:cacheprovider", "-m", problem, f"--impl={reference}"])
# the finder works: a module of the bundle that imports one of them unguarded is refused
with open(os.path.join(bundle, "seam", "_unix_only_probe.py"), "w") as f:
    f.write("import fcntl\n")
try:
    importlib.import_module("seam._unix_only_probe")
    planted = "imported"
except ImportError as e:
    planted = str(e)
print("\n" + json.dumps({"failed": failed, "refused": refused, "pytest": int(code), "planted": planted}))
'''


def test_the_bundles_seam_works_without_unix_only_modules(tmp_path):
    bundle = release_student(tmp_path / "hw2")
    run = subprocess.run([sys.executable, "-c", RUN, str(bundle), ",".join(UNIX_ONLY), str(REFERENCE), PROBLEM],
                         cwd=bundle, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip(), run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["planted"] == "No module named 'fcntl' (not on Windows)", got["planted"]
    assert got["failed"] == {}, got  # every module imports: a refusal was guarded
    assert got["pytest"] == 0, run.stdout[-3000:]
    # what was refused and coped with (seam/honest.py tries _posixsubprocess, where it exists)
    assert "seam/_unix_only_probe.py imports fcntl" in got["refused"], got["refused"]
