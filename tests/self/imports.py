"""The house drawn from its imports: which module of grader/ and seam/ imports which, read from
their ``import`` and ``from`` statements (ast: nothing is imported), and the circles in it.

An import inside a function counts like one at the top: it is a dependency all the same, only
paid later. A package is its ``__init__.py``; ``from . import codec`` is an edge to the
submodule ``codec`` where one exists, to the package otherwise."""

import ast
from pathlib import Path


def modules(root: Path, tops: tuple[str, ...], skip: tuple[str, ...] = ()) -> dict[str, Path]:
    """Dotted name -> file, for every module under the ``tops`` packages of ``root``, less
    those under the folders ``skip`` (relative to ``root``)."""
    out = {}
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            if "__pycache__" in path.parts or any(path.is_relative_to(root / s) for s in skip):
                continue
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _base(name: str, path: Path, level: int, module: str | None) -> str:
    """The absolute name a ``from`` statement of module ``name`` (file ``path``) starts from."""
    if level == 0:
        return module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = package[:len(package) - (level - 1)]
    return ".".join(package + ([module] if module else []))


def _known(name: str, known: dict) -> str | None:
    """``name`` or the nearest package above it that is one of ours (``grader.x.y``: an
    attribute of ``grader.x``); None outside the house."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def graph(root: Path, tops: tuple[str, ...] = ("grader", "seam"), skip: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Module -> the modules of the house it imports (``skip``: as ``modules``)."""
    known = modules(root, tops, skip)
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _base(name, path, node.level, node.module)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                           for alias in node.names]
            for target in targets:
                found = _known(target, known)
                if found is not None and found != name:
                    edges[name].add(found)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each group of nodes that reach one another (Tarjan's strongly connected components, of
    two or more), sorted; [] for a house without a circle."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:  # (the house is a few hundred modules: recursion is fine)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def path_between(edges: dict[str, set[str]], group: list[str]) -> list[str]:
    """One circle through a group's first node, as the import chain a maintainer follows."""
    start, members = group[0], set(group)
    todo, came = [start], {start: None}
    while todo:
        v = todo.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                chain = [v]
                while came[chain[-1]] is not None:
                    chain.append(came[chain[-1]])
                return list(reversed(chain)) + [start]
            if w in members and w not in came:
                came[w] = v
                todo.append(w)
    return group
