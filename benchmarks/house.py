"""How the house is laid out at several revisions: what a maintainer meets before changing it.

    python benchmarks/house.py OLD_REV HEAD

For each revision (a fresh clone, nothing run): the folder tree of grader/ and tests/self/
(folders with their .py files), the clone detector's pairs (`duplicates`, six or more shared
lines) in grader/ and seam/, the files that name an isolation mode in a comparison (what a new
mode touches besides its own), and the files that spell a per-problem path (what adding a
problem touches by hand) against the ones `seam/problems.py`'s layout lists.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
MODES = ("bwrap", "namespaces", "landlock", "uid", "process")
# a decision by the mode's name: mode == "uid", cfg["mode"] in ("bwrap", ...), .namespaces, .drop
MODE_DECISION = re.compile(r"""mode"?\]?\s*(==|!=|in|not in)\s*\(?["'](%s)["']|\.namespaces\b|\.user_ns\b|\.drop\b"""
                           % "|".join(MODES))
# a per-problem file of the repository spelled in place: f"test_{p}.py", REFERENCE / f"{problem}.py",
# "tests/public/snapshots" / f"{p}.json", ... (a line with an f-string naming a problem variable and a
# word of the layout; a submission's own module names, f"{p}.py" alone, are the upload's layout)
PER_PROBLEM = re.compile(r"""f["'][^"'\n]*\{(p|problem|name|self\.problem|bug\.problem|info\.name)\}[^"'\n]*["']""")
LAYOUT_WORD = re.compile(r"REFERENCE|STUBS|reference|student_stubs|snapshots|probes|bugs|common|public|hidden|"
                         r"test_\{|_mistakes|problems/|alternatives|shortcuts")


def clone(rev: str) -> Path:
    repo = Path(tempfile.mkdtemp(prefix=f"house-{rev[:10]}-"))
    subprocess.run(["git", "clone", "-q", "--no-local", str(HERE), str(repo)], check=True)
    subprocess.run(["git", "checkout", "-q", rev], cwd=repo, check=True)
    return repo


def tree(repo: Path, top: str) -> list[str]:
    rows = []
    for folder in sorted({p.parent for p in (repo / top).rglob("*.py")} | {repo / top}):
        if "__pycache__" in folder.parts:
            continue
        files = sorted(p.name for p in folder.glob("*.py"))
        rows.append(f"  {folder.relative_to(repo)}/  ({len(files)}) {' '.join(files)}")
    return rows


def clone_pairs(repo: Path, top: str) -> tuple[int, list[str]]:
    if not shutil.which("duplicates"):
        return -1, ["(the duplicates tool is not on PATH)"]
    out = subprocess.run(["duplicates", "--repo", str(repo / top), "--most", "40", "--seconds", "120"],
                         capture_output=True, text=True).stdout.splitlines()
    head = out[0] if out else ""
    found = re.match(r"(\d+) pairs?", head)
    return (int(found.group(1)) if found else 0), out[1:]


def sources(repo: Path, *tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (repo / top).rglob("*.py") if "__pycache__" not in p.parts)


def mode_files(repo: Path) -> dict[str, int]:
    hits = {}
    for path in sources(repo, "grader"):
        n = sum(1 for line in path.read_text().splitlines()
                if MODE_DECISION.search(line) and not line.strip().startswith("#"))
        if n:
            hits[str(path.relative_to(repo))] = n
    return hits


def path_files(repo: Path) -> dict[str, int]:
    hits = {}
    for path in sources(repo, "grader", "seam", "tests", "benchmarks"):
        if "/self/alternatives/" in str(path) or "/self/bugs/" in str(path) and path.name != "__init__.py":
            continue  # corpus content, not code that finds files
        n = sum(1 for line in path.read_text().splitlines()
                if PER_PROBLEM.search(line) and LAYOUT_WORD.search(line) and not line.strip().startswith("#"))
        if n:
            hits[str(path.relative_to(repo))] = n
    return hits


def problem_files(repo: Path) -> int | None:
    """How many kinds of file the layout gives a problem (None where the registry has no layout)."""
    code = "from seam.problems import LAYOUT; print(len(LAYOUT))"
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    return int(done.stdout) if done.returncode == 0 and done.stdout.strip().isdigit() else None


def report(rev: str) -> None:
    repo = clone(rev)
    print(f"\n=== {rev} ({subprocess.run(['git', 'rev-parse', '--short', rev], cwd=repo, capture_output=True, text=True).stdout.strip()})")
    for top in ("grader", "tests/self"):
        print(f"{top}:")
        print("\n".join(tree(repo, top)))
    for top in ("grader", "seam"):
        n, rows = clone_pairs(repo, top)
        print(f"clone pairs in {top}/: {n}")
        for row in rows[:12]:
            print(f"  {row}")
    modes = mode_files(repo)
    print(f"isolation-mode decisions: {sum(modes.values())} in {len(modes)} files: {modes}")
    paths = path_files(repo)
    print(f"per-problem paths spelled in place: {sum(paths.values())} in {len(paths)} files: {paths}")
    print(f"kinds of file a problem has (seam.problems.LAYOUT): {problem_files(repo)}")
    shutil.rmtree(repo, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+")
    for rev in parser.parse_args().revs:
        report(rev)


if __name__ == "__main__":
    main()
