"""Mutation testing (tests/self/mutation): the mutator's operators and scope, the runner's verdicts
(killed, survived, timeout) on real mutants of the reference, and that the committed record is
current and meets the bar (>= 90% of non-equivalent mutants killed per problem, >= 95% overall)."""

import ast
from pathlib import Path

import pytest

from grader.paths import REFERENCE, ROOT
from grader.scaffold import REGISTRY, ScaffoldError, register
from tests.self.mutation import __main__ as mutation
from tests.self.mutation.mutants import Mutant, module_mutants, mutants, segment

TOY = '''"""A module docstring."""
import math


def given(x):
    return x + 1


def todo(x: int, y: float = 2.0) -> float:
    """Docstring: 1 + 2 stays."""
    if x <= 0 or not y:
        raise ValueError(f"x must be > {0}, got {x}")
    total = 0
    for i in range(x):
        total += i * y
    print("side effect")
    return max(total, math.floor(-y)) ** 2
'''
STUB = '''"""A module docstring."""


def given(x):
    return x + 1


def todo(x: int, y: float = 2.0) -> float:
    raise NotImplementedError
'''


def test_operators_and_scope():
    got = {m.id for m in mutants(TOY, STUB)}
    expected = {
        "todo: x <= 0 or not y -> (x <= 0 and (not y))",
        "todo: x <= 0 -> (x < 0)",
        "todo: 0 -> (1)",
        "todo: not y -> (y)",
        'todo: raise ValueError(f"x must be > {0}, got {x}") -> pass',
        "todo: 0 -> (1) #2",                      # total = 0
        "todo: total += i * y -> total -= i * y",
        "todo: i * y -> (i / y)",
        'todo: print("side effect") -> pass',
        "todo: max -> min",
        "todo: math.floor -> math.ceil",
        "todo: -y -> (y)",
        "todo: max(total, math.floor(-y)) ** 2 -> (max(total, math.floor(-y)) * 2)",
        "todo: 2 -> (3)",
    }
    assert got == expected, f"missing {expected - got}, unexpected {got - expected}"


def test_untouched_text_and_line_numbers():
    for m in mutants(TOY, STUB):
        ast.parse(m.source)  # every mutant is valid Python
        before, after = TOY.splitlines(), m.source.splitlines()
        assert len(before) == len(after)
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
        assert changed == [m.line - 1], f"{m.id} changed lines {changed}, not only its own ({m.line})"
        assert '"""Docstring: 1 + 2 stays."""' in m.source and "y: float = 2.0" in m.source


def test_a_segment_is_the_one_ast_cuts():
    """The mutator's own cut of a node's text equals ``ast.get_source_segment`` for every node of
    a text with \\r\\n, \\r, a form feed and non-ASCII names, and of the toy module, and for
    every 40th node of every reference module (ast's own cut splits the whole text per node)."""
    odd = "x = 1\r\ndef f(\u00e9t\u00e9):\r    return (\u00e9t\u00e9 +\x0c\n            2)\n\ny = [f(3),\n     f(4)]"
    compared = 0
    for source, every in [*((p.read_text(), 40) for p in sorted(REFERENCE.glob("*.py"))), (odd, 1), (TOY, 1)]:
        for node in [n for n in ast.walk(ast.parse(source)) if hasattr(n, "lineno")][::every]:
            assert segment(source, node) == ast.get_source_segment(source, node), ast.dump(node)
            compared += 1
    assert compared > 250, "the reference modules were not read"


def test_ids_are_stable_under_edits_elsewhere():
    shifted = TOY.replace("import math\n", "import math\n\nCONSTANT = 3 + 4\n")
    assert [m.id for m in mutants(TOY, STUB)] == [m.id for m in mutants(shifted, STUB)]


def test_every_reference_module_mutates_only_what_students_write():
    for problem in ("intensity", "modules"):
        ms = module_mutants(REFERENCE, ROOT / "student_stubs", problem)
        assert len({m.id for m in ms}) == len(ms) and len(ms) > 20
    modules = {m.function for m in module_mutants(REFERENCE, ROOT / "student_stubs", "modules")}
    assert "Linear.forward" in modules and "Cruncher.__init__" in modules


def test_equivalent_file_format():
    text = "# t\n\nintro line\n\n## flops\n\n- `f: a -> (b)`\n  first line\n  second line\n\n## intensity\n"
    assert mutation.parse_equivalent(text) == {"flops": {"f: a -> (b)": "first line second line"}, "intensity": {}}


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_runner_kills_times_out_and_lets_survive():
    source = (REFERENCE / "intensity.py").read_text()
    killed = next(m for m in mutants(source, (ROOT / "student_stubs/intensity.py").read_text())
                  if m.id == "matmul_intensity: 2 -> (3)")
    # a hang that sleeps: the runner's verdict is the same as for a busy loop, and the suite's
    # other xdist worker keeps the core
    hang = Mutant("hang", "ridge_point", 1, source.replace("    return float(peak_flops / bandwidth)",
                                                           "    import time\n    time.sleep(3600)"))
    same = Mutant("unchanged", "none", 1, source)
    verdicts = {}
    mutation.run_mutants([("intensity", m) for m in (killed, hang, same)], workers=2, timeout=12,
                         on_done=lambda p, m, by: verdicts.setdefault(m.id, by))
    assert verdicts[killed.id] and verdicts[killed.id] != "timeout"
    assert verdicts["hang"] == "timeout"
    assert verdicts["unchanged"] is None


