"""Every shape of upload a student makes from the bundle, built from the real `release --student`
bundle with a solution filled in: each must grade exactly like the bare modules.

``shapes(workdir, solution)`` returns {shape name: the path to hand to `grade`}. The test
(tests/self/unit/test_upload_shapes.py) checks that the locator picks the same files, byte for byte,
from each; benchmarks/upload_shapes.py grades each in full and prints the table.
"""

import shutil
import zipfile
from pathlib import Path

from grader.release import release_student
from seam.problems import PROBLEMS


def _zip(folder: Path, archive: Path, prefix: str = "", finder: bool = False) -> Path:
    """Zip ``folder``'s tree under ``prefix`` (the folder name a real zip holds). ``finder``: as
    macOS's Finder does, with an AppleDouble ``__MACOSX/._name`` for every file and .DS_Store."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            name = f"{prefix}{path.relative_to(folder).as_posix()}"
            if path.is_dir():
                zf.writestr(name + "/", "")
                continue
            zf.write(path, name)
            if finder:
                head, _, tail = name.rpartition("/")
                zf.writestr(f"__MACOSX/{head + '/' if head else ''}._{tail}", b"\x00\x05\x16\x07Mac OS X")
        if finder:
            zf.writestr(f"{prefix}.DS_Store", b"\x00\x00\x00\x01Bud1")
    return archive


def filled_bundle(dest: Path, solution: Path) -> Path:
    """The student bundle, its stubs replaced by ``solution``'s modules (what a student hands in)."""
    bundle = release_student(dest)
    for p in PROBLEMS:
        shutil.copyfile(solution / f"{p}.py", bundle / "student_stubs" / f"{p}.py")
    return bundle


def shapes(workdir: Path, solution: Path) -> dict[str, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    bundle = filled_bundle(workdir / "hw2", solution)
    bare = workdir / "bare"
    bare.mkdir()
    for p in PROBLEMS:
        shutil.copyfile(solution / f"{p}.py", bare / f"{p}.py")
    out = {"bare modules (folder)": bare,
           "bare modules, zipped": _zip(bare, workdir / "bare.zip"),
           "the bundle folder": bundle,
           "the bundle, Finder zip (__MACOSX/, .DS_Store)": _zip(bundle, workdir / "finder.zip", "hw2/", finder=True),
           "the bundle zipped flat (its contents at the top)": _zip(bundle, workdir / "flat.zip")}
    # a GitHub "Download ZIP": repo-main/ holding the bundle, with the repo's own files
    repo = workdir / "repo" / "cs336-hw2-main"
    shutil.copytree(bundle, repo)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "test.yml").write_text("on: push\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "hooks").mkdir()
    (repo / ".git" / "hooks" / "tensors.py").write_text("raise SystemExit\n")  # never read
    out["GitHub Download ZIP (repo-main/ with .git/, .github/)"] = _zip(repo, workdir / "github.zip",
                                                                         "cs336-hw2-main/")
    shutil.copytree(bundle, workdir / "nested" / "cs336" / "hw2")
    out["the bundle two levels down (cs336/hw2/), zipped"] = _zip(workdir / "nested", workdir / "nested.zip")
    # the bundle with what a term leaves in it: notebooks, a stray copy of the stubs, caches
    messy = workdir / "messy" / "hw2"
    shutil.copytree(bundle, messy)
    (messy / "scratch.ipynb").write_text('{"cells": [], "nbformat": 4}\n')
    (messy / ".ipynb_checkpoints").mkdir()
    (messy / ".ipynb_checkpoints" / "tensors-checkpoint.py").write_text("x = 1\n")
    shutil.copytree(workdir / "hw2" / "student_stubs", messy / "backup" / "student_stubs_old")
    release_student(workdir / "pristine")
    shutil.copytree(workdir / "pristine" / "student_stubs", messy / "original_stubs")  # the untouched stubs
    (messy / "student_stubs" / "__pycache__").mkdir(exist_ok=True)
    (messy / "student_stubs" / "__pycache__" / "tensors.cpython-311.pyc").write_bytes(b"\x00")
    (messy / "student_stubs" / "helpers_notes.md").write_text("my notes\n")
    out["the bundle with notebooks, stray copies of the stubs"] = _zip(workdir / "messy", workdir / "messy.zip")
    return out
