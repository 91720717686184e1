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


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_seam_check_lists_what_the_grader_grades_and_tests_exactly_that(uploads, tmp_path):
    """In the bundle, on the Finder zip: the listing names the grader's folder and files; the
    public tests then run on a copy of those files alone: a helper module the modules import is
    listed and copied, and a file that helper imports but the upload lacks is not there, as it is
    not in the grader."""
    bundle = uploads["the bundle folder"]
    listed = subprocess.run([sys.executable, "-m", "seam.check", str(uploads["the bundle, Finder zip "
                             "(__MACOSX/, .DS_Store)"]), "--list"], cwd=bundle, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert f"will grade {len(PROBLEMS)} of {len(PROBLEMS)} modules, from hw2/student_stubs/:" in listed.stdout
    assert all(f"    {p}.py (" in listed.stdout for p in PROBLEMS)
    # a submission whose tensors.py leans on a helper beside it, which leans on a file not uploaded
    sub = tmp_path / "leaning"
    sub.mkdir()
    (sub / "helper.py").write_text("from reference_copy import *\n")
    (sub / "tensors.py").write_text("from helper import *  # graded with helper.py\n")
    run = subprocess.run([sys.executable, "-m", "seam.check", str(sub), "-m", "tensors", "-q"], cwd=bundle,
                         capture_output=True, text=True, timeout=300)
    assert "will grade 1 of 12 modules, from the top folder:" in run.stdout, run.stdout[-2000:]
    assert "    helper.py (29 bytes; imported by tensors.py)" in run.stdout.split("running the public tests")[0]
    assert run.returncode == 1 and "No module named 'reference_copy'" in run.stdout, run.stdout[-2000:]
    nothing = subprocess.run([sys.executable, "-m", "seam.check", str(tmp_path / "empty.zip")], cwd=bundle,
                             capture_output=True, text=True)
    assert nothing.returncode == 2 and "no such file" in nothing.stderr


def _zip_tree(root, archive, empty_dirs=()):
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            zf.writestr(rel + "/" if path.is_dir() else rel, "" if path.is_dir() else path.read_bytes())
    return archive


@pytest.mark.parametrize("layout", [
    # the bundle with its student_stubs/ emptied and the work beside it (an empty folder survives the zip)
    {"hw2/student_stubs/": None, "hw2/tests/": None, "hw2/seam/": None, **_modules("hw2/solution", 9),
     **_modules("hw2/tests/common", 10)},
    # empty tests/ and seam/ beside student_stubs/ and a second complete folder
    {**_modules("student_stubs"), **_modules("mywork"), "tests/": None, "seam/": None},
    # student_stubs/ renamed: the bundle's tests/common must not be taken for the work
    {**_modules("my_solution", 5), **_modules("tests/common", 10), **_modules("seam/probes", 6),
     "tests/conftest.py": "x = 1\n"},
])
def test_a_zip_and_the_same_folder_unpacked_are_graded_alike(tmp_path, layout):
    """Gradescope unpacks a zip (folders and all) before grading; `grade alice.zip` unpacks it
    itself: both must pick the same files, and never the bundle's tests/ or seam/."""
    folder = tmp_path / "up"
    for rel, text in layout.items():
        if text is None:
            (folder / rel).mkdir(parents=True, exist_ok=True)
        else:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    unpacked, zipped = graded(folder), graded(_zip_tree(folder, tmp_path / "up.zip"))
    assert unpacked[0] == zipped[0] and unpacked[2] == zipped[2], (unpacked, zipped)
    assert unpacked[2] in ("graded", "ambiguous")
    located = locate(folder)
    assert located.folder is None or not {"tests", "seam"} & set(located.folder.relative_to(folder).parts)


def _patched(archive, offset_in_central, value, width="<H"):
    import struct
    data = bytearray(archive.read_bytes())
    central = data.rfind(b"PK\x01\x02")                   # the last entry's central record
    local = struct.unpack_from("<I", data, central + 42)[0]
    struct.pack_into(width, data, central + offset_in_central, value)
    if offset_in_central in (8, 10):                      # flags, method: also in the local header
        struct.pack_into(width, data, local + offset_in_central - 2, value)
    archive.write_bytes(bytes(data))
    return archive


@pytest.mark.parametrize("damage, why", [
    (lambda z: _patched(z, 8, 1), "RuntimeError"),                    # encrypted
    (lambda z: _patched(z, 10, 9), "NotImplementedError"),            # Deflate64 (Windows Explorer)
    (lambda z: _patched(z, 16, 0, "<I"), "BadZipFile"),               # a bad CRC
])
def test_an_unreadable_entry_costs_only_that_entry(tmp_path, damage, why):
    archive = tmp_path / "up.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in PROBLEMS:
            zf.writestr(f"hw/{p}.py", f"{p} = 1\n")
        zf.writestr("hw/notes/extra.py", "x = 1\n" * 100)
    files, notes, status = graded(damage(archive))
    assert status == "graded" and len(files) == len(PROBLEMS)
    assert any(n.startswith("could not unpack 1 entry of up.zip") and "hw/notes/extra.py" in n and why in n
               for n in notes), notes


def test_windows_zips_big_files_and_case(tmp_path):
    """Backslash names (PowerShell's Compress-Archive) and a leading '/' unpack as unzip does; a
    65 MiB checkpoint or a .git/ of many objects beside the modules costs nothing (only .py
    files count); 'Tensors.py' is named, not graded (where it is graded, names are case-sensitive)."""
    archive = tmp_path / "win.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, p in enumerate(PROBLEMS):
            zf.writestr(f"hw2\\student_stubs\\{p}.py" if i % 2 else f"/hw2/student_stubs/{p}.py", f"{p} = 1\n")
        for part in ("tests\\t.py", "seam\\s.py"):
            zf.writestr(f"hw2\\{part}", "")
        zf.writestr("hw2/checkpoints/model.pt", b"\0" * (65 << 20))
        for i in range(6000):
            zf.writestr(f"hw2/.git/objects/{i:04x}", b"x")
    files, notes, status = graded(archive)
    assert status == "graded" and len(files) == len(PROBLEMS), notes
    folder = tmp_path / "cased"
    _tree(folder, {**_modules("hw"), "hw/Tensors.py": "x = 1\n"})
    (folder / "hw" / "tensors.py").unlink()
    files, notes, status = graded(folder)
    assert "tensors.py" not in files and "Tensors.py" not in files and len(files) == len(PROBLEMS) - 1
    assert any(n.startswith("Tensors.py is not tensors.py: names are case-sensitive") for n in notes), notes


def _zip_of(path, folder) -> object:
    with zipfile.ZipFile(path, "w") as zf:
        for module in sorted(folder.glob("*.py")):
            zf.write(module, f"hw/{module.name}")
    return path


def test_a_zip_inside_the_upload_is_graded_from(tmp_path):
    """A student's folder holding only their zip, and a zip of a zip, grade the modules
    inside it, and say so; two zips are named, never guessed between; a third level is named."""
    expected = {f"{p}.py": (REFERENCE / f"{p}.py").read_bytes() for p in PROBLEMS}
    folder = tmp_path / "student" / "upload"
    folder.mkdir(parents=True)
    _zip_of(folder / "hw2.zip", REFERENCE)
    files, notes, status = graded(tmp_path / "student")
    assert (status, files) == ("graded", expected)
    assert notes[0] == "the upload holds no module but upload/hw2.zip: unpacked it and graded what it holds"

    with zipfile.ZipFile(tmp_path / "outer.zip", "w") as zf:  # a zip of a zip
        zf.write(folder / "hw2.zip", "submission/hw2.zip")
    files, notes, status = graded(tmp_path / "outer.zip")
    assert (status, files) == ("graded", expected) and "submission/hw2.zip" in notes[0]

    _zip_of(folder / "old.zip", REFERENCE)
    files, notes, status = graded(tmp_path / "student")
    assert (status, files) == ("empty", {})
    assert "it holds 2 zips (upload/hw2.zip, upload/old.zip): upload one of them" in notes[-1]

    deeper = tmp_path / "deeper"
    deeper.mkdir()
    with zipfile.ZipFile(deeper / "a.zip", "w") as zf:
        zf.write(tmp_path / "outer.zip", "outer.zip")
    files, notes, status = graded(deeper)
    assert (status, files) == ("empty", {})
    assert any("not opened a second time: outer.zip" in n for n in notes), notes


def test_a_nested_zip_keeps_the_limits(tmp_path, monkeypatch):
    import seam.upload
    folder = tmp_path / "student"
    folder.mkdir()
    _zip_of(folder / "hw2.zip", REFERENCE)
    monkeypatch.setattr(seam.upload, "MAX_ZIP_FILES", 3)  # the reference's 12 modules are over it
    files, notes, status = graded(folder)
    assert (status, files) == ("empty", {})
    assert any("hw2.zip is too large to grade" in n for n in notes), notes
