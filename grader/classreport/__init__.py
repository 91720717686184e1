"""The class report: where the class struggled, which tests to doubt, who copied.

    python -m grader report OUT_DIR [--archive DIR] [--no-similarity]

reads a batch's (or merge's) output folder (grader/batch/output.py) and writes
``OUT_DIR/report.json`` (every figure: ``build``), ``OUT_DIR/report.html`` (one self-contained
page: ``html.render``) and prints a short summary. It changes no grade: the similarity pairs are
evidence for a person to look at. batch and merge run it at their end.

- what to act on, first (actions.py: batch/firstscreen.py's first screen, the terminal's too,
  with the likely copies added): the students charged, the modules that do not import and what
  hung or crashed, the notes for review with each kind's advice, the uploads at zero, likely
  copies, each by name with its points; below them the partial uploads, counted; the GPU points
  a CPU pass left, said once;
- scores: the total's and each problem's distribution (stats.describe; a problem's over the
  students who attempted it), the statuses (not found, empty, ambiguous, crashed, interrupted, not attempted:
  every module the stub as given, and the students whose tests not run differ from the class's) and
  whom they concern, by the roster's names;
- timeouts and crashes: each function that hung or crashed a worker (results.json
  ``extra_data.incidents``), each grading that crashed, per student;
- items: each graded test's difficulty, discrimination and flags (stats.item_analysis), over the
  students who attempted its problem (a stub's failures say nothing of a test); the groups of
  tests with one outcome pattern (``redundant``), a note, never a doubt;
- what to re-teach: the named mistakes (results.json ``extra_data.mistakes``) ranked by how many
  students made them, the commonest failure messages of tests without one, the honest-work
  violations (``extra_data.honest_work``) counted;
- similarity: per problem module (similarity.similar), against the reference and an archive.
"""

import ast
import functools
import os
from collections import Counter, defaultdict
from pathlib import Path

from seam.problems import PROBLEMS
from ..batch import attention
from ..batch.firstscreen import not_attempted
from ..batch.output import CODE, PREVIOUS, REPEATS, RESULTS, StudentRecord, _entries, read_json, write_json
from ..files import write_atomically
from ..history.student import keyed
from ..report import per_problem
from ..text import one_line
from . import actions, stats
from .similarity import ARCHIVE_NAME, REFERENCE_NAME
from .words import too_large_by_student, too_large_limit, who

REPORT_JSON, REPORT_HTML = "report.json", "report.html"
SHOWN = 10         # pairs the page shows side by side (report.json keeps their spans alone)


def _not_run(t: dict) -> bool:
    return t.get("extra_data", {}).get("outcome") == "not_run"


def _message(t: dict) -> str:
    """A failure's first line that says what was wrong (the test title line is the same for all)."""
    lines = [ln.strip() for ln in t.get("output", "").splitlines() if ln.strip()]
    return one_line(lines[0])[:160] if lines else "failed (no message)"


def gather(out: Path) -> list[dict]:
    """One record per counted upload: key, status, who, results (None unless graded), code,
    error (why grading crashed)."""
    students = []
    for key, record, results in _entries(out):
        code_dir = Path(out) / "students" / key / CODE
        code = {}
        for p in PROBLEMS:
            path = code_dir / f"{p}.py"
            if path.is_file() and path.stat().st_size <= 1 << 20:
                code[p] = path.read_text(errors="replace")
        previous = None
        try:
            previous = read_json(Path(out) / "students" / key / PREVIOUS)
        except (OSError, ValueError):
            pass
        repeats = []  # (the key is a folder's name, never a pattern; a repeat of another upload is not one)
        for run in sorted(p for p in (Path(out) / REPEATS).iterdir() if p.is_dir()) if (Path(out) / REPEATS).is_dir() else ():
            try:
                if StudentRecord.read(run / key).upload == record.upload:
                    repeats.append(read_json(run / key / RESULTS))
            except (OSError, ValueError):
                continue
        students.append({"key": key, "status": record.status.value, "results": results, "code": code,
                         "repeats": repeats,
                         "who": [s.get("name") or s.get("sid") or key for s in record.students or []],
                         "previous": previous, "error": record.error})
    return students


