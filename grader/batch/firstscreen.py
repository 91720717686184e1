"""The first screen: what a TA acts on after a batch, computed once (``first_screen``) and said
the same way in the terminal (``lines``: the end of `batch`, `merge` and `report`) and on the
page (grader/classreport/html.py ``panel``), each student by name.

It reads only the class's results (and which problems each upload left missing or as the stub
as given), so the batch's own closing summary computes it without the class report's libraries;
the class report adds the likely copies it finds (``more``). In the order a TA acts:

- charged: a forbidden shortcut seen to run (results.json ``extra_data.honest_work``): the
  students, the functions and the points taken;
- broken: a module that does not import, a function that hung, crashed or killed its worker, a
  spent time budget (``extra_data.incidents``), a grading that crashed or was interrupted: the
  points it cost;
- review: notes for a person (seam/review.py), no point taken, with the advice of each kind;
- zero: an upload that could not be graded, the stubs as given, or a total under ``NEAR_ZERO`` of
  the points where what was handed in does not work either (a student already named above is
  not named again);
- then the class report's own (likely copies, close to the reference).

Below them, counted and named but not to act on: the partial uploads, whose missing problems are
simply missing while what they handed in works (``NEAR_ZERO`` of its points or more). Nothing here
sums points across students: each entry says its own.
"""

import ast
import collections
import functools
import re
import unicodedata

from seam.problems import PROBLEMS
from seam.review import KINDS as NOTE_KINDS, at_run_time, ordered, tally
from ..report import not_run, per_problem, touched
from ..text import one_line
from .attention import (NEAR_ZERO, UNFINISHED, UNUSABLE, gpu_line, gpu_pending, graded_points, how_said,
                        incident_points, incidents)

SHOWN = 10  # entries per section, on the page and in the terminal alike; the sections below list them all
SHOWN_PLACES = 3  # notes named by place on a student's line; its count by kind says the rest
SHOWN_PARTIAL = 5  # partial uploads named in the closing line (the page's section lists them all)

# kind -> (title, the page's anchor, what to do)
SECTIONS = {
    "charged": ("charged for a forbidden shortcut", "charged",
                "taken on evidence, the call seen to run; nothing to do unless they appeal (their report quotes the rule)"),
    "broken": ("did not import, hung, crashed or killed the grader's worker", "incidents",
               "a module that does not import: ask for a fixed upload; a crashed grading: run the batch again; "
               "a hang cost only the tests that call it"),
    "review": ("notes for review (no point taken)", "review",
               "read each line; regrade by hand if it hid a forbidden shortcut"),
    "zero": (f"at zero or near zero (under {NEAR_ZERO:.0%} of the points, and what was handed in does not work)",
             "low", "open the upload: the wrong files, or nothing done; ask the student"),
    "copies": ("likely copies", "similar", "compare the two side by side below: evidence, never a grade"),
    "reference": ("close to the reference solution", "similar", "a leaked solution, or the natural one: compare it below"),
}
PARTIAL = ("partial uploads (some problems not handed in or the stub as given; what was handed in works): "
           "nothing to act on")

STUB_LARGEST = 64 << 10  # a module past this is no stub as given (its syntax tree is not worth the time)
_NOT_IMPORTED = re.compile(r"^(\w+)\.py could not be imported \((.*)\)$")


# The name every stub's unwritten function raises. Each Name of a module's syntax tree is a word of
# its text, NFKC-normalised as Python reads identifiers (an ASCII text is its own normal form), so
# a module whose normalised text holds fewer of it than the stub's tree has Names of it cannot
# have the stub's tree, and is not parsed: most modules of a class (a written function raises it
# no more).
UNWRITTEN = "NotImplementedError"


@functools.cache
def _stub(problem: str) -> tuple[ast.Module | None, int]:
    """The stub's syntax tree (None if it does not parse) and how many Names of ``UNWRITTEN`` it has."""
    from ..paths import problem_file
    tree = _parsed(problem_file(problem, "stub").read_text())
    return tree, sum(isinstance(n, ast.Name) and n.id == UNWRITTEN for n in ast.walk(tree)) if tree else 0


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def same_tree(a: ast.AST, b: ast.AST) -> bool:
    """``ast.dump(a) == ast.dump(b)``, level by level, stopping at the first difference (a
    module's written functions differ from the stub's a level or two down; dumping it whole cost
    most of a class report of 1,000)."""
    todo = collections.deque([(a, b)])
    while todo:
        x, y = todo.popleft()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            todo.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif x != y or (isinstance(x, (float, complex)) and repr(x) != repr(y)):  # (dump compares reprs)
            return False
    return True


def _is_stub(text: str, problem: str) -> bool:
    """The stub as given: the same syntax tree (a comment or a blank line changed is no attempt)."""
    stub, unwritten = _stub(problem)
    if stub is None or len(text) > STUB_LARGEST:
        return False
    if (text if text.isascii() else unicodedata.normalize("NFKC", text)).count(UNWRITTEN) < unwritten:
        return False
    tree = _parsed(text)
    return tree is not None and same_tree(tree, stub)


