"""report.py's pure functions: facts -> results.json (schema-valid) -> score table."""

import json
import re

import jsonschema
import pytest

from grader.plugin import Fact
from grader.report import build_results, render_table, validate, write_results


def facts():
    return [
        Fact("tests/hidden/test_flops.py::b", "flops", "hidden flops", 2, "after_published", False, "passed"),
        Fact("tests/public/test_tensors.py::a", "tensors", "offsets", 1, "visible", False, "failed",
             "element_offset((3, 4), (4, 1), (1, 2))\n  expected: 6\n  got:      7"),
        Fact("tests/public/test_flops.py::a", "flops", "linear", 3, "visible", False, "passed"),
        Fact("tests/hidden/test_optim.py::g", "optim", "gpu memory", 2, "after_published", True, "not_run",
             "not run: needs CUDA"),
    ]


def test_build_results_scores_numbers_and_orders():
    results = build_results(facts(), 1.5, ["note"])
    validate(results)
    assert results["score"] == 5
    assert [t["number"] for t in results["tests"]] == ["1.1", "3.1", "3.2", "8.1"]
    assert [t["name"] for t in results["tests"]][:2] == ["tensors: offsets", "flops: linear"]
    gpu = results["tests"][-1]
    assert gpu["status"] == "failed" and gpu["score"] == 0 and "not run" in gpu["output"]
    assert gpu["extra_data"] == {"outcome": "not_run", "test": "tests/hidden/test_optim.py::g", "functions": []}
    # each test keeps its id, by which `history` matches it across grades (never by its number)
    assert results["tests"][0]["extra_data"] == {"test": "tests/public/test_tensors.py::a", "functions": []}
    assert results["output"].splitlines()[0] == "Score: 5/6 graded (2 points in 1 test not run: needs CUDA)"


def test_table_shows_expected_and_got():
    table = render_table(build_results(facts(), 1.0, []))
    assert "expected: 6" in table and "got:      7" in table
    assert table.splitlines()[-1].startswith("Score: 5/6 graded")


def test_not_run_is_shown_as_not_run_not_as_a_failure():
    """A GPU test on a CPU machine: NOT RUN with its reason, never FAIL; the score line keeps it
    apart from what was graded (a reference solution must not look broken)."""
    table = render_table(build_results(facts(), 1.0, ["sandbox: test"]))
    assert "NOT RUN 8.1 optim: gpu memory (2 pt)" in table and "FAIL 8.1" not in table
    assert "not run: needs CUDA" in table
    assert table.splitlines()[0] == "sandbox: test"
    all_ran = [f for f in facts() if f.outcome != "not_run"]
    line = build_results(all_ran, 1.0, [])["output"]
    assert line == "Score: 5/6"


def test_an_unusable_submission_reads_cause_first_and_one_line_per_problem():
    missing = [Fact(f"tests/public/test_{p}.py::t{i}", p, f"t{i}", 1, "visible", False, "failed",
                    f"{p}.py is missing from the submission") for p in ("tensors", "flops") for i in range(5)]
    cause = "no problem modules found in the submission (it is empty). Expected layout: ..."
    results = build_results(missing, 1.0, [cause])
    table = render_table(results)
    lines = table.splitlines()
    assert lines[0] == cause and table.count(cause) == 1
    fails = [line for line in lines if line.startswith("FAIL")]
    assert fails == ["FAIL 1 tensors: all 5 tests (5 pt): tensors.py is missing from the submission",
                     "FAIL 3 flops: all 5 tests (5 pt): flops.py is missing from the submission"]
    assert table.count("is missing") == 2


@pytest.mark.parametrize("mutate", [
    lambda r: r.pop("tests"), lambda r: r.update(score="5"), lambda r: r["tests"][0].update(status="ok"),
    lambda r: r["tests"][0].update(visibility="public"), lambda r: r["tests"][0].pop("max_score"),
    lambda r: r.update(extra=1), lambda r: r["tests"][0].update(extra_data={"outcome": "skipped"})])
def test_schema_rejects_malformed(mutate):
    results = build_results(facts(), 1.0, [])
    mutate(results)
    with pytest.raises(jsonschema.ValidationError):
        validate(results)


