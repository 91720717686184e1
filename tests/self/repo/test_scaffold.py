"""A problem's file layout is written once (seam/problems.py, LAYOUT) and is true of this
repository; `python -m grader new-problem NAME` writes exactly its files and registers it, so
that, in a copy of the repository, the new problem is graded (the rubric lists it, its tests pass
on its reference); and the modules in CONVERTED read the layout instead of spelling those paths out."""

import ast
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from grader.paths import ROOT
from grader.scaffold import FAST_LOOP, REGISTRY, SKELETONS, ScaffoldError, new_problem, registered
from seam.problems import LAYOUT, PROBLEMS, any_problem, files, folder, owner, owners

# a name no problem has, whatever problems the staff have added since (widgets is the docs' example)
NAME = next(name for name in (f"widgets{k or ''}" for k in itertools.count()) if name not in PROBLEMS)
# The modules that read the layout instead of spelling a problem's paths out (the architecture
# rule below holds for them; other modules are not held to it).
CONVERTED = ("grader/paths.py", "grader/release.py", "grader/rubric.py", "grader/snapshots.py",
             "grader/provenance.py", "grader/scaffold.py", "tests/snapshot.py", "tests/self/bugs/__init__.py",
             "tests/self/alternatives/__init__.py", "tests/self/mutation/__main__.py",
             "tests/self/repo/test_release.py", "tests/self/repo/test_handout.py")


def run(*args, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(cwd)})  # the copy's modules, not these


# ---- the layout is true of this repository ------------------------------------------------------

@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_problem_has_the_files_the_layout_requires(problem):
    for kind, path in files(problem).items():
        found = sorted(ROOT.glob(str(path)))
        if kind.required:
            assert found, f"{problem}: no {kind.kind} file at {path}"
        assert all(owner(p.relative_to(ROOT)) == (kind.kind, problem) for p in found), (kind.kind, found)


def test_every_file_in_the_layout_folders_is_a_problems():
    """No stray file: each one in a folder of the layout fits a pattern, and names a problem."""
    stray = []
    for kind in LAYOUT:
        for path in sorted((ROOT / folder(kind.kind)).glob(f"*{PurePosixPath(kind.pattern).suffix}")):
            found = owner(path.relative_to(ROOT))
            if not path.name.startswith("_") and (found is None or found[1] not in PROBLEMS):  # (__init__.py)
                stray.append(str(path.relative_to(ROOT)))
    assert not stray, f"files in the layout's folders that are no problem's: {sorted(set(stray))}"


def test_the_layout_names_each_file_once():
    """Each problem file fits one pattern (else the scaffold could not tell whose it is)."""
    for problem in PROBLEMS:
        for kind, path in files(problem).items():
            if "*" not in path.name:
                assert owners(path) == [(kind.kind, problem)], (problem, kind.kind, owners(path))


# ---- the scaffold, in a minimal fake checkout ---------------------------------------------------

@pytest.fixture
def fake(tmp_path) -> Path:
    """A checkout with only the registry: the scaffold makes every folder it writes in."""
    (tmp_path / REGISTRY).parent.mkdir(parents=True)
    shutil.copy(ROOT / REGISTRY, tmp_path / REGISTRY)
    return tmp_path


def test_the_scaffold_writes_exactly_the_layouts_files(fake):
    before = (fake / REGISTRY).read_text()
    done = new_problem(NAME, "widget accounting", root=fake)
    expected = {getattr(files(NAME), kind) for kind in SKELETONS}
    assert set(done.written) == expected | {REGISTRY} and done.written[-1] == REGISTRY
    assert {p.relative_to(fake) for p in fake.rglob("*") if p.is_file()} == expected | {REGISTRY}
    # every kind a problem must have is written, but a glob of several (the alternatives)
    assert {k.kind for k in LAYOUT if k.required and "*" not in k.pattern} <= set(SKELETONS)
    # and what is left names every file of the layout, the alternatives and the commands to run
    left = "\n".join(done.todo)
    assert all(str(path) in left for _, path in files(NAME).items())
    assert "python -m grader snapshots" in left and "python -m grader rubric --write" in left
    # it ends with the one mutation run the problem needs, recording the tests hash, then the fast
    # loop (not the whole suite)
    assert done.todo[-3].startswith(f"mutation-test it: python -m tests.self.mutation {NAME} ")
    assert "python -m grader history --record --why" in done.todo[-2]
    assert done.todo[-1].endswith(f": {FAST_LOOP}") and "tests/self" not in " ".join(done.todo[-3:])
    # the registry: the problem last (its number the next), a NO_RULE line, nothing else changed
    after = (fake / REGISTRY).read_text()
    assert registered(after) == registered(before) + [NAME]
    added = [line for line in after.splitlines() if line not in before.splitlines()]
    assert added[0] == f'    Problem("{NAME}", "widget accounting"),' and len(added) == 2
    assert added[1].startswith(f'    "{NAME}": "TODO: ')
    namespace: dict = {}
    exec(compile(after, str(REGISTRY), "exec"), namespace)  # pure data: the stdlib only
    assert list(namespace["PROBLEMS"])[-1] == NAME and namespace["PROBLEMS"][NAME].title == "widget accounting"
    assert NAME in namespace["NO_RULE"]
    for kind in ("stub", "reference", "public_test", "hidden_test", "probe", "bugs"):
        ast.parse((fake / getattr(files(NAME), kind)).read_text())  # each skeleton is Python
    assert "raise NotImplementedError" in (fake / files(NAME).stub).read_text()
    assert "Float[Tensor, " in (fake / files(NAME).stub).read_text()


