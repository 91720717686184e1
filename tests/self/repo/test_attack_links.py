"""Every honest-work rule and every allowance has an attack test naming it (docs/rules.md).

A rule (seam/problems.py) or an allowance (seam/allowances.py) with no attack passes the whole
suite whatever it lets through: nothing ever tries the route. The link is explicit:
- a rule: a planted shortcut of one of its functions (tests/self/shortcuts/<problem>.py, graded by
  tests/self/grading/test_planted_bugs.py), or a test marked ``@pytest.mark.attack("<rule name>")``;
- an allowance: a test marked ``@pytest.mark.attack("<id>")`` (on the test, or on a parameter
  through ``pytest.param(..., marks=...)``).
"""

import ast
import importlib
from pathlib import Path

from seam.allowances import ALLOWANCES
from seam.problems import RULED
from tests.self.shortcuts import all_shortcuts

SELF = Path(__file__).resolve().parents[1]
ROOT = SELF.parents[1]


def _marked_modules() -> list[str]:
    """The test modules under tests/self whose text uses the attack marker (read, not imported)."""
    found = []
    for path in sorted(SELF.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        if any(isinstance(n, ast.Attribute) and n.attr == "attack" and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" for n in ast.walk(tree)):
            found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def _marks(obj) -> list:
    """The marks on a test function, and on each of its parameter sets."""
    out = []
    for mark in getattr(obj, "pytestmark", []):
        out.append(mark)
        if mark.name == "parametrize":
            for value in mark.args[1]:
                out += list(getattr(value, "marks", ()))
    return out


def attacked() -> dict[str, list[str]]:
    """id -> the tests that name it with @pytest.mark.attack."""
    out: dict[str, list[str]] = {}
    for name in _marked_modules():
        module = importlib.import_module(name)
        for key, value in vars(module).items():
            if key.startswith("test") and callable(value):
                for mark in _marks(value):
                    if mark.name == "attack":
                        for attack_id in mark.args:
                            out.setdefault(attack_id, []).append(f"{name}.{key}")
    return out


def test_every_rule_and_allowance_has_an_attack_test_naming_it():
    marked = attacked()
    planted = {RULED[s.qualified].name for s in all_shortcuts()}
    missing = []
    for rule in dict.fromkeys(RULED.values()):
        if rule.name not in planted and rule.name not in marked:
            problem = next(f for f, r in RULED.items() if r is rule).split(".")[0]
            missing.append(f"the rule {rule.name!r} (seam/problems.py) has no attack: plant a shortcut of one of its "
                           f"functions in tests/self/shortcuts/{problem}.py (Shortcut(...): the forbidden route, "
                           f"graded by test_planted_bugs.py), or mark a graded attack @pytest.mark.attack({rule.name!r})")
    for allowance in ALLOWANCES:
        if allowance not in marked:
            missing.append(f"the allowance {allowance!r} (seam/allowances.py) has no attack: add a submission that does "
                           f"the forbidden work through it to tests/self/grading/test_allowance_attacks.py (ATTACKS), "
                           f"or mark a graded test @pytest.mark.attack({allowance!r}); see docs/rules.md")
    assert not missing, "\n".join(missing)


def test_every_attack_marker_names_a_rule_or_an_allowance():
    known = {r.name for r in RULED.values()} | set(ALLOWANCES)
    stale = {attack_id: tests for attack_id, tests in attacked().items() if attack_id not in known}
    assert not stale, (f"@pytest.mark.attack names no rule (seam/problems.py Rule.name) or allowance "
                       f"(seam/allowances.py): {stale}")
