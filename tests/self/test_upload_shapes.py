"""The locator (seam/upload.py) on every upload shape a student makes from the real bundle, its
precedence rules, and `python -m seam.check`, which students run on the zip they will submit.

What a grade reads is exactly ``graded_modules(located.folder)`` (the sandbox copies those files
and nothing else), so a shape that yields the bare modules' files, byte for byte, grades like
them; benchmarks/upload_shapes.py grades each shape in full for the table."""

import subprocess
import sys
import zipfile

import pytest

from grader.paths import REFERENCE
from seam.problems import PROBLEMS
from seam.upload import graded_modules, locate
from tests.self.uploads import shapes


def graded(path) -> tuple[dict[str, bytes], list[str], str]:
    """({module name: bytes} the grader would copy, the notes, the status)."""
    located = locate(path)
    try:
        files = {m.name: m.read_bytes() for m in graded_modules(located.folder)} if located.folder else {}
        return files, located.notes, located.status
    finally:
        if located.cleanup:
            import shutil
            shutil.rmtree(located.cleanup)


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    return shapes(tmp_path_factory.mktemp("uploads"), REFERENCE)


def test_every_shape_grades_the_bare_modules(uploads):
    expected = {f"{p}.py": (REFERENCE / f"{p}.py").read_bytes() for p in PROBLEMS}
    assert len(uploads) >= 8
    for shape, path in uploads.items():
        files, notes, status = graded(path)
        assert (status, files.keys()) == ("graded", expected.keys()), (shape, notes)
        assert files == expected, shape
        assert not any("missing" in n or "more than one" in n for n in notes), (shape, notes)
        if "bundle" in shape or "GitHub" in shape:
            assert any("student_stubs/ (the assignment folder's own" in n for n in notes), (shape, notes)


def _tree(root, layout: dict[str, str]):
    for rel, text in layout.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _modules(folder: str, k: int | None = None, text: str = "x = 1\n") -> dict[str, str]:
    return {f"{folder}/{p}.py": text for p in list(PROBLEMS)[:k]}


def test_precedence(tmp_path):
    # 1. the bundle's student_stubs/, whatever lies beside it (even a complete copy)
    bundle = _tree(tmp_path / "a", {**_modules("hw2/student_stubs", text="mine = 1\n"), **_modules("hw2/copy"),
                                    **_modules("hw2/tests/common", 5), **_modules("hw2/seam/probes", 6)})
    files, _, status = graded(bundle)
    assert status == "graded" and set(files.values()) == {b"mine = 1\n"} and len(files) == len(PROBLEMS)
    # ... and where its student_stubs/ was emptied, the modules beside it, never tests/ or seam/
    moved = _tree(tmp_path / "b", {"hw2/student_stubs/__init__.py": "", **_modules("hw2/work", text="w = 1\n"),
                                   **_modules("hw2/tests/common", 5), **_modules("hw2/seam/probes", 6)})
    files, _, status = graded(moved)
    assert status == "graded" and set(files.values()) == {b"w = 1\n"}
    # 2. the one complete folder, over a partial one (the partial one is named)
    complete = _tree(tmp_path / "c", {**_modules("new", text="new = 1\n"), **_modules("old", 4)})
    files, notes, _ = graded(complete)
    assert set(files.values()) == {b"new = 1\n"} and any("also found old/ (4 module(s))" in n for n in notes)
    # 3. the folder holding the most, when no other holds as many
    most = _tree(tmp_path / "d", {**_modules("x", 7, "seven = 1\n"), **_modules("y", 3)})
    files, notes, _ = graded(most)
    assert set(files.values()) == {b"seven = 1\n"} and any("also found y/ (3 module(s))" in n for n in notes)
    # two complete folders outside a bundle, a tie for the most, two bundles: graded as neither
    for name, layout in {"e": {**_modules("one"), **_modules("two")},
                         "f": {**_modules("one", 3), **_modules("two", 3)},
                         "g": {**_modules("p/student_stubs"), "p/tests/t.py": "", "p/seam/s.py": "",
                               **_modules("q/student_stubs"), "q/tests/t.py": "", "q/seam/s.py": ""}}.items():
        files, notes, status = graded(_tree(tmp_path / name, layout))
        assert (files, status) == ({}, "ambiguous"), name
        assert "Graded as neither" in notes[0] and ("one/" in notes[0] or "p/" in notes[0]), notes


def test_a_module_that_is_a_folder_is_reported(tmp_path):
    layout = {**_modules("hw"), "hw/tensors.py/__init__.py": "x = 1\n"}
    del layout["hw/tensors.py"]
    archive = tmp_path / "up.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for rel, text in layout.items():
            zf.writestr(rel, text)
    files, notes, status = graded(archive)
    assert status == "graded" and "tensors.py" not in files and len(files) == len(PROBLEMS) - 1
    assert any(n.startswith("hw/tensors.py is a folder, not a module") for n in notes), notes
    assert not any("missing" in n for n in notes), notes


def test_seam_check_lists_what_the_grader_grades_and_tests_exactly_that(uploads, tmp_path):
    """In the bundle, on the Finder zip: the listing names the grader's folder and files; the
    public tests then run on a copy of those files alone (a helper module beside them is not
    there, as it is not in the grader)."""
    bundle = uploads["the bundle folder"]
    listed = subprocess.run([sys.executable, "-m", "seam.check", str(uploads["the bundle, Finder zip "
                             "(__MACOSX/, .DS_Store)"]), "--list"], cwd=bundle, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert f"will grade {len(PROBLEMS)} of {len(PROBLEMS)} modules, from hw2/student_stubs/:" in listed.stdout
    assert all(f"    {p}.py (" in listed.stdout for p in PROBLEMS)
    # a submission whose tensors.py leans on a helper beside it: fine in its folder, not graded so
    sub = tmp_path / "leaning"
    sub.mkdir()
    (sub / "helper.py").write_text("from reference_copy import *\n")
    (sub / "tensors.py").write_text("from helper import *  # only works beside helper.py\n")
    run = subprocess.run([sys.executable, "-m", "seam.check", str(sub), "-m", "tensors", "-q"], cwd=bundle,
                         capture_output=True, text=True, timeout=300)
    assert "will grade 1 of 12 modules, from the top folder:" in run.stdout, run.stdout[-2000:]
    assert "helper.py" not in run.stdout.split("running the public tests")[0]
    assert run.returncode == 1 and "No module named 'helper'" in run.stdout, run.stdout[-2000:]
    nothing = subprocess.run([sys.executable, "-m", "seam.check", str(tmp_path / "empty.zip")], cwd=bundle,
                             capture_output=True, text=True)
    assert nothing.returncode == 2 and "no such file" in nothing.stderr
