"""When a generated record is stale, and what regenerating it costs: the mutation run re-checks a
killed mutant on its killing test alone when only its inputs changed and grades it in full when
that test passes now (tests/self/mutation/__main__.py ``plan``, ``regrade``); the inputs hashed
are the ones a verdict depends on (tests/self/mutation/inputs.py); and the one command
(tests/self/regen.py) runs the stale steps in order, judging each after the ones before it."""

from pathlib import Path

import pytest

from grader import provenance
from grader.paths import REFERENCE, ROOT, STUBS
from seam.problems import PROBLEMS
from tests.self import regen
from tests.self.mutation import __main__ as mutation
from tests.self.mutation import inputs
from tests.self.mutation.mutants import Mutant, module_mutants


def _mutant(name: str, source: str = "x = 1\n") -> Mutant:
    return Mutant(name, "f", 1, source)


def _entry(tests: str, **verdicts) -> dict:
    return {"tests": tests, "mutants": {m.id: {"source": mutation.source_hash(m), "killed_by": k}
                                        for m, k in verdicts.values()}}


def test_plan_keeps_what_cannot_move_and_reruns_the_rest(monkeypatch):
    monkeypatch.setattr(mutation, "tests_hash", lambda problem: "now")
    killed, timed, broke = _mutant("killed"), _mutant("timed"), _mutant("broke")
    equivalent, hole, edited, new = _mutant("equivalent"), _mutant("hole"), _mutant("edited"), _mutant("new")
    verdicts = dict(a=(killed, "test_a"), b=(timed, "timeout"), c=(broke, "error: MemoryError"),
                    d=(equivalent, None), e=(hole, None), f=(edited, "test_a"))
    mutants = [killed, timed, broke, equivalent, hole, _mutant("edited", "x = 2\n"), new]
    reasons = {"p": {"equivalent": "no test can tell"}}

    def ids(tests):
        steps = mutation.plan("p", mutants, {"p": _entry(tests, **verdicts)}, reasons)
        return {k: [m.id for m in v] for k, v in steps.items()}

    # same inputs: only a changed or new mutant is graded
    assert ids("now") == {"keep": ["killed", "timed", "broke", "equivalent", "hole"], "quick": [],
                          "full": ["edited", "new"]}
    # other inputs: a killed mutant is re-checked on its test; what no one test reproduces, and a
    # survivor with no reason recorded, on the whole suite; a recorded equivalent is kept
    assert ids("before") == {"keep": ["equivalent"], "quick": ["killed"],
                             "full": ["timed", "broke", "hole", "edited", "new"]}


def _hashes() -> dict:
    """Every hash a record or a grade is judged by: the tests hash results.json and the rubric's
    history carry and the verdicts hash beside it (grader/provenance.py: a batch rerun rescores
    where only the first moved), and per problem the mutation record's, which the behaviour
    record's includes (tests/self/behaviour.py ``inputs_hash``)."""
    return {"tests": provenance.tests_hash.__wrapped__(), "verdicts": provenance.verdicts_hash.__wrapped__(),
            **{f"mutation {p}": inputs.tests_hash(p) for p in PROBLEMS}}