def test_write_is_atomic_and_validated(tmp_path):
    out = tmp_path / "deep" / "results.json"
    good = build_results(facts(), 1.0, [])
    write_results(good, out)
    assert json.loads(out.read_text()) == good
    bad = dict(good, score=-1)
    with pytest.raises(jsonschema.ValidationError):
        write_results(bad, out)
    assert json.loads(out.read_text()) == good          # the old file is untouched
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]  # no temp file left


def test_a_named_mistake_is_a_field_of_the_failed_test_only():
    """results.json names a failure's mistake as data (the class report ranks them), with its
    handout section; a passed test carries none, whatever it recorded."""
    mistake = (("a multiply-add as 1 FLOP", "flops"),)
    facts = [Fact("tests/hidden/test_flops.py::m", "flops", "matmul", 2, "after_published", False, "failed",
                  "got 1\nexpected 2", mistakes=mistake),
             Fact("tests/hidden/test_flops.py::n", "flops", "linear", 2, "after_published", False, "passed",
                  mistakes=mistake)]
    results = build_results(facts, 0.0, [])
    validate(results)
    by_title = {t["name"]: t["extra_data"] for t in results["tests"]}
    assert by_title["flops: matmul"]["mistakes"] == [{"name": "a multiply-add as 1 FLOP",
                                                      "handout": "assignment/problems/flops.md"}]
    assert "mistakes" not in by_title["flops: linear"]


def test_a_note_for_review_takes_no_point_and_says_what_is_at_stake():
    """A note (seam/review.py) is kept in extra_data.review with the points of its module's ruled
    functions and how checks; the score is the same as without it; the summary says it under the
    score line; a merge of two passes keeps each note once."""
    from grader.batch.merge import join_results
    from seam.review import note
    graded = facts()
    graded[0].functions = ("flops.matmul_flops",)   # a ruled function: its 2 points are at stake
    graded[2].how = "detected"                      # a how check: its 3 points too
    noted = [note("flops.py", 9, "threads", "threading.Thread"), note("tensors.py", 1, "gc", "gc.get_objects")]
    plain, results = build_results(graded, 1.0, []), build_results(graded, 1.0, [], review=noted)
    validate(results)
    assert results["score"] == plain["score"] and [t["score"] for t in results["tests"]] == [
        t["score"] for t in plain["tests"]]
    assert [(n["file"], n["at_stake"]) for n in results["extra_data"]["review"]] == [("flops.py", 5.0), ("tensors.py", 0.0)]
    lines = results["output"].splitlines()
    assert lines[0] == plain["output"].splitlines()[0]
    assert lines[1].startswith("review (in the text): flops.py:9: threads (threading.Thread)")
    assert "5 points would be at stake" in lines[1] and "no point is taken" in lines[1]
    merged = join_results("s", [("cpu", results), ("again", {**results, "tests": []})])
    assert len(merged["extra_data"]["review"]) == 2


# What text.clean removes or spells out: C0 but the newline, DEL, C1, bidi controls, U+2028/9, the
# BOM, and lone surrogates.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069"
                    "\u2028\u2029\ufeff\ud800-\udfff]")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_results_json_holds_the_notes_only_sanitised(tmp_path):
    """Every string of extra_data.review, of the rules broken and of the summary passes the one
    sanitiser (grader/text.py): notes from the text of a module that spells escapes, bidi controls
    and line separators inside the constructs the review quotes, and notes as a merge reads them
    back from a results.json (whatever it holds)."""
    from seam.review import note, scan
    folder = tmp_path / "s"
    folder.mkdir()
    planted = "\u202e\x1b[31m\u2028\u2066\x07<b>"
    (folder / "flops.py").write_text(f'import importlib, sys\nm = importlib.import_module("seam.{planted}")\n'
                                     f'f = getattr(sys, "_getframe{planted}")\ng = getattr(sys, "_getframe")\n',
                                     encoding="utf-8")
    scanned = scan(folder)
    assert {n["kind"] for n in scanned} >= {"the grader", "imports by name", "frames"}
    read_back = {**note("tensors.py", 1, "gc", f"gc.get_objects{planted}\ud800"), "why": f"{planted}x", "instead": "\r\ny"}
    results = build_results(facts(), 1.0, [f"a note{planted}"], violations={"optim.AdamW": f"torch.optim.AdamW{planted}"},
                            review=[*scanned, read_back])
    written = json.loads(write_results(results, tmp_path / "results.json").read_text())
    strings = [*_strings(written["extra_data"]), written["output"], *_strings(written["tests"])]
    assert not [s for s in strings if UNSAFE.search(s)], [s for s in strings if UNSAFE.search(s)]
    kept = {n["construct"] for n in written["extra_data"]["review"]}
    assert "gc.get_objects[31m<b>\\ud800" in kept  # the rest kept as text: the HTML report escapes it