def build(students: list[dict], similarity: dict | None = None) -> dict:
    """Every figure of the report, from ``gather``'s records (pure: tests build it by hand)."""
    graded = [s for s in students if s["results"] is not None]
    # a problem the upload left as the stub is no attempt: its tests' failures say nothing of them
    skipped = {s["key"]: set(not_attempted(s["code"])) for s in graded}
    hung = {s["key"]: {f for what in (s["results"].get("extra_data", {}).get("incidents") or {})
                       for f in what.split(" / ")} for s in graded}  # the functions that hung or crashed
    # a CPU pass's GPU tests are said once for the class; "not run" names only who differs from it
    gpu, odd = attention.gpu_pending({s["key"]: s["results"] for s in graded})
    statuses: dict[str, list[str]] = defaultdict(list)
    for s in students:
        if s["status"] != "graded":
            statuses[s["status"]].append(s["key"])
        elif skipped[s["key"]] >= {row["problem"] for row in per_problem(s["results"])}:
            statuses["not attempted"].append(s["key"])
        elif s["key"] in odd:
            statuses["not run"].append(s["key"])
    totals = {s["key"]: float(s["results"]["score"]) for s in graded}
    possible = max((sum(t["max_score"] for t in s["results"]["tests"] if not _not_run(t)) for s in graded), default=0.0)
    problems = []
    for p in PROBLEMS:
        rows = {s["key"]: row for s in graded for row in per_problem(s["results"]) if row["problem"] == p and row["max"]}
        if rows:
            most = max(r["max"] for r in rows.values())
            tried = [r["score"] for k, r in rows.items() if p not in skipped[k]]
            problems.append({"problem": p, **stats.describe(tried, most),
                             "not_attempted": sorted(k for k in rows if p in skipped[k])})
    # items: every graded test, by number
    outcomes: dict[str, dict[str, bool]] = defaultdict(dict)
    info: dict[str, dict] = {}
    messages: dict[str, Counter] = defaultdict(Counter)
    mistakes: dict[str, dict] = {}
    for s in graded:
        for t in s["results"]["tests"]:
            number = t["number"]
            info.setdefault(number, {"number": number, "name": t["name"], "problem": (t.get("tags") or ["?"])[0],
                                     "points": t["max_score"]})
            if _not_run(t):
                continue
            if info[number]["problem"] in skipped[s["key"]]:
                continue
            passed = t["status"] == "passed"
            outcomes[number][s["key"]] = passed
            if passed:
                continue
            named = t.get("extra_data", {}).get("mistakes") or []
            for m in named:
                entry = mistakes.setdefault(m["name"], {"name": m["name"], "handout": m["handout"],
                                                         "students": set(), "tests": set()})
                entry["students"].add(s["key"])
                entry["tests"].add(number)
            if not named and not hung[s["key"]] & set(t.get("extra_data", {}).get("functions") or ()):
                messages[number][_message(t)] += 1  # (a failure of a function that hung: listed there)
    by_problem = {p: {s["key"]: row["score"] for s in graded for row in per_problem(s["results"])
                      if row["problem"] == p} for p in PROBLEMS}
    analysis = stats.item_analysis(outcomes, {n: info[n]["points"] for n in outcomes}, totals, by_problem,
                                   {n: info[n]["problem"] for n in outcomes})
    items = sorted(({**info[n], **a} for n, a in analysis.items()),
                   key=lambda i: [int(x) for x in i["number"].split(".")])
    honest: Counter = Counter()
    for s in graded:
        for function, used in (s["results"].get("extra_data", {}).get("honest_work") or {}).items():
            honest[function, used] += 1
    review = [{"student": s["key"], "file": n.get("file", ""), "line": n.get("line", 0), "kind": n.get("kind", ""),
               "construct": n.get("construct", ""), "instead": n.get("instead", ""), "seen": n.get("seen", ""),
               "at_stake": n.get("at_stake", 0)}
              for s in graded for n in (s["results"].get("extra_data", {}).get("review") or ())]
    incidents = [{"student": s["key"], **i} for s in graded for i in attention.incidents(s["results"])]
    incidents += [{"student": s["key"], "what": "the grading", "how": [[s.get("error") or s["status"], 1]],
                   "points": possible} for s in students if s["status"] in attention.UNFINISHED]
    report = {
        "students": len(students), "graded": len(graded), "possible": possible,
        "names": {s["key"]: ", ".join(s["who"]) for s in students if s.get("who")},
        "people": sum(len(s.get("who") or ()) or 1 for s in students),  # a group's members, each
        "incidents": incidents,
        "gpu": gpu,
        "total": stats.describe(list(totals.values()), possible),
        "problems": problems,
        "statuses": {k: sorted(v) for k, v in sorted(statuses.items())},
        "items": items,
        "doubt": [i for i in items if i["flags"]],
        "redundant": redundant(items),
        "mistakes": sorted(({**m, "students": len(m["students"]), "tests": sorted(m["tests"])}
                            for m in mistakes.values()), key=lambda m: (-m["students"], m["name"])),
        "messages": [{"number": n, "name": info[n]["name"], "message": msg, "students": k}
                     for n, counter in sorted(messages.items()) for msg, k in counter.most_common(3)],
        "review": review,
        "honest_work": [{"function": f, "used": u, "students": k}
                        for (f, u), k in sorted(honest.items(), key=lambda kv: (-kv[1], kv[0]))],
        "regrades": regrades(students),
        "flaky": flaky(students),
        "similarity": similarity,
    }
    report["act_on"] = actions.act_on(report, [
        {"key": s["key"], "who": s.get("who") or [], "status": s["status"], "results": s["results"],
         "error": s.get("error"), "missing": sorted(skipped.get(s["key"], ()), key=list(PROBLEMS).index)}
        for s in students])
    return report


