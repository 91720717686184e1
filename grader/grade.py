"""`grade`: locate the submission, run the public and hidden tests against it in the sandbox,
write results.json (validated, atomically) and print the score table.

``check_options`` (grader/machine.py) settles what the machine gives a run's Options once;
``grade_one`` grades one upload (batch calls it for each student, with a
zygote its job keeps); ``grade`` is the command."""

import contextlib
import gc
import io
import sys
import tempfile
import time
from pathlib import Path

import pytest

from . import gpu as gpu_info
from .machine import Setup, check_options
from .options import OptionError, Options
from .sandbox.folders import remove
from .paths import ROOT, TEST_DIRS, out_problem, problem_file
from .provenance import stamp
from .report import build_results, render_table, to_come_note, write_results
from .sandbox.sandbox import Sandbox
from .sandbox.template import Kept
from .sandbox.zygote import Zygote
from seam.upload import graded_files, locate
from seam.problems import PROBLEMS


def run_tests(impl, gpu: str, cuda: bool, time_limit: float, quiet: bool,
              problems: list[str] | None = None, unknown_gpu: str | None = None,
              record: Path | None = None, first_failure: bool = False,
              gpu_uuid: str | None = None, only: set[str] | None = None) -> "GraderPlugin":
    """Run the graded tests (of ``problems``, default all) against ``impl``; the plugin holds
    one fact per test. ``unknown_gpu``: this GPU's name if the peak table lacks it. ``record``:
    also write pytest-json-report's raw record there. ``first_failure``: stop at the first test
    that does not pass (mutation testing only needs to know whether one fails). ``gpu_uuid``:
    the device each GPU-marked test holds alone (gpu.device_lock). ``only``: the names of the
    tests to run (a node id's last part, parameters included), the problems' others deselected
    (a recorded verdict re-checked on the test that gave it). Safe to call many times in one
    process (batch does): each call is a fresh pytest session."""
    from .plugin import GraderPlugin   # (here: it imports torch, which checking options needs not)
    plugin = GraderPlugin(impl, gpu=gpu, cuda=cuda, time_limit=time_limit, unknown_gpu=unknown_gpu,
                          gpu_uuid=gpu_uuid)
    paths = [problem_file(p, kind) for kind in ("public_test", "hidden_test") for p in problems] if problems else TEST_DIRS
    args = [*(str(p) for p in paths if p.exists()), "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
            "-p", "no:cacheprovider", "-p", "no:unraisableexception", "-q", "--tb=no", "--no-header", "-rN",
            *(["-x"] if first_failure else [])]
    if record is not None:
        args += ["--json-report", f"--json-report-file={record}", "--json-report-omit", "collectors",
                 "keywords", "--json-report-indent=1"]
    plugins = [plugin] if only is None else [plugin, _Only(only)]
    sink = io.StringIO() if quiet else sys.stderr
    # Garbage collection is most of a short session's cost: this process holds torch's ~200k
    # objects (more in a long batch), and a full collection scans them all. pytest's
    # unraisable-exception plugin (left out above: it reports warnings nobody reads here) ends
    # every session with five full collections, 1.3 s of a 20 s grade and 0.8 s of a 1 s planted
    # bug's session; and frozen for the session, what lived before it is not scanned by the
    # collections Python makes meanwhile. What the session makes is collected as always, and
    # unfrozen after: nothing is kept.
    gc.freeze()
    try:
        with contextlib.redirect_stdout(sink):
            code = pytest.main(args, plugins=plugins)
    finally:
        gc.unfreeze()
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or plugin.collection_errors:
        raise RuntimeError(f"the test run itself failed (pytest exit {int(code)}): "
                           + "; ".join(plugin.collection_errors))
    return plugin


class _Only:
    """Deselects every collected test whose name is not in ``names``."""
    def __init__(self, names: set[str]):
        self.names = set(names)

    def pytest_collection_modifyitems(self, config, items):
        kept = [i for i in items if i.name in self.names]
        config.hook.pytest_deselected(items=[i for i in items if i.name not in self.names])
        items[:] = kept


# Where grade_one takes a zygote when its caller gives none: None, the sandbox starts its own, cold
# (a command grades one upload); or a process's warm templates (template.py ``Kept``), set by a
# process that grades many uploads one at a time: the project's suite (tests/self/conftest.py).
KEPT: Kept | None = None


