"""Fixtures for every test: ``impl`` (the code under test, through the seam) and ``ref``; and what
a student's own `pytest` prints.

Students: `pytest` runs tests/public against student_stubs/; `pytest --impl=DIR` against any
folder laid out like it; `pytest -m PROBLEM` runs one problem. The grader passes its own ``impl``
(a sandboxed submission) and reads the results itself: the display hooks below stay quiet then.

A first run on the stubs should read like a compiler's error list, not 65 tracebacks: a test
stopped by a stub's ``NotImplementedError`` is reported as "not implemented" (still a failure:
the exit status says so), and the summary lists each such function once, a line per problem,
and which problem to do next. Other failures show the student's own frames, not the seam's.
"""

import ast
from pathlib import Path

import pytest
import torch

from seam import GPU_NOT_RUN, GRADER_PLUGIN, InProcess, describe
from seam.review import said
from seam.problems import PROBLEMS, files, line, owner, problem_number, section, touched
from seam.problems import folder as layout_folder

ROOT = Path(__file__).resolve().parents[1]
NOT_IMPLEMENTED = "not implemented"  # the category a stub's NotImplementedError is counted in
_RESULTS = pytest.StashKey[dict]()   # nodeid -> {"problem", "points", "outcome", "functions"}, for the summary
_IMPL = pytest.StashKey[object]()    # the session's impl, once a test asked for it


def pytest_addoption(parser):
    parser.addoption("--impl", default=None, metavar="DIR",
                     help="folder with the problem modules to test (default: student_stubs); "
                          "write --impl=DIR, with '='")


def pytest_configure(config):
    config.addinivalue_line("markers", "points(n): points this test is worth in the grade")
    config.addinivalue_line("markers", "gpu: needs CUDA; graded on a CUDA runner")
    config.addinivalue_line("markers", "gpu_peak: an MFU test: needs the GPU in the reference's peak "
                                       "table (otherwise not run and not counted)")
    config.addinivalue_line("markers", "time_limit(seconds): wall-clock limit for this test when graded")
    config.addinivalue_line("markers", "how: checks how the work is done, measured in the student's process "
                                       "(a construct that could blind it is a note for review: seam/review.py); "
                                       "how('caught'): the grader takes the reading from outside that process")
    for problem in PROBLEMS:  # `pytest -m adamw_accounting` selects exactly that problem's tests
        config.addinivalue_line("markers", f"{problem}: problem {problem_number(problem)}'s tests")
    config.stash[_RESULTS] = {}


def _graded(config) -> bool:
    return config.pluginmanager.get_plugin(GRADER_PLUGIN) is not None


def _impl_folder(config) -> Path:
    """--impl=DIR relative to where pytest was started; the default next to tests/."""
    given = config.getoption("--impl")
    if given is None:
        return config.rootpath / layout_folder("stub")
    folder = Path(given)
    return folder if folder.is_absolute() else config.invocation_params.dir / folder


def pytest_sessionstart(session):
    """A wrong --impl is one line, once (not an error per test)."""
    if not _graded(session.config):
        folder = _impl_folder(session.config)
        if not folder.is_dir():
            raise pytest.UsageError(f"--impl={session.config.getoption('--impl') or folder}: "
                                    f"{folder} is not a folder (give one laid out like student_stubs/)")


def pytest_runtest_setup(item):
    """A GPU test on a machine without CUDA is not run, and says why (the grader's plugin does the
    same for graded runs; here it is a student's or a TA's own `pytest`)."""
    impl = _session_impl(item.config)
    if impl is not None:  # what this test calls, its fixtures included (the honest-work rules charge them)
        impl.called.clear()
    if not _graded(item.config) and item.get_closest_marker("gpu") and not torch.cuda.is_available():
        pytest.skip(GPU_NOT_RUN)


def _session_impl(config):
    """The session's ``impl``: the grader's, or the one the fixture made (None before that)."""
    grader = config.pluginmanager.get_plugin(GRADER_PLUGIN)
    return grader.impl if grader is not None else config.stash.get(_IMPL, None)


