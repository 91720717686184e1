"""Alternative correct solutions: modules that differ from the reference but are right.

``tests/self/alternatives/<problem>__<how>.py`` is a whole module for ``<problem>`` written
another way than reference/<problem>.py (loops instead of vectorised code, einsum instead of @,
exact fractions instead of floats, a closed form instead of a search, another valid order of
operations, a torch.optim.Optimizer subclass instead of a plain class, prints and extra helpers).
Graded with the reference's other modules beside it, each must get full marks on its problem:
a test that fails a correct solution is a test that is too strict.
"""

from pathlib import Path

from seam.problems import PROBLEMS

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parents[2] / "reference"


def all_alternatives() -> list[tuple[str, str, Path]]:
    """(problem, how, path) of every alternative, in problem order."""
    found = []
    for path in sorted(HERE.glob("*__*.py")):
        if path.name.startswith("_"):  # __init__.py (and any private helper) is no alternative
            continue
        problem, _, how = path.stem.partition("__")
        if problem not in PROBLEMS:
            raise ValueError(f"{path.name}: no problem named {problem!r}")
        found.append((problem, how, path))
    return sorted(found, key=lambda a: list(PROBLEMS).index(a[0]))


def build(problem: str, path: Path, dest: Path) -> Path:
    """A submission folder: the reference's modules, this problem's replaced by the alternative."""
    dest.mkdir(parents=True, exist_ok=True)
    for p in PROBLEMS:
        src = path if p == problem else REFERENCE / f"{p}.py"
        (dest / f"{p}.py").write_text(src.read_text())
    return dest