def test_record_is_current_and_meets_the_bar(capsys):
    code = mutation.main(["--check"])
    out = capsys.readouterr().out
    assert code == 0, ("mutation record stale or below the bar: run `python -m tests.self.regen` "
                       "(it reruns only the verdicts that could move, after the records they depend on)\n" + out)


def test_the_hash_covers_what_the_graded_tests_import(monkeypatch):
    """tests/checks.py, the conftest and the seam modules a grade imports are in every problem's
    hash, so changing their code makes every problem's record stale; another problem's tests, a
    problem's own reference module (hashed per mutant) and a seam module no grade imports
    (seam/check.py, the students' command) are not; of the submission's other modules, those the
    problem's module imports are (flops.py imports adamw_accounting.py's TransformerConfig), the
    others not (the worker loads a problem's module only when its tests call it)."""
    optim, tensors = set(mutation.hashed_files("optim")), set(mutation.hashed_files("tensors"))
    shared = {ROOT / "tests/checks.py", ROOT / "tests/conftest.py", ROOT / "seam/codec.py", ROOT / "seam/honest.py",
              ROOT / "seam/review.py", ROOT / "seam/problems.py"}
    assert shared <= optim & tensors
    assert ROOT / "tests/hidden/test_optim.py" in optim - tensors
    assert ROOT / "seam/probes/optim.py" in optim - tensors
    assert ROOT / "seam/check.py" not in optim | tensors
    assert not {REFERENCE / "optim.py", REFERENCE / "tensors.py"} & (optim | tensors)
    assert REFERENCE / "adamw_accounting.py" in set(mutation.hashed_files("flops"))
    before = {p: mutation.tests_hash(p) for p in ("optim", "tensors")}
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read(self) + b"\nx = 1\n" if self.name == "checks.py" else read(self))
    assert all(mutation.tests_hash(p) != h for p, h in before.items())


REGISTRY_TEXT = (ROOT / REGISTRY).read_text()


@pytest.mark.parametrize("edit, stales", [
    (lambda t: register(t, "widgets", "widget accounting"), set()),                  # a new problem: no one's
    (lambda t: t.replace('"AdamW and its state"', '"AdamW, its state"'), {"optim"}),  # its own entry
    (lambda t: t.replace('"AdamW written by hand",', '"AdamW by hand",'), {"optim"}),  # the rule it names
    (lambda t: t.replace('"scaling laws"', '"the laws"'), set()),                     # another's entry
    (lambda t: t.replace("# ---- the layout", "# ---- the layout (changed)"), {"optim", "tensors"}),  # shared
])
def test_the_registry_is_hashed_by_what_concerns_each_problem(edit, stales):
    """seam/problems.py counts in a problem's hash only by its own lines (its entry, its rules,
    its NO_RULE line) and the lines all share: the scaffold's registry lines for a new problem
    leave every other problem's record current."""
    after = edit(REGISTRY_TEXT)
    assert after != REGISTRY_TEXT
    changed = {p for p in ("optim", "tensors")
               if mutation.registry_part(after, p) != mutation.registry_part(REGISTRY_TEXT, p)}
    assert changed == stales


def test_a_registry_entry_sharing_a_line_is_refused():
    """The cut is by whole lines: an entry on another's line would be cut with it, so it is refused."""
    lines = REGISTRY_TEXT.splitlines(keepends=True)
    i = next(k for k in range(len(lines) - 1)   # two entries in a row, whichever they are
             if lines[k].lstrip().startswith("Problem(") and lines[k + 1].lstrip().startswith("Problem("))
    crammed = "".join([*lines[:i], lines[i].rstrip("\n") + " " + lines[i + 1].lstrip(), *lines[i + 2:]])
    assert crammed != REGISTRY_TEXT and len(crammed.splitlines()) == len(lines) - 1
    with pytest.raises(ScaffoldError, match="on lines of its own"):
        mutation.registry_part(crammed, "optim")


def test_a_reason_given_in_equivalent_md_makes_survivors_md_stale(monkeypatch):
    """A reason added to or reworded in equivalent.md moves no verdict, so no mutant is stale;
    survivors.md, which shows it, is, for `mutation --check` and `regen --check` both."""
    from grader.paths import STUBS
    from seam.problems import PROBLEMS
    from tests.self import regen
    every = {p: module_mutants(REFERENCE, STUBS, p) for p in PROBLEMS}
    record, equivalent = mutation.load_record(), mutation.load_equivalent()
    assert mutation.survivors_stale(every, record, equivalent) == []
    problem, reasons = next((p, r) for p, r in sorted(equivalent.items()) if r)
    first = sorted(reasons)[0]
    reworded = {**equivalent, problem: {**reasons, first: reasons[first] + " (reworded)"}}
    assert mutation.survivors_stale(every, record, reworded) == [
        "survivors.md (not as the record and equivalent.md make it)"]
    monkeypatch.setattr(mutation, "load_equivalent", lambda: reworded)
    assert regen._mutation() == ["survivors.md (not as the record and equivalent.md make it)"]
    assert mutation.main(["--check"]) == 1