def test_words_move_no_hash_and_a_number_or_a_message_in_code_moves_what_imports_it(monkeypatch):
    """Rewording a note for review (seam/words.py), a docstring or a comment restales no record
    and regrades no class; a number in a formula of the graded machinery (tests/checks.py's
    tolerance) or a string in code moves the hashes of what imports it; a message in seam/check.py,
    which no grade imports, moves no problem's record."""
    before = _hashes()
    read = Path.read_bytes

    def edited(name: str, old: bytes, new: bytes) -> set[str]:
        assert old in read(ROOT / name), f"{name} no longer has {old!r}: pick another line"

        def read_bytes(self):
            data = read(self)
            return data.replace(old, new, 1) if self == ROOT / name else data
        monkeypatch.setattr(Path, "read_bytes", read_bytes)
        now = _hashes()
        return {k for k in before if now[k] != before[k]}

    def every(*kinds: str) -> set[str]:
        return {k for k in before if k.split()[0] in kinds}

    assert edited("seam/review.py", b"\nKINDS = {", b"\n# a comment\nKINDS = {") == set()
    assert edited("seam/words.py", b"(importlib, pydoc.locate, ", b"(importlib or pydoc.locate, ") == set()
    assert edited("seam/words.py", b"another thread started", b"a second thread began") == set()
    assert edited("seam/honest.py", b'"""', b'"""Reworded. ') == set()  # the module's docstring
    assert edited("tests/checks.py", b"ROUNDING = dict(rtol=1e-12)", b"ROUNDING = dict(rtol=1e-11)") == every(
        "tests", "verdicts", "mutation")
    assert edited("seam/review.py", b'"threads", "profilers",', b'"threads", "profiler",') == every(
        "tests", "verdicts", "mutation")
    assert edited("seam/check.py", b"no such file or folder", b"not found") == {"tests", "verdicts"}
    # a test's points: graded results move (the tests hash), no verdict (a class is rescored), no
    # mutant's or shortcut's
    assert edited("tests/hidden/test_optim.py", b"@pytest.mark.points(2)", b"@pytest.mark.points(3)") == {"tests"}
    assert edited("tests/hidden/test_optim.py", b"@pytest.mark.points(2)", b"@pytest.mark.skip") == {
        "tests", "verdicts", "mutation optim"}
    assert all(ROOT / "seam/check.py" not in inputs.hashed_files(p) for p in PROBLEMS)


def test_the_closure_loads_packages_above_and_what_an_init_imports_by_name(tmp_path):
    """What importing a module loads: what it imports (lazily too), the packages above each, and
    every module of a package whose __init__.py imports by a name made at run time; not a
    module nothing imports."""
    seam = tmp_path / "seam"
    for rel, text in {"__init__.py": "", "a.py": "def f():\n    from .sub import b\n", "sub/__init__.py": "",
                      "sub/b.py": "from ..probes import p\n", "unused.py": "x = 1\n",
                      "probes/__init__.py": "import importlib\nfor n in ('one', 'two'):\n"
                                            "    importlib.import_module(f'{__name__}.{n}')\n",
                      "probes/one.py": "", "probes/two.py": "from seam import unused\n"}.items():
        (seam / rel).parent.mkdir(parents=True, exist_ok=True)
        (seam / rel).write_text(text)
    got = {p.relative_to(tmp_path).as_posix() for p in inputs.closure([seam / "a.py"], root=tmp_path)}
    assert got == {"seam/__init__.py", "seam/a.py", "seam/sub/__init__.py", "seam/sub/b.py", "seam/probes/__init__.py",
                   "seam/probes/one.py", "seam/probes/two.py", "seam/unused.py"}
    assert inputs.closure([seam / "unused.py"], root=tmp_path) == {seam / "unused.py", seam / "__init__.py"}


@pytest.mark.e2e  # it grades mutants end to end: not in the fast loop
def test_a_message_change_rechecks_killed_mutants_and_a_passing_killer_reruns_in_full(tmp_path, monkeypatch, capsys):
    """The record's inputs changed (as a message edit in the seam changes them): a killed mutant
    is re-checked on its killing test alone and stays killed by it; a mutant whose recorded
    killing test passes now (here: the reference itself, recorded as killed) is graded on the
    whole suite, which moves its verdict to survived."""
    done = mutation.load_record()["intensity"]["mutants"]  # the committed record's verdicts
    monkeypatch.setattr(mutation, "RECORD", tmp_path / "record.json")
    real = {m.id: m for m in module_mutants(REFERENCE, STUBS, "intensity")}
    killed = next(real[i] for i, v in done.items() if i in real and mutation.killing_test(v["killed_by"]))
    unchanged = Mutant("unchanged", "none", 1, (REFERENCE / "intensity.py").read_text())
    record = {"intensity": _entry("before", a=(killed, done[killed.id]["killed_by"]),
                                  b=(unchanged, done[killed.id]["killed_by"]))}
    out = mutation.regrade(["intensity"], {"intensity": [killed, unchanged]}, record, {}, workers=2, timeout=60)
    said = capsys.readouterr().out
    assert "2 mutant(s) to run: 2 re-checked on the test that killed them, 0 on the whole suite" in said
    assert "1 still killed, 1 to the whole suite" in said
    got = out["intensity"]["mutants"]
    assert got[killed.id]["killed_by"] == done[killed.id]["killed_by"]
    assert got["unchanged"]["killed_by"] is None
    assert out["intensity"]["tests"] == inputs.tests_hash("intensity")


