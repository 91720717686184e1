"""No history in the code: no comment, docstring or message cites an issue's number, a red team's
round or finding number, or a commit (tests/self/narration.py says what counts and where it looks).
Comments say what the code does and why; how it came to be is the commit messages' to tell."""

from grader.paths import ROOT
from tests.self.narration import commits_among, findings, hex_words, repository_files


def test_no_issue_round_or_commit_is_cited():
    files = repository_files(ROOT)
    assert "grader/cli.py" in files and "README.md" in files  # it reads the repository it guards
    found = findings(files, commits_among(ROOT, hex_words(files)))
    assert not found, ("history in the code (say what and why instead; the story goes in the commit "
                       "message):\n  " + "\n  ".join(found))