def not_attempted(code: dict[str, str]) -> list[str]:
    """The problems whose module is missing or is the stub as given: the same syntax tree (a
    comment or a blank line changed is no attempt). No module kept at all says nothing (an
    upload without one is "empty", never graded): none then."""
    if not code:
        return []
    return [p for p in PROBLEMS if p not in code or _is_stub(code[p], p)]


def label(key: str, who: list[str] | None = None) -> str:
    """A student as every screen names them: the roster's names and the upload's folder."""
    return f"{', '.join(n for n in who or () if n) or key} ({key})"


def advice(kind: str) -> str:
    """What to write instead, for a note of ``kind`` (seam/review.py's table): each kind its own."""
    return NOTE_KINDS[kind][1] if kind in NOTE_KINDS else "read the line"


def _charged(results: dict) -> tuple[str, float] | None:
    broken = results.get("extra_data", {}).get("honest_work") or {}
    if not broken:
        return None
    points = sum(float(t["max_score"]) for t in results["tests"]
                 if not not_run(t) and touched(t.get("extra_data", {}).get("functions", ()), broken))
    return "; ".join(f"{f} used {used}" for f, used in sorted(broken.items())), points


def not_imported(results: dict) -> dict[str, str]:
    """problem -> why its module did not import, from its failed tests' first lines."""
    out: dict[str, str] = {}
    for t in results["tests"]:
        if t["status"] != "passed" and not not_run(t):
            m = _NOT_IMPORTED.match((t.get("output") or "").split("\n", 1)[0])
            if m and m.group(1) == (t.get("tags") or [""])[0]:
                out.setdefault(m.group(1), m.group(2))
    return out


def _broken(results: dict) -> tuple[str, float] | None:
    """What did not import, hung or crashed in a grading, and the points it cost (each failed
    test once: those of a module that did not import, and those that call what hung)."""
    failed_imports = not_imported(results)
    found = incidents(results)
    if not failed_imports and not found:
        return None
    whats = [f"{p}.py does not import ({one_line(why)[:120]})" for p, why in sorted(failed_imports.items())]
    whats += [f"{i['what']}: {how_said(i['how'])}" for i in found]
    hung = " / ".join(i["what"] for i in found)
    lost = {t["number"]: float(t["max_score"]) for t in results["tests"]
            if t["status"] != "passed" and not not_run(t) and (t.get("tags") or [""])[0] in failed_imports}
    if hung:
        lost |= {t["number"]: float(t["max_score"]) for t in results["tests"]
                 if incident_points({"tests": [t]}, hung)}
    return "; ".join(whats), sum(lost.values())


def _review(results: dict) -> tuple[str, float, list[str]] | None:
    notes = results.get("extra_data", {}).get("review") or []
    if not notes:
        return None
    stake = {n.get("file", ""): float(n.get("at_stake", 0) or 0) for n in notes}  # (a module's stake, once)
    # those seen at run time first, one of each kind in turn (a flood of one kind hides no other)
    places = "; ".join(f"{n.get('file', '')}:{n.get('line', 0)} {n.get('kind', '')}"
                       + (" (at run time)" if at_run_time(n) else "") for n in ordered(notes)[:SHOWN_PLACES])
    more = f" ({tally(notes)})" if len(notes) > SHOWN_PLACES else ""
    return places + more, sum(stake.values()), sorted({str(n.get("kind", "")) for n in notes})