def test_regen_runs_the_stale_steps_in_order_judging_each_after_the_ones_before(tmp_path, monkeypatch):
    """A later step is judged stale only after the earlier steps ran: here the first step's
    command makes the second stale, and the third, current, is not run."""
    first, second = tmp_path / "first", tmp_path / "second"

    def touch(path):
        return lambda stale, jobs: ["python", "-c", f"open({str(path)!r}, 'w')"]
    steps = (regen.Step("first", lambda: [] if first.exists() else ["first missing"], touch(first)),
             regen.Step("second", lambda: ["second missing"] if first.exists() and not second.exists() else [],
                        touch(second)),
             regen.Step("third", lambda: [], lambda stale, jobs: ["python", "-c", "raise SystemExit(3)"]))
    monkeypatch.setattr(regen, "STEPS", steps)
    monkeypatch.setattr(regen, "unrecorded", lambda: None)
    said = []
    assert regen.regenerate(1, say=said.append) == 0
    assert first.exists() and second.exists()
    assert said[0].startswith("first: stale: first missing") and said[2].startswith("second: stale: second missing")
    assert said[4].startswith("third: current") and said[-1].startswith("reran first (")


def test_regen_stops_at_a_step_its_command_leaves_stale(monkeypatch):
    steps = (regen.Step("stuck", lambda: ["always"], lambda stale, jobs: ["python", "-c", "pass"]),
             regen.Step("after", lambda: ["never judged"], lambda stale, jobs: ["python", "-c", "pass"]))
    monkeypatch.setattr(regen, "STEPS", steps)
    said = []
    assert regen.regenerate(1, say=said.append) == 1
    assert said[-1] == "stuck: still stale after its own command: always"
    assert not any(line.startswith("after") for line in said)


def test_regen_check_names_the_command(monkeypatch, capsys):
    monkeypatch.setattr(regen, "STEPS", (regen.Step("late", lambda: ["one"], lambda s, j: []),))
    monkeypatch.setattr(regen, "unrecorded", lambda: None)
    assert regen.main(["--check"]) == 1
    assert capsys.readouterr().out == "late: one\nstale: run `python -m tests.self.regen`\n"


def test_regen_says_to_record_a_tests_hash_the_history_lacks(monkeypatch, capsys):
    """Every record current, but the tests hash moved and is not recorded: `--check` exits 1 with
    the command that records it, and a regeneration ends with the same line."""
    from grader import provenance
    from grader.history import record
    monkeypatch.setattr(regen, "STEPS", (regen.Step("done", lambda: [], lambda s, j: []),))
    monkeypatch.setattr(provenance, "tests_hash", lambda: "feedfacefeedface")
    monkeypatch.setattr(record, "load", lambda: {"entries": [{"tests": "0123456789abcdef"}]})
    assert regen.main(["--check"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "history: the tests hash is now feedfacefeedface, which tests/rubric_history.json does not record: "
        f"run `{regen.RECORD_COMMAND}`")
    said = []
    assert regen.regenerate(1, say=said.append) == 0 and said[-1].startswith("history: the tests hash is now")
    monkeypatch.setattr(record, "load", lambda: {"entries": [{"tests": "feedfacefeedface"}]})
    assert regen.main(["--check"]) == 0
