"""A grade rescored after a re-weighting (grader/batch/rescore.py) is the results.json a regrade
would write: both are built here from the same facts of one real run, once with the points
as they were and once re-weighted, and rescoring the first must give the second byte for byte.
What it cannot rebuild exactly it refuses (the student is graded again)."""

import ast
import dataclasses
import json
import random

import pytest

from grader.batch.rescore import UNCOUNTED, rescore, weights
from grader.grade import run_tests
from grader.provenance import unweighted
from grader.report import build_results, to_come_note
from seam import InProcess
from seam.problems import files, problem_number
from tests.self.bugs import all_bugs
from tests.self.submissions import reference_text, reference_with

PROBLEMS = ["intensity", "modules"]   # cheap, and modules has a GPU test a CPU run leaves to come
OLD = {"version": "0.1.0", "tests": "0" * 16, "verdicts": "a" * 16}
NEW = {**OLD, "tests": "1" * 16}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The facts of one in-process run on the CPU: intensity with a planted bug (tests failing),
    modules whole (its GPU test not run, to come), and what the plugin recorded to come."""
    bug = next(b for b in all_bugs() if b.problem == "intensity")
    folder = reference_with(tmp_path_factory.mktemp("upload") / "s",
                            {"intensity": bug.apply(reference_text("intensity"))}, problems=PROBLEMS)
    plugin = run_tests(InProcess(folder, package=f"rescore_{folder.parent.name}"), gpu="auto", cuda=False,
                       time_limit=120, quiet=True, problems=PROBLEMS)
    facts = list(plugin.facts.values())
    assert any(f.outcome == "failed" for f in facts) and any(f.outcome == "not_run" for f in facts)
    assert any(f.outcome == "passed" for f in facts) and plugin.to_come
    return facts, dict(plugin.to_come)


def _results(facts, to_come, grader, **extra) -> dict:
    """build_results as grade_one calls it: the to-come note among the notes."""
    notes = ["sandbox: in-process", to_come_note(sum(to_come.values()), len(to_come))]
    review = [{"file": str(files(p).module), "line": 3, "kind": "threads", "construct": "x", "why": "y",
               "instead": "z", "seen": "in the text"} for p in PROBLEMS]
    return build_results(facts, 12.5, notes, grader, {"intensity.matmul_intensity": "torch.matmul"}, to_come,
                         {"intensity": ["hung once"]}, review, {"graded": ["intensity.py", "modules.py"], "ignored": []},
                         **extra)


@pytest.mark.parametrize("gpu", ["auto", "skip"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_rescore_is_the_regrade(run, seed, gpu):
    """``gpu``: the run's GPU test in results.json, not run (auto, on a CPU), or left out of it
    (a --gpu skip pass): either way its number is to come."""
    facts, to_come = run
    graded = lambda fs: [f for f in fs if gpu == "auto" or not f.gpu]  # noqa: E731
    before = _results(graded(facts), to_come, OLD)
    rng = random.Random(seed)
    heavier = [dataclasses.replace(f, points=float(rng.choice([0.5, 1, 2, 3, 7]))) for f in facts]
    number = {f"{problem_number(h.problem)}.{h.index}": h.points for h in heavier}
    moved = {n: number[n] for n in to_come}  # what the plugin would have recorded to come
    after = _results(graded(heavier), moved, NEW)
    assert after["score"] != before["score"] and after["output"] != before["output"], "the re-weighting moved nothing"
    got = rescore(before, weights(heavier), NEW)
    assert json.dumps(got, sort_keys=True) == json.dumps(after, sort_keys=True)
    assert rescore(before, weights(facts), OLD) == before  # the same points: the same file


def test_what_cannot_be_rebuilt_exactly_is_graded_again(run):
    facts, to_come = run
    before = _results(facts, to_come, OLD)
    now = weights(facts)
    assert rescore(before, now, NEW) is not None
    for node in (next(iter(now)), next(n for n, w in now.items() if w.number in to_come)):
        assert rescore(before, {n: w for n, w in now.items() if n != node}, NEW) is None  # a test it does not know
    first, *_ = now
    renumbered = {**now, first: now[first]._replace(number="99.1")}
    assert rescore(before, renumbered, NEW) is None                 # numbered otherwise now
    uncounted = {**before, "extra_data": {**before["extra_data"],
                                           "notes": [*before["extra_data"]["notes"], UNCOUNTED + "x"]}}
    assert rescore(uncounted, now, NEW) is None                     # a test left out of the total
    helper = {**before, "extra_data": {**before["extra_data"], "review": [
        {**before["extra_data"]["review"][0], "file": "helpers/maths.py"}]}}
    assert rescore(helper, now, NEW) is None                        # a note on a helper module


def test_only_a_number_in_a_points_marker_is_left_out_of_the_verdicts_hash():
    """A test could read what its marker holds: anything but one number stays in the hash."""
    def test(marker: str) -> bytes:
        return unweighted(f"import pytest\n@pytest.mark.points({marker})\ndef test_x():\n    assert 1\n".encode())
    assert test("2") == test("3") == test("0.5")
    for a, b in (("TOL := 2", "TOL := 3"), ("n=2", "n=3"), ("2, 3", "2, 4"), ("f(2)", "f(3)")):
        assert test(a) != test(b), (a, b)


class _Upload:
    def __init__(self, key):
        self.key = key

    def record(self):
        return {"students": []}


def test_a_rescore_that_cannot_be_made_is_a_regrade(tmp_path, monkeypatch):
    """Tests that do not collect, or a results.json that is not the grader's: graded again, the
    batch goes on."""
    from grader.batch import rescore as rescoring
    from grader.batch.scheduler import RESCORE, _rescore
    out = tmp_path / "out"
    for key, text in (("a", "[]"), ("b", "{not json")):
        (out / "students" / key).mkdir(parents=True)
        (out / "students" / key / "results.json").write_text(text)
    plan = [(_Upload(k), "fp", RESCORE, {"key": k}) for k in ("a", "b")]
    monkeypatch.setattr(rescoring, "weights", lambda: {})
    assert _rescore(plan, out, NEW) == ([(u, "fp", "other grader or tests", r) for u, _, _, r in plan], {})

    def fails():
        raise RuntimeError("collecting the graded tests failed (pytest exit 4)")
    monkeypatch.setattr(rescoring, "weights", fails)
    assert _rescore(plan, out, NEW)[1] == {}
    assert not any((out / "students" / k / "previous.json").exists() for k in ("a", "b"))


def test_a_rescore_cut_short_leaves_no_grade_the_record_did_not_write(run, tmp_path, monkeypatch):
    """Ctrl-C or SIGTERM between a rescored results.json and its student.json (the batch sets no
    handler while it rescores): the student must not be left finished under the old grader with
    the new points, or a rerun after the points are put back skips them, worth the new ones."""
    from grader.batch import output, rescore as rescoring
    from grader.batch.output import RESULTS, done_as, read_json
    from grader.batch.scheduler import RESCORE, _rescore
    from grader.provenance import same_grader
    facts, to_come = run
    folder = tmp_path / "out" / "students" / "a"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(_results(facts, to_come, OLD)))
    record = {"key": "a", "students": [], "status": "graded", "passes": [], "upload": "fp", "grader": OLD}
    (folder / "student.json").write_text(json.dumps(record))
    heavier = [dataclasses.replace(f, points=2 * f.points) for f in facts]
    monkeypatch.setattr(rescoring, "weights", lambda: weights(heavier))

    def cut(*_):
        raise KeyboardInterrupt   # as the default SIGINT handler does, once results.json is written
    monkeypatch.setattr(output, "write_report", cut)
    with pytest.raises(KeyboardInterrupt):
        _rescore([(_Upload("a"), "fp", RESCORE, record)], tmp_path / "out", NEW)
    kept = done_as(folder)
    assert kept is None or same_grader(kept["grader"], read_json(folder / RESULTS)["extra_data"]["grader"])


# Where a graded file may read a test's points: the student's own pytest summary (what each
# problem is worth, under the score table), which decides no verdict.
READS_POINTS = {"tests/conftest.py": {"pytest_collection_modifyitems", "pytest_terminal_summary"}}


def points_read(tree) -> list[tuple[str, int]]:
    """(enclosing function, line) of each place ``tree`` names "points" other than a points marker
    set (``pytest.mark.points(N)``): the marker asked for by name, or a ``.points`` attribute."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Constant) and child.value == "points":
                found.append((function, child.lineno))
            elif isinstance(child, ast.Attribute) and child.attr == "points" and not (
                    isinstance(child.value, ast.Attribute) and child.value.attr == "mark"):
                found.append((function, child.lineno))
            visit(child, inner)
    visit(tree, "<module>")
    return found


def test_no_verdict_reads_the_points_it_is_worth():
    """Rescoring rests on this: the verdicts hash leaves out the numbers in points markers, so a
    test that read its own marker (``request.node.get_closest_marker("points").args[0] < 2``)
    could pass at 1 point and fail at 2, and a rescore would keep the old verdict. No graded file
    reads a points marker, except the summary's (``READS_POINTS``)."""
    from grader.paths import ROOT
    from grader.provenance import graded_files
    stray = []
    for path in graded_files():
        if path.suffix != ".py":
            continue
        rel = path.relative_to(ROOT).as_posix()
        allowed = READS_POINTS.get(rel, set())
        stray += [f"{rel}:{line} (in {fn})" for fn, line in points_read(ast.parse(path.read_bytes()))
                  if fn not in allowed]
    assert not stray, f"a graded file reads the points a test is worth: {stray}"
    seen = points_read(ast.parse('@pytest.mark.points(2)\ndef test_x(request):\n'
                                 '    assert request.node.get_closest_marker("points").args[0] < 2\n'))
    assert seen == [("test_x", 3)]   # the reading above is found; the marker set is not
