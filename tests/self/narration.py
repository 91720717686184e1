"""Words that tell how the code came to be instead of what it does and why: an issue's number
("issue N"), a red team's round or finding number ("round N", an ordinal round, "red team #N")
and a commit id ("at" and a hex id that git knows as a commit). That story belongs in the commit
messages: in a comment it means nothing to a reader without the tracker or the log, and it goes
stale while the code under it changes.

Read by tests/self/repo/test_no_history.py over the repository, and tested on planted lines by
tests/self/unit/test_narration.py. Nothing here is imported by the grader.
"""

import re
import shutil
import subprocess
from pathlib import Path

# Where the code and its prose live. Whole folders, then single files and file patterns.
FOLDERS = ("grader", "seam", "tests", "benchmarks", "deploy")
FILES = ("README.md",)
PATTERNS = ("docs/*.md",)
# Records that programs write (their text is data, rewritten by each run, not prose)
GENERATED = ("tests/self/behaviour.json", "tests/rubric_history.json", "tests/self/mutation/record.json", "tests/self/mutation/survivors.md",
             "tests/public/snapshots/")
SKIP_DIRS = {"__pycache__", ".pytest_cache"}

ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.I)
# A finding's number in a red team's report: the report's name for the attack says what it is
FINDING = re.compile(r"\bred[- ]?team(?:'s)?\s+(?:finding\s+|item\s+)?#\s*\d+", re.I)
ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\\d+(?:st|nd|rd|th)"
# "round N" but not "round N.5 to even" nor round(x, N); an ordinal before "round" or "red-team round"
ROUND = re.compile(rf"\brounds?\s+#?\d+\b(?![.,]\d)|\b(?:{ORDINALS})\s+(?:red[- ]?team\s+)?rounds?\b", re.I)
HEX = re.compile(r"\b[0-9a-f]{7,40}\b")
# Without git: a hex word with a letter and a digit right after a word that dates something (on
# the next line too, behind its indent or comment sign)
NEAR = re.compile(r"\b(?i:commits?|at|since|before|after|until)\W{1,16}?([0-9a-f]{7,40})\b")


def repository_files(root: Path) -> dict[str, str]:
    """The text of every file the check reads, by its path relative to ``root`` (posix). A file
    that is not UTF-8 text (an image, a pickle) is left out: it holds no prose."""
    paths = [p for name in FOLDERS if (root / name).is_dir() for p in (root / name).rglob("*")]
    paths += [root / name for name in FILES] + [p for pattern in PATTERNS for p in root.glob(pattern)]
    out = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if (not path.is_file() or path.is_symlink() or SKIP_DIRS & set(path.relative_to(root).parts)
                or any(rel == g or (g.endswith("/") and rel.startswith(g)) for g in GENERATED)):
            continue
        try:
            text = path.read_bytes().decode()
        except UnicodeDecodeError:
            continue
        if "\0" not in text:
            out[rel] = text
    return out


def hex_words(files: dict[str, str]) -> set[str]:
    """Every word that could be a commit id (7 to 40 lower-case hex digits)."""
    return {word for text in files.values() for word in HEX.findall(text)}


def commits_among(root: Path, words: set[str]) -> set[str] | None:
    """The words that name a commit of the repository at ``root`` (abbreviated or whole), asked of
    git in one call; None when git cannot say (no git, or ``root`` is no repository), and then the
    check judges a hex word by the words before it."""
    git = shutil.which("git")
    if git is None or subprocess.run([git, "rev-parse", "--git-dir"], cwd=root, capture_output=True).returncode:
        return None
    ordered = sorted(words)
    got = subprocess.run([git, "cat-file", "--batch-check=%(objecttype)"], cwd=root, capture_output=True,
                         input="".join(f"{w}\n" for w in ordered), text=True, check=True).stdout.splitlines()
    return {word for word, line in zip(ordered, got) if line.split()[-1:] == ["commit"]}


def _commit_ids(text: str, commits: set[str] | None) -> dict[int, list[str]]:
    """The commit ids in ``text`` by line number (see findings)."""
    if commits is not None:
        spans = [(m.start(), m.group(0)) for m in HEX.finditer(text) if m.group(0) in commits]
    else:
        spans = [(m.start(1), m.group(1)) for m in NEAR.finditer(text)
                 if re.search("[a-f]", m.group(1)) and re.search("[0-9]", m.group(1))]
    out: dict[int, list[str]] = {}
    for start, word in spans:
        out.setdefault(text.count("\n", 0, start) + 1, []).append(word)
    return out


def findings(files: dict[str, str], commits: set[str] | None) -> list[str]:
    """``path:line: what: the line`` for each line of ``files`` that cites an issue, a red team's
    round or finding number, or a commit (``commits``: the hex words that are commits, from
    commits_among; None: judged by the words before them)."""
    out = []
    for rel, text in sorted(files.items()):
        commit_ids = _commit_ids(text, commits)
        for number, line in enumerate(text.split("\n"), 1):
            what = [f"issue {m.group(0)!r}" for m in ISSUE.finditer(line)]
            what += [f"red-team finding {m.group(0)!r}" for m in FINDING.finditer(line)]
            what += [f"round {m.group(0)!r}" for m in ROUND.finditer(line)]
            what += [f"commit {w!r}" for w in commit_ids.get(number, [])]
            if what:
                out.append(f"{rel}:{number}: {', '.join(what)}: {line.strip()[:120]}")
    return out
