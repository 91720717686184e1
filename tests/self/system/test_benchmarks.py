"""Every script in benchmarks/ runs here in its smoke mode: its own code paths on the
least that exercises them (one cheap problem, one submission, one pair, a clone of HEAD), so
that a change elsewhere that breaks one fails here instead of in the next maintainer's hands. What
is checked is the shape of what it prints, never a time: the figures of a smoke run mean nothing.

``SMOKE`` is the list: script -> (its arguments, the lines its output must hold). A script tested
by a file of its own is in ``ELSEWHERE``; tests/self/repo/test_benchmarks_kept.py fails on a
script in neither, and on a benchmark that spells a layout the registry or the batch defines.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from grader.paths import ROOT
from seam.problems import LAYOUT

# The cheapest problem to grade (one sandboxed grade of it is ~5 s on 2 cores), and a test file of
# the suite that runs in about a second.
CHEAP = "memory"
SMALL_TESTS = "tests/self/unit/test_codec.py"
NUMBER = r"-?[\d.]+"

SMOKE: dict[str, tuple[list[str], list[str]]] = {
    "batch_throughput": (["--only", CHEAP, "--size", "1"], [
        rf"^  grade correct0 +{NUMBER} s$",
        rf"^1 submissions \({CHEAP}\), ",
        rf"^sequential `grade` calls: +{NUMBER} s",
        rf"^`batch --jobs 2`: +{NUMBER} s",
        rf"^speed-up: +{NUMBER}x$",
        rf"^scores: correct0={NUMBER}$",
        r"^batch scores == grade scores, test by test, for all 1 submissions$"]),
    "class_report": (["--problems", CHEAP, "--sizes", "6", "12"], [
        r"^graded \d+ variants once in",
        *(rf"^ +{n} students: report +{NUMBER} s, similarity +{NUMBER} s \(\d+ comparisons, \d+ candidate "
          rf"pairs, \d+ flagged\)$" for n in (6, 12)),
        *(rf"^ +{n} students: the whole report +{NUMBER} s$" for n in (6, 12)),
        r"^size  report  similarity",
        rf"^ +12 +{NUMBER} +{NUMBER} +x2\.0 -> x"]),
    "gradescope_settings": (["--only", CHEAP, "--submissions", "stubs"], [
        r"^submission +seconds +peak PSS GiB +cgroup peak GiB +score$",
        rf"^stubs +{NUMBER} +{NUMBER} +({NUMBER}|n/a) +Score: 0/\d+$",
        r"^total to enter on Gradescope: \d+ \(the rubric's \d+ less \d+ GPU points\)$",
        r"^time bound from the limits: \d+ min",
        r"^a worker may hold [\d.]+ GiB beyond torch's own"]),
    "honest_cost": (["--pairs", "1", "--problems", CHEAP, "--grade-only"], [
        r"^problem +unwatched s +watched s +ratio$",
        rf"^{CHEAP} +{NUMBER} +{NUMBER} +{NUMBER}$",
        rf"^all of them +{NUMBER} +{NUMBER} +{NUMBER}$",
        rf"^the watch adds {NUMBER} s; `grade reference --gpu skip --only {CHEAP}` took {NUMBER} s"]),
    "house": (["HEAD"], [
        r"^=== HEAD \([0-9a-f]+\)$",
        r"^  grader/  \(\d+\) .*\bgrade\.py\b",
        r"^clone pairs in grader/: -?\d+$",
        r"^isolation-mode decisions: \d+ in \d+ files: \{",
        r"^per-problem paths spelled in place: \d+ in \d+ files: \{",
        rf"^kinds of file a problem has \(seam\.problems\.LAYOUT\): {len(LAYOUT)}$"]),
    "margins": (["--problems", CHEAP, "--platforms", "1", "--most", "1", "--mutants", "0", "--jobs", "1"], [
        r"^\d+ of \d+ toleranced checks run under 10x on a side",
        r"^\| test \| tolerance \| worst correct \| closest mistake \| why \|$",
        rf"^\| `(public|hidden)/test_{CHEAP}\.py::\w+` \| rtol=.* \| {NUMBER}(e-?\d+)? "
        r"\(reference \(as installed\)\)"]),
    "reply_frames": (["--no-flood"], [
        r"^submission +grader peak +x normal +seconds +x normal +score$",
        rf"^reference +{NUMBER} GiB +1\.00 +{NUMBER} +1\.00 +{NUMBER}$"]),
    "sandbox_overhead": (["--pairs", "1", "--only", CHEAP], [
        rf"^pair 1: in-process pytest +{NUMBER} s, grade reference \(sandboxed\) +{NUMBER} s, ratio {NUMBER}x$",
        rf"^median ratio sandboxed / in-process over 1 pairs: {NUMBER}x$"]),
    "shortcut_keeps": ([], [
        r"^rule +points +kept by the best shortcut with the watch blinded$",
        rf"^AdamW written by hand +12 +{NUMBER} pt",
        rf"^all rules +\d+ +{NUMBER} pt$"]),
    "suite_time": (["HEAD", "--no-install", "--select", SMALL_TESTS, "--coverage", "--cpu"], [
        r'^\{"rev": "HEAD", "tests": \d+, .*"summary": "\d+ passed',
        rf"^ +HEAD +{NUMBER} s +1\.00x +\d+ tests +\d+ passed"]),
    "upload_shapes": (["--only", CHEAP, "--shapes", "1", "--jobs", "1"], [
        r"^\| upload shape +\| score \| seconds \|$",
        r"^\| bare modules \(folder\) \| \d+/\d+ \| \d+ \|$",
        r"^every shape scores as the bare modules \(Score: \d+/\d+\): yes$"]),
}
ELSEWHERE = {"gpu_check": "tests/self/system/test_gpu_check.py",  # --dry-run-cpu, its own file
             "cpu_plugin": "tests/self/system/test_benchmarks.py"}  # a plugin: suite_time --cpu loads it


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    """The script as a maintainer runs it: from a shell (none of this pytest's PYTEST_* variables:
    suite_time runs a pytest of its own, margins reads PYTEST_CURRENT_TEST)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{script} {' '.join(args)}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n" \
                                 f"{proc.stderr[-3000:]}"
    return proc


