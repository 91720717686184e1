"""The modules of words (grader/provenance.py ``WORDING``) are left out of every hash of what
decides a verdict, so they must hold words only: literal text, read by the one module that shows
it, never code a verdict could run."""

import ast

import pytest

from grader.paths import ROOT
from grader.provenance import WORDING
from tests.self.mutation.inputs import _house


def _literal_text(node) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is str
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_literal_text(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal_text(k) and _literal_text(v) for k, v in zip(node.keys, node.values))
    return False


@pytest.mark.parametrize("rel", WORDING)
def test_a_module_of_words_holds_literal_text_only(rel):
    tree = ast.parse((ROOT / rel).read_bytes())
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    code = [node.lineno for node in body if not (
        isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets)
        and _literal_text(node.value))]
    assert not code, (f"{rel}: lines {code} are not an assignment of literal text; no hash covers this "
                      "file, so code here could change a verdict unseen: move it to the module that uses it")


@pytest.mark.parametrize("rel", WORDING)
def test_a_module_of_words_is_read_by_the_module_that_shows_it_only(rel):
    """seam/words.py is read by seam/review.py alone, which looks its words up by kind and id and
    puts them in a note: no other module could compare them."""
    name = rel.removesuffix(".py").replace("/", ".")
    readers = sorted(m for m, imported in _house(ROOT)[1].items() if name in imported)
    assert readers == ["seam.review"], readers
