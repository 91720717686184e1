"""Finding the modules in an upload: flat, nested, zipped; hostile zips are contained."""

import zipfile

from grader.submission import locate


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


def test_empty_and_missing(tmp_path):
    (tmp_path / "e").mkdir()
    for target in (tmp_path / "e", tmp_path / "nope"):
        located = locate(target)
        assert located.folder is None and "Expected layout" in " ".join(located.notes)
