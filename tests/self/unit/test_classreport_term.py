"""The class report on a real term's class: students by the roster's names, an
upload of the stubs as given counted as "not attempted", what hung or crashed listed, and a small
class's page without the sections that say nothing."""

import ast
import random
from html.parser import HTMLParser

from grader.batch.firstscreen import same_tree
from grader.classreport import build, not_attempted, summary
from grader.classreport.html import SMALL, render
from grader.paths import problem_file
from seam.problems import PROBLEMS

STUB = problem_file("flops", "stub").read_text()
REFERENCE = problem_file("flops", "reference").read_text()


def _tests(passed: list[bool], problem: str = "flops", number: int = 3) -> list[dict]:
    return [{"name": f"{problem}: test {k}", "number": f"{number}.{k}", "score": 1.0 if ok else 0.0,
             "max_score": 1.0, "status": "passed" if ok else "failed",
             "output": "passed" if ok else "NotImplementedError", "visibility": "visible", "tags": [problem],
             "extra_data": {"functions": []}} for k, ok in enumerate(passed, 1)]


def _student(key: str, passed: list[bool], code: str, who=(), incidents=None, status="graded", error=None):
    results = {"score": float(sum(passed)), "tests": _tests(passed),
               "extra_data": {"incidents": incidents} if incidents else {}}
    return {"key": key, "status": status, "who": list(who), "code": {"flops": code} if code else {},
            "results": results if status == "graded" else None, "repeats": [], "previous": None, "error": error}


def test_the_stubs_as_given_are_no_attempt_and_a_comment_changes_nothing():
    assert not_attempted({p: problem_file(p, "stub").read_text() for p in PROBLEMS}) == list(PROBLEMS)
    commented = "# I will do this later\n\n" + STUB + "\n\n# (nothing yet)\n"
    assert "flops" in not_attempted({"flops": commented})
    assert "flops" not in not_attempted({"flops": STUB.replace("raise NotImplementedError", "return 0", 1)})
    assert "flops" not in not_attempted({"flops": REFERENCE})
    assert "flops" not in not_attempted({"flops": "def broken(:\n"}), "a syntax error is an attempt"
    assert not_attempted({}) == [], "no module kept says nothing (such an upload is 'empty', never graded)"


def _dumped_equal(a: str, b: str) -> bool:
    """The definition: the same syntax tree, as ast.dump writes it."""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False


def test_the_quick_reading_is_the_dumped_trees_reading():
    """``not_attempted`` compares trees level by level and skips an ASCII module with fewer
    NotImplementedError than the stub's tree: the same answer as comparing the two trees' dumps,
    on the stubs reformatted, recommented, with non-ASCII text or a name spelled in fullwidth
    letters (Python reads it NFKC-normalised: the same tree), with one function written, with
    one constant retyped (1 -> 1.0, True -> 1: the same by ==, not by dump), and on every
    variant the synthetic class draws from."""
    from tests.self.synthetic_class import disguise, variants
    rng = random.Random(0)
    texts = {p: [] for p in PROBLEMS}
    for p in PROBLEMS:
        stub = problem_file(p, "stub").read_text()
        texts[p] += [stub, ast.unparse(ast.parse(stub)), "# TODO\n" + stub, "# à faire\n" + stub,
                     stub.replace("NotImplementedError", "NotImplementedError  # NotImplementedError", 1),
                     stub.replace("raise NotImplementedError", "return None", 1),
                     stub.replace("raise NotImplementedError", "raise NotImplementedError  # é", 1),
                     stub.replace("raise NotImplementedError", "raise \uff2eotImplementedError", 1),  # (NFKC: the same Name)
                     disguise(stub, 1, heavy=False), disguise(stub, 2)]
        for old, new in ((" 1\n", " 1.0\n"), ("(1)", "(1.0)"), ("= 0\n", "= 0.0\n"), ("True", "1")):
            if old in stub:
                texts[p].append(stub.replace(old, new, 1))
    for v in variants():
        texts[v.problem].append(v.text)
    compared = stubs = 0
    for p, group in texts.items():
        stub = problem_file(p, "stub").read_text()
        for text in group:
            assert (p in not_attempted({p: text})) == _dumped_equal(text, stub), (p, text[:200])
            stubs += _dumped_equal(text, stub)
            compared += 1
        for a, b in (rng.sample(group, 2) for _ in range(5)):
            assert same_tree(ast.parse(a), ast.parse(b)) == (ast.dump(ast.parse(a)) == ast.dump(ast.parse(b)))
    assert compared > 150 and stubs >= 6 * len(PROBLEMS), (compared, stubs)


