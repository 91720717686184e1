"""Every reference a student can read in the bundle resolves inside the bundle: file paths,
Markdown links, and "notes NNN" citations of the lecture notes (assignment/notes/NNN.txt)."""

import re

import pytest

from grader.release import release_student

# What a student reads: the handout, the stubs' docstrings, the public tests and what pytest prints.
READ = ("README.md", "assignment/**/*.md", "student_stubs/*.py", "tests/public/*.py", "tests/conftest.py",
        "seam/*.py", "conftest.py", "pyproject.toml")
PATH = re.compile(r"(?<![\w/.])((?:assignment|student_stubs|tests)/[\w./-]*\w)")
LINK = re.compile(r"\]\(([^)#\s]+)")
# "notes 001", "notes 000/004", "(notes 000, 001, 004)", "notes 001 and 004"
NOTES = re.compile(r"\bnotes\b:? \(?((?:\d{3}(?:\s*(?:,|/|and)\s*)?)+)", re.IGNORECASE)
# a stub's header: "Notes (assignment/notes/): 000 (what it shows), 001 (...)"
HEADER = re.compile(r"Notes \(assignment/notes/\):(.*?)\"\"\"", re.DOTALL)
NUMBER = re.compile(r"\b(\d{3})\b")
LISTED = re.compile(r"(?:^|\s|,)(\d{3}) \(")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return release_student(tmp_path_factory.mktemp("refs") / "hw2")


def shown_files(bundle):
    return sorted({p for pattern in READ for p in bundle.glob(pattern) if p.is_file()})


def test_every_cited_path_and_link_exists(bundle):
    missing = []
    for path in shown_files(bundle):
        text = path.read_text()
        for ref in PATH.findall(text):
            if "*" in ref or "<" in ref or ref.endswith((".", "/")):
                continue  # a pattern (tests/public/test_*.py), not a file
            if not (bundle / ref).exists():
                missing.append(f"{path.relative_to(bundle)}: {ref}")
        if path.suffix == ".md":
            for ref in LINK.findall(text):
                if "://" not in ref and not (path.parent / ref).exists():
                    missing.append(f"{path.relative_to(bundle)}: link {ref}")
    assert not missing, "references that do not resolve in the bundle:\n" + "\n".join(missing)


def test_every_cited_lecture_note_is_shipped(bundle):
    cited, missing = set(), []
    for path in shown_files(bundle):
        text = path.read_text()
        numbers = [n for m in NOTES.finditer(text) for n in NUMBER.findall(m.group(1))]
        numbers += [n for m in HEADER.finditer(text) for n in LISTED.findall(m.group(1))]
        for number in numbers:
            cited.add(number)
            if not (bundle / "assignment" / "notes" / f"{number}.txt").is_file():
                missing.append(f"{path.relative_to(bundle)}: notes {number}")
        assert "handout.md" not in text and not re.search(r"\bseeds? \d{3}", text), \
            f"{path.relative_to(bundle)} cites a file the bundle does not have"
    assert cited >= {"000", "001", "004"}, cited  # the scan did find the citations
    assert not missing, "\n".join(missing)


def test_scanner_catches_a_dangling_reference(tmp_path):
    """The patterns above do match what they must (a scan that finds nothing proves nothing)."""
    text = 'Handout: assignment/handout.md. See [x](problems/nope.md) and notes 007/008 (33,024 bytes).'
    assert PATH.findall(text) == ["assignment/handout.md"]
    assert LINK.findall(text) == ["problems/nope.md"]
    assert NUMBER.findall(NOTES.search(text).group(1)) == ["007", "008"]
    header = '"""Problem.\n\nNotes (assignment/notes/): 000 (the 16P ledger), 009 (ZeRO, 2,048\nGPUs).\n"""'
    assert LISTED.findall(HEADER.search(header).group(1)) == ["000", "009"]
