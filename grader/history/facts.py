"""What each graded test is, read from the source alone (no import, no torch), so that the same
reading runs over any old tree of the repository (`git archive COMMIT`).

For every test function in tests/public and tests/hidden: its points marker, a fingerprint of
its body (the docstring and the points marker left out: neither changes a grade), and every
definition it reaches: module-level constants, functions and classes of its own module and of
the modules it imports from the tests and the seam (tests/common, tests/checks.py, a hidden
test's mistakes, seam/probes), followed to the end. A probe named as ``impl.probes.NAME`` or
"probes.NAME" is reached too, and ``check_snapshot(impl, "target")`` reaches that target's
``SNAPSHOT_INPUTS`` and ``SNAPSHOT_TOLERANCE`` entries and its answers in the snapshot file.

A definition is a *tolerance* when it is a dict of ``rtol``/``atol`` or a number passed as one;
its value is kept as text ("rtol=0.0001, atol=1e-05") so a change reads as numbers.
"""

import ast
import hashlib
import json
import re
from pathlib import Path

TEST_FOLDERS = ("tests/public", "tests/hidden")
# Modules every test reaches through the checks: a change in them is told once per change set,
# with the number of tests that reach it, not on every test's line.
SHARED = ("tests.checks", "tests.snapshot", "tests.conftest", "tests")  # and the seam outside probes/
INTERNAL = ("tests", "seam")          # imports followed; anything else (torch, pytest) is not
TOLERANCE_KEYS = {"rtol", "atol", "rel_tol", "abs_tol"}
PROBE_NAME = re.compile(r"^probes\.(\w+)$")


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False)


def _number(node: ast.AST):
    """The number a literal (or a negated one) stands for, else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _tolerance_pairs(node: ast.AST) -> list[tuple[str, ast.AST]] | None:
    """(key, value) of ``dict(rtol=..., atol=...)`` or ``{"rtol": ...}``; None if it is neither."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
            and not node.args and node.keywords and all(k.arg in TOLERANCE_KEYS for k in node.keywords):
        return [(k.arg, k.value) for k in node.keywords]
    if isinstance(node, ast.Dict) and node.keys and all(
            isinstance(k, ast.Constant) and k.value in TOLERANCE_KEYS for k in node.keys):
        return [(k.value, v) for k, v in zip(node.keys, node.values)]
    return None


class Module:
    """One parsed module: its top-level definitions and what its imports bind."""

    def __init__(self, name: str, tree: ast.Module, is_package: bool = False):
        self.name, self.defs, self.imports, self.tolerance_names = name, {}, {}, set()
        package = name if is_package else name.rpartition(".")[0]
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        self.defs[target.id] = node.value
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parent, *([base] if base else [])])
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0], None)
        for node in ast.walk(tree):  # a name passed as rtol=/atol= anywhere here is a tolerance
            if isinstance(node, ast.keyword) and node.arg in TOLERANCE_KEYS:
                self.tolerance_names |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}