def redundant(items: list[dict]) -> list[dict]:
    """The groups of tests with one outcome pattern across the class (stats' ``same_as``): the
    first test's number and name, and every number of the group."""
    groups: dict[str, dict] = {}
    names = {i["number"]: i["name"] for i in items}
    for i in items:
        if i.get("same_as"):
            groups.setdefault(i["same_as"], {"name": names[i["same_as"]], "tests": [i["same_as"]]})["tests"].append(i["number"])
    return list(groups.values())


def flaky(students: list[dict]) -> list[dict]:
    """Tests whose outcome differed between gradings of the same upload (`batch --repeat K`)."""
    seen: dict[str, dict] = {}
    for s in students:
        runs = [r for r in [s["results"], *s.get("repeats", [])] if r]
        if len(runs) < 2:
            continue
        by_number: dict[str, set] = defaultdict(set)
        names = {}
        for r in runs:
            for t in r["tests"]:
                by_number[t["number"]].add(t["status"])
                names[t["number"]] = t["name"]
        for number, outcomes in by_number.items():
            if len(outcomes) > 1:
                seen.setdefault(number, {"number": number, "name": names[number], "students": []})["students"].append(s["key"])
    return sorted(seen.values(), key=lambda f: [int(x) for x in f["number"].split(".")])


def regrades(students: list[dict]) -> list[dict]:
    """Every regraded student whose total changed or a test flipped: by how much, which tests,
    and where the tests hash changed, which changed tests of the problems that moved and why
    (``tests_changed``, tests/rubric_history.json)."""
    out = []
    history = _history()
    for s in students:
        before = (s.get("previous") or {}).get("results")
        if before is None:
            continue
        after = s["results"] or {"score": 0.0, "tests": []}
        # only the tests that ran both times (a merge joins passes: a GPU test the CPU pass could
        # not run did not flip); the change is counted over them. A test is matched by its id
        # (history.student.keyed), never by its number, which a test added before it shifts.
        old, new = ({k: t for k, t in tests.items() if not _not_run(t)} for tests in keyed(before, after))
        order = lambda k: [int(x) for x in (new.get(k) or old[k])["number"].split(".")]
        both = sorted(set(old) & set(new), key=order)
        flipped = [{"number": new[k]["number"], "name": new[k]["name"], "before": old[k]["status"],
                    "after": new[k]["status"]} for k in both if old[k]["status"] != new[k]["status"]]
        flipped += [{"number": old[k]["number"], "name": old[k]["name"], "before": old[k]["status"], "after": "absent"}
                    for k in sorted(set(old) - set(new), key=order)]
        delta = sum(float(new[k]["score"]) - float(old[k]["score"]) for k in both) - sum(
            float(old[k]["score"]) for k in set(old) - set(new))
        if flipped or delta:
            changed = history(before, after)
            out.append({"student": s["key"], "why": s["previous"].get("why", ""), "before": before.get("score"),
                        "after": after["score"], "delta": delta, "flipped": flipped,
                        **({"tests_changed": changed} if changed else {})})
    return sorted(out, key=lambda r: (-abs(r["delta"]), r["student"]))


