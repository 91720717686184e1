"""The honest idioms (tests/self/honest_idioms/): each is well formed, and the grader's static look
at its module charges nothing."""

import ast

import pytest

from seam.problems import PROBLEMS
from tests.self.honest_idioms import all_idioms, packed, static_charge
from tests.self.submissions import reference_text

IDIOMS = all_idioms()


def test_the_corpus_is_large_and_spread_over_the_problems():
    assert len(IDIOMS) >= 32
    assert len({i.name for i in IDIOMS}) == len(IDIOMS), "two idioms share a name"
    assert len({i.problem for i in IDIOMS}) >= 10
    uploads = packed(IDIOMS)
    assert len(uploads) <= 3, "the grading test grades one upload per idiom of the fullest module"
    assert sum(len(u) for u in uploads) == len(IDIOMS)


@pytest.mark.parametrize("idiom", IDIOMS, ids=[f"{i.problem}:{i.name[:40]}" for i in IDIOMS])
def test_the_idiom_is_an_edit_of_the_reference_that_parses(idiom):
    text = idiom.text()
    assert text != reference_text(idiom.problem)
    ast.parse(text, f"{idiom.problem}.py")
    assert idiom.problem in PROBLEMS and idiom.why


@pytest.mark.parametrize("idiom", IDIOMS, ids=[f"{i.problem}:{i.name[:40]}" for i in IDIOMS])
def test_the_static_look_charges_nothing(idiom, tmp_path):
    charge = static_charge(idiom.problem, idiom.text(), tmp_path)
    assert not charge, f"{idiom.problem}: {idiom.name}: {charge}"