def test_the_fast_loop_it_prints_is_the_readmes():
    """The README's fast-loop command, the one the scaffold ends with, selects by a marker pyproject declares."""
    readme = (ROOT / "README.md").read_text()
    assert f"\n{FAST_LOOP} " in readme, "the README's fast loop is not the scaffold's FAST_LOOP"
    marker = FAST_LOOP.split('-m "not ')[1].split('"')[0]
    assert f'"{marker}: ' in (ROOT / "pyproject.toml").read_text()


def test_a_second_scaffold_of_the_same_name_is_refused(fake):
    new_problem(NAME, root=fake)
    with pytest.raises(ScaffoldError, match="already a problem"):
        new_problem(NAME, root=fake)


@pytest.mark.parametrize("name, why", [
    ("Widgets", "lower-case Python identifier"), ("2d", "lower-case Python identifier"),
    ("my-problem", "lower-case Python identifier"), ("lambda", "not a keyword"),
    ("a__b", "double or trailing underscore"), ("optim_mistakes", "would read as the mistakes"),
    ("test_x", "would read as the hidden_test"), ("probes", "already means something"),
    ("skip", "already means something"), ("tensors", "already a problem")])
def test_a_bad_name_is_refused_and_nothing_is_written(fake, name, why):
    before = (fake / REGISTRY).read_text()
    with pytest.raises(ScaffoldError, match=why):
        new_problem(name, root=fake)
    assert (fake / REGISTRY).read_text() == before and [p for p in fake.rglob("*") if p.is_file()] == [fake / REGISTRY]


@pytest.mark.parametrize("kind", ["common", "stub", "alternatives"])
def test_an_existing_file_is_never_overwritten(fake, kind):
    """Any file of the name's layout already there, one the scaffold writes or not: refused, and
    nothing written."""
    path = fake / str(getattr(files(NAME), kind)).replace("*", "by_hand")
    path.parent.mkdir(parents=True)
    path.write_text("mine\n")
    before = (fake / REGISTRY).read_text()
    with pytest.raises(ScaffoldError, match="exist already"):
        new_problem(NAME, root=fake)
    assert path.read_text() == "mine\n" and (fake / REGISTRY).read_text() == before
    assert sorted(p for p in fake.rglob("*") if p.is_file()) == sorted([path, fake / REGISTRY])


def test_a_bad_title_is_refused(fake):
    with pytest.raises(ScaffoldError, match="--title"):
        new_problem(NAME, 'say "hi"', root=fake)


@pytest.mark.parametrize("args, why", [(["Bad"], "lower-case Python identifier"),
                                       (["tensors"], "already a problem")])
def test_the_command_refuses_with_one_line_and_exit_2(args, why):
    """Here, in this repository: refused before anything is written."""
    got = run("-m", "grader", "new-problem", *args, cwd=ROOT, timeout=120)
    assert got.returncode == 2 and got.stdout == "", got.stdout + got.stderr
    [line] = got.stderr.splitlines()
    assert line.startswith("python -m grader new-problem: error: ") and why in line, line


# ---- the key check: in a copy of the repository, the new problem is graded ----------------------

