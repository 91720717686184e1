"""The class report's first screen: "What to act on", as data (``act_on``) and as terminal lines
(``lines``); html.py renders the data.

Each kind is one item: the students it concerns, by the report's keys, what each is, and the
points at stake, with the anchor of the section below that details it:

- notes for review (seam/review.py): points at stake are the notes' modules' ruled points;
- zero or near zero (batch/attention.py ``low``): an unusable upload, a total under
  ``NEAR_ZERO`` of the points, or half or more of the problems missing or the stub as given:
  the points it did not get;
- timeouts and crashes: a function that hung or crashed (the failed tests that call it), a
  grading that crashed or was interrupted (every point: it has no grade);
- likely copies: pairs of two uploads, or an upload and an archived solution (similarity.py):
  the points of the problems they share;
- close to the reference solution: uploads whose module matches the reference. When more than
  half of the graded class does, a match says nothing of one student (the reference is the
  natural solution, or it reached everyone): no item, one "checked" line that counts them.

Nothing here decides a grade; each item is for a person to look at.
"""

from ..batch.attention import NEAR_ZERO, SHOWN, gpu_line, how_said
from ..text import one_line
from .similarity import REFERENCE_NAME
from .words import who

# kind -> (title, the section's anchor, what to do)
KINDS = {
    "review": ("Notes for review", "review",
               "Read each line; regrade by hand if it hid a forbidden shortcut (no point was taken for it)"),
    "low": (f"Zero, near zero or half missing (under {NEAR_ZERO:.0%} of the points, or half the problems "
            f"missing or the stub as given)", "low",
            "Open the upload: the wrong files, a module that fails to import, or nothing done; ask the student"),
    "incidents": ("Timeouts and crashes", "incidents",
                  "A grading that crashed or was interrupted has no grade: run the batch again; a function "
                  "that hung cost only the tests that call it: read it before an appeal"),
    "copies": ("Likely copies", "similar",
               "Compare the two side by side below: evidence for a person, never a grade"),
    "reference": ("Close to the reference solution", "similar",
                  "A leaked solution, or the natural one: compare it below"),
}


def _item(kind: str, entries: list[dict], **extra) -> dict:
    title, anchor, todo = KINDS[kind]
    students = {k for e in entries for k in e["students"]}
    return {"kind": kind, "title": title, "anchor": anchor, "todo": todo, "entries": entries,
            "students": len(students), "points": sum(e["points"] for e in entries), **extra}


def _review(report: dict) -> list[dict]:
    by: dict[str, list[dict]] = {}
    for r in report.get("review") or ():
        by.setdefault(r["student"], []).append(r)
    out = []
    for key, notes in by.items():
        stake = {n["file"]: float(n["at_stake"]) for n in notes}  # (a module's stake, once)
        places = "; ".join(f"{n['file']}:{n['line']} {n['kind']}" for n in notes[:3])
        out.append({"students": [key], "what": places + (f" and {len(notes) - 3} more" if len(notes) > 3 else ""),
                    "points": sum(stake.values())})
    return out


def _incidents(report: dict) -> list[dict]:
    by: dict[str, list[dict]] = {}
    for i in report["incidents"]:
        by.setdefault(i["student"], []).append(i)
    return [{"students": [key], "what": "; ".join(f"{i['what']}: {how_said(i['how'])}" for i in found),
             "points": float(report["lost"].get(key, 0.0))}
            for key, found in by.items()]


def _pairs(report: dict) -> tuple[list[dict], list[dict], int]:
    """(pairs of two uploads or an upload and the archive, uploads close to the reference, how
    many uploads are close to it)."""
    sim = report.get("similarity") or {}
    worth = {p["problem"]: float(p.get("max_possible") or 0.0) for p in report["problems"]}
    together: dict[tuple[str, str], list[dict]] = {}
    for p in sim.get("pairs") or ():
        together.setdefault((p["a"], p["b"]), []).append(p)
    copies, reference = [], []
    for (a, b), ps in sorted(together.items(), key=lambda kv: (-max(p["score"] for p in kv[1]), kv[0])):
        what = ", ".join(f"{p['problem']} ({p['score']:.2f})" for p in ps)
        points = sum(worth.get(p["problem"], 0.0) for p in ps)
        if b == REFERENCE_NAME:
            reference.append({"students": [a], "what": what, "points": points})
        else:
            copies.append({"students": [a] if b.startswith("/") else [a, b], "other": b, "what": what,
                           "points": points})
    return copies, reference, len(reference)


def act_on(report: dict) -> dict:
    """The panel's facts, from ``build``'s report: its items in order (those with nothing left
    out), the GPU points a pass left (or None), and the kinds that had nothing."""
    items, quiet = [], []
    review = _review(report)
    items.append(_item("review", review)) if review else quiet.append("no note for review")
    low = [{"students": [x["student"]], "what": x["why"], "points": x["possible"] - x["score"]}
           for x in report.get("low") or ()]
    items.append(_item("low", low)) if low else quiet.append("no upload at zero, near zero or half missing")
    hung = _incidents(report)
    items.append(_item("incidents", hung)) if hung else quiet.append("no timeout or crash")
    copies, reference, close = _pairs(report)
    if report.get("similarity") is None:
        quiet.append("similarity not compared")
    else:
        items.append(_item("copies", copies)) if copies else quiet.append("no likely copy")
    if reference:
        if close * 2 > report["graded"]:  # most of the class: nobody in particular, nothing to act on
            quiet.append(f"{close} of {report['graded']} uploads close to the reference solution, most of "
                         f"the class: its natural form (Similar code lists them)")
        else:
            items.append(_item("reference", reference))
    return {"items": items, "gpu": report.get("gpu"), "quiet": quiet}


def entry_text(report: dict, entry: dict) -> str:
    """One entry, by the students' names: "Ada Lovelace (s1) ~ /archive/x.py: flops (0.97)"."""
    names = " ~ ".join(who(report, k) for k in entry["students"])
    if entry.get("other", "").startswith("/"):
        names += f" ~ {entry['other']}"
    return f"{names}: {entry['what']}"


def lines(report: dict) -> list[str]:
    """The terminal's act-on lines, first in the class report's summary: each item with its
    first ``SHOWN`` entries; "act on: nothing" when there is nothing; the GPU points once."""
    panel = act_on(report)
    out = []
    for item in panel["items"]:
        head = f"act on: {item['title'].lower()}: "
        shown = [f"{one_line(entry_text(report, e))} ({e['points']:g} points)" for e in item["entries"][:SHOWN]]
        more = len(item["entries"]) - SHOWN
        out.append(head + f"{len(item['entries'])} ({item['points']:g} points at stake): " + "; ".join(shown)
                   + (f"; and {more} more (report.html)" if more > 0 else ""))
    if not panel["items"]:
        out.append("act on: nothing (" + "; ".join(panel["quiet"]) + ")")
    if panel["gpu"]:
        out.append(gpu_line(panel["gpu"]))
    return out