def _history():
    """Why a student's score moved between two results.json, from the rubric history (read once,
    only when some regrade crossed a change of the tests)."""
    from ..history.explain import moved_scores, record_or_none, stamp_of
    record: list = []

    def changed(before: dict, after: dict) -> list[dict]:
        if stamp_of(before) == stamp_of(after):
            return []
        if not record:
            record.append(record_or_none())
        return moved_scores(before, after, record[0])
    return changed


def similarity_of(students: list[dict], archive: Path | None = None) -> dict:
    """Every problem module's flagged pairs (similarity.similar), against each other, the
    reference and the ``archive`` folder's modules (any <problem>.py below it); the stub's given
    code left out."""
    from ..paths import REFERENCE, STUBS
    from .similarity import LARGEST, THRESHOLD, fingerprints, read_modules, similar
    theirs = {p: {s["key"]: s["code"][p] for s in students if p in s["code"]} for p in PROBLEMS}
    # every module fingerprinted at once (processes share the work), then compared per problem
    texts = [t for p in PROBLEMS for t in theirs[p].values() if len(t) <= LARGEST]
    made = dict(zip(texts, fingerprints(texts, jobs=min(4, os.cpu_count() or 1))))
    problems = {}
    too_large = []
    for p in PROBLEMS:
        if not theirs[p]:
            continue
        known = {}
        for path in sorted(Path(archive).rglob(f"{p}.py")) if archive is not None else ():
            text = read_modules(path.parent, p)
            if text is not None:
                known[str(path.relative_to(archive))] = text
        problems[p] = similar(p, theirs[p], read_modules(STUBS, p) or "",
                              read_modules(REFERENCE, p), known, spans=SHOWN, made=made)
        too_large += [{"student": who, "problem": p} for who in problems[p]["too_large"]]
    pairs = sorted((pair for r in problems.values() for pair in r["pairs"]),
                   key=lambda x: (-x["score"], x["problem"], x["a"], x["b"]))
    for pair in pairs[SHOWN:]:  # the matching spans of the pairs the page shows side by side only
        pair.pop("a_spans", None), pair.pop("b_spans", None)
    return {"threshold": THRESHOLD, "pairs": pairs,
            "compared": sum(r["compared"] for r in problems.values()),
            "candidates": sum(r["candidates"] for r in problems.values()),
            "too_large": sorted(too_large, key=lambda t: (t["student"], list(PROBLEMS).index(t["problem"])))}