@pytest.mark.parametrize("script", sorted(set(SMOKE) - {"suite_time"}))
def test_the_smoke_run_prints_its_figures(script):
    args, lines = SMOKE[script]
    out = run(script, *args).stdout
    missing = [pattern for pattern in lines if not re.search(pattern, out, re.M)]
    assert not missing, f"{script}: no line matches {missing} in:\n{out[-3000:]}"


def test_suite_time_runs_a_clone_of_head_and_keeps_its_figures(tmp_path):
    """suite_time also writes the collected ids and times.json: the same count as it prints."""
    args, lines = SMOKE["suite_time"]
    out = run("suite_time", *args, "--out", str(tmp_path)).stdout
    missing = [pattern for pattern in lines if not re.search(pattern, out, re.M)]
    assert not missing, f"no line matches {missing} in:\n{out}"
    [row] = json.loads((tmp_path / "times.json").read_text())
    ids = (tmp_path / "HEAD.ids").read_text().splitlines()
    assert row["tests"] == len(ids) > 0 and all(i.startswith(SMALL_TESTS + "::") for i in ids)
    assert row["summary"].startswith(f"{len(ids)} passed") and set(row["coverage"]) == {"grader", "seam"}
    # --cpu (benchmarks/cpu_plugin.py): every test measured (CPU seconds of its processes and
    # theirs), or why none could be
    assert row["cpu"].get("unmeasured") or (row["cpu"]["tests_measured"] == len(ids) and row["cpu"]["cpu_s"] > 0
                                            and list(row["cpu"]["dearest_files"]) == [SMALL_TESTS]), row["cpu"]
    assert re.search(r"^ +CPU, dearest files: ", out, re.M), out


def test_suite_time_fast_only_times_the_fast_loop_alone(tmp_path):
    """--fast-only: the fast loop's time and summary, no whole-suite run (its row has no wall_s)."""
    out = run("suite_time", "HEAD", "--no-install", "--select", SMALL_TESTS, "--fast-only", "--out", str(tmp_path)).stdout
    assert re.search(rf"^ +HEAD +{NUMBER} s +1\.00x +\d+ tests +fast: \d+ passed.* CPU {NUMBER} s$", out, re.M), out
    [row] = json.loads((tmp_path / "times.json").read_text())
    assert "wall_s" not in row and row["fast_s"] > 0 and re.match(r"\d+ passed", row["fast_summary"]), row
    assert row["fast_cpu_s"] > 1, "a Python start and a collection cost more than a CPU second"