def test_a_stub_upload_is_not_attempted_and_stays_out_of_the_item_analysis():
    """Ten students: five correct, four who fail test 3.2, one who handed in the stub. The stub's
    student is 'not attempted', by name; test 3.2's pass rate and failure count are the
    attempters' alone; the total still counts the stub's 0 (it is the grade)."""
    students = [_student(f"s{i}", [True, i >= 4, True], REFERENCE, who=[f"Student {i}"]) for i in range(9)]
    students.append(_student("lazy", [False, False, False], STUB, who=["Ada Lovelace", "Alan Turing"]))
    report = build(students)
    assert report["statuses"] == {"not attempted": ["lazy"]}
    assert report["names"]["lazy"] == "Ada Lovelace, Alan Turing"
    items = {i["number"]: i for i in report["items"]}
    assert items["3.2"]["n"] == 9 and items["3.2"]["pass_rate"] == 5 / 9
    assert items["3.1"]["pass_rate"] == 1.0, "the stub's failures are not the test's"
    assert report["messages"] == [{"number": "3.2", "name": "flops: test 2", "message": "NotImplementedError",
                                   "students": 4}]
    flops = next(p for p in report["problems"] if p["problem"] == "flops")
    assert flops["n"] == 9 and flops["not_attempted"] == ["lazy"]
    assert report["total"]["n"] == 10 and report["total"]["zero"] == 1
    assert "not attempted: 1 (Ada Lovelace, Alan Turing (lazy))" in summary(report)


def test_what_hung_or_crashed_is_listed_by_student():
    students = [
        _student("s1", [True, False, True], REFERENCE, who=["Grace Hopper"],
                 incidents={"flops.matmul_flops": ["it timed out", "it timed out"], "flops.py": ["kills the worker"]}),
        _student("s2", [True, True, True], REFERENCE),
        _student("s3", [], REFERENCE, who=["Edsger Dijkstra"], status="crashed", error="the job was killed (signal 9)"),
    ]
    students[0]["results"]["tests"][1]["extra_data"]["functions"] = ["flops.matmul_flops"]
    report = build(students)
    assert report["messages"] == [], "a failure of the function that hung is listed under it, not again"
    # the points lost: the failed tests that call the function (3.2), and those of the module that
    # broke its worker (flops.py: every failed flops test, 3.2 again); a crashed grading, every point
    assert report["incidents"] == [
        {"student": "s1", "what": "flops.matmul_flops", "how": [("it timed out", 2)], "points": 1.0},
        {"student": "s1", "what": "flops.py", "how": [("kills the worker", 1)], "points": 1.0},
        {"student": "s3", "what": "the grading", "how": [["the job was killed (signal 9)", 1]], "points": 3.0}]
    lines = summary(report)
    assert lines[1].startswith("act on: did not import, hung, crashed or killed the grader's worker: 2 student(s) (")
    assert lines[2:4] == [
        "  Grace Hopper (s1): flops.matmul_flops: it timed out ×2; flops.py: kills the worker: 1 points lost",
        "  Edsger Dijkstra (s3): the grading crashed (the job was killed (signal 9)): no grade yet, run the batch "
        "again: 3 points not graded"], lines
    page = render(report, {})
    assert '<h2 id="incidents">Did not import, timeouts and crashes</h2>' in page and "Grace Hopper (s1)" in page
    assert "it timed out ×2" in page and "the job was killed (signal 9)" in page


class _Text(HTMLParser):
    """The page's headings (h2/h3), its folded summaries and its text outside <details>."""

    def __init__(self):
        super().__init__()
        self.headings, self.folded, self._in, self._depth = [], [], None, 0

    def handle_starttag(self, tag, attrs):
        self._depth += tag == "details"
        self._in = tag if tag in ("h2", "h3", "summary") else self._in

    def handle_endtag(self, tag):
        self._depth -= tag == "details"
        self._in = None if tag in ("h2", "h3", "summary") else self._in

    def handle_data(self, data):
        if self._in == "summary":
            self.folded.append(data)
        elif self._in in ("h2", "h3") and not self._depth:
            self.headings.append(data)


def _page(n: int) -> _Text:
    students = [_student(f"s{i}", [True, i % 2 == 0, i % 3 == 0, i % 2 == 0], REFERENCE) for i in range(n)]
    parser = _Text()
    parser.feed(render(build(students), {}))
    return parser


def test_a_small_class_folds_its_noise_and_names_the_empty_sections_once():
    small = _page(9)
    assert small.headings == ["What to act on", "Scores", "What to re-teach",
                              "Common failures without a named mistake"], small.headings
    assert any(f.startswith("Item analysis (4 tests; folded: a class of 9)") for f in small.folded)
    assert any(f.startswith("Tests with the same outcome for every student") for f in small.folded)
    page = render(build([_student(f"s{i}", [True, i % 2 == 0], REFERENCE) for i in range(9)]), {})
    quiet = page[page.index("Nothing to report"):]
    for section in ("modules that do not import, timeouts and crashes", "named mistakes", "honest-work violations", "similar code (not compared)"):
        assert section in quiet
    large = _page(SMALL)
    assert "Item analysis" in large.headings, "a class of 20 shows its item analysis open"
    assert large.folded == ["Tests with the same outcome for every student (1 groups)"], "that note is always folded"


def test_similar_pairs_of_two_uploads_are_one_row():
    """A student whose every module matches the reference is one row, its problems in it."""
    from grader.classreport.similarity import REFERENCE_NAME
    pair = lambda problem, score: {"problem": problem, "a": "s1", "b": REFERENCE_NAME, "score": score,  # noqa: E731
                                   "a_share": score, "b_share": score}
    report = build([_student("s1", [True], REFERENCE, who=["Ada Lovelace"])],
                   {"threshold": 0.5, "compared": 2, "candidates": 2,
                    "pairs": [pair("flops", 0.97), pair("optim", 0.9)]})
    page = render(report, {})
    assert page.count("Ada Lovelace (s1)") == 1 and "flops (0.97), optim (0.90)" in page
