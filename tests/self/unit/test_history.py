"""The rubric history: the static reading of the tests (grader/history/facts.py) on small trees
made here, what a change set records (diff.py) and how it reads, and why a moved score moved."""

import json
import textwrap

from grader.history.diff import compose, diff, what
from grader.history import student
from grader.history.explain import moved_scores
from grader.history.facts import extract

T = "tests/public/test_optim.py::"

CHECKS = "EXACT = dict(rtol=0.0)\ndef expect_equal(got, want, what, rtol=0.0, atol=0.0):\n    assert got == want\n"
COMMON = "TRAJ = dict(rtol=1e-5, atol=1e-6)\n"
PROBES = "def run_closure(cls):\n    return cls(lr=0.1, weight_decay=0.01)\n"
TESTS = '''
import pytest
from tests.checks import expect_equal
from tests.common.optim import TRAJ
from seam.probes.optim import run_closure

SMALL = {"lr": 1e-2}
MOMENTS = 1e-4


def helper(x):
    return x, MOMENTS


@pytest.mark.points(2)
def test_adamw(impl):
    """the trajectory"""
    expect_equal(impl.probes.adamw_closure(SMALL), run_closure(None), "p", **TRAJ)


@pytest.mark.points(1)
def test_state(impl):
    expect_equal(*helper(impl), "state", rtol=MOMENTS)


@pytest.mark.points(1)
def test_unrelated(impl):
    expect_equal(impl.call("optim.f"), 1, "f")


def test_not_graded():
    pass
'''


