"""Pure functions from test facts to Gradescope's results.json and to the terminal table."""

import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import jsonschema

from tests.seam.layout import PROBLEMS, problem_number
from .paths import SCHEMA


def _order(fact) -> tuple:
    """Problem by problem, public before hidden; within that, the order the tests are written
    in (facts arrive in collection order and the sort is stable)."""
    return (problem_number(fact.problem), fact.visibility != "visible")


def build_results(facts, execution_time: float, notes: list[str], gpu: str) -> dict:
    """results.json as Gradescope reads it; one entry per test, numbered <problem>.<k>."""
    tests, counters = [], {}
    for fact in sorted(facts, key=_order):
        k = counters[fact.problem] = counters.get(fact.problem, 0) + 1
        k = fact.index if fact.index is not None else k
        passed = fact.outcome == "passed"
        output = fact.message or ("passed" if passed else "did not run")
        tests.append({
            "name": f"{fact.problem}: {fact.title}",
            "number": f"{problem_number(fact.problem)}.{k}",
            "score": fact.points if passed else 0.0,
            "max_score": fact.points,
            "status": "passed" if passed else "failed",
            "output": output,
            "visibility": fact.visibility,
        })
    score = sum(t["score"] for t in tests)
    total = sum(t["max_score"] for t in tests)
    summary = [f"Score: {score:g}/{total:g}"] + notes
    not_run = sum(1 for f in facts if f.outcome == "not_run")
    if not_run:
        summary.append(f"{not_run} GPU test(s) not run: no CUDA here; they are graded on a CUDA "
                       f"runner (--gpu {gpu}).")
    return {"score": score, "execution_time": round(execution_time, 3),
            "output": "\n".join(summary), "tests": tests}


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(Path(SCHEMA).read_text())


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError unless ``results`` matches the repository's schema."""
    jsonschema.validate(results, _schema())


def write_atomically(results: dict, out: Path) -> None:
    """Validate, then write via a temporary file and rename: a reader never sees half a file."""
    validate(results)
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results-", dir=out.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600: a TA outside the container must read it
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


def per_problem(results: dict) -> list[dict]:
    rows = {p: {"problem": p, "score": 0.0, "max": 0.0, "failed": []} for p in PROBLEMS}
    for t in results["tests"]:
        row = rows[t["name"].split(":", 1)[0]]
        row["score"] += t["score"]
        row["max"] += t["max_score"]
        if t["status"] != "passed":
            row["failed"].append(t)
    return [r for r in rows.values() if r["max"]]


def render_table(results: dict, max_lines: int = 6) -> str:
    """The score table for a terminal: one row per problem, then what failed and why."""
    rows = per_problem(results)
    width = max(len(r["problem"]) for r in rows) if rows else 10
    out = [f"{'#':>2}  {'problem':<{width}}  {'points':>11}  failed"]
    for r in rows:
        out.append(f"{problem_number(r['problem']):>2}  {r['problem']:<{width}}  "
                   f"{r['score']:>5g} / {r['max']:<3g}  {len(r['failed']) or ''}")
    for r in rows:
        for t in r["failed"]:
            lines = t["output"].splitlines() or [""]
            shown = lines[:max_lines] + (["  ..."] if len(lines) > max_lines else [])
            out.append(f"\nFAIL {t['number']} {t['name']} ({t['max_score']:g} pt)")
            out.extend("    " + line for line in shown)
    out.append("")
    out.append(results["output"])
    return "\n".join(out)