def summary(report: dict) -> list[str]:
    """A few lines for the terminal: what to act on first (actions.lines), then the figures."""
    t = report["total"]
    lines = [f"class report: {report['students']} upload(s) from {report['people']} student(s), {report['graded']} graded",
             *actions.lines(report)]
    if t.get("n"):
        lines.append(f"total: mean {t['mean']:.1f} / {t['max_possible']:g}, median {t['median']:g}, "
                     f"quartiles {t['q1']:g}-{t['q3']:g}, {t['full']} at full marks, {t['zero']} at 0")
    for status, keys in report["statuses"].items():
        names = [one_line(who(report, k)) for k in keys[:5]]
        lines.append(f"{status}: {len(keys)} ({', '.join(names)}{', ...' if len(keys) > 5 else ''})")
    for i in report["doubt"][:5]:
        lines.append(f"doubt {i['number']} {i['name']}: {'; '.join(i['flags'])}")
    for m in report["mistakes"][:3]:
        lines.append(f"mistake made by {m['students']}: {m['name']} ({m['handout']})")
    if report["flaky"]:
        lines.append(f"flaky: {len(report['flaky'])} test(s) changed outcome between repeated gradings, e.g. "
                     f"{report['flaky'][0]['number']} {report['flaky'][0]['name']}")
    if report["regrades"]:  # (the folder's state, not this run's work: a rerun that grades no one says it too)
        first = report["regrades"][0]
        whys = ", ".join(sorted({r["why"] for r in report["regrades"] if r["why"]}))
        lines.append(f"moved by their last regrade or rescore: {len(report['regrades'])} student(s)"
                     + (f" ({whys})" if whys else "")
                     + f", e.g. {one_line(who(report, first['student']))} {first['delta']:+g}")
        changed = {t["test"] for r in report["regrades"] for t in r.get("tests_changed", ())}
        if changed:
            lines.append(f"moved by their last regrade or rescore: {len(changed)} changed test(s) explain the scores, "
                         f"e.g. {sorted(changed)[0]} (report.html: why the tests changed)")
    if report["similarity"] is not None:
        pairs = report["similarity"]["pairs"]
        lines.append(f"similar code: {len(pairs)} pair(s) at or above {report['similarity']['threshold']:g}"
                     + (f", e.g. {pairs[0]['problem']}: {one_line(pairs[0]['a'])} ~ {one_line(pairs[0]['b'])} "
                        f"({pairs[0]['score']:.2f})"
                        if pairs else ""))
        large = too_large_by_student(report["similarity"])
        if large:
            names = [f"{one_line(who(report, k))} ({', '.join(f'{p}.py' for p in ps)})" for k, ps in list(large.items())[:3]]
            lines.append(f"similar code: too large to compare (over {too_large_limit()}, not fingerprinted): "
                         + "; ".join(names) + (f" and {len(large) - 3} more" if len(large) > 3 else ""))
    return lines


def write(out: Path, archive: Path | None = None, with_similarity: bool = True) -> list[str]:
    """report.json and report.html in ``out``; returns the summary lines."""
    from .html import render
    students = gather(out)
    report = build(students, similarity_of(students, archive) if with_similarity else None)
    write_json(Path(out) / REPORT_JSON, report)
    from ..paths import problem_file
    code = {s["key"]: s["code"] for s in students} | {
        REFERENCE_NAME: {p: problem_file(p, "reference").read_text() for p in PROBLEMS}}
    for p in PROBLEMS:  # the archive's files, named as similarity_of names them
        for path in sorted(Path(archive).rglob(f"{p}.py")) if archive is not None else ():
            code.setdefault(f"{ARCHIVE_NAME}{path.relative_to(archive)}", {})[p] = path.read_text(errors="replace")
    write_atomically(Path(out) / REPORT_HTML, render(report, code).encode(errors="backslashreplace"))
    return summary(report) + [f"wrote {Path(out) / REPORT_HTML} and {REPORT_JSON}"]


def after_batch(out: Path) -> None:
    """The class report at the end of a batch or merge (they import this, at their end; the
    report reads their output folder through batch/output.py, never the other way round). Its
    failure is said and costs nothing else: the gradebook is written already."""
    import sys
    try:
        for line in write(Path(out)):
            print(line, file=sys.stderr)
    except Exception as e:  # noqa: BLE001 (a report is never worth a batch)
        print(f"error: the class report failed ({type(e).__name__}: {e}); "
              f"run `python -m grader report {out}` again", file=sys.stderr)
        try:  # the first screen still, as the batch computes it (no likely copies)
            from ..batch.output import _entries, screen_uploads
            from ..batch.firstscreen import first_screen, lines
            for line in lines(first_screen(screen_uploads(Path(out), _entries(Path(out))))):
                print(line, file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            print(f"error: the first screen failed too ({type(e).__name__}: {e})", file=sys.stderr)