class Tree:
    """A checkout (or an exported old tree) read statically; modules parsed once."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._modules: dict[str, Module | None] = {}
        self._probes: dict[str, str] | None = None

    def path_of(self, dotted: str) -> Path | None:
        base = self.root.joinpath(*dotted.split("."))
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
        return None

    def module(self, dotted: str) -> Module | None:
        if dotted not in self._modules:
            path = self.path_of(dotted) if dotted.split(".")[0] in INTERNAL else None
            module = None
            if path is not None:
                try:
                    tree = ast.parse(path.read_text())
                except (SyntaxError, ValueError, UnicodeDecodeError):
                    tree = None
                if tree is not None:
                    module = Module(dotted, tree, is_package=path.name == "__init__.py")
            self._modules[dotted] = module
        return self._modules[dotted]

    def probe(self, name: str) -> str | None:
        """The module defining the probe ``name`` (seam/probes/<problem>.py), if any."""
        if self._probes is None:
            self._probes = {}
            folder = self.root / "seam" / "probes"
            for path in sorted(folder.glob("*.py")) if folder.is_dir() else ():
                module = self.module(f"seam.probes.{path.stem}")
                for def_name, node in (module.defs if module else {}).items():
                    if isinstance(node, ast.FunctionDef):
                        self._probes.setdefault(def_name, module.name)
        return self._probes.get(name)


class Reach:
    """What the definitions of one tree reach. Each definition's direct references are read once
    (``edges``) and kept, so a test's closure is a walk over them, however many tests share them;
    ``info`` holds each reached definition's facts: {"fp", "kind", "tol"}."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.info: dict[str, dict] = {}
        self._edges: dict[str, list[str]] = {}

    def resolve(self, module: Module, name: str, depth: int = 0) -> tuple[Module, str] | None:
        """Where ``name`` as seen from ``module`` is defined: (its module, its name there)."""
        if depth > 20:
            return None
        if name in module.defs:
            return module, name
        if name in module.imports:
            base, attr = module.imports[name]
            target = self.tree.module(base) if attr is not None else None
            if target is not None:
                return self.resolve(target, attr, depth + 1)
        return None

    def module_alias(self, module: Module, name: str) -> Module | None:
        """The internal module ``name`` stands for in ``module`` (``import tests.common.optim as o``)."""
        if name not in module.imports or name in module.defs:
            return None
        base, attr = module.imports[name]
        return self.tree.module(f"{base}.{attr}" if attr else base)

    def name(self, module: Module, name: str) -> str | None:
        """The qualified name of what ``name`` is in ``module`` (facts kept in ``info``), or None."""
        where = self.resolve(module, name)
        if where is None:
            return None
        owner, local = where
        qualified = f"{owner.name}.{local}"
        if qualified not in self.info:
            node = owner.defs[local]
            tol = self.tolerance_text(owner, local, node)
            kind = "tolerance" if tol is not None else "code" if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else "cases"
            self.info[qualified] = {"fp": fingerprint(_dump(node)), "kind": kind, "tol": tol}
            self._edges[qualified] = []  # (first: a definition that reaches itself stops here)
            self._edges[qualified] = self.refs(owner, node)
        return qualified

    def tolerance_text(self, module: Module, name: str, node: ast.AST) -> str | None:
        pairs = _tolerance_pairs(node)
        if pairs is not None:
            return ", ".join(f"{k}={_number(v) if _number(v) is not None else ast.unparse(v)}" for k, v in pairs)
        if name in module.tolerance_names and _number(node) is not None:
            return repr(_number(node))
        if isinstance(node, ast.Name):  # another name for a tolerance: SNAPSHOT_TOLERANCE's EXACT
            where = self.resolve(module, node.id)
            if where is not None and where[1] != name:
                text = self.tolerance_text(where[0], where[1], where[0].defs[where[1]])
                return f"{node.id} ({text})" if text is not None else None
        return None

    def refs(self, module: Module, node: ast.AST) -> list[str]:
        """The qualified names ``node`` refers to directly (probes named by string included)."""
        out = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                out.append(self.name(module, sub.id))
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                alias = self.module_alias(module, sub.value.id)
                if alias is not None:
                    out.append(self.name(alias, sub.attr))
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and sub.value.attr == "probes":
                out.append(self.probe(sub.attr))
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and PROBE_NAME.match(sub.value):
                out.append(self.probe(PROBE_NAME.match(sub.value).group(1)))
        return list(dict.fromkeys(q for q in out if q is not None))

    def probe(self, name: str) -> str | None:
        owner = self.tree.probe(name)
        return self.name(self.tree.module(owner), name) if owner is not None else None

    def closure(self, start: list[str]) -> set[str]:
        seen, todo = set(), list(start)
        while todo:
            q = todo.pop()
            if q not in seen:
                seen.add(q)
                todo.extend(self._edges.get(q, ()))
        return seen

    def add(self, qualified: str, fp: str, kind: str, tol: str | None = None, edges: list[str] = ()) -> str:
        """A reached fact that is no definition (a snapshot's entry, its answers)."""
        self.info[qualified] = {"fp": fp, "kind": kind, "tol": tol}
        self._edges[qualified] = list(edges)
        return qualified


def _marker_points(dec: ast.AST) -> float | None:
    """N of a ``@pytest.mark.points(N)`` decorator, else None."""
    if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "points" \
            and len(dec.args) == 1 and _number(dec.args[0]) is not None:
        return float(_number(dec.args[0]))
    return None


def _points(func: ast.FunctionDef) -> float | None:
    return next((p for p in map(_marker_points, func.decorator_list) if p is not None), None)


def _body(func: ast.FunctionDef) -> str:
    """The function without its docstring and its points marker: what decides a grade."""
    body = func.body[1:] if func.body and isinstance(func.body[0], ast.Expr) \
        and isinstance(func.body[0].value, ast.Constant) and isinstance(func.body[0].value.value, str) else func.body
    others = [d for d in func.decorator_list if _marker_points(d) is None]
    return _dump(ast.Module(body=[*others, *body], type_ignores=[]))


