"""A TA's wrong path is said in one line before torch loads (seconds, not the import's), and a
download that is not a readable export is named in one line."""

import subprocess
import sys
import zipfile

import pytest

from grader.batch.roster import RosterError, unpack_export
from grader.paths import ROOT
from tests.self.shared import cli

PROBE = """
import sys
from grader.cli import main
code = main(sys.argv[1:])
print(code, "torch" in sys.modules)
"""


@pytest.mark.parametrize("args, said", [
    (["grade", "{tmp}/nowhere"], "{tmp}/nowhere: no such file or folder; nothing graded"),
    (["batch", "{tmp}/nowhere.zip", "--out", "{tmp}/out"],
     "{tmp}/nowhere.zip: no such folder or Gradescope export (.zip); nothing graded"),
])
def test_a_missing_path_is_refused_before_torch_loads(tmp_path, args, said):
    args = [a.format(tmp=tmp_path) for a in args]
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.split() == ["2", "False"], proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {said.format(tmp=tmp_path)}"]
    assert not (tmp_path / "out").exists()


def test_a_download_that_is_no_zip_is_named_in_one_line(tmp_path):
    bad = tmp_path / "export.zip"
    bad.write_text("not a zip\n")
    with pytest.raises(RosterError, match=r"export\.zip: not a readable \.zip"):
        unpack_export(bad, tmp_path / "into")
    proc = cli("batch", bad, "--out", tmp_path / "out", check=2)
    assert len(proc.stderr.strip().splitlines()) == 1 and "not a readable .zip" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_plain_file_is_not_a_class_folder(tmp_path):
    notes = tmp_path / "roster.csv"
    notes.write_text("sid\n")
    proc = cli("batch", notes, "--out", tmp_path / "out", check=2)
    assert "roster.csv: not a folder" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_an_export_zip_unpacks_as_the_folder_it_holds(tmp_path):
    """Names that would leave the folder are kept inside it (zipfile's own rule), sizes come
    from the zip's directory."""
    download = tmp_path / "d.zip"
    with zipfile.ZipFile(download, "w") as zf:
        zf.writestr("assignment_7_export/submission_metadata.yml", "{}\n")
        zf.writestr("../../escape.py", "x = 1\n")
    into = tmp_path / "into"
    unpack_export(download, into)
    assert (into / "assignment_7_export" / "submission_metadata.yml").is_file()
    assert (into / "escape.py").is_file() and not (tmp_path.parent / "escape.py").exists()
