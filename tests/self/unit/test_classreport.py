"""The class report (grader/classreport): figures checked by hand, similarity on a synthetic class
(tests/self/synthetic_class.py), a deliberately wrong test flagged, the HTML safe to open."""

from html.parser import HTMLParser
import json
import math
import subprocess
import sys

import pytest

from grader.classreport import build, similarity_of, stats, summary
from grader.classreport.html import render
from grader.classreport.similarity import ARCHIVE_NAME, REFERENCE_NAME
from grader.paths import ROOT
from tests.self.synthetic_class import Variant, disguise, make_class, variants, write_batch


# ---- the figures, by hand -----------------------------------------------------------------------
def test_describe_matches_a_hand_count():
    d = stats.describe([0.0, 2.0, 4.0, 6.0, 10.0], 10.0)
    # inclusive quartiles of 0, 2, 4, 6, 10: positions 1 and 3 of 0..4, so 2 and 6
    assert (d["mean"], d["median"], d["q1"], d["q3"], d["full"], d["zero"]) == (4.4, 4.0, 2.0, 6.0, 1, 1)
    assert d["histogram"]["counts"] == [1, 0, 1, 0, 1, 0, 1, 0, 0, 1]  # 10 sits in the last bin


def test_corrected_point_biserial_matches_a_hand_computation():
    # ten students (the fewest judged); the item (1 point) is passed by a, b, c, d
    keys = "abcdefghij"
    outcomes = {"1.1": {k: k in "abcd" for k in keys}}
    totals = dict(zip(keys, [9.0, 7.0, 6.0, 4.0, 6.0, 2.0, 1.0, 5.0, 3.0, 0.0]))
    rest = [totals[k] - (k in "abcd") for k in keys]
    passed, failed = rest[:4], rest[4:]
    m1, m0 = sum(passed) / 4, sum(failed) / 6
    mean = sum(rest) / 10
    s = math.sqrt(sum((r - mean) ** 2 for r in rest) / 10)
    by_hand = (m1 - m0) / s * math.sqrt(0.4 * 0.6)
    got = stats.item_analysis(outcomes, {"1.1": 1.0}, totals)["1.1"]
    assert got["pass_rate"] == 0.4 and got["discrimination"] == pytest.approx(by_hand, abs=1e-12)
    assert got["flags"] == [] and got["judged"]
    fewer = {"1.1": {k: v for k, v in outcomes["1.1"].items() if k != "j"}}
    assert stats.item_analysis(fewer, {"1.1": 1.0}, totals)["1.1"]["discrimination"] is None, "nine: not computed"


def test_flags_nobody_passes_and_negative_and_redundant_items_are_no_flag():
    students = [f"s{i}" for i in range(12)]
    totals = {s: float(i) for i, s in enumerate(students)}
    outcomes = {
        "1.1": {s: False for s in students},                            # nobody passes
        "1.2": {s: i < 4 for i, s in enumerate(students)},              # the weakest pass: negative
        "1.3": {s: i >= 6 for i, s in enumerate(students)},             # the strongest pass
        "1.4": {s: i >= 6 for i, s in enumerate(students)},             # the same outcome as 1.3
    }
    got = stats.item_analysis(outcomes, dict.fromkeys(outcomes, 1.0), totals)
    assert got["1.1"]["flags"] == ["nobody passes it"]
    assert got["1.2"]["discrimination"] <= -stats.noise(12)
    assert [f.split(" (")[0] for f in got["1.2"]["flags"]] == ["negative discrimination"]
    assert got["1.3"]["flags"] == [] and got["1.4"]["flags"] == [], "one outcome twice is no reason to doubt"
    assert got["1.4"]["same_as"] == "1.3" and "same_as" not in got["1.3"]