def _noted(file: str, line: int, kind: str, seen: str = "in the text") -> dict:
    from seam.review import RUNTIME, note
    words = {"profilers": "profiler replaced", "threads": "thread ran"}
    construct = RUNTIME[words[kind]][1] if seen == "at run time" else f"{kind} construct"
    return note(file, line, kind, construct, seen)


def test_the_summary_counts_notes_by_kind_and_shows_those_seen_at_run_time_first():
    """A hundred notes of one kind hide neither another kind nor what the watch saw at run time:
    the summary shows the notes seen at run time first, one of each kind in turn, then how many of
    each kind there are across files."""
    from grader.report import SHOWN_NOTES
    flood = [_noted("flops.py", i, "frames") for i in range(1, 101)]
    review = [*flood, _noted("tensors.py", 4, "gc"), _noted("optim.py", 0, "profilers", "at run time"),
              _noted("optim.py", 7, "threads", "at run time")]
    results = build_results(facts(), 1.0, [], review=review)
    validate(results)
    lines = results["output"].splitlines()[1:]
    assert len(lines) == SHOWN_NOTES + 1 and len(results["extra_data"]["review"]) == 103
    assert lines[0].startswith("review (at run time): optim.py: profilers (a profiler of theirs in place")
    assert lines[1].startswith("review (at run time): optim.py:7: threads (a thread of theirs ran")
    assert [line.split(": ")[1] for line in lines[2:SHOWN_NOTES]] == ["flops.py:1", "tensors.py:4", "flops.py:2", "flops.py:3"]
    assert lines[-1] == ("review: 103 notes: 100 frames, 1 gc, 1 profilers, 1 threads; 97 not written out here "
                         "(extra_data.review has them all)")
    assert render_table(results).splitlines()[:SHOWN_NOTES + 1] == lines


def test_the_first_screen_puts_run_time_notes_first_and_counts_the_rest_by_kind():
    """The first screen's notes for review: the uploads with notes seen at run time first, each
    line naming its first notes in the summary's order (a student's name made one line, without
    its escapes) and counting them by kind where some are not named; each kind's advice once."""
    from grader.batch.firstscreen import first_screen, lines

    def upload(key: str, name: str, review: list[dict]):
        return {"key": key, "who": [name], "status": "graded", "missing": [],
                "results": build_results(facts(), 1.0, [], review=review)}

    text_only = upload("s1", "Ada", [*(_noted("flops.py", i, "frames") for i in range(1, 51)), _noted("tensors.py", 2, "gc")])
    seen = upload("s2", "Bob\x1b[2J\u202e", [_noted("flops.py", 1, "frames"), _noted("optim.py", 3, "threads", "at run time")])
    said = lines(first_screen([text_only, seen]))
    assert said[0].startswith("act on: notes for review (no point taken): 2 student(s) (")
    assert said[1].startswith("  Bob[2J (s2): optim.py:3 threads (at run time); flops.py:1 frames: ")
    assert said[2].startswith("  Ada (s1): flops.py:1 frames; tensors.py:2 gc; flops.py:2 frames (51 notes: 50 frames, 1 gc): ")
    from seam.review import KINDS
    assert said[3:6] == [f"  advice: {k}: {KINDS[k][1]}" for k in ("frames", "gc", "threads")]
