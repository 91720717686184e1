"""The record's entries from git: each commit on the first-parent line of a branch that changed a
graded file, with the tests hash as THAT commit's grader computed it (its own
grader/provenance.py, run in an exported tree with torch blocked), the tests read by
facts.extract, and the commit message's first sentence as its why.

A commit whose grader has no provenance.py (stamps came later) or whose provenance fails is
skipped and said so: no grade carries its hash.
"""

import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from seam.problems import LAYOUT, folder
from ..paths import TEST_SUPPORT
from .facts import extract

# What an old tree needs for its own provenance.py and for the extractor (tests/self left out).
EXPORTED = ("grader", "seam", "reference", "tests", "pyproject.toml", ":(exclude)tests/self")
HASH_SCRIPT = ("import sys; sys.modules['torch'] = None\n"  # its hash must not need torch
               "from grader.provenance import tests_hash; print(tests_hash())")


def graded_paths() -> list[str]:
    """Where graded files live (grader/provenance.py's roots), and the hash's own definition."""
    return sorted({*(str(folder(k.kind)) for k in LAYOUT if k.graded), "seam", *TEST_SUPPORT,
                   "grader/provenance.py"})


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def first_sentence(message: str) -> str:
    """A commit subject's first clause, outside parentheses: up to the first top-level "; " or
    ". "; a long one loses its parenthesised asides."""
    depth, end = 0, len(message)
    for i, ch in enumerate(message):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and message[i:i + 2] in ("; ", ". "):
            end = i
            break
    text = message[:end].strip().rstrip(".")
    if len(text) > 80:
        text = re.sub(r"\s*\([^()]*\)", "", text)
    return text


def why_of(repo: Path, commit: str) -> str:
    """The commit's first sentence; a bare "Merge branch 'x'" speaks through its branch's
    commits that changed graded files."""
    subject = git(repo, "log", "-1", "--format=%s", commit).strip()
    parents = git(repo, "log", "-1", "--format=%P", commit).split()
    if len(parents) > 1 and re.fullmatch(r"Merge branch '[^']*'( into \S+)?", subject):
        inner = git(repo, "log", "--reverse", "--format=%s", f"{parents[0]}..{parents[1]}", "--",
                    *graded_paths()).splitlines()
        return " / ".join(dict.fromkeys(first_sentence(s) for s in inner if s.strip())) or subject
    return first_sentence(subject)


READING = "syntax"  # what ``file_hashes`` reads of a file (a record's latest reading says which)


def file_hashes(root: Path, reading: str = READING) -> dict:
    """{path: sha256[:12]} of every .py and .json file under the graded paths of the tree: of
    what the tests hash reads of it (``reading`` "syntax": a Python file's syntax tree, so an edit
    to a comment, a docstring or the layout is no change; the modules of words left out, as the
    hash leaves them), or of its bytes (``reading`` "bytes": how records were read before)."""
    from ..provenance import WORDING, content
    out = {}
    for rel in graded_paths():
        base = root / rel
        paths = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for p in paths:
            name = p.relative_to(root).as_posix()
            if p.is_file() and p.suffix in (".py", ".json") and "__pycache__" not in p.parts \
                    and not (reading == READING and name in WORDING):
                data = content(p) if reading == READING else p.read_bytes()
                out[name] = hashlib.sha256(data).hexdigest()[:12]
    return dict(sorted(out.items()))


def tree_hash(tree: Path) -> str:
    """The tests hash the exported tree's own grader computes (raises RuntimeError if it cannot)."""
    run = subprocess.run([sys.executable, "-S", "-c", HASH_SCRIPT], cwd=tree, capture_output=True, text=True,
                         timeout=120)
    if run.returncode != 0 or not re.fullmatch(r"[0-9a-f]{8,64}", run.stdout.strip()):
        last = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(last)
    return run.stdout.strip()


def commits(repo: Path, ref: str) -> list[str]:
    return git(repo, "rev-list", "--first-parent", "--reverse", ref, "--", *graded_paths()).split()


def walk(repo: Path, ref: str = "HEAD", say=print):
    """(commit, date, hash, why, facts, files) for each commit of ``ref``'s first-parent line that
    changed graded files, oldest first; ``say`` is told each commit skipped and why."""
    for commit in commits(repo, ref):
        short = commit[:7]
        date = git(repo, "log", "-1", "--format=%ad", "--date=short", commit).strip()
        top = set(git(repo, "ls-tree", "--name-only", commit).split())
        if "grader/provenance.py" not in git(repo, "ls-tree", "--name-only", commit, "grader/").split():
            say(f"skipped {short}: its grader has no provenance.py (no grade carries a tests hash)")
            continue
        with tempfile.TemporaryDirectory(prefix="history-") as tmp:
            wanted = [p for p in EXPORTED if p.startswith(":") or p in top]
            archive = subprocess.run(["git", "-C", str(repo), "archive", commit, "--", *wanted],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            try:
                digest = tree_hash(Path(tmp))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                say(f"skipped {short}: its provenance.py failed ({e})")
                continue
            yield short, date, digest, why_of(repo, commit), extract(Path(tmp)), file_hashes(Path(tmp))
