"""The class of 125's generator (tests/self/first_screen_class.py), on a small class with stand-in
gradings: what it plants is what the first screen names, section by section, and what a TA must
read stays counted: charged students by name, the module that does not import and the uploads
that killed or hung their worker on it, the notes, the zeros; the partial uploads below, apart."""

from pathlib import Path

from grader.batch import firstscreen
from grader.classreport import build, gather
from seam.problems import PROBLEMS, RULED
from tests.self import first_screen_class as fsc
from tests.self.synthetic_class import variants


def _graded(pool) -> dict:
    """Three tests per problem, each calling every ruled function of it (a planted bug fails one)."""
    out = {}
    for n, p in enumerate(PROBLEMS, 1):
        functions = [f for f in RULED if f.startswith(p + ".")] or [f"{p}.anything"]
        for v in (v for v in pool if v.problem == p):
            out[p, v.label] = [{"name": f"{p}: test {k}", "number": f"{n}.{k}", "score": 0.0 if (k == 1 and v.mistake) else 2.0,
                                "max_score": 2.0, "status": "failed" if (k == 1 and v.mistake) else "passed",
                                "output": "", "visibility": "visible", "tags": [p],
                                "extra_data": {"functions": functions}} for k in (1, 2, 3)]
    return out


def test_the_first_screen_names_what_was_planted_and_counts_the_partial_uploads_below(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(fsc, "PARTIAL", 8)
    monkeypatch.setattr(fsc, "CHARGED", 3)
    pool = variants()
    planted = fsc.build_class(tmp_path / "out", _graded(pool), pool, size=40)
    report = build(gather(tmp_path / "out"))
    named = firstscreen.named(report["act_on"])
    of = lambda prefix: sorted(k for k, what in planted.items() if what.startswith(prefix))  # noqa: E731
    assert named["charged"] == of("charged:")
    assert named["broken"] == sorted(k for k, w in planted.items() if w in ("hostile: broken", "hostile: killer",
                                                                             "hostile: hang"))
    assert of("hostile: fake")[0] not in {k for keys in named.values() for k in keys}, "nothing recorded of it"
    assert named["review"] == of("note:"), "the honest checkpoint resume is no note"
    wrong = sorted(k for k, w in planted.items() if w.endswith("the rest failing"))
    assert named["zero"] == sorted(of("stubs as given") + of("empty") + of("ambiguous") + wrong)
    assert named["partial"] == sorted(set(of("partial:")) - set(wrong))
    said = firstscreen.lines(report["act_on"])
    sections = len(report["act_on"]["sections"])
    entries = sum(len(s["entries"]) for s in report["act_on"]["sections"])
    advice = len(report["act_on"]["sections"][[s["kind"] for s in report["act_on"]["sections"]].index("review")]["advice"])
    assert len(said) == sections + entries + advice + 1, "a head per section, a line per student, the advice, one below"
    assert said[-1].startswith("below: partial uploads") and ": 6: " in said[-1]
