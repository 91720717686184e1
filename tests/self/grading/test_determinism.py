"""The same submission graded twice gets the same score and the same messages.

Two separate `python -m grader grade` processes, each with its own PYTHONHASHSEED (so set and
dict-of-set orders, object ids and the like differ between them), grade one submission that
fails something in every problem: the reference with one planted bug per problem, the
misconceptions among them, so named-mistake messages are compared too. Every results.json must
be identical apart from the run's wall-clock facts (execution times, the grading date).

What makes this hold: every test draws its inputs from a fixed seed (random.Random(seed),
torch.Generator().manual_seed(seed)); the statistical tests (modules' initialisation) bound
their false-alarm rate and state it next to the bound; timing is checked under a fake clock;
and no message prints an address, a temporary path or a duration."""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from grader.paths import ROOT
from seam.problems import PROBLEMS
from tests.self.bugs import all_bugs
from tests.self.submissions import reference_text, reference_with

TIMES = 2  # one round of two on CI's two cores, each under its own hash seed (four, two rounds,
           # cost the suite ~32 s more; the two seeds already reorder every set and dict of sets)
VOLATILE = {"execution_time", "graded_at", "time"}  # wall-clock facts of one run, not of the grade


def composite(dest):
    """The reference with, in each problem's module, the first of its planted bugs that names a
    mistake (else its first bug)."""
    chosen = {}
    for problem in PROBLEMS:
        bugs = [b for b in all_bugs() if b.problem == problem]
        bug = next((b for b in bugs if b.mistake), bugs[0])
        chosen[problem] = bug.apply(reference_text(problem))
    return reference_with(dest, chosen)


def stable(value):
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def grade_once(submission, out, seed: int) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(submission), "--out", str(out), "--quiet",
                           "--gpu", "skip"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def test_two_grades_are_identical(tmp_path):
    submission = composite(tmp_path / "submission")
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda i: grade_once(submission, tmp_path / f"results{i}.json", seed=i), range(TIMES)))
    first = stable(runs[0])
    assert 0 < first["score"] < sum(t["max_score"] for t in first["tests"]), "the composite must lose some points"
    named = sum("known mistake:" in t.get("output", "") for t in first["tests"])
    assert named >= 4, f"only {named} failure(s) name a mistake"
    for i, run in enumerate(runs[1:], start=1):
        other = stable(run)
        assert other["score"] == first["score"], f"run {i} scored {other['score']}, run 0 {first['score']}"
        differ = [a.get("name") for a, b in zip(first["tests"], other["tests"]) if a != b]
        assert not differ and len(first["tests"]) == len(other["tests"]), f"run {i} differs from run 0 in {differ}"
        assert other == first