def tree(root, tests=TESTS, common=COMMON, probes=PROBES, checks=CHECKS):
    files = {"tests/__init__.py": "", "tests/checks.py": checks, "tests/common/__init__.py": "",
             "tests/common/optim.py": common, "tests/public/__init__.py": "", "tests/public/test_optim.py": tests,
             "seam/__init__.py": "", "seam/probes/__init__.py": "",
             "seam/probes/optim.py": probes + "\ndef adamw_closure(c, spec):\n    return run_closure(c)\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return extract(root)


def test_the_extractor_reads_points_tolerances_and_what_a_test_reaches(tmp_path):
    facts = tree(tmp_path)
    assert sorted(facts["tests"]) == [T + "test_adamw", T + "test_state", T + "test_unrelated"]  # no marker: not graded
    adamw = facts["tests"][T + "test_adamw"]
    assert adamw["points"] == 2.0
    assert {"tests.common.optim.TRAJ", "tests.public.test_optim.SMALL", "seam.probes.optim.run_closure",
            "seam.probes.optim.adamw_closure"} <= set(adamw["uses"])  # the probe named as impl.probes.X too
    assert "tests.checks.expect_equal" not in adamw["uses"]  # shared: counted, not on each test
    assert facts["defs"]["tests.checks.expect_equal"]["tests"] == 3
    assert facts["defs"]["tests.common.optim.TRAJ"] == {"fp": facts["defs"]["tests.common.optim.TRAJ"]["fp"],
                                                        "kind": "tolerance", "tol": "rtol=1e-05, atol=1e-06"}
    # a bare number passed as rtol= is a tolerance; reached through a helper too
    assert facts["defs"]["tests.public.test_optim.MOMENTS"]["tol"] == "0.0001"
    assert "tests.public.test_optim.MOMENTS" in facts["tests"][T + "test_state"]["uses"]
    assert facts["tests"][T + "test_unrelated"]["uses"] == []


def test_a_docstring_is_no_change_a_body_is(tmp_path):
    before = tree(tmp_path / "a")
    assert diff(before, tree(tmp_path / "b", TESTS.replace('"""the trajectory"""', '"""reworded"""')))["tests"] == {}
    after = tree(tmp_path / "c", TESTS.replace('"p", **TRAJ', '"q", **TRAJ'))
    assert diff(before, after)["tests"] == {T + "test_adamw": {"code": ["test body"]}}


def test_a_file_edited_in_words_only_is_not_listed_under_the_next_why(tmp_path):
    """A graded file no test's facts speak for (the reference) edited in a comment or docstring,
    and a module of words reworded, move no hash: the next entry, against the last reading, lists
    neither. A change to its code is listed. A reading recorded of the bytes (before readings
    were of syntax) is compared with the bytes."""
    from grader.history.backfill import file_hashes
    from grader.history.record import entry
    root = tmp_path / "t"
    facts = tree(root)
    (root / "reference").mkdir()
    (root / "reference" / "optim.py").write_text("def step(x):\n    return x + 1\n")
    (root / "seam" / "words.py").write_text('WHY = "one way"\n')
    latest = {"tests": "a" * 16, "facts": facts, "files": file_hashes(root), "reading": "syntax"}
    old_style = {**latest, "files": file_hashes(root, reading="bytes")}
    del old_style["reading"]
    (root / "reference" / "optim.py").write_text('def step(x):\n    """Reworded."""\n    return x + 1  # one more\n')
    (root / "seam" / "words.py").write_text('WHY = "another way"\n')
    assert entry("b" * 16, None, "d", "why", latest, facts, file_hashes(root), root)["changes"]["files"] == []
    assert entry("b" * 16, None, "d", "why", old_style, facts, file_hashes(root), root)["changes"]["files"] == [
        "reference/optim.py", "seam/words.py"]
    (root / "reference" / "optim.py").write_text("def step(x):\n    return x + 2\n")
    assert entry("b" * 16, None, "d", "why", latest, facts, file_hashes(root), root)["changes"]["files"] == [
        "reference/optim.py"]


def test_points_tolerance_and_cases_changes(tmp_path):
    before = tree(tmp_path / "a")
    after = tree(tmp_path / "b", TESTS.replace("points(2)", "points(3)").replace('{"lr": 1e-2}', '{"lr": 5e-2}'),
                 common="TRAJ = dict(rtol=1e-4, atol=1e-6)\n",
                 probes=PROBES.replace("0.01", "0.5"))
    changes = diff(before, after)
    assert changes["tests"] == {T + "test_adamw": {
        "points": [2.0, 3.0], "tolerance": {"tests.common.optim.TRAJ": ["rtol=1e-05, atol=1e-06", "rtol=0.0001, atol=1e-06"]},
        "cases": ["tests.public.test_optim.SMALL"], "code": ["seam.probes.optim.run_closure"]}}
    line = what(T + "test_adamw", compose([(changes, "why")])[T + "test_adamw"])
    assert line == ("points 2 -> 3; tolerance common.optim.TRAJ rtol 1e-05 -> 0.0001; cases changed (SMALL); "
                    "checking code changed (probes.optim.run_closure)")


def test_a_shared_check_is_told_once_with_how_many_tests_reach_it(tmp_path):
    before = tree(tmp_path / "a")
    after = tree(tmp_path / "b", checks=CHECKS.replace("got == want", "got is want"))
    assert diff(before, after) == {"tests": {}, "shared": {"tests.checks.expect_equal": 3}}


def test_added_removed_renamed(tmp_path):
    before = tree(tmp_path / "a")
    edited = TESTS.replace("def test_unrelated", "def test_other").replace("points(1)\ndef test_state", "points(1)\ndef test_x")
    edited = edited.replace('def test_not_graded():\n    pass', '@pytest.mark.points(4)\ndef test_new(impl):\n    pass')
    changes = diff(before, tree(tmp_path / "b", edited))["tests"]
    assert changes[T + "test_new"] == {"added": 4.0}
    assert changes[T + "test_unrelated"] == {"renamed_to": T + "test_other"}  # same body, same points
    assert changes[T + "test_other"] == {"renamed_from": T + "test_unrelated"}
    assert changes[T + "test_state"] == {"renamed_to": T + "test_x"}
    composed = compose([({"tests": changes, "shared": {}}, "w")])
    assert what(T + "test_new", composed[T + "test_new"]) == "added (4 pt)"
    assert what(T + "test_unrelated", composed[T + "test_unrelated"]) == "renamed to test_other"


def test_a_split_and_a_merge(tmp_path):
    before = tree(tmp_path / "a")
    split = TESTS.replace("points(2)\ndef test_adamw(", "points(1)\ndef test_adamw_small(") + textwrap.dedent('''
        @pytest.mark.points(1)
        def test_adamw_large(impl):
            expect_equal(impl.probes.adamw_closure({"lr": 1.0}), None, "big", **TRAJ)
        ''')
    after = tree(tmp_path / "b", split)
    changes = diff(before, after)["tests"]
    assert changes[T + "test_adamw"] == {"split_into": [T + "test_adamw_large", T + "test_adamw_small"]}
    assert changes[T + "test_adamw_small"] == {"split_from": T + "test_adamw", "added": 1.0}
    composed = compose([({"tests": changes, "shared": {}}, "finer")])
    assert what(T + "test_adamw", composed[T + "test_adamw"]) == "split into test_adamw_large and test_adamw_small"
    assert what(T + "test_adamw_large", composed[T + "test_adamw_large"]) == "split from test_adamw (1 pt)"
    # the points must add up: 1 + 2 is no split of 2, so they are a removal and two additions
    uneven = tree(tmp_path / "c", split.replace("points(1)\ndef test_adamw_large", "points(2)\ndef test_adamw_large"))
    assert diff(before, uneven)["tests"][T + "test_adamw"] == {"removed": 2.0}
    merged = diff(after, before)["tests"]  # the other way round
    assert merged[T + "test_adamw"] == {"merged_from": [T + "test_adamw_large", T + "test_adamw_small"], "added": 2.0}
    assert merged[T + "test_adamw_small"] == {"merged_into": T + "test_adamw"}


def test_change_sets_compose_into_one_line(tmp_path):
    a = tree(tmp_path / "a")
    b = tree(tmp_path / "b", TESTS.replace("points(2)", "points(3)"))
    c = tree(tmp_path / "c", TESTS.replace("points(2)", "points(4)"), common="TRAJ = dict(rtol=1e-4, atol=1e-6)\n")
    composed = compose([(diff(a, b), "more weight"), (diff(b, c), "looser")])
    assert what(T + "test_adamw", composed[T + "test_adamw"]) == \
        "points 2 -> 3 -> 4; tolerance common.optim.TRAJ rtol 1e-05 -> 0.0001"
    assert composed[T + "test_adamw"]["why"] == ["more weight", "looser"]


def _results(tests_hash: str, tests: dict) -> dict:
    """A results.json graded with ``tests_hash``: test id -> (score, max_score), numbered in order."""
    rows = [{"name": f"{t.partition('::')[0].rpartition('test_')[2][:-3]}: {t.partition('::')[2]}",
             "number": f"1.{i}", "score": s, "max_score": m, "status": "passed" if s == m else "failed",
             "extra_data": {"test": t, "functions": []}} for i, (t, (s, m)) in enumerate(tests.items(), 1)]
    return {"score": sum(r["score"] for r in rows), "extra_data": {"grader": {"version": "1", "tests": tests_hash}},
            "tests": rows}


def _record(tmp_path) -> dict:
    """Two recorded hashes: test_adamw's points 2 -> 3, and test_state's body changed."""
    a = tree(tmp_path / "a")
    b = tree(tmp_path / "b", TESTS.replace("points(2)", "points(3)").replace('"state", rtol', '"state!", rtol'))
    return {"entries": [{"tests": "aaaaaaaa", "why": "first", "changes": diff(None, a)},
                        {"tests": "bbbbbbbb", "why": "more weight; a stricter state check", "changes": diff(a, b)}]}


def test_a_moved_score_names_the_changed_tests_whose_verdict_moved_for_this_upload(tmp_path):
    """The class report's "why the tests changed" credits an upload only with a changed test whose
    verdict or points moved for it: test_state changed, but this upload failed it both times."""
    record = _record(tmp_path)
    before = _results("aaaaaaaa", {T + "test_adamw": (2, 2), T + "test_state": (0, 1), T + "test_unrelated": (1, 1)})
    after = _results("bbbbbbbb", {T + "test_adamw": (3, 3), T + "test_state": (0, 1), T + "test_unrelated": (1, 1)})
    assert moved_scores(before, after, record) == [
        {"test": T + "test_adamw", "what": "points 2 -> 3", "why": "more weight; a stricter state check"}]
    same = _results("aaaaaaaa", {T + "test_adamw": (0, 2), T + "test_state": (0, 1), T + "test_unrelated": (1, 1)})
    assert moved_scores(before, same, record) == []  # same tests: the upload moved, not the tests
    assert moved_scores(_results("cccccccc", {}), after, record) == []  # an unrecorded hash


def test_history_of_one_upload_says_why_each_test_moved(tmp_path):
    """`history BEFORE AFTER`: each test whose verdict or points moved, with its cause (the test
    changed, its points, a new test, the upload), matched by test id, not by number (a test added
    before another shifts its number); a test that moved nothing is not named."""
    record = _record(tmp_path)
    before = _results("aaaaaaaa", {T + "test_adamw": (2, 2), T + "test_state": (1, 1), T + "test_unrelated": (0, 1)})
    after = _results("bbbbbbbb", {T + "test_new": (1, 1), T + "test_adamw": (3, 3), T + "test_state": (0, 1),
                                  T + "test_unrelated": (1, 1)})
    got = {m["test"].partition("::")[2]: (m["cause"], m["before"], m["after"], m["delta"])
           for m in student.moved_tests(before, after, record)}
    assert got == {"test_new": ("added", "absent", "passed", 1.0), "test_adamw": ("points", "passed", "passed", 1.0),
                   "test_state": ("test changed", "passed", "failed", -1.0),
                   "test_unrelated": ("not the test", "failed", "passed", 1.0)}
    said = student.lines(before, after, record)
    assert said[0] == "score 3 -> 5 (+2): 4 test(s) moved"
    assert any("optim: test_state: passed -> failed (-1): the test changed: checking code changed (test body) "
               "(why: more weight; a stricter state check)" in line for line in said), said
    # the same upload graded twice with the same tests: the run differed
    again = _results("aaaaaaaa", {T + "test_adamw": (0, 2), T + "test_state": (1, 1), T + "test_unrelated": (0, 1)})
    assert [m["cause"] for m in student.moved_tests(before, again, record, same_upload=True)] == ["run differed"]
    assert student.lines(before, before, record)[0].endswith("no test's verdict or points moved")


def test_an_unmoved_score_says_that_the_points_possible_moved(tmp_path):
    """A test this upload failed both times was re-weighted: its score stands, the total it is out
    of moved, and `history` says both."""
    record = _record(tmp_path)
    before = _results("aaaaaaaa", {T + "test_adamw": (0, 2), T + "test_unrelated": (1, 1)})
    after = _results("bbbbbbbb", {T + "test_adamw": (0, 3), T + "test_unrelated": (1, 1)})
    said = student.lines(before, after, record, who="ada")
    assert said == ["ada: score 1 -> 1 (+0): no test's verdict or points moved for it",
                    "  out of 3 -> 4 points (+1: tests added, removed or re-weighted, those it failed both times included)"]
    moved = _results("bbbbbbbb", {T + "test_adamw": (3, 3), T + "test_unrelated": (1, 1)})
    assert student.lines(before, moved, record)[:2] == [
        "score 1 -> 4 (+3): 1 test(s) moved",
        "  out of 3 -> 4 points (+1: tests added, removed or re-weighted, those it failed both times included)"]


def test_history_of_two_batch_outputs_and_of_a_regraded_student(tmp_path, capsys):
    """The command reads two batch outputs (each student graded in both, the upload's fingerprint
    telling an upload changed from a run that differed) and one student's folder with previous.json."""
    from grader.cli import main
    for out, score, upload in (("last", 2, "u1"), ("now", 0, "u1")):
        folder = tmp_path / out / "students" / "ada"
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(_results("aaaaaaaa", {T + "test_adamw": (score, 2)})))
        (folder / "student.json").write_text(json.dumps({"key": "ada", "upload": upload}))
    assert main(["history", str(tmp_path / "last"), str(tmp_path / "now")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ada: score 2 -> 0 (-2): 1 test(s) moved") and "the run differed" in out
    regraded = tmp_path / "now" / "students" / "ada"
    (regraded / "previous.json").write_text(json.dumps({"why": "x", "results": _results("aaaaaaaa", {T + "test_adamw": (2, 2)})}))
    assert main(["history", str(regraded)]) == 0
    assert capsys.readouterr().out.startswith("ada: score 2 -> 0 (-2)")
    assert main(["history", str(tmp_path / "last"), str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


# ---- the command line, on this repository's own record ------------------------------------------

def _two_recorded():
    """Two consecutive entries of the real record, with a test changed between them."""
    from grader.history.record import load
    entries = load()["entries"]
    i = next(i for i in range(1, len(entries)) if entries[i]["changes"]["tests"])
    return entries[i - 1], entries[i]


def test_history_of_a_results_json_names_each_changed_test(tmp_path):
    from tests.self.shared import cli
    before, after = _two_recorded()
    path = tmp_path / "results.json"
    path.write_text(__import__("json").dumps(_results(before["tests"], {})))
    proc = cli("history", path, "--until", after["tests"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"since tests hash {before['tests']}")
    named = {line.split(": ", 1)[0].strip() for line in lines[1:] if line.startswith("  tests/")}
    assert named == set(after["changes"]["tests"])
    assert all(f"(why: {after['why']})" in line for line in lines[1:] if line.startswith("  tests/"))
    bare = cli("history", before["tests"][:8], "--until", after["tests"])  # a prefix of a bare hash
    assert bare.stdout == proc.stdout


def test_history_of_a_gradebook_reads_its_tests_column(tmp_path):
    from tests.self.shared import cli
    before, after = _two_recorded()
    (tmp_path / "gradebook.csv").write_text(f"student_id,name,total,status,submission,tests\n"
                                            f",Points Possible,3,,,\n1,Ada,2,graded,s1,{before['tests']}\n")
    proc = cli("history", tmp_path / "gradebook.csv", "--until", after["tests"])
    assert proc.returncode == 0 and proc.stdout.startswith(f"since tests hash {before['tests']}"), proc.stderr


def test_an_unknown_hash_and_a_bad_path_are_one_line(tmp_path):
    from tests.self.shared import cli
    unknown = cli("history", "0123456789abcdef")
    assert unknown.returncode == 1 and unknown.stdout == "" and unknown.stderr.count("\n") == 1
    assert "tests hash '0123456789abcdef' is unknown" in unknown.stderr
    for bad in (tmp_path / "nothing-here.json", tmp_path):
        proc = cli("history", bad)
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    (tmp_path / "results.json").write_text("{}")
    proc = cli("history", tmp_path / "results.json")
    assert proc.returncode == 2 and "no grader stamp" in proc.stderr and proc.stderr.count("\n") == 1


def test_history_imports_no_torch():
    import subprocess
    import sys
    from grader.paths import ROOT
    before, _ = _two_recorded()
    code = ("import sys; from grader.cli import main; status = main(['history', %r]); "
            "print('torch' in sys.modules, status)" % before["tests"])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.stdout.splitlines()[-1] == "False 0", run.stderr[-2000:]


def test_a_regrade_across_a_change_of_the_tests_says_why_in_the_class_report():
    from grader.classreport import regrades
    from grader.classreport.html import _tests_changed
    from grader.history.explain import regrade_note
    from grader.history.record import load
    before, after = _two_recorded()
    moved = sorted({t.split("/test_")[1].split(".py")[0] for t in after["changes"]["tests"]})[0]
    *changed, failed_twice = [t for t in after["changes"]["tests"] if f"/test_{moved}.py::" in t]
    assert changed, "pick a pair of entries with two changed tests of one problem"
    old = _results(before["tests"], {**{t: (0, 1) for t in changed}, failed_twice: (0, 2)})
    new = _results(after["tests"], {**{t: (1, 1) for t in changed}, failed_twice: (0, 2)})
    [row] = regrades([{"key": "ada", "results": new, "previous": {"why": "other grader or tests", "results": old}}])
    # a changed test of the problem that moved, failed both times, is not credited with the move
    assert {t["test"] for t in row["tests_changed"]} == set(changed)
    assert all(t["why"] == after["why"] for t in row["tests_changed"])
    page = _tests_changed([row], lambda key: key.upper())
    assert "Why the tests changed" in page and "ADA" in page and row["tests_changed"][0]["test"] in page
    note = regrade_note(before["tests"], after["tests"], load())
    assert note.startswith(f"the tests changed since {before['tests']}: {len(after['changes']['tests'])} graded test(s)")


def test_grades_of_this_checkout_before_its_hash_is_recorded_changed_nothing(monkeypatch):
    """A batch made a minute ago by this checkout, whose tests hash is not yet in the record: no
    test changed since (not "unknown"), and the maintainer is told to record it."""
    from grader.history import explain, record
    from grader.provenance import tests_hash
    current = tests_hash()
    held = record.load()
    without = {**held, "entries": [e for e in held["entries"] if e["tests"] != current]}
    monkeypatch.setattr(explain, "load", lambda: without)
    code, lines = explain.run(current)
    assert code == 0 and lines[0] == f"tests hash {current} is this checkout's own: no graded test changed since"
    assert lines[-1].startswith(f"note: this checkout's tests hash {current} is not recorded")
    assert explain.run("0123456789abcdef")[0] == 1   # a hash neither recorded nor this checkout's


def test_an_entry_recorded_before_its_commit_is_named_by_that_commit_once_committed(tmp_path, monkeypatch):
    """`history --record` writes an entry before the commit that carries it (its ``commit`` is
    null): once committed, `history` names the commit that first wrote the hash, not "not
    committed"."""
    import subprocess
    from grader.history import explain, record
    path = tmp_path / "rubric_history.json"
    monkeypatch.setattr(record, "RECORD", path)
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=a", *a],
                                    check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    entry = {"tests": "0123abcd0123abcd", "commit": None, "date": "2026-01-02"}
    path.write_text(json.dumps({"entries": [entry]}))
    explain.committed_in.cache_clear()
    assert explain._entry_line(entry) == "0123abcd0123abcd (not committed, 2026-01-02)"
    git("add", "-A")
    git("commit", "-qm", "recorded")
    explain.committed_in.cache_clear()
    assert explain._entry_line(entry) == f"0123abcd0123abcd ({git('log', '-1', '--format=%h')}, 2026-01-02)"
    explain.committed_in.cache_clear()


def test_a_grade_from_before_results_json_kept_test_ids_is_matched_by_name(tmp_path):
    """Last term's results.json holds no test ids: both grades are matched by name, so no test
    reads as gone and added; one with ids on both sides is matched by id, its number shifted."""
    record = _record(tmp_path)
    after = _results("bbbbbbbb", {T + "test_new": (1, 1), T + "test_adamw": (3, 3)})
    before = _results("aaaaaaaa", {T + "test_adamw": (2, 2)})
    old = {**before, "tests": [{k: v for k, v in t.items() if k != "extra_data"} for t in before["tests"]]}
    assert [(m["test"], m["cause"]) for m in student.moved_tests(old, after, record)] == [
        (T + "test_new", "added"), (T + "test_adamw", "points")]
    assert [(m["test"], m["cause"]) for m in student.moved_tests(before, after, record)] == [
        (T + "test_new", "added"), (T + "test_adamw", "points")]
