"""The house drawn from its imports (tests/self/imports.py: ast, nothing imported) has no circle:
each module of grader/ and seam/ can be read, changed and tested after the ones it imports."""

from grader.paths import ROOT
from tests.self.imports import circles, graph, path_between

TOPS = ("grader", "seam")


def test_no_circle_in_the_house():
    edges = graph(ROOT, TOPS)
    found = [" -> ".join(path_between(edges, group)) for group in circles(edges)]
    assert not found, "modules that import one another (move the shared piece, or invert one import):\n  " \
        + "\n  ".join(found)


def test_the_drawing_sees_each_kind_of_import(tmp_path):
    """The drawing itself, on a house made for it: top-level and function-local imports,
    absolute and relative, a package's __init__, and a circle through all of them."""
    pkg = tmp_path / "house"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text("import os\nx = 1\ndef f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..c import y\nimport house.sub\n")
    (pkg / "c.py").write_text("from house import a\ny = 2\n")
    edges = graph(tmp_path, ("house",))
    assert edges == {"house": {"house.a"}, "house.a": {"house.sub.b"}, "house.sub": set(),
                     "house.sub.b": {"house.c", "house.sub"}, "house.c": {"house.a"}}
    assert circles(edges) == [["house.a", "house.c", "house.sub.b"]]
    assert path_between(edges, circles(edges)[0]) == ["house.a", "house.sub.b", "house.c", "house.a"]
    (pkg / "c.py").write_text("y = 2\n")
    assert circles(graph(tmp_path, ("house",))) == []