def _problem_of(item) -> str | None:
    found = owner(item.path.relative_to(ROOT)) if item.path.is_relative_to(ROOT) else None
    return found[1] if found and found[0] in ("public_test", "hidden_test") and found[1] in PROBLEMS else None


def pytest_collection_modifyitems(config, items):
    results = config.stash[_RESULTS]
    for item in items:
        problem = _problem_of(item)
        if problem:
            item.add_marker(problem)
            points = item.get_closest_marker("points")
            results[item.nodeid] = {"problem": problem, "outcome": "passed",
                                    "points": points.args[0] if points and points.args else 0}


@pytest.fixture(scope="session")
def impl(request):
    grader = request.config.pluginmanager.get_plugin(GRADER_PLUGIN)
    if grader is not None:
        return grader.impl
    folder = _impl_folder(request.config).resolve()
    impl = request.config.stash[_IMPL] = InProcess(folder, package=f"impl_{folder.name}")
    return impl


@pytest.fixture(scope="session")
def ref():
    """The reference solution, in this process (hidden tests only: students have no reference).

    Not type-checked here: bad-input tests pass wrong types on purpose and expect ValueError.
    `python -m grader snapshots` runs it under jaxtyping + beartype instead.

    Its answers are remembered for the process's life on a machine without CUDA (a batch job
    grading a class asks the same questions for every student); on a CUDA runner the GPU tests
    compare measurements taken in the same run, so nothing is remembered there."""
    return InProcess(ROOT / layout_folder("reference"), package="reference_plain", memo=not torch.cuda.is_available(),
                     watched=False)


# ----- what a student's own run prints ---------------------------------------------------------

def _order(function: str, at: str) -> tuple:
    """'tensors.view_strides' sorts with problem 1, then by its line in the stub."""
    module, line = function.split(".")[0], at.rpartition(":")[2]
    return (problem_number(module) if module in PROBLEMS else 99, int(line) if line.isdigit() else 0)

