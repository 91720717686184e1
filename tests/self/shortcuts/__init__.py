"""Planted shortcuts: a correct answer handed to the library the problem is about, written the
ways a student short on time would (a subclass, a wrapper, an alias, ``getattr``, an import
inside the function), and each once more in a thread and once under PyTorch's switches that
turn the grader's modes off. Beside the planted bugs (tests/self/bugs/): a bug must lose points,
a shortcut must score no more than its function left unwritten, and be told its rule's name.

``tests/self/shortcuts/<problem>.py`` holds ``SHORTCUTS``. A shortcut is code appended to the
reference module of its problem: its definitions replace the reference's (the module's other
functions find them by name); the unwritten baseline appends the stub's definition instead.
"""

import ast
import dataclasses
import importlib
import pkgutil
from pathlib import Path

from grader.paths import problem_file
from seam.problems import files, problem_number
from tests.self.submissions import reference_text, reference_with


@dataclasses.dataclass(frozen=True)
class Shortcut:
    problem: str
    function: str      # the ruled function it breaks the rule of, as the module names it ("AdamW")
    name: str          # how, in a few words
    code: str          # appended to reference/<problem>.py

    @property
    def id(self) -> str:
        return f"{self.problem}:{self.name}"

    @property
    def qualified(self) -> str:
        return f"{self.problem}.{self.function}"

    def build(self, dest: Path) -> Path:
        return _submission(dest, self.problem, self.code)

    def build_unwritten(self, dest: Path) -> Path:
        """The reference with this function as the stub leaves it (raise NotImplementedError)."""
        return _submission(dest, self.problem, stub_definition(self.problem, self.function))


def stub_definition(problem: str, name: str) -> str:
    source = problem_file(problem, "stub").read_text()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return ast.get_source_segment(source, node)
    raise LookupError(f"{files(problem).stub} defines no {name}")


def _submission(dest: Path, problem: str, appended: str) -> Path:
    text = reference_text(problem) + "\n\n# ---- appended ----\nimport torch\n\n" + appended.strip("\n") + "\n"
    return reference_with(dest, {problem: text})


def all_shortcuts() -> list[Shortcut]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: problem_number(i.name)):
        found += importlib.import_module(f"{__name__}.{info.name}").SHORTCUTS
    return found
