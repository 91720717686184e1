"""The README and the pages in docs/ as their readers use them: the README stays short, every
link reaches a page and a heading that exist, every repository path they name exists, and every
command they name runs (its ``--help``)."""

import contextlib
import io
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.paths import ROOT

README_LINES = 200   # the README is a front page for three readers; the rest lives in docs/
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # a "# comment" in a code block is no heading
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def links(page: Path) -> list[tuple[str, str]]:
    """(target file, anchor) of each relative markdown link."""
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        out.append((path, anchor))
    return out


def repo_paths(page: Path) -> list[str]:
    """Each `code` span that names a file or folder of this repository (its first part is one
    of the root's entries); placeholders (<problem>, {a,b}, NAME) become wildcards."""
    found = []
    for span in re.findall(r"`([^`\n]+)`", page.read_text()):
        for word in span.split():
            word = word.strip("(),;:'\"").split("::")[0]
            if "/" not in word and word not in TOP:
                continue
            if word.split("/")[0] not in TOP or word.startswith(("http", "-")):
                continue
            pattern = re.sub(r"<[^>]+>|\{[^}]+\}|\b[A-Z][A-Z_]+\b(?![./]py)", "*", word).rstrip("/.")
            found.append(pattern)
    return found


COMMAND = re.compile(r"python (-m (grader(?: [a-z-]+)?|tests\.self\.\w+|seam\.check)|benchmarks/\w+\.py|deploy/[\w/]+\.py)")


def commands(page: Path) -> set[str]:
    """Each command a page tells its reader to run: `python -m grader SUB`, a module of the
    suite's tools, or a script."""
    return {m.group(1) for m in COMMAND.finditer(page.read_text())}


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_LINES, f"README.md is {lines} lines; move the detail to a page in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_reach_pages_and_headings(page):
    broken = []
    for path, anchor in links(page):
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{path}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{path}#{anchor}: no such heading in {target.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_named_paths_exist(page):
    missing = sorted({p for p in repo_paths(page) if not any(ROOT.glob(p)) and not (ROOT / p).exists()})
    assert not missing, f"{page.name} names paths this repository lacks: {missing}"


def _help(command: str) -> tuple[str, int, str]:
    argv = command.split()
    if argv[:2] == ["-m", "grader"] and len(argv) > 2 and not argv[2].startswith("-"):
        return _grader_help(command, argv[2])
    cmd = [sys.executable, "-m", *argv[1:]] if argv[0] == "-m" else [sys.executable, argv[0]]
    proc = subprocess.run([*cmd, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return command, proc.returncode, (proc.stderr or proc.stdout)[-300:]


def _grader_help(command: str, sub: str) -> tuple[str, int, str]:
    """`python -m grader SUB --help`, in this process: the command line `python -m grader` runs
    (its own module's entry is checked once, in a process of its own: `-m grader --help`)."""
    from grader.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main([sub, "--help"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return command, code or 0, out.getvalue()[-300:]


@pytest.mark.e2e  # twenty commands, each started in an interpreter of its own: not in the fast loop
def test_every_named_command_runs():
    """Each command the README and docs name answers --help (exit 0): a renamed subcommand, module
    or script fails here, not in a reader's terminal."""
    named = sorted(set().union(*(commands(p) for p in PAGES)))
    assert any(c.startswith("-m grader ") for c in named) and any(c.startswith("benchmarks/") for c in named)
    own = [c for c in named if c.split()[:2] == ["-m", "grader"] and len(c.split()) > 2 and not c.split()[2].startswith("-")]
    answers = [_help(c) for c in own]  # in this process, one at a time (they share its stdout)
    with ThreadPoolExecutor(4) as pool:
        answers += pool.map(_help, [c for c in named if c not in own])
    failed = [f"python {c}: exit {code}: {tail}" for c, code, tail in answers if code != 0]
    assert not failed, "\n".join(failed)


def test_the_checks_catch_what_they_look_for(tmp_path):
    """The checks themselves, on a page with a broken link, a wrong heading, a missing path and a
    command that does not exist."""
    page = tmp_path / "page.md"
    page.write_text("# Real heading\n\n[a](page.md#real-heading) [b](page.md#no-such) [c](gone.md) "
                    "[d](https://example.com)\n\n`grader/no_such.py` and `grader/cli.py` and "
                    "`tests/public/test_<problem>.py` and `OUT_DIR/x`\n\n"
                    "```sh\n# not a heading\npython -m grader grade x\npython -m tests.self.no_such\n```\n")
    assert anchors(page) == {"real-heading"}
    assert links(page) == [("page.md", "real-heading"), ("page.md", "no-such"), ("gone.md", "")]
    assert repo_paths(page) == ["grader/no_such.py", "grader/cli.py", "tests/public/test_*.py"]
    assert commands(page) == {"-m grader grade", "-m tests.self.no_such"}
    assert _help("-m tests.self.no_such")[1] != 0 and _help("-m grader grade")[1] == 0
    assert slug("Why did a score move? The rubric's history") == "why-did-a-score-move-the-rubrics-history"
