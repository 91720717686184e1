"""Gradescope: `python -m grader release --gradescope FILE.zip`, and what its `run_autograder` runs.

Gradescope unpacks the zip into /autograder/source, runs `setup.sh` there once, as root, when it
builds the autograder image (Ubuntu 22.04 or 24.04), copies `run_autograder` to
/autograder/run_autograder, and runs that for every submission, with the upload in
/autograder/submission; it reads /autograder/results/results.json back. The root is the
environment variable AUTOGRADER_ROOT when set (tests use a temporary folder).

Python: numpy 2.4 and jaxtyping 0.3 need Python >= 3.11. Ubuntu 24.04's python3 is 3.12;
22.04's is 3.10, so there setup.sh installs Ubuntu's python3.11 (universe). The pins go into a
venv (24.04's system Python is externally managed, PEP 668) outside /autograder, world-readable,
since the sandbox's worker uid runs on it.

torch: PyPI's Linux torch==2.13.0 is the CUDA build (GBs of nvidia-* wheels), and Gradescope has
no GPU. setup.sh adds PyTorch's CPU index as an extra index: it offers 2.13.0+cpu, which
satisfies the pin `torch==2.13.0` (a pin without a local label matches any) and sorts above
2.13.0, so pip takes it. Everything else comes through pip's ordinary configuration
(PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf), so a mirror or a wheel folder set there is honoured.

GPU tests: none run on Gradescope (`--gpu skip`); the report's top output says they are graded
separately on a CUDA runner (GPU_NOTE: the first of the notes `grade` is given, so the one
results.json is written once, as `grade` writes it).
"""

import io
import os
import stat
import time
import zipfile
from pathlib import Path

from .files import write_atomically
from .paths import ROOT, TEST_SUPPORT
from seam.problems import folder

ROOT_ENV = "AUTOGRADER_ROOT"
DEFAULT_ROOT = "/autograder"
VENV = "/opt/cs336-grader-venv"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GPU_NOTE = ("GPU tests are not part of this score: Gradescope has no GPU. They are graded "
            "separately on a CUDA runner.")

# What the autograder needs of this checkout: the grader, the graded tests and what they import
# (the seam, the reference), and the files `pip install -e` reads. Not tests/self, benchmarks,
# deploy or the handout.
SHIPPED = ("pyproject.toml", "README.md", "grader", str(folder("reference")), str(folder("stub")), *TEST_SUPPORT,
           str(folder("public_test")), str(folder("hidden_test")))
# (grader/student_bundle: the students' bundle's files; the autograder releases no bundle)
SKIPPED_NAMES = {"__pycache__", ".git", ".pytest_cache", ".DS_Store", "student_bundle"}

SETUP_SH = r'''#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (written by
# `python -m grader release --gradescope`; see grader/gradescope.py). Ubuntu 22.04 or 24.04.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="__VENV__"
export DEBIAN_FRONTEND=noninteractive

apt-get update -qq
command -v python3 >/dev/null || apt-get install -y -qq python3 >/dev/null
# numpy 2.4 and jaxtyping 0.3 need Python >= 3.11: Ubuntu 22.04's python3 is 3.10.
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    PY=python3
    pkgs="python3-venv"
else
    PY=python3.11
    pkgs="python3.11 python3.11-venv"
fi
# bubblewrap: the sandbox's strongest mode wherever namespaces are allowed.
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends bubblewrap $pkgs >/dev/null

"$PY" -m venv "$VENV"
# The pins of pyproject.toml, through pip's own configuration (mirrors, find-links); the CPU
# build of torch from PyTorch's index (2.13.0+cpu satisfies torch==2.13.0 and wins over PyPI's
# CUDA build).
"$VENV/bin/python" -m pip install --no-cache-dir --progress-bar off \
    --extra-index-url "__TORCH_INDEX__" -e "$SOURCE"
"$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'
chmod -R a+rX "$VENV"
# /autograder (the source with the reference and the tests, the submission, the results) is
# root's alone: where the sandbox has no namespaces, its worker's uid cannot even enter it.
chmod 700 "$ROOT"
'''

RUN_AUTOGRADER = r'''#!/usr/bin/env bash
# Gradescope runs this for every submission (written by `python -m grader release
# --gradescope`; see grader/gradescope.py). Grades /autograder/submission into
# /autograder/results/results.json; GPU tests are left out (GRADER_GPU=skip by default).
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
chmod 700 "$ROOT"  # root's alone (again: the harness may have made it anew)
cd "$ROOT/source" || exit 1
exec "${GRADER_PYTHON:-__VENV__/bin/python}" -c 'import sys; from grader.gradescope import run_autograder; sys.exit(run_autograder())'
'''


def scripts() -> dict[str, str]:
    """The two scripts at the zip's root, with this module's constants filled in."""
    fill = lambda text: text.replace("__VENV__", VENV).replace("__TORCH_INDEX__", TORCH_CPU_INDEX)
    return {"setup.sh": fill(SETUP_SH), "run_autograder": fill(RUN_AUTOGRADER)}


def _files() -> list[tuple[Path, str]]:
    """(file on disk, name in the zip) for everything shipped, sorted."""
    out = []
    for rel in SHIPPED:
        src = ROOT / rel
        if src.is_file():
            out.append((src, rel))
            continue
        for path in sorted(src.rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.is_file() and not path.is_symlink() and not SKIPPED_NAMES & set(parts) \
                    and path.suffix != ".pyc":
                out.append((path, "/".join(parts)))
    return out


def _entry(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible bytes
    info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def release_gradescope(dest: Path) -> Path:
    """Write Gradescope's autograder zip: setup.sh and run_autograder (executable) at the root,
    next to the sources they need."""
    dest = Path(dest)
    if dest.suffix != ".zip":
        raise ValueError(f"{dest}: the Gradescope autograder must be a .zip file")
    if dest.exists():
        raise FileExistsError(f"{dest} exists")
    buf = io.BytesIO()  # the sources are a few MB: built in memory, written whole
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in scripts().items():
            zf.writestr(_entry(name, executable=True), text)
        for path, name in _files():
            zf.writestr(_entry(name, executable=False), path.read_bytes())
    return write_atomically(dest, buf.getvalue())


def _fallback(out: Path, why: str, started: float) -> None:
    """A report even when grading itself failed: the student sees a clear message, not
    Gradescope's "the autograder failed to produce output"."""
    from .report import write_results
    from .text import one_line
    write_results({"score": 0.0, "execution_time": round(time.monotonic() - started, 3),
                   "output": f"The autograder could not grade this submission: {one_line(why)}. "
                             "This is not your fault; please tell the course staff.",
                   "tests": []}, out)


def run_autograder() -> int:
    """What run_autograder runs: grade $AUTOGRADER_ROOT/submission, write the results there."""
    from .grade import grade
    from .text import safe_streams
    safe_streams()
    started = time.monotonic()
    root = Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)
    gpu = os.environ.get("GRADER_GPU") or "skip"
    out = root / "results" / "results.json"
    try:
        # GPU_NOTE is the summary's first note: grade builds it in, results.json is written once
        code = grade(root / "submission", out, gpu=gpu, notes=(GPU_NOTE,) if gpu == "skip" else ())
    except Exception as e:  # the grader's own failure: still a report (and the traceback in stdout)
        import traceback
        traceback.print_exc()
        _fallback(out, f"{type(e).__name__}: {e}", started)
        return 0
    if code != 0 or not out.exists():
        _fallback(out, f"the grader exited with status {code} (see the autograder's stdout)", started)
    return 0
