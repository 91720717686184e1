"""`python -m grader new-problem NAME [--title TEXT]`: a new problem's files, each a skeleton.

Writes every file of docs/maintaining.md's recipe ("How to add a problem") where the registry's layout
puts it (seam/problems.py, ``LAYOUT``: the one place those paths are written) and registers the
problem there: its ``Problem`` line at the end of ``PROBLEMS`` (so its number is the next one)
and its line in ``NO_RULE``. The skeleton is small and correct: the stub raises
``NotImplementedError`` with a jaxtyping-annotated placeholder signature, the reference computes
it, the public and hidden tests have a points marker each and pass on the reference once
`python -m grader snapshots` has filled the empty snapshot, the bugs module has an empty
``BUGS``. What is left is the content: the command prints which files it wrote and what to write
in each.

It refuses (a one-line error, exit 2, nothing written) a NAME that is not a lower-case Python
identifier, that the layout or the seam could not tell apart from another name, or that is
already a problem, and any NAME one of whose files exists already: it never overwrites a file.
"""

import ast
import dataclasses
import json
import keyword
import re
from pathlib import Path
from string import Template

import seam.problems
from seam.problems import dotted, files, folder, owners

from .paths import ROOT

REGISTRY = Path(*seam.problems.__name__.split(".")).with_suffix(".py")  # seam/problems.py, in a checkout
# Names the seam or pytest already give a meaning: ``impl.<name>`` must reach the problem's
# module (not an Impl attribute), its tests get the marker ``<name>`` (not pytest's own ``skip``),
# and a module ``conftest.py`` beside the stubs would be pytest's. (InProcess's own names are
# added where a name is checked: seam.impl imports torch, which the registry's readers, such as
# the records' hashes, need not pay.)
RESERVED = frozenset({
    "called", "probes", "conftest", "skip", "skipif", "xfail", "parametrize", "usefixtures",
    "filterwarnings", "points", "gpu", "gpu_peak", "time_limit", "how"})


def reserved() -> frozenset:
    from seam import InProcess
    return RESERVED | {n for n in dir(InProcess) if not n.startswith("_")}
NO_RULE_TODO = ("TODO: why nothing in a library does this problem for you (or give it rules= in "
                "seam/problems.py)")
PLACEHOLDER = "example"  # the skeleton's one function, to rename with the content
FAST_LOOP = 'python -m pytest -n 2 -m "not e2e"'  # the fast loop the README and docs/maintaining.md give (test_scaffold.py checks)

MODULE_DOC = '''"""${name} — ${title}.

Handout: ${handout}. Notes (assignment/notes/): (the notes this problem draws on, each as its
number and, in brackets, what it shows).

(What the module asks for, its units and conventions, in a paragraph: the same text in the stub
and the reference.)
"""

from jaxtyping import Float
from torch import Tensor


def ${fn}(x: Float[Tensor, "rows cols"]) -> Float[Tensor, "rows"]:
    """A placeholder for the problem's first function (rename it wherever ${name}.${fn} is
    named): the sum of each row of x, in x's dtype. Raises ValueError unless x is 2-d.

    Example: torch.ones(2, 3) gives tensor([3., 3.]).
    """
'''

