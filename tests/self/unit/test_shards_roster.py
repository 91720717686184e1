"""Shards (disjoint, covering, stable as a class grows, taken from Slurm or Kubernetes) and the
class roster (plain folders and zips, Gradescope's export and its submission_metadata.yml)."""

import datetime
from pathlib import Path

import pytest

from grader.batch.roster import RosterError, Student, Upload, choose, class_digest, discover, parse_metadata
from grader.batch.shards import ShardError, resolve, select, shard_of

KEYS = [f"student{i:03d}" for i in range(200)]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_are_disjoint_and_cover_the_class(n):
    slices = [select(KEYS, (i, n)) for i in range(n)]
    assert sorted(k for s in slices for k in s) == sorted(KEYS)
    assert sum(map(len, slices)) == len(KEYS)
    if n > 1:
        assert all(len(s) > len(KEYS) / n / 2 for s in slices)   # roughly even


def test_shards_stay_put_when_the_class_grows():
    grown = KEYS + [f"late{i}" for i in range(50)]
    for n in (2, 5):
        assert {k: shard_of(k, n) for k in KEYS} == {k: shard_of(k, n) for k in grown if k in KEYS}
        for i in range(n):
            assert set(select(KEYS, (i, n))) <= set(select(grown, (i, n)))


@pytest.mark.parametrize("spec, count, env, expected", [
    (None, None, {}, None),
    ("2/4", None, {}, (2, 4)),
    ("0/1", 1, {}, (0, 1)),
    (None, None, {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "5"}, (3, 5)),
    (None, None, {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, (3, 4)),
    (None, 6, {"SLURM_ARRAY_TASK_ID": "5"}, (5, 6)),
    (None, 3, {"JOB_COMPLETION_INDEX": "2"}, (2, 3)),
    ("1/2", None, {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "9"}, (1, 2)),  # the flag wins
])
def test_shard_from_flag_or_environment(spec, count, env, expected):
    assert resolve(spec, count, env) == expected


@pytest.mark.parametrize("spec, count, env, message", [
    ("4/4", None, {}, "not in 0..3"),
    ("-1/4", None, {}, "not in 0..3"),
    ("1/0", None, {}, ">= 1"),
    ("a/b", None, {}, "whole number"),
    ("3", None, {}, "expected I/N"),
    ("1/4", 5, {}, "disagree"),
    (None, None, {"SLURM_ARRAY_TASK_ID": "2"}, "SLURM_ARRAY_TASK_COUNT"),
    (None, None, {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "2"}, "not in 0..1"),
    (None, None, {"JOB_COMPLETION_INDEX": "0"}, "--shard-count"),
    (None, 4, {}, "without a shard index"),
])
def test_bad_shard_values(spec, count, env, message):
    with pytest.raises(ShardError, match=message.replace(".", r"\.")):
        resolve(spec, count, env)


METADATA = """\
submission_11:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1815'
    :email: ada@example.edu
  - :name: Charles Babbage
    :sid: 1791
    :email: charles@example.edu
  :created_at: 2024-02-01 23:59:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.1E2
  :status: processed
  :results:
    score: 10.0
    tests: []
  :history: []
submission_12:
  :submitters:
  - :name: Emmy Noether
    :sid:
    :email:
"""


def test_metadata_as_gradescope_writes_it():
    parsed = parse_metadata(METADATA)
    assert {k: u.students for k, u in parsed.items()} == {
        "submission_11": (Student("1815", "Ada Lovelace", "ada@example.edu"),
                          Student("1791", "Charles Babbage", "charles@example.edu")),
        "submission_12": (Student("", "Emmy Noether", ""),),
    }
    assert parsed["submission_11"].created == datetime.datetime(
        2024, 2, 2, 7, 59, tzinfo=datetime.timezone.utc)              # -08:00, as Gradescope writes it
    assert parsed["submission_12"].created is None


def _up(key, *sids, created=None, active=None):
    return Upload(key, Path(key), tuple(Student(s) for s in sids),
                  created and datetime.datetime.fromisoformat(created), active)


def test_one_submission_per_student():
    """The active one, else the latest, else the highest id; a group counts for each member
    whose choice it is; the rest are superseded, each saying by which."""
    counted, superseded = choose([
        _up("submission_1", "ada", "bob", created="2024-02-01T10:00:00+00:00"),   # a group
        _up("submission_2", "ada", created="2024-02-02T10:00:00+00:00"),          # ada resubmits alone
        _up("submission_3", "cy", created="2024-02-03T10:00:00+00:00", active=False),
        _up("submission_4", "cy", created="2024-02-01T10:00:00+00:00", active=True),  # active wins
        _up("submission_5", "dee"), _up("submission_6", "dee"),                    # no dates: highest id
        _up("submission_7", "eve", created="2024-02-01T10:00:00+00:00"),
        _up("submission_8"),                                                       # nobody named
        Upload("submission_9", Path("s9"), (Student("", "Jo Smith"),)),            # two of one name,
        Upload("submission_10", Path("s10"), (Student("", "Jo Smith"),))])         # no SID, no email
    assert {u.key: [s.sid for s in u.students] for u in counted} == {
        "submission_1": ["bob"], "submission_2": ["ada"], "submission_4": ["cy"], "submission_6": ["dee"],
        "submission_7": ["eve"], "submission_8": [], "submission_9": [""], "submission_10": [""]}
    assert superseded == {"submission_3": "superseded by submission_4 (the active or latest submission)",
                          "submission_5": "superseded by submission_6 (the active or latest submission)"}


@pytest.mark.parametrize("text, message", [
    ("submission_1: [unclosed\n", "not valid YAML"),
    ("- a\n- b\n", "should map"),
    ("submission_1:\n  :score: 3\n", "no ':submitters:' list"),
])
def test_bad_metadata(text, message):
    with pytest.raises(RosterError, match=message):
        parse_metadata(text)


def test_discover_an_export(tmp_path):
    export = tmp_path / "assignment_7_export"          # as it unzips: one folder inside
    export.mkdir()
    (export / "submission_metadata.yml").write_text(METADATA)
    (export / "submission_11").mkdir()
    (export / "submission_99").mkdir()                 # not in the metadata
    out = tmp_path / "out"
    out.mkdir()                                        # the output folder beside it is no student
    uploads, notes = discover(tmp_path, exclude=(out,))
    assert [u.key for u in uploads] == ["submission_11", "submission_12"]
    assert not uploads[1].path.exists()                # graded as "not found"
    assert [s.sid for s in uploads[0].students] == ["1815", "1791"]
    assert any("submission_99" in n for n in notes)


def test_discover_folders_and_zips(tmp_path):
    for name in ("bob", "ada"):
        (tmp_path / name).mkdir()
    (tmp_path / "carl.zip").write_bytes(b"")
    (tmp_path / "bob.zip").write_bytes(b"")            # same name as a folder: keeps its suffix
    (tmp_path / "README.txt").write_text("hi")
    (tmp_path / ".DS_Store").write_text("")
    uploads, notes = discover(tmp_path)
    assert [u.key for u in uploads] == ["ada", "bob", "bob.zip", "carl"]
    assert uploads[0].students == (Student("ada"),)
    assert notes == ["neither a folder nor a .zip, not graded: README.txt"]
    with pytest.raises(RosterError, match="no such folder"):
        discover(tmp_path / "nope")


def test_a_students_metadata_file_does_not_replace_the_class(tmp_path):
    """Red team: in a folder of student folders, one student ships a submission_metadata.yml of
    their own naming whoever they like. It is their upload, graded as such; the class stays."""
    for name in ("alice", "bob", "mallory/submission_1"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "mallory" / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - {':name': Bob, ':sid': bob, ':email': ''}\n")
    uploads, notes = discover(tmp_path)
    assert [u.key for u in uploads] == ["alice", "bob", "mallory"]
    assert notes == ["mallory holds a submission_metadata.yml but is graded as one upload among the others "
                     "(to grade an export, give its folder itself)"]
    klass = tmp_path / "klass"                                          # a batch output beside an export
    (klass / "graded-before").mkdir(parents=True)
    (klass / "graded-before" / "batch.json").write_text("{}")
    (klass / "assignment_7_export" / "submission_11").mkdir(parents=True)
    (klass / "assignment_7_export" / "submission_metadata.yml").write_text(METADATA)
    uploads, _ = discover(klass)
    assert [u.key for u in uploads] == ["submission_11", "submission_12"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "assignment_7_export").mkdir(parents=True)
    (tmp_path / "other" / "assignment_7_export" / "submission_metadata.yml").write_text(METADATA)
    (tmp_path / "other" / "assignment_7_export.zip").write_bytes(b"")   # the export beside its own zip
    with pytest.raises(RosterError, match="holds an export .assignment_7_export. and other files beside it"):
        discover(tmp_path / "other")


def test_the_class_digest_tells_downloads_apart():
    first = [_up("submission_1", "ada", created="2024-02-01T10:00:00+00:00"), _up("submission_2", "bob")]
    assert class_digest(first) == class_digest(list(reversed(first)))
    assert class_digest(first + [_up("submission_3", "ada", created="2024-02-02T10:00:00+00:00")]) != class_digest(first)


def test_sids_stay_as_written_and_active_is_read():
    parsed = parse_metadata("submission_1:\n  :submitters:\n  - :sid: 0012\n    :name: Cy\n  :active: true\n"
                            "submission_2:\n  :submitters:\n  - :sid: '10'\n  :active: false\n")
    assert parsed["submission_1"].students[0].sid == "0012" and parsed["submission_2"].students[0].sid == "10"
    assert (parsed["submission_1"].active, parsed["submission_2"].active) == (True, False)


def test_a_same_size_edit_after_a_big_file_changes_the_fingerprint(tmp_path):
    """Past FINGERPRINT_BYTES sizes stand in for bytes, but never for a problem module's: a
    rerun must regrade a 0.9 -> 0.8 edit behind a large .git pack (red team)."""
    from grader.batch.roster import FINGERPRINT_BYTES, fingerprint
    up = tmp_path / "up"
    (up / ".git").mkdir(parents=True)
    with open(up / ".git" / "pack", "wb") as f:
        f.truncate(FINGERPRINT_BYTES + (1 << 20))                      # sparse: sorts before the module
    (up / "tensors.py").write_text("x = 0.9\n")
    before = fingerprint(up)
    (up / "tensors.py").write_text("x = 0.8\n")
    assert fingerprint(up) != before


def test_an_uploads_fingerprint_takes_no_recursion(tmp_path):
    """A folder upload holding a chain of 1,200 folders (past Python's recursion limit; rglob
    recursed and the whole batch failed before grading anyone) is fingerprinted as its files
    alone: the same as the upload without the chain."""
    import os
    from grader.batch.roster import fingerprint
    deep, flat = tmp_path / "deep", tmp_path / "flat"
    for folder in (deep, flat):
        folder.mkdir()
        (folder / "intensity.py").write_text("x = 1\n")
    here = os.getcwd()
    os.chdir(deep)
    try:
        for _ in range(1200):
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(here)
    try:
        assert fingerprint(deep) == fingerprint(flat)
    finally:  # (pytest's own clean-up of old temporary folders recurses)
        from grader.sandbox.folders import remove
        remove(deep)