def grade_one(submission: Path, setup: Setup, quiet: bool = False, hide: tuple[Path, ...] = (),
              record: Path | None = None, zygote: Zygote | None = None,
              notes: tuple[str, ...] = ()) -> tuple[dict, str]:
    """Grade one upload in a fresh sandbox: (results.json's content, the gradebook status).
    ``notes``: said first among the report's notes (Gradescope's GPU note). ``hide``: folders the student's process must not see (the output folder, the class), for
    the uid mode's warning. ``zygote``: a batch job's (its workers are forked from it); without
    one the sandbox starts its own. The one place a Sandbox is built; raises RuntimeError if
    pytest itself fails."""
    start = time.monotonic()
    located = locate(submission, setup.problems or PROBLEMS)
    folder = located.folder or Path(tempfile.mkdtemp(prefix="grader-empty-"))
    graded = graded_files(located.folder) if located.folder else None  # what the sandbox copies
    files, file_lines = (graded.data(), graded.lines()) if graded else (None, [])  # (read before cleanup)
    kept = (KEPT.zygote(setup.limits, setup.isolation, setup.uses_cuda, tuple(hide), setup.problems)
            if zygote is None and KEPT is not None else contextlib.nullcontext(zygote))
    try:
        with kept as zygote:
            sandbox = Sandbox(folder, setup.limits, isolation=setup.isolation, hide=tuple(hide),
                              cuda=setup.uses_cuda, zygote=zygote, problems=setup.problems)
            try:
                sandbox.prewarm()
                plugin = run_tests(sandbox, setup.gpu, setup.cuda, setup.time_limit, quiet,
                                   setup.problems, setup.unknown_gpu, record, gpu_uuid=setup.gpu_uuid)
            finally:
                sandbox.close()
    finally:
        for path in (located.cleanup, None if located.folder else folder):
            if path:
                remove(path)  # an unpacked upload: its folders may go deeper than any recursion
    notes = [*notes, *located.notes, *file_lines, f"sandbox: {sandbox.describe()}"]
    if setup.cuda and setup.gpu != "skip":
        notes.append(f"GPU: {setup.gpu_name}" + (f" (faked by {gpu_info.FAKE}: no GPU test can pass)"
                                                  if gpu_info.fake() else ""))
    if setup.problems:
        notes.append(f"graded only: {', '.join(setup.problems)}")
    if setup.gpu == "only":
        notes.append("graded only the GPU tests (--gpu only)")
    if plugin.to_come:
        notes.append(to_come_note(sum(plugin.to_come.values()), len(plugin.to_come)))
    results = build_results(list(plugin.facts.values()), time.monotonic() - start, notes, stamp(),
                            plugin.impl.violations(), plugin.to_come, sandbox.incidents(), plugin.impl.notes(),
                            files)
    return results, located.status


def grade(submission: Path, out: Path, options: Options | None = None, quiet: bool = False,
          notes: tuple[str, ...] = (), said_where: bool = False, **fields) -> int:
    """`python -m grader grade`: 0 when a report was written, 2 (one line, no report) for the
    TA's mistakes: a path that does not exist, a bad option, a failed test run. ``fields``
    (gpu=, problems=, time_limit=, isolation=) make the Options, or change ``options``'.
    ``notes``: the report's first notes (grade_one). ``said_where``: ``out`` was not asked for (the
    default in the current folder), so the last line says so beside its full path."""
    if not Path(submission).exists():
        print(f"error: {submission}: no such file or folder; no report written", file=sys.stderr)
        return 2
    try:
        setup, problem = check_options(Options.of(options, **fields))
    except OptionError as e:
        setup, problem = None, str(e)
    problem = problem or out_problem(out, folder=False)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        results, _ = grade_one(submission, setup, quiet, hide=(Path(out).resolve().parent,), notes=tuple(notes))
    except RuntimeError as e:
        print(f"error: {e}; no report written", file=sys.stderr)
        return 2
    write_results(results, out)
    print(render_table(results))
    print(f"wrote {Path(out).resolve()}" + (" (no --out given: the current folder)" if said_where else ""))
    return 0