SKELETONS = {
    "stub": MODULE_DOC + "    raise NotImplementedError\n",
    "reference": MODULE_DOC + '''    if x.dim() != 2:
        raise ValueError(f"x must be 2-d (rows, cols), got shape {tuple(x.shape)}")
    return x.sum(dim=-1)
''',
    "handout": '''# ${number}. ${name} — ${title}

**Points: 0** (public 0, hidden 0)

(To be written: what the problem asks and why, the notes it draws on, what the public and the
hidden tests check. The heading, the points line and "What your code may not use" are generated:
`python -m grader rubric --write`.)

File: `${stub}`.

${rules_start}
${rules_end}
''',
    "public_test": '''"""${name} (public). Expected values: the notes, and snapshots of the reference."""

import pytest
import torch

from tests.checks import ROUNDING, expect_equal
from tests.snapshot import check_snapshot

SNAPSHOT_INPUTS = {
    "${name}.${fn}": [(torch.ones(2, 3),), (torch.arange(12.0).reshape(3, 4),), (torch.zeros(0, 5),),
                      (torch.ones(1, 3, dtype=torch.float64),)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {"${name}.${fn}": ROUNDING}


@pytest.mark.points(1)
def test_notes_${fn}(impl):
    """torch.ones(2, 3) has row sums 3 and 3 (placeholder: the notes' numbers, the note cited)"""
    expect_equal(impl.${name}.${fn}(torch.ones(2, 3)), torch.tensor([3.0, 3.0]), "${fn}(torch.ones(2, 3))")


@pytest.mark.points(1)
def test_${fn}(impl):
    """${fn} matches the snapshots (placeholder)"""
    check_snapshot(impl, "${name}.${fn}")
''',
    "snapshot": None,  # JSON, written by ``_empty_snapshot``
    "hidden_test": '''"""${name} (hidden): seeded cases against PyTorch (the oracle) and the reference, bad inputs."""

import pytest
import torch

from tests.checks import ROUNDING, case, check_cases, raises

BAD = raises("ValueError")
SHAPES = [(1, 1), (2, 3), (5, 7), (0, 4), (4, 0), (64, 33)]


def seeded(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.points(1)
def test_${fn}_random(impl, ref):
    """${fn} matches torch.sum(x, dim=-1) on seeded random tensors (placeholder)"""
    cases = [case(seeded(shape, seed)) for seed, shape in enumerate(SHAPES)]
    check_cases(impl, "${name}.${fn}", cases, ref=ref, oracle=lambda x: torch.sum(x, dim=-1), **ROUNDING)


@pytest.mark.points(1)
def test_bad_input(impl):
    """${fn} raises ValueError unless x is 2-d (placeholder)"""
    check_cases(impl, "${name}.${fn}", [case(torch.ones(3), want=BAD), case(torch.ones(2, 2, 2), want=BAD)])
''',
    "probe": '''"""Probes for ${name}: what the tests must see beside the student's code (an object, a view,
the pages it reads), turned into plain data; no expected answers live here. Delete this file if
the tests need no probe. A probe is registered with its problem and the names it drives:

    from . import probe

    @probe("${name}", calls="${fn}")
    def ${fn}_seen(c, x):
        out = c.module("${name}").${fn}(x)
        return {"out": out, "shares_storage": out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()}
"""
''',
    "bugs": '''"""Planted bugs of ${name}: at least three, each a one-line edit of its reference module that a
student really makes; each must lose points on this problem and on no other."""

from ${bugs_package} import Bug

BUGS: list[Bug] = [
    # Bug("${name}", "what the student got wrong, in a few words", "text in the reference", "what they wrote"),
]
''',
}


class ScaffoldError(Exception):
    """The problem cannot be added as asked; the message (one line) says why."""


@dataclasses.dataclass
class Scaffold:
    written: list[Path]  # the files written, the registry last (relative to the root)
    todo: list[str]      # what is left to write by hand, then to run


def _assigned(tree: ast.Module, name: str) -> ast.expr:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
            return node.value
    raise ScaffoldError(f"{REGISTRY}: no {name} = ... found to add the problem to")


def _entries(tree: ast.Module) -> list[ast.expr]:
    """The ``Problem(...)`` entries of ``PROBLEMS = {p.name: p for p in (...)}``."""
    value = _assigned(tree, "PROBLEMS")
    if not (isinstance(value, ast.DictComp) and isinstance(value.generators[0].iter, ast.Tuple)):
        raise ScaffoldError(f"{REGISTRY}: PROBLEMS is not a dict built from a tuple of Problem(...)")
    return value.generators[0].iter.elts


def registered(text: str) -> list[str]:
    """The problems a registry's text declares, in order."""
    return [e.args[0].value for e in _entries(ast.parse(text))
            if isinstance(e, ast.Call) and e.args and isinstance(e.args[0], ast.Constant)]