# ---- similarity ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic():
    pool = [v for v in variants() if v.problem in ("flops", "optim", "einops", "scaling")]
    return make_class(40, seed=3, pool=pool, copy_rate=0.2)


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_disguised_copies_are_flagged_and_independent_alternatives_are_not(synthetic):
    lineage = {(s.key, p): v.lineage for s in synthetic for p, v in s.modules.items()}
    texts = [t for s in synthetic for t in s.texts.values()]
    assert len(set(texts)) == len(texts), "two students handed in the same text"
    result = similarity_of([{"key": s.key, "code": s.texts} for s in synthetic])
    flagged = {(p["problem"], frozenset((p["a"], p["b"]))) for p in result["pairs"]}
    # every flagged pair shares a lineage (a copy) or is a copy of the reference
    for p in result["pairs"]:
        b = "reference" if p["b"] == REFERENCE_NAME else lineage[p["b"], p["problem"]]
        assert b == lineage[p["a"], p["problem"]], f"flagged apart from lineage: {p['problem']} {p['a']} ~ {p['b']}"
    copies = [(s.key, p, src) for s in synthetic for p, src in s.copied_from.items()
              if lineage[s.key, p] != "reference"]
    assert copies, "the class has no copy of an alternative"
    for key, p, src in copies:  # renamed, reordered, reformatted: still found
        assert (p, frozenset((key, src))) in flagged, f"{p}: {key} copied {src}, not flagged"
    on_reference = {(p["problem"], p["a"]) for p in result["pairs"] if p["b"] == REFERENCE_NAME}
    for s in synthetic:
        for p, v in s.modules.items():
            assert ((p, s.key) in on_reference) == (v.lineage == "reference"), (p, s.key, v.label)


def test_the_stubs_given_code_alone_is_not_a_match():
    stub = (ROOT / "student_stubs" / "flops.py").read_text()
    students = {"a": disguise(stub, 1, heavy=False), "b": disguise(stub, 2, heavy=False)}
    from grader.classreport.similarity import similar
    assert similar("flops", students, stub, None)["pairs"] == []


def test_a_text_is_fingerprinted_once_and_the_pairs_do_not_change(monkeypatch):
    """Many hand in the same text (a module left as the stub gave it, the reference copied): it is
    tokenised once, and remembered by text, never by who handed it in."""
    from grader.classreport import similarity
    stub = (ROOT / "student_stubs" / "flops.py").read_text()
    reference = (ROOT / "reference" / "flops.py").read_text()
    copy = disguise(reference, 1, heavy=False)
    students = {"a": reference, "b": reference, "c": copy, "d": copy, "e": stub}
    monkeypatch.setattr(similarity, "_MADE", {})
    made = []
    real = similarity.fingerprint
    monkeypatch.setattr(similarity, "fingerprint", lambda text: made.append(text) or real(text))
    first = similarity.similar("flops", students, stub, reference)
    assert sorted(made) == sorted([stub, reference, copy]), "one per distinct text"
    made.clear()
    again = similarity.similar("flops", students, stub, reference)
    assert made == [] and again == first
    monkeypatch.setattr(similarity, "_MADE", {})
    monkeypatch.setattr(similarity, "MEMO", 0)  # nothing remembered: the same pairs, made afresh
    assert similarity.similar("flops", students, stub, reference) == first
    assert {(p["a"], p["b"]) for p in first["pairs"]} == {(k, REFERENCE_NAME) for k in "abcd"}


# ---- the report from a batch folder -------------------------------------------------------------
def _tests_for(problem: str, passed: list[bool], mistakes=None) -> list[dict]:
    return [{"name": f"{problem}: test {k}", "number": f"3.{k}", "score": 1.0 if ok else 0.0, "max_score": 1.0,
             "status": "passed" if ok else "failed", "output": "passed" if ok else "got 3\nexpected 4",
             "visibility": "visible", "tags": [problem],
             "extra_data": {"functions": [], **({"mistakes": mistakes} if mistakes and not ok else {})}}
            for k, ok in enumerate(passed, 1)]


def test_a_deliberately_wrong_test_is_flagged_by_its_negative_discrimination():
    """Correct solutions fail test 3.5 and the students with the named mistake pass it: only its
    discrimination can tell (some pass it, it duplicates no other test)."""
    mistake = [{"name": "a multiply-add as 1 FLOP", "handout": "assignment/problems/flops.md"}]
    students = []
    for i in range(30):
        strong = i >= 12
        has_mistake = i < 8
        right = [strong or i % 3 == 0, strong or i % 2 == 0, strong, not has_mistake]
        wrong = has_mistake  # the wrong test: the mistake passes it, the correct solutions fail it
        tests = _tests_for("flops", right + [wrong])
        if has_mistake:  # 3.4 fails them, naming the mistake
            tests[3]["extra_data"]["mistakes"] = mistake
        students.append({"key": f"s{i:02d}", "status": "graded", "who": [], "code": {},
                         "results": {"score": sum(t["score"] for t in tests), "tests": tests}})
    report = build(students)
    doubt = {i["number"]: i["flags"] for i in report["doubt"]}
    assert "3.5" in doubt and any("negative discrimination" in f for f in doubt["3.5"])
    assert not any("nobody" in f or "same outcome" in f for f in doubt["3.5"])
    assert [m["name"] for m in report["mistakes"]] == ["a multiply-add as 1 FLOP"]
    assert report["mistakes"][0]["students"] == 8


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [k for k, _ in attrs]


