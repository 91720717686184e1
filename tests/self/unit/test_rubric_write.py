"""`python -m grader rubric --write` (grader/rubric.py): it rewrites and reports only the files
whose generated parts changed; a part inside a list item keeps its indentation; the figures it
writes (the example score line, the Gradescope figures) come from the rubric and the limits, the
worst case stated exactly. No test is collected here: the facts are made up, one per problem."""

import shutil
from pathlib import Path

import pytest

from grader import rubric
from grader.paths import ROOT, problem_file
from grader.plugin import Fact
from grader.report import score_line
from grader.sandbox.limits import Limits, message
from seam.problems import PROBLEMS


def made_up_facts() -> list[Fact]:
    """A CPU test per problem (its number of points differs from the real rubric's) and two GPU tests."""
    facts = [Fact(f"tests/hidden/test_{p}.py::t", p, "t", float(i + 1), "after_published", False)
             for i, p in enumerate(PROBLEMS)]
    first = next(iter(PROBLEMS))
    return facts + [Fact(f"tests/public/test_{first}.py::g{i}", first, "g", 1.5, "visible", True) for i in (1, 2)]


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The files rubric --write edits, copied under a root of their own."""
    rels = [*{page.relative_to(ROOT) for page, *_ in rubric.doc_parts(made_up_facts())}, rubric.HANDOUT.relative_to(ROOT),
            *(problem_file(p, "handout").relative_to(ROOT) for p in PROBLEMS)]
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_write_rewrites_and_reports_only_what_changed(checkout, monkeypatch):
    facts = made_up_facts()
    first = rubric.write_handout(facts, root=checkout)
    # made-up points change every problem's points line, the handout's table and the docs' figures
    assert set(first) == {rel.as_posix() for rel in rubric.generated(facts, checkout)}
    writes = []
    real_write = Path.write_text
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: writes.append(self) or real_write(self, *a, **k))
    assert rubric.write_handout(facts, root=checkout) == [] and writes == []  # current: nothing touched
    # one section's points line edited by hand: that file alone is rewritten and reported
    section = checkout / problem_file("optim", "handout").relative_to(ROOT)
    text = section.read_text()
    section.write_text(text.replace("**Points: ", "**Points: 1", 1))
    writes.clear()
    assert rubric.write_handout(facts, root=checkout) == [section.relative_to(checkout).as_posix()]
    assert writes == [section] and section.read_text() == text


def test_a_part_in_a_list_item_is_indented_with_its_marker():
    text = "- an item:\n  <!-- s -->\n  old\n  <!-- e -->\n  more of the item\n"
    new = rubric._replaced(text, "<!-- s -->", "<!-- e -->", "```\nline\n\n```")
    assert new == "- an item:\n  <!-- s -->\n  ```\n  line\n\n  ```\n  <!-- e -->\n  more of the item\n"
    assert rubric._replaced(new, "<!-- s -->", "<!-- e -->", "```\nline\n\n```") == new


def test_missing_markers_are_named():
    with pytest.raises(ValueError, match="README.md lacks the markers <!-- s -->"):
        rubric._replaced("no markers here\n", "<!-- s -->", "<!-- e -->", "x", "README.md")


def test_the_score_line_is_report_s_own_on_a_cpu_pass():
    facts = made_up_facts()
    cpu = sum(f.points for f in facts if not f.gpu)
    line = rubric.reference_score_line(facts).splitlines()[1]
    assert line == score_line(rubric.cpu_pass(facts))
    assert line.startswith(f"Score: {cpu:g}/{cpu:g} graded (3 points in 2 tests not run: needs CUDA")


@pytest.mark.parametrize("seconds, said", [(1140, "19 min"), (1230, "20 min 30 s"), (90.5, "1 min 30.5 s"),
                                           (45, "0 min 45 s")])
def test_a_duration_is_stated_exactly(seconds, said):
    assert rubric.duration(seconds) == said


def test_the_gradescope_figures_follow_the_rubric_and_the_limits():
    facts = made_up_facts()
    limits = Limits(timeouts_per_submission=39)  # 60 s + 39 x 30 s: 20.5 minutes, never "20"
    figures = rubric.gradescope_figures(facts, limits)
    total, gpu = sum(f.points for f in facts), sum(f.points for f in facts if f.gpu)
    assert f"| total points | **{total - gpu:g}** | the rubric's {total:g} less the {gpu:g} GPU points (2 tests)" \
        in figures
    assert f"| **{rubric.duration(rubric.worst_case(limits))}** |" in figures and "**20 min 30 s**" in figures
    assert message('memory_bytes', limits) in figures