def _whole_lines(lines: list[str], node: ast.AST, what: str) -> range:
    """The lines (0-based) ``node`` fills, which must hold nothing else (a trailing comma aside)."""
    first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
    before = first.encode()[:node.col_offset].decode()
    after = last.encode()[node.end_col_offset:].decode().split("#")[0].strip()  # a comment may follow
    if before.strip() or after not in ("", ","):
        raise ScaffoldError(f"{REGISTRY} line {node.lineno}: keep {what} on lines of its own (the mutation "
                            "record's hash leaves another problem's lines out)")
    return range(node.lineno - 1, node.end_lineno)


def registry_lines(text: str) -> dict[str, set[int]]:
    """The lines (0-based) of the registry's text that concern one problem each: its ``Problem``
    entry in PROBLEMS, its NO_RULE entry, and each ``NAME = Rule(...)`` its entry names (a rule
    shared by several problems is each one's). Every other line concerns them all."""
    tree, lines = ast.parse(text), text.splitlines()
    rules = {t.id: node for node in tree.body if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "Rule"
             for t in node.targets if isinstance(t, ast.Name)}
    out: dict[str, set[int]] = {}
    for entry in _entries(tree):
        name = entry.args[0].value
        out.setdefault(name, set()).update(_whole_lines(lines, entry, f"{name}'s Problem(...)"))
        for rule in {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and n.id in rules}:
            out[name].update(_whole_lines(lines, rules[rule], f"the rule {rule}"))
    no_rule = _assigned(tree, "NO_RULE")
    for key, value in zip(getattr(no_rule, "keys", ()), getattr(no_rule, "values", ())):
        if isinstance(key, ast.Constant):
            span = ast.Tuple(elts=[], lineno=key.lineno, col_offset=key.col_offset,
                             end_lineno=value.end_lineno, end_col_offset=value.end_col_offset)
            out.setdefault(key.value, set()).update(_whole_lines(lines, span, f"{key.value}'s NO_RULE entry"))
    return out


def _insert_after(text: str, node: ast.expr, addition: str) -> str:
    """``text`` with ``addition`` right after ``node`` (ast offsets count UTF-8 bytes)."""
    data = text.encode()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    at = starts[node.end_lineno - 1] + node.end_col_offset
    return (data[:at] + addition.encode() + data[at:]).decode()


def register(text: str, name: str, title: str) -> str:
    """The registry's text with the problem added: last in PROBLEMS, and in NO_RULE."""
    literal = lambda s: json.dumps(s, ensure_ascii=False)  # a JSON string is a Python string literal
    text = _insert_after(text, _entries(ast.parse(text))[-1], f",\n    Problem({literal(name)}, {literal(title)})")
    no_rule = _assigned(ast.parse(text), "NO_RULE")
    if not isinstance(no_rule, ast.Dict) or not no_rule.values:
        raise ScaffoldError(f"{REGISTRY}: NO_RULE is not a dict literal with an entry")
    text = _insert_after(text, no_rule.values[-1], f",\n    {json.dumps(name)}: {json.dumps(NO_RULE_TODO)}")
    return text