def test_the_page_escapes_every_text_from_a_submission(tmp_path):
    evil = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    tests = _tests_for("flops", [False, True])
    tests[0]["output"] = evil
    student = {"key": evil, "status": "graded", "who": [evil], "code": {"flops": evil},
               "results": {"score": 1.0, "tests": tests}}
    report = build([student], {"threshold": 0.5, "compared": 1, "candidates": 0, "pairs": [
        {"problem": "flops", "a": evil, "b": REFERENCE_NAME, "score": 0.9, "a_share": 0.9, "b_share": 0.9,
         "a_spans": [[0, 8]], "b_spans": [[0, 3]]}]})
    page = render(report, {evil: {"flops": evil}, REFERENCE_NAME: {"flops": "x = 1"}})
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert not any(a.startswith("on") for a in parser.attrs)
    assert "&lt;script&gt;" in page


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_report_command_on_a_batch_folder(tmp_path):
    pool = [Variant("flops", "reference", (ROOT / "reference" / "flops.py").read_text(), "reference")]
    cls = make_class(3, pool=pool, copy_rate=0.0)
    graded = {("flops", "reference"): _tests_for("flops", [True, False])}
    out = write_batch(tmp_path / "out", cls, graded, statuses={cls[2].key: "crashed"})
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "class report: 3 upload(s) from 3 student(s), 2 graded" in proc.stdout and "crashed: 1" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["statuses"] == {"crashed": [cls[2].key]} and report["total"]["n"] == 2
    assert {(p["a"], p["b"]) for p in report["similarity"]["pairs"]} == {(cls[0].key, REFERENCE_NAME),
                                                                          (cls[1].key, REFERENCE_NAME)}
    assert (out / "report.html").read_text().startswith("<!doctype html>")
    missing = subprocess.run([sys.executable, "-m", "grader", "report", str(tmp_path / "nothing")], cwd=ROOT,
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no batch output" in missing.stderr


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_the_page_in_a_real_browser_shows_its_plots_and_tables(tmp_path):
    """Rendered by headless chromium from disk (no network): the histograms' bars and the tables'
    header cells are on the screenshot."""
    from tests.self.browser import browser, screenshot
    if browser() is None:
        pytest.skip("no chromium here (deploy/chromium/install.sh, which .ci/run runs, installs Debian's)")
    from PIL import Image
    students = []
    for i in range(12):
        tests = _tests_for("flops", [i % 2 == 0, i % 3 == 0, i > 3, True])
        students.append({"key": f"s{i:02d}", "status": "graded", "who": [], "code": {},
                         "results": {"score": sum(t["score"] for t in tests), "tests": tests}})
    page = tmp_path / "report.html"
    page.write_text(render(build(students), {}))
    png = screenshot(page, tmp_path / "report.png", 1000, 1400)
    image = Image.open(png).convert("RGB")
    assert image.size == (1000, 1400)
    colors = image.getcolors(1 << 20)
    count = {rgb: n for n, rgb in colors}
    assert count.get((0x4a, 0x78, 0xc2), 0) > 2000, "no histogram bars on the screenshot"
    assert count.get((0xf4, 0xf4, 0xf4), 0) > 1000, "no table header cells on the screenshot"
    assert len(colors) > 20, "the page rendered blank"


def test_flaky_tests_and_what_a_regrade_changed():
    """A test whose outcome differs between gradings of one upload is flaky; a regrade lists the
    students whose total changed, by how much, and the tests that flipped."""
    steady, once = _tests_for("flops", [True, True, False]), _tests_for("flops", [True, False, False])
    students = [
        {"key": "a", "status": "graded", "who": [], "code": {}, "repeats": [{"score": 1.0, "tests": once}],
         "results": {"score": 2.0, "tests": steady},
         "previous": {"why": "changed upload", "results": {"score": 1.0, "tests": once}}},
        {"key": "b", "status": "graded", "who": [], "code": {}, "repeats": [{"score": 2.0, "tests": steady}],
         "results": {"score": 2.0, "tests": steady}, "previous": {"why": "--regrade", "results": {
             "score": 2.0, "tests": steady}}},
    ]
    report = build(students)
    assert report["flaky"] == [{"number": "3.2", "name": "flops: test 2", "students": ["a"]}]
    assert report["regrades"] == [{"student": "a", "why": "changed upload", "before": 1.0, "after": 2.0,
                                   "delta": 1.0, "flipped": [{"number": "3.2", "name": "flops: test 2",
                                                              "before": "failed", "after": "passed"}]}]
    # the summary describes the folder (a rerun that grades no one prints it too), with why each moved:
    # never "regraded" for what may have been a rescore
    moved = [line for line in summary(report) if "student(s)" in line and "+1" in line]
    assert moved == ["moved by their last regrade or rescore: 1 student(s) (changed upload), e.g. a +1"], \
        summary(report)
    assert not any(line.startswith("regraded") for line in summary(report))


def test_a_regrade_matches_tests_by_id_not_by_their_number():
    """A test added before the others shifts their numbers: the regrade compares each test with
    itself (its id), so the upload's two failed tests, renumbered, did not flip (by number, 3.2
    would read failed -> passed); a test new since is no flip either (counted over tests that ran
    both times)."""
    ids = lambda tests, names: [{**t, "extra_data": {**t["extra_data"], "test": f"tests/public/test_flops.py::{n}"}}
                                for t, n in zip(tests, names)]
    before = ids(_tests_for("flops", [True, False, False]), ["t1", "t2", "t3"])
    after = ids(_tests_for("flops", [True, True, False, False]), ["t1", "t_new", "t2", "t3"])
    students = [{"key": "a", "status": "graded", "who": [], "code": {}, "results": {"score": 2.0, "tests": after},
                 "previous": {"why": "other grader or tests", "results": {"score": 1.0, "tests": before}}}]
    assert build(students)["regrades"] == []
    after[1]["status"], after[1]["score"] = "failed", 0.0  # t_new failed, and t2 now passes
    after[2]["status"], after[2]["score"] = "passed", 1.0
    [row] = build(students)["regrades"]
    assert row["flipped"] == [{"number": "3.3", "name": "flops: test 3", "before": "failed", "after": "passed"}]


def test_an_archived_solution_is_compared_and_shown_beside_the_copy(tmp_path):
    """--archive: last term's solution (an alternative) is found in this term's disguised copy of it."""
    from grader.classreport import write
    from tests.self.alternatives import all_alternatives
    _, how, path = next(a for a in all_alternatives() if a[0] == "optim")
    archive = tmp_path / "archive" / "2025-fall" / "carol"
    archive.mkdir(parents=True)
    (archive / "optim.py").write_text(path.read_text())
    pool = [Variant("optim", f"alt:{how}", path.read_text(), f"alt:{how}"),
            Variant("optim", "reference", (ROOT / "reference" / "optim.py").read_text(), "reference")]
    cls = make_class(2, pool=pool, copy_rate=0.0)
    copier = next(s.key for s in cls if s.modules["optim"].label.startswith("alt:"))
    out = write_batch(tmp_path / "out", cls, {(v.problem, v.label): _tests_for("optim", [True]) for v in pool})
    write(out, tmp_path / "archive")
    report = json.loads((out / "report.json").read_text())
    against = {(p["a"], p["b"]) for p in report["similarity"]["pairs"]}
    assert (copier, ARCHIVE_NAME + "2025-fall/carol/optim.py") in against, against
    assert all(b != ARCHIVE_NAME + "2025-fall/carol/optim.py" for a, b in against if a != copier)
    page = (out / "report.html").read_text()
    assert ARCHIVE_NAME + "2025-fall/carol/optim.py" in page and "<mark>" in page


def test_what_a_students_folder_name_can_do_to_the_report(tmp_path):
    """The red team's keys (folder names are the student's): a byte that is no UTF-8, a terminal
    escape, a right-to-left override spelling "reference", the name "reference" itself, a glob
    pattern. The page is written, the terminal gets no escape, no student passes for the
    reference, and "*" does not collect a classmate's repeat gradings."""
    from grader.classreport import write
    from grader.batch.output import REPEATS, write_json
    stub_pool = [Variant("flops", "reference", (ROOT / "reference" / "flops.py").read_text(), "reference")]
    keys = ["bad\udcff", "evil\x1b]52;c;cm0K\x07", "\u202eecnerefer", "reference", "*", "bob"]
    cls = make_class(len(keys), pool=stub_pool, copy_rate=0.0)
    for s, key in zip(cls, keys):
        s.key = key
    graded = {("flops", "reference"): _tests_for("flops", [True, False])}
    out = write_batch(tmp_path / "out", cls, graded, statuses={keys[0]: "crashed", keys[1]: "crashed"})
    bob = json.loads((out / "students" / "bob" / "student.json").read_text())
    write_json(out / REPEATS / "2" / "bob" / "results.json",
               {"score": 0.0, "tests": _tests_for("flops", [False, True])})
    write_json(out / REPEATS / "2" / "bob" / "student.json", bob)
    lines = write(out)
    assert not any("\x1b" in line or "\u202e" in line for line in lines)
    page = (out / "report.html").read_text()
    assert "\u202e" not in page and "\\udcff" in page
    report = json.loads((out / "report.json").read_text())
    sides = {(p["a"], p["b"]) for p in report["similarity"]["pairs"]}
    assert ("reference", REFERENCE_NAME) in sides and all(b != "reference" for _, b in sides)
    assert report["flaky"] == [{"number": "3.1", "name": "flops: test 1", "students": ["bob"]},
                               {"number": "3.2", "name": "flops: test 2", "students": ["bob"]}]
    # a repeat left from an earlier upload of bob's is not his
    write_json(out / REPEATS / "2" / "bob" / "student.json", {**bob, "upload": "an older upload"})
    write(out)
    assert json.loads((out / "report.json").read_text())["flaky"] == []


def test_a_merged_pass_is_no_regrade():
    """After a CPU and a GPU pass are merged, the previous results (one pass's) lack the other
    pass's tests: only tests that ran both times count as flipped."""
    before = _tests_for("flops", [True, True, False])
    before[2]["extra_data"]["outcome"] = "not_run"
    after = _tests_for("flops", [True, True, True])
    students = [{"key": "a", "status": "graded", "who": [], "code": {}, "repeats": [],
                 "results": {"score": 3.0, "tests": after},
                 "previous": {"why": "other grader or tests", "results": {"score": 2.0, "tests": before}}}]
    assert build(students)["regrades"] == []


def test_notes_for_review_come_first_by_the_students_names():
    """A note for review (seam/review.py) is what a TA must read: the page's first section, by the
    student's name, with the place, the construct and the points at stake; escaped like the rest."""
    from seam.review import note
    evil = '<b onmouseover="x">thread</b>'
    tests = _tests_for("flops", [True, True])
    noted = {**note("flops.py", 12, "threads", evil), "at_stake": 7.0}
    students = [{"key": "s1", "status": "graded", "who": ["Ada Lovelace"], "code": {},
                 "results": {"score": 2.0, "tests": tests, "extra_data": {"review": [noted]}}},
                {"key": "s2", "status": "graded", "who": ["Alan Turing"], "code": {},
                 "results": {"score": 2.0, "tests": _tests_for("flops", [True, True])}}]
    report = build(students)
    assert [(r["student"], r["file"], r["line"], r["kind"], r["at_stake"]) for r in report["review"]] == [
        ("s1", "flops.py", 12, "threads", 7.0)]
    page = render(report, {})
    assert page.index("Notes for review") < page.index("<h2>Scores</h2>")
    assert "Ada Lovelace" in page[page.index("Notes for review"):page.index("<h2>Scores</h2>")]
    parser = _Tags()
    parser.feed(page)
    assert "b" not in parser.tags and not any(a.startswith("on") for a in parser.attrs)
    assert "Alan Turing" not in page[page.index("Notes for review"):page.index("<h2>Scores</h2>")]