def stubs_left(path: Path) -> list[tuple[str, int]]:
    """(qualified name, line) of each function in ``path`` whose body is still just the stub's
    ``raise NotImplementedError`` (after its docstring). Read with ast: nothing is run."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    found = []

    def visit(node, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body[1:] if ast.get_docstring(child) is not None else child.body
                if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
                    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
                    if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                        found.append((f"{prefix}{child.name}", body[0].lineno))
    visit(tree, "")
    return found


def _shown(folder: Path) -> str:
    try:
        return folder.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(folder)


def _called_from(excinfo) -> str:
    """The test line that made the failing call, e.g. 'tests/public/test_flops.py:41'."""
    for entry in reversed(excinfo.traceback):
        path = Path(str(entry.path))
        if path.name.startswith("test_"):
            try:
                path = path.relative_to(ROOT)
            except ValueError:
                pass
            return f"{path.as_posix()}:{entry.lineno + 1}"
    return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    config = item.config
    if call.when == "call" and not _graded(config) and "impl" in item.funcargs:
        impl = item.funcargs["impl"]
        functions, violations = impl.functions(), impl.violations()
        entry = config.stash[_RESULTS].get(item.nodeid)
        if entry is not None:
            entry["functions"] = functions
        broken = touched(functions, violations)
        if broken:  # a student sees locally what the grader will charge (the summary, retroactively)
            report.outcome = "failed"
            report.longrepr = line(broken[0], violations[broken[0]])
            return
    if _graded(config) or call.excinfo is None:
        return
    exc = call.excinfo.value
    if getattr(exc, "not_implemented", ""):
        report.not_implemented = str(exc)
        report.longrepr = str(exc)
    elif hasattr(exc, "seam_call") and config.option.tbstyle == "auto":
        # The seam's own frames help no student: their call, their traceback, the test line.
        where = _called_from(call.excinfo)
        report.longrepr = describe(exc) + (f"\n(called from {where})" if where else "")


def pytest_report_teststatus(report, config):
    if getattr(report, "not_implemented", "") and report.failed and not _graded(config):
        return NOT_IMPLEMENTED, "N", "NOT IMPLEMENTED"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _graded(config):
        return
    results = config.stash[_RESULTS]
    rows = {}
    todo: dict[str, str] = {}
    for key in ("passed", "failed", NOT_IMPLEMENTED, "error", "skipped"):
        for report in terminalreporter.stats.get(key, []):
            entry = results.get(getattr(report, "nodeid", ""))
            if entry is None:
                continue
            if key != "passed":
                entry["outcome"] = {NOT_IMPLEMENTED: "todo", "skipped": "skipped"}.get(key, "failed")
            if key == NOT_IMPLEMENTED:
                name, _, at = report.not_implemented.partition(" is not implemented yet")
                todo.setdefault(name, at.strip(" ()"))
    ran = {r.nodeid for key in ("passed", "failed", NOT_IMPLEMENTED, "error", "skipped")
           for r in terminalreporter.stats.get(key, []) if hasattr(r, "nodeid")}
    for nodeid, entry in results.items():
        if nodeid in ran:  # deselected tests (-m, -k) are not counted
            row = rows.setdefault(entry["problem"], {"tests": 0, "passed": 0, "points": 0.0, "earned": 0.0,
                                                     "todo": 0, "skipped": 0})
            if entry["outcome"] == "skipped":  # e.g. a GPU test without CUDA: neither passed nor failed
                row["skipped"] += 1
                continue
            row["tests"] += 1
            row["points"] += entry["points"]
            if entry["outcome"] == "passed":
                row["passed"] += 1
                row["earned"] += entry["points"]
            row["todo"] += entry["outcome"] == "todo"
    if not rows:
        return
    impl = _session_impl(config)  # what the session's impl saw of the honest-work rules
    violations = impl.violations() if impl is not None else {}
    for nodeid, entry in results.items():  # a broken rule costs every test of its function, also earlier ones
        if nodeid in ran and entry["outcome"] == "passed" and touched(entry.get("functions", ()), violations):
            rows[entry["problem"]]["passed"] -= 1
            rows[entry["problem"]]["earned"] -= entry["points"]
    folder = _impl_folder(config)
    for problem in rows:  # every stub still to fill in, not just the first one each test hit
        module = files(problem).module
        for name, lineno in stubs_left(folder / module):
            todo.setdefault(f"{problem}.{name}", f"{_shown(folder)}/{module}:{lineno}")
    write = terminalreporter.write_line
    terminalreporter.section("your progress", sep="=")
    for function, used in sorted(violations.items()):
        write(line(function, used))
    if violations:
        write("")
    notes = impl.notes() if impl is not None else []
    if notes:  # no point is taken for them; the TA sees the same lines by the student's name
        write(f"notes for review ({len(notes)}): no point is taken for these; a person reads each line", yellow=True)
        for n in notes:
            write(f"  {said(n)}", yellow=True)
        write("")
    if todo:
        write(f"not implemented yet ({len(todo)}):")
        width = max(map(len, todo))
        for name, at in sorted(todo.items(), key=lambda kv: _order(*kv)):
            write(f"  {name:<{width}}  {at}")
        write("")
    write(f"{'#':>2}  {'problem':<17} {'tests passed':>12}  {'points':>9}")
    nxt = None
    for problem in sorted(rows, key=problem_number):
        row = rows[problem]
        notes = [f"{row['todo']} not implemented"] * bool(row["todo"]) + \
            [f"{row['skipped']} skipped"] * bool(row["skipped"])
        note = f"  ({', '.join(notes)})" if notes else ""
        write(f"{problem_number(problem):>2}  {problem:<17} {row['passed']:>5} / {row['tests']:<4}  "
              f"{row['earned']:>3g} / {row['points']:<3g}{note}")
        if nxt is None and row["passed"] < row["tests"]:
            nxt = problem
    if nxt:
        n = problem_number(nxt)
        read = f"read {section(nxt)}, then " if (ROOT / section(nxt)).is_file() else ""
        write(f"next: problem {n} ({nxt}): {read}run `python -m pytest -m {nxt}`")
    else:
        write("every test that ran passes. The grade also runs hidden tests: see assignment/README.md.")