def _copy_checkout(dest: Path) -> Path:
    """The repository's files as git sees them (tracked, and untracked but not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_a_scaffolded_problem_is_graded_in_a_copy_of_the_repository(tmp_path):
    copy = _copy_checkout(tmp_path / "repo")
    made = run("-m", "grader", "new-problem", NAME, "--title", "widget accounting", cwd=copy)
    assert made.returncode == 0, made.stdout + made.stderr
    assert all(f"  {getattr(files(NAME), kind)}\n" in made.stdout for kind in SKELETONS)
    assert "now write, by hand:" in made.stdout and str(files(NAME).alternatives) in made.stdout

    # the recipe's "Generate" step, then the rubric lists it and the snapshots are current
    for step in (["snapshots"], ["rubric", "--write"]):
        got = run("-m", "grader", *step, cwd=copy)
        assert got.returncode == 0, (step, got.stdout + got.stderr)
    rubric = run("-m", "grader", "rubric", cwd=copy)
    number = len(PROBLEMS) + 1
    assert f"| {number} | `{NAME}` | [widget accounting](problems/{NAME}.md) | 2 | 2 | 4 | 0 |" in rubric.stdout, \
        rubric.stdout + rubric.stderr
    check = run("-m", "grader", "snapshots", "--check", cwd=copy)
    assert check.returncode == 0, check.stdout + check.stderr
    # its registry lines and files leave every other problem's mutation record current
    mutation = run("-m", "tests.self.mutation", "--check", cwd=copy)
    rows = {line.split()[0]: line.split()[-1] for line in mutation.stdout.splitlines() if line.split()[:1] != []}
    assert rows[NAME] != "0" and all(rows[p] == "0" for p in PROBLEMS), mutation.stdout + mutation.stderr

    # its tests pass on its reference, with the grader's conftest, and find the stub not written
    layout = files(NAME)
    tests = [str(layout.public_test), str(layout.hidden_test)]
    passed = run("-m", "pytest", "-q", "-p", "no:cacheprovider", *tests, f"--impl={folder('reference')}", cwd=copy)
    assert passed.returncode == 0 and "4 passed" in passed.stdout, passed.stdout[-3000:] + passed.stderr[-2000:]
    stubs = run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(layout.public_test), cwd=copy)
    assert stubs.returncode == 1 and f"{NAME}.example" in stubs.stdout and "2 not implemented" in stubs.stdout, \
        stubs.stdout[-3000:]

    # the skeleton's stub and reference agree, and its section's generated parts are current
    parity = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/self/unit/test_parity.py", "-k", NAME, cwd=copy)
    assert parity.returncode == 0, parity.stdout[-3000:]
    section = (copy / layout.handout).read_text()
    assert section.startswith(f"# {number}. {NAME} — widget accounting\n\n**Points: 4** (public 2, hidden 2)\n")


# ---- the architecture rule: a problem's paths are spelled out in the registry only -------------

FOLDERS = sorted({str(folder(k.kind)) for k in LAYOUT})
NAMES = sorted({PurePosixPath(k.pattern).name.replace("{name}", "{}") for k in LAYOUT})  # "test_{}.py" ...
GLOBS = sorted({PurePosixPath(any_problem(k.kind)).name for k in LAYOUT} - {"*.py", "*.json", "*.md"})


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            out.add(id(node.body[0].value))
    return out


def _div_strings(node: ast.expr) -> list[str]:
    """The string constants of a chain ``a / "x" / "y"``, in order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _div_strings(node.left) + _div_strings(node.right)
    return [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []


def hard_coded(source: str) -> list[str]:
    """Where ``source`` spells a problem file's path out, not counting docstrings: an f-string
    shaped like a layout file name (``f"test_{p}.py"``, ``f"{p}.json"``) or module
    (``f"tests.public.test_{p}"``), a string naming a layout folder (``"tests/hidden"``,
    ``"student_stubs/tensors.py"``, ``ROOT / "tests" / "public"``), or a glob of one (``"*__*.py"``)."""
    tree, out = ast.parse(source), []
    docs = _docstrings(tree)
    dotted_folders = [f.replace("/", ".") + "." for f in FOLDERS if "/" in f]
    chained = {id(side) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
               for side in (n.left, n.right)}  # inside a longer chain: the whole chain is judged
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.JoinedStr):
            shape = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if any(n in shape for n in NAMES) or any(d in shape for d in dotted_folders):
                out.append(f"{where}: f-string {shape!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            s = node.value
            if any(s == f and "/" in f or s.startswith(f"{f}/") for f in FOLDERS) or s in GLOBS \
                    or any(s.startswith(d) for d in dotted_folders):
                out.append(f"{where}: {s!r}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and id(node) not in chained:
            joined = "/".join(_div_strings(node))
            if joined and any(f == joined or f.endswith(f"/{joined}") or f"/{f}/" in f"/{joined}/"
                              or joined.startswith(f"{f}/") for f in FOLDERS):
                out.append(f"{where}: path {joined!r}")
    return out


def test_the_rule_catches_what_it_must():
    """A problem's path spelled out, as in these lines, is caught; reading the layout is not."""
    for old in ['d / f"test_{p}.py"', 'ROOT / "tests/public" / f"test_{problem}.py"', 'folder / f"{problem}.json"',
                'HERE.glob("*__*.py")', 'REFERENCE / f"{p}.py"', 'Path(__file__).parent / "public" / "snapshots"',
                'x = "student_stubs/tensors.py"', 'ROOT / "tests" / "hidden"', 'ROOT / "reference"',
                'importlib.import_module(f"tests.public.test_{problem}")', 'f"assignment/problems/{p}.md"',
                'ROOT / "tests/hidden" / f"{problem}_mistakes.py"']:
        assert hard_coded(old), old
    for new in ['ROOT / files(p).reference', 'folder / files(p).snapshot.name', 'ROOT.glob(any_problem("bugs"))',
                'SEAM = ROOT / "seam"', 'HANDOUT = ROOT / "assignment" / "README.md"', 'row["public"]',
                '"""tests/public/test_<problem>.py (a docstring)"""', 'f"{f}/"', 'TEST = ("tests/__init__.py",)']:
        assert not hard_coded(new), (new, hard_coded(new))


@pytest.mark.parametrize("module", CONVERTED)
def test_no_converted_module_spells_a_problems_path_out(module):
    """Only seam/problems.py writes where a problem's files are; these modules read it."""
    assert hard_coded((ROOT / module).read_text()) == [], module
