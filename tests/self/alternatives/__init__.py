"""Alternative correct solutions: modules that differ from the reference but are right.

``tests/self/alternatives/<problem>__<how>.py`` (seam/problems.py's layout) is a whole module
for ``<problem>`` written another way than its reference module (loops instead of vectorised
code, einsum instead of @, exact fractions instead of floats, a closed form instead of a search,
another valid order of operations, a torch.optim.Optimizer subclass instead of a plain class,
prints and extra helpers).
Graded with the reference's other modules beside it, each must get full marks on its problem:
a test that fails a correct solution is a test that is too strict.
"""

from pathlib import Path

from seam.problems import PROBLEMS, any_problem, files, folder, owner
from tests.self.submissions import reference_with

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / folder("reference")


def all_alternatives() -> list[tuple[str, str, Path]]:
    """(problem, how, path) of every alternative, in problem order."""
    for path in ROOT.glob(any_problem("alternatives")):
        if path.name.startswith("_"):  # __init__.py (and any private helper) is no alternative
            continue
        found = owner(path.relative_to(ROOT))
        if found is None or found[1] not in PROBLEMS:
            raise ValueError(f"{path.name}: no problem named {found[1] if found else path.stem!r}")
    found = []
    for problem in PROBLEMS:
        pattern = files(problem).alternatives
        before, _, after = pattern.name.partition("*")  # the "<how>" is what the glob's * matched
        for path in sorted(ROOT.glob(str(pattern))):
            found.append((problem, path.name[len(before):len(path.name) - len(after)], path))
    return found


def build(problem: str, path: Path, dest: Path) -> Path:
    """A submission folder: the reference's modules, this problem's replaced by the alternative."""
    return reference_with(dest, {problem: Path(path).read_text()})
