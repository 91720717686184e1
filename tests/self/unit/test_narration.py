"""The history check (tests/self/narration.py) on planted lines: what it must find, what it must
leave alone (rounding, an issue in the plain sense, hex data), and where it looks.

The planted lines are written with placeholders ({n}, {ordinal}, {sha}) and filled in here, so
that this file does not itself cite what it plants for the repository-wide check."""

import shutil
import subprocess

import pytest

from tests.self.narration import commits_among, findings, hex_words, repository_files

FILL = {"n": 36, "ordinal": "second", "sha": "1a2b3c4d"}

# (planted line, what the check calls it)
FOUND = [
    ("# keeps its point while Cruncher is unwritten (issue {n}).", "issue"),
    ('    """Issue {n}: after two functions\' timeouts the third is not called."""', "issue"),
    ("# see issue #{n}, item 5", "issue"),
    ("(issues {n} and 38)", "issue"),
    ("# The red team's {ordinal} round: a function relabelled with a library's file name", "round"),
    ("# closed in red-team round {n}", "round"),
    ("# the {ordinal} red-team round found it", "round"),
    ('"""The grader\'s own side (red team #{n}, #17): no reply can sink it."""', "red-team finding"),
    ("    Red team #{n}: three children of one worker", "red-team finding"),
]
INNOCENT = [
    "q = round(x, 2)  # round half to even, as torch.round does",
    "# round-to-nearest, ties to even: round 2.5 to 2, rounds 3.5 to 4",
    "# float32 round-off, about one ulp; a round trip through JSON",
    "TIMES = 2  # one round of two on CI's two cores",
    "# an issue with the cache; issues like this one are the worker's",
    "SEED = 1234567",
    'DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of nothing',
    "# a hash of the mutant's source: {sha} in the record",
]


def plant(lines):
    return "\n".join(line.format(**FILL) for line in lines) + "\n"


def test_each_kind_is_found_on_its_line_and_innocent_lines_are_not():
    text = plant([line for line, _ in FOUND] + INNOCENT)
    got = findings({"grader/x.py": text}, commits=set())
    assert len(got) == len(FOUND), "\n".join(got)
    for number, ((line, kind), finding) in enumerate(zip(FOUND, got), 1):
        assert finding.startswith(f"grader/x.py:{number}: {kind} "), finding
        assert finding.endswith(line.format(**FILL).strip()), finding


def _git(cwd, *args, **kw):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, **kw).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_hex_word_is_a_commit_only_when_git_knows_it_as_one(tmp_path):
    """A commit's id, abbreviated or whole, is found; a blob's id, a hex word git does not know
    and a number are not, wherever they stand."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    blob = _git(tmp_path, "rev-parse", "HEAD:a.txt")
    files = {"tests/t.py": plant([f"# the suite at {commit[:7]} took 469 s",
                                  f"    python benchmarks/house.py {commit} HEAD",
                                  f"# a blob at {blob[:10]}", "# unknown at {sha}", "# at 12345678"])}
    commits = commits_among(tmp_path, hex_words(files))
    assert commits == {commit[:7], commit}
    got = findings(files, commits)
    assert [g.split(": ")[0] for g in got] == ["tests/t.py:1", "tests/t.py:2"], got
    assert f"commit '{commit[:7]}'" in got[0] and f"commit '{commit}'" in got[1]


def test_without_git_a_hex_word_counts_when_a_dating_word_stands_before_it(tmp_path):
    """No git to ask (commits None): a hex word with a letter and a digit right after commit, at,
    since..., even across a line break, is taken for a commit; a number, or a word after
    anything else, is not."""
    text = plant(["# At {sha} the grader decoded 63 MB frames",
                  '    """the first was racy at',
                  '    {sha}; it is not now."""',
                  "# since commit {sha}",
                  "# the digest {sha} of the file",
                  "# at 12345678 bytes",
                  "# at deadbeefcafe? no digit: a word, not an id"])
    got = findings({"seam/y.py": text}, commits=None)
    assert [g.split(": ")[0] for g in got] == ["seam/y.py:1", "seam/y.py:3", "seam/y.py:4"], got
    assert commits_among(tmp_path, {FILL["sha"]}) is None  # tmp_path is no repository


def test_the_check_reads_the_code_and_prose_but_not_generated_records(tmp_path):
    """Whole folders (grader, seam, tests, benchmarks, deploy), README.md and docs/*.md; not the
    records programs write, caches, binary files or other folders."""
    cite = plant(["# (issue {n})"])
    read = ["grader/a.py", "seam/b.py", "tests/self/c.py", "benchmarks/d.py", "deploy/docker/Dockerfile",
            "README.md", "docs/e.md"]
    unread = ["tests/self/behaviour.json", "tests/self/mutation/record.json", "tests/self/mutation/survivors.md",
              "tests/public/snapshots/x.json", "grader/__pycache__/a.py", "docs/sub/f.md", "docs/g.json",
              "reference/h.py", "student_stubs/i.py"]
    for rel in read + unread:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(cite)
    (tmp_path / "grader" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe" + cite.encode())
    (tmp_path / "grader" / "data.bin").write_bytes(cite.encode() + b"\0")  # UTF-8, but not text
    files = repository_files(tmp_path)
    assert sorted(files) == sorted(read)
    assert [g.split(": ")[0] for g in findings(files, commits=set())] == sorted(f"{rel}:1" for rel in read)
