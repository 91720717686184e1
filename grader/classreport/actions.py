"""The class report's first screen, "What to act on": the batch's first screen
(grader/batch/firstscreen.py, one pure function for the terminal and the page alike) with what
only the class report finds added, from the similarity pass:

- likely copies: pairs of two uploads, or an upload and an archived solution (similarity.py):
  the points of the problems they share;
- close to the reference solution: uploads whose module matches the reference. When more than
  half of the graded class does, a match says nothing of one student (the reference is the
  natural solution, or it reached everyone): no section, one "checked" line that counts them.

Nothing here decides a grade; each entry is for a person to look at.
"""

from ..batch import firstscreen
from .similarity import REFERENCE_NAME


def _pairs(report: dict) -> tuple[list[dict], list[dict]]:
    """(pairs of two uploads or an upload and the archive, uploads close to the reference)."""
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
            copies.append({"students": [a] if b.startswith("/") else [a, b],
                           "other": b if b.startswith("/") else "", "what": what, "points": points})
    return copies, reference


def act_on(report: dict, uploads: list[dict]) -> dict:
    """The first screen (firstscreen.first_screen of ``uploads``, the facts ``build`` gathered),
    the likely copies and the uploads close to the reference after the batch's own sections."""
    more, quiet = [], []
    copies, reference = _pairs(report)
    if report.get("similarity") is None:
        quiet.append("similarity not compared")
    elif copies:
        more.append({"kind": "copies", "entries": copies})
    else:
        quiet.append("no likely copy")
    if reference:
        if len(reference) * 2 > report["graded"]:  # most of the class: nobody in particular
            quiet.append(f"{len(reference)} of {report['graded']} uploads close to the reference solution, most "
                         f"of the class: its natural form (Similar code lists them)")
        else:
            more.append({"kind": "reference", "entries": reference})
    return firstscreen.first_screen(uploads, more, quiet)


def lines(report: dict) -> list[str]:
    """The terminal's first screen: the page's own words (firstscreen.lines)."""
    return firstscreen.lines(report["act_on"])