def first_screen(uploads: list[dict], more: list[dict] = (), quiet: list[str] = ()) -> dict:
    """The first screen's facts, from each counted upload: {"key", "who" (names), "status",
    "results" (None unless graded), "missing" (problems missing or the stub as given), "error"};
    ``more``: the class report's sections ({"kind", "entries": [{"students": [keys], "what",
    "points", "other"?}]}), after the batch's own; ``quiet``: what it checked and found nothing of.

    Returns {"sections": [{"kind", "title", "anchor", "todo", "head", "entries": [{"students",
    "text", "points"}], "advice"?}], "partial": {"head", "entries"}, "quiet", "gpu"}: every text
    made here, so the terminal and the page say the same words."""
    names = {u["key"]: label(u["key"], u.get("who")) for u in uploads}
    graded = [u for u in uploads if u.get("results") is not None]
    possible = max((graded_points(u["results"]) for u in graded), default=0.0)
    sections: dict[str, list[dict]] = {k: [] for k in ("charged", "broken", "review", "zero")}
    kinds: set[str] = set()

    def entry(keys: list[str], what: str, points: float, unit: str = "", other: str = "") -> dict:
        """One line of a section: whom (by name), what, and its points said in ``unit``'s words."""
        who = one_line(" ~ ".join(names.get(k, k) for k in keys) + (f" ~ {other}" if other else ""))
        what = one_line(what)
        return {"students": keys, "who": who, "what": what, "points": points,
                "text": f"{who}: {what}" + (f": {points:g} {unit}" if unit else "")}

    for u in graded:
        r = u["results"]
        if hit := _charged(r):
            sections["charged"].append(entry([u["key"]], hit[0], hit[1], "points taken"))
        if hit := _broken(r):
            sections["broken"].append(entry([u["key"]], hit[0], hit[1], "points lost"))
        if hit := _review(r):
            sections["review"].append(entry([u["key"]], hit[0], hit[1], "points at stake"))
            kinds |= set(hit[2])
    for u in uploads:
        if u["status"] in UNFINISHED:
            why = UNFINISHED[u["status"]] + (f" ({one_line(u['error'])[:160]})" if u.get("error") else "")
            sections["broken"].append(entry([u["key"]], f"{why}: no grade yet, run the batch again", possible, "points not graded"))
    seen_running = {u["key"] for u in graded if any(map(at_run_time, u["results"].get("extra_data", {}).get("review") or ()))}
    sections["review"].sort(key=lambda e: e["students"][0] not in seen_running)  # (stable)
    named = {k for s in ("charged", "broken") for e in sections[s] for k in e["students"]}
    partial = []
    for u in uploads:
        key, r = u["key"], u.get("results")
        if u["status"] in UNUSABLE:
            sections["zero"].append(entry([key], UNUSABLE[u["status"]], possible, "points lost"))
            continue
        if r is None or not possible or key in named:
            continue
        rows = [row for row in per_problem(r) if row["max"]]
        missing = [row["problem"] for row in rows if row["problem"] in set(u.get("missing") or ())]
        score = float(r["score"])
        tried = [row for row in rows if row["problem"] not in missing]
        tried_max = sum(row["max"] for row in tried)
        tried_score = sum(row["score"] for row in tried)
        if rows and not tried:
            sections["zero"].append(entry([key], "the stubs as given (no problem attempted)", possible - score, "points lost"))
        elif score < NEAR_ZERO * possible and not (missing and tried_score >= NEAR_ZERO * tried_max):
            of = f"; {len(tried)} of {len(rows)} problems handed in" if missing else ""
            sections["zero"].append(entry([key], f"{score:g} of {possible:g} points{of}", possible - score))
        elif missing:
            shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
            partial.append(entry([key], f"{len(tried)} of {len(rows)} problems handed in (not: {shown}); "
                                        f"{score:g} of {possible:g} points", possible - score))
    out, checked = [], []
    nothing = {"charged": "no one charged", "broken": "every module imported; no timeout or crash",
               "review": "no note for review", "zero": "no upload at zero"}
    for kind, entries in [*sections.items(), *((m["kind"], m["entries"]) for m in more)]:
        if not entries and kind in nothing:
            checked.append(nothing[kind])
            continue
        if not entries:
            continue
        title, anchor, todo = SECTIONS[kind]
        if kind in ("copies", "reference"):
            entries = [entry(e["students"], e["what"], e["points"], "points", e.get("other", "")) for e in entries]
        students = len({k for e in entries for k in e["students"]})
        section = {"kind": kind, "title": title, "anchor": anchor, "todo": todo, "entries": entries,
                   "head": f"{title}: {students} student(s)" + ("" if kind not in ("copies",) else
                                                                f", {len(entries)} pair(s)")}
        if kind == "review":
            section["advice"] = [f"{k}: {advice(k)}" for k in sorted(kinds)]
        out.append(section)
    gpu, _ = gpu_pending({u["key"]: u["results"] for u in graded})
    return {"sections": out, "quiet": checked + list(quiet), "gpu": gpu,
            "partial": {"head": f"{PARTIAL}: {len(partial)}", "entries": partial}}


def lines(screen: dict) -> list[str]:
    """The terminal's first screen: each section's head and what to do, its first ``SHOWN``
    entries a line each (and the advice of each note kind), "act on: nothing" when there is
    nothing; the partial uploads counted in one line; the GPU points once."""
    out = []
    for s in screen["sections"]:
        out.append(f"act on: {s['head']} ({s['todo']}):")
        out += [f"  {e['text']}" for e in s["entries"][:SHOWN]]
        if len(s["entries"]) > SHOWN:
            out.append(f"  and {len(s['entries']) - SHOWN} more (report.html)")
        out += [f"  advice: {a}" for a in s.get("advice", ())]
    if not screen["sections"]:
        out.append("act on: nothing (" + "; ".join(screen["quiet"]) + ")")
    partial = screen["partial"]["entries"]
    if partial:
        shown = "; ".join(e["who"] for e in partial[:SHOWN_PARTIAL])
        out.append(f"below: {screen['partial']['head']}: {shown}"
                   + (f" and {len(partial) - SHOWN_PARTIAL} more (report.html)" if len(partial) > SHOWN_PARTIAL else ""))
    if screen.get("gpu"):
        out.append(gpu_line(screen["gpu"]))
    return out


def named(screen: dict) -> dict[str, list[str]]:
    """section kind -> the students it names (the page and the terminal must agree on these)."""
    return {s["kind"]: sorted({k for e in s["entries"] for k in e["students"]}) for s in screen["sections"]} | {
        "partial": sorted({k for e in screen["partial"]["entries"] for k in e["students"]})}