def name_problem(name: str, known: list[str]) -> str | None:
    """Why ``name`` cannot be a new problem, or None."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        return (f"{name!r} is not a problem name: a lower-case Python identifier (a-z, 0-9 and _, "
                "starting with a letter), not a keyword")
    if "__" in name or name.endswith("_"):
        return f"{name!r}: no double or trailing underscore (an alternative's file is <problem>__<how>.py)"
    for kind, path in files(name).items():
        if "*" not in path.name and owners(path) != [(kind.kind, name)]:
            other = next(f"{k} of {n!r}" for k, n in owners(path) if (k, n) != (kind.kind, name))
            return f"{name!r}: its {kind.kind} file {path} would read as the {other} (seam/problems.py's layout)"
    if name in known:
        return f"{name!r} is already a problem ({REGISTRY}); pick another name"
    if name in RESERVED or name in reserved():  # (the first without torch, which the second imports)
        return f"{name!r} already means something to the seam or to pytest (impl.{name}, -m {name})"
    return None


def _title_problem(title: str) -> str | None:
    if not title.strip() or not title.isprintable() or '"' in title or "\\" in title:
        return f"--title {title!r}: one line of plain text, without quotes or backslashes"
    return None


def _empty_snapshot(name: str) -> str:
    from .snapshots import HEADER
    return json.dumps({"_": HEADER, "problem": name, "cases": {}}, indent=1) + "\n"


def _values(name: str, title: str, number: int) -> dict[str, str]:
    from .rubric import RULES_END, RULES_START
    layout = files(name)
    return {"name": name, "title": title, "number": str(number), "fn": PLACEHOLDER,
            "stub": layout.stub.as_posix(), "handout": layout.handout.as_posix(),
            "bugs_package": dotted(folder("bugs")), "rules_start": RULES_START, "rules_end": RULES_END}


def new_problem(name: str, title: str | None = None, root: Path = ROOT) -> Scaffold:
    """Write the problem's skeleton files under ``root`` (a checkout) and register it there."""
    root = Path(root)
    title = title if title is not None else name.replace("_", " ")
    registry = root / REGISTRY
    try:
        text = registry.read_text()
        known = registered(text)
    except (OSError, SyntaxError) as e:
        raise ScaffoldError(f"cannot read the registry {registry}: {e}") from None
    why = name_problem(name, known) or _title_problem(title)
    if why:
        raise ScaffoldError(why)
    layout = files(name)
    there = sorted(str(p.relative_to(root)) for _, path in layout.items() for p in root.glob(str(path)))
    if there:
        raise ScaffoldError(f"{name}'s files exist already, nothing written (a scaffold never overwrites): "
                            + ", ".join(there))
    new_text = register(text, name, title)
    if registered(new_text) != known + [name]:
        raise ScaffoldError(f"{REGISTRY}: the edit did not add {name} last to PROBLEMS; add it by hand")
    values = _values(name, title, len(known) + 1)
    written = []
    for kind, template in SKELETONS.items():
        path = root / getattr(layout, kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x") as f:  # "x": never overwrite, even a file made since the check
            f.write(_empty_snapshot(name) if template is None else Template(template).substitute(values))
        written.append(path.relative_to(root))
    registry.write_text(new_text)
    written.append(REGISTRY)
    return Scaffold(written, todo(name))


def todo(name: str) -> list[str]:
    """What is left after the scaffold: each file's content, then the commands of the recipe."""
    layout = files(name)
    out = [f"{REGISTRY}: the title, any given dataclasses (structs=), and rules= for what its "
           f"functions may not hand to a library, else its NO_RULE reason (now a TODO)"]
    for kind, path in layout.items():
        holds = kind.holds.replace("{name}", name)
        if kind.kind in SKELETONS:
            out.append(f"{path}: {holds}" + (f" (replace the placeholder {PLACEHOLDER})"
                                              if kind.kind in ("stub", "reference", "public_test",
                                                               "hidden_test") else ""))
        else:
            out.append(f"{path} ({'by hand' if kind.required else 'if needed'}): {holds}")
    out += ["a new library? pin it in pyproject.toml",
            "then: python -m grader snapshots && python -m grader rubric --write (the handout's points, "
            "the docs' figures)",
            f"check: python -m pytest {layout.public_test} {layout.hidden_test} --impl={folder('reference')}",
            f"mutation-test it: {mutation_command(name)} (its mutants alone: the other problems' records "
            "stay current), then kill each survivor or say why it is equivalent",
            f"record the new tests hash: python -m grader history --record --why \"{name}: a new problem\"",
            f"the fast loop, green once all of the above holds: {FAST_LOOP}"]
    return out


def mutation_command(name: str) -> str:
    """The one mutation run a new problem needs (tests/self/mutation: a problem's record goes stale
    only with what it grades, so the others' stay current)."""
    return f"python -m tests.self.mutation {name}"