def _snapshot_cases(root: Path, problem: str) -> dict:
    path = root / "tests" / "public" / "snapshots" / f"{problem}.json"
    try:
        return json.loads(path.read_text()).get("cases", {})
    except (OSError, ValueError, AttributeError):
        return {}


def _dict_entry(module: Module, name: str, key: str) -> ast.AST | None:
    node = module.defs.get(name)
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value == key:
                return v
    return None


def _snapshots(reach: Reach, module: Module, func: ast.FunctionDef, root: Path, problem: str) -> list[str]:
    """``check_snapshot(impl, target)``: the target's inputs, tolerance and recorded answers."""
    calls = [c for c in ast.walk(func) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
             and c.func.id == "check_snapshot" and len(c.args) >= 2]
    if not calls:
        return []
    answers, out = _snapshot_cases(root, problem), []
    checks = reach.tree.module("tests.checks")
    for call in calls:
        target = call.args[1].value if isinstance(call.args[1], ast.Constant) else None
        for key in [target] if isinstance(target, str) else sorted(answers):  # computed: any of them
            entry = _dict_entry(module, "SNAPSHOT_INPUTS", key)
            if entry is not None:
                out.append(reach.add(f"{module.name}.SNAPSHOT_INPUTS[{key}]", fingerprint(_dump(entry)), "cases",
                                     edges=reach.refs(module, entry)))
            tol = _dict_entry(module, "SNAPSHOT_TOLERANCE", key)
            if tol is not None:
                text = reach.tolerance_text(module, key, tol)
            elif checks is not None and "CONDITIONED" in checks.defs:  # tests/snapshot.py's default
                text = f"CONDITIONED ({reach.tolerance_text(checks, 'CONDITIONED', checks.defs['CONDITIONED'])})"
            else:
                text = None
            if text is not None:
                out.append(reach.add(f"{module.name}.SNAPSHOT_TOLERANCE[{key}]", fingerprint(text), "tolerance", text))
            if key in answers:
                out.append(reach.add(f"snapshot {problem}.json[{key}]",
                                     fingerprint(json.dumps(answers[key], sort_keys=True)), "cases"))
    return out


def extract(root: Path) -> dict:
    """{"tests": {test id: {"points", "body", "uses"}}, "defs": {qualified name: {"fp", "kind",
    "tol"}}} of the tree at ``root``; a test id is "tests/hidden/test_x.py::test_y". A test's
    ``uses`` are the definitions it reaches less the shared ones (``shared``; its tolerances are
    kept); a shared definition's facts say how many tests reach it ("tests")."""
    root = Path(root)
    reach = Reach(Tree(root))
    tests, used = {}, {}  # used: qualified name -> how many tests reach it
    for folder in TEST_FOLDERS:
        for path in sorted((root / folder).glob("test_*.py")) if (root / folder).is_dir() else ():
            rel = Path(path.relative_to(root))
            module = reach.tree.module(".".join(rel.with_suffix("").parts))
            for name, node in module.defs.items() if module is not None else ():
                if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name.startswith("test")):
                    continue
                points = _points(node)
                if points is None:
                    continue
                start = reach.refs(module, ast.Module(body=[*node.decorator_list, *node.body], type_ignores=[]))
                start += _snapshots(reach, module, node, root, path.stem[len("test_"):])
                uses = reach.closure(start) - {f"{module.name}.{name}"}
                own = sorted(q for q in uses if not shared(q) or reach.info[q]["kind"] == "tolerance")
                tests[f"{rel.as_posix()}::{name}"] = {"points": points, "body": fingerprint(_body(node)), "uses": own}
                for q in uses:
                    used[q] = used.get(q, 0) + 1
    defs = {q: {**reach.info[q], **({"tests": used[q]} if shared(q) else {})} for q in sorted(used)}
    return {"tests": dict(sorted(tests.items())), "defs": defs}


def shared(qualified: str) -> bool:
    """A definition of the checks every test shares (tests/checks.py, tests/snapshot.py, the seam
    outside a problem's probes): a change to it is told once per change set, with the number of
    tests that reach it, not on every test's line."""
    module = qualified.partition("[")[0].rpartition(".")[0]
    return not qualified.startswith("snapshot ") and (
        module in SHARED or (module.split(".")[0] == "seam" and not module.startswith("seam.probes.")))
