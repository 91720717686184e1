"""Finding the modules in an upload: flat, nested, zipped; hostile zips are contained."""

import shutil
import zipfile

from seam.upload import locate


def write(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_text("x = 1\n")
    return folder


def test_flat_folder(tmp_path):
    located = locate(write(tmp_path / "s", ["tensors.py", "flops.py", "conftest.py"]))
    assert located.folder == tmp_path / "s"
    assert any("missing:" in n and "dtypes.py" in n for n in located.notes)


def test_nested_and_macosx(tmp_path):
    write(tmp_path / "s" / "__MACOSX" / "hw", ["tensors.py", "flops.py", "memory.py"])
    write(tmp_path / "s" / "hw2", ["tensors.py", "flops.py"])
    located = locate(tmp_path / "s")
    assert located.folder == tmp_path / "s" / "hw2"
    assert "1 level(s) down" in located.notes[0]


def test_zip_with_nested_folder_and_zip_slip(tmp_path):
    archive = tmp_path / "up.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("hw/tensors.py", "x = 1\n")
        zf.writestr("hw/scaling.py", "x = 2\n")
        zf.writestr("../../escaped.py", "boom\n")
    located = locate(archive)
    assert located.folder.name == "hw" and (located.folder / "scaling.py").read_text() == "x = 2\n"
    assert not (tmp_path.parent / "escaped.py").exists()
    assert located.cleanup is not None
    shutil.rmtree(located.cleanup)   # the unpacked copy is the caller's to remove (grade_one does)


def test_empty_and_missing(tmp_path):
    (tmp_path / "e").mkdir()
    for target in (tmp_path / "e", tmp_path / "nope"):
        located = locate(target)
        assert located.folder is None and "Expected layout" in " ".join(located.notes)


def test_two_submissions_in_one_upload_are_graded_as_neither(tmp_path):
    """A zip holding an old and a new attempt: no guess, and the report names both."""
    archive = tmp_path / "up.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for folder in ("attempt1", "final/hw2"):
            zf.writestr(f"{folder}/tensors.py", "x = 1\n")
            zf.writestr(f"{folder}/flops.py", "x = 1\n")
    located = locate(archive)
    assert located.folder is None and located.status == "ambiguous"
    assert "attempt1/ (2 module(s))" in located.notes[0] and "final/hw2/ (2 module(s))" in located.notes[0]
    assert "Graded as neither" in located.notes[0]
    shutil.rmtree(located.cleanup)
    write(tmp_path / "s", ["tensors.py"])
    write(tmp_path / "s" / "copy", ["tensors.py"])          # a folder with modules and a copy inside
    located = locate(tmp_path / "s")
    assert located.status == "ambiguous" and "the top folder" in located.notes[0] and "copy/" in located.notes[0]


def test_statuses(tmp_path):
    assert locate(write(tmp_path / "ok", ["tensors.py"])).status == "graded"
    assert locate(write(tmp_path / "e", [])).status == "empty"
    assert locate(tmp_path / "missing").status == "not found"
    (tmp_path / "bad.zip").write_text("not a zip")
    assert locate(tmp_path / "bad.zip").status == "empty"
