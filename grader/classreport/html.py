"""report.html: one self-contained page (no network, no script: it opens from disk anywhere).

Plots are inline SVG drawn here; every text that could come from a submission (keys, names,
messages, code) goes through ``esc`` (html.escape, quotes included), so an upload can add no
markup, and the page carries no <script> at all.
"""

from html import escape

from ..batch.attention import gpu_line
from ..text import clean, one_line
from ..batch.firstscreen import SHOWN, SHOWN_PARTIAL, advice
from .stats import MIN_GROUP, MIN_STUDENTS, SMALL
from .words import incident_how, too_large_by_student, too_large_limit, who

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}.num{text-align:right}.flag{color:#a40000}
.grid{display:flex;flex-wrap:wrap;gap:16px}.card{border:1px solid #ddd;padding:8px;border-radius:4px}
pre{font:12px/1.3 monospace;background:#fafafa;border:1px solid #eee;padding:6px;max-height:360px;
overflow:auto;white-space:pre-wrap;margin:0}mark{background:#ffe08a}.pair{display:flex;gap:8px}
.pair>div{flex:1;min-width:0}small{color:#666}
summary{font-size:16px;margin-top:20px;cursor:pointer}
.act{border:2px solid #d9a400;background:#fffaeb;border-radius:6px;padding:4px 16px 8px;margin:12px 0}
.act h2{border:0;margin:8px 0 4px}.act li{margin:6px 0}.act ul{padding-left:20px;margin:4px 0}
.act .todo{color:#555;font-size:13px}.act .more{color:#555}
"""


def esc(text) -> str:
    """A name or a line: controls, bidi overrides and lone surrogates gone (text.one_line), escaped."""
    return escape(one_line(text), quote=True)


def esc_code(text: str) -> str:
    """Code in a pane: its lines kept; controls and bidi overrides gone (text.clean), escaped."""
    return escape(clean(text), quote=True)


def _fmt(x) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}" if isinstance(x, float) and x != int(x) else f"{x:g}" if isinstance(x, float) else esc(x)


def histogram_svg(hist: dict, title: str, width: int = 260, height: int = 120) -> str:
    counts, edges = hist["counts"], hist["edges"]
    top = max(counts) or 1
    bar = (width - 30) / len(counts)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 34}" role="img" '
             f'aria-label="{esc(title)}"><text x="4" y="12" font-size="12">{esc(title)}</text>']
    for i, c in enumerate(counts):
        h = (height - 20) * c / top
        x, y = 24 + i * bar, 18 + (height - 20) - h
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" fill="#4a78c2">'
                     f'<title>{_fmt(edges[i])}–{_fmt(edges[i + 1])}: {c}</title></rect>')
        if c:
            parts.append(f'<text x="{x + bar / 2 - 4:.1f}" y="{y - 2:.1f}" font-size="10">{c}</text>')
    parts.append(f'<line x1="22" y1="{height - 2}" x2="{width - 4}" y2="{height - 2}" stroke="#888"/>')
    parts.append(f'<text x="20" y="{height + 12}" font-size="10">0</text>'
                 f'<text x="{width - 30}" y="{height + 12}" font-size="10">{_fmt(edges[-1])}</text></svg>')
    return "".join(parts)


def _table(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    classes = classes or [""] * len(header)
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td class="{c}">{cell}</td>' for c, cell in zip(classes, row)) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _describe_row(name: str, d: dict) -> list:
    return [esc(name), _fmt(d["mean"]), _fmt(d["median"]), f"{_fmt(d['q1'])}–{_fmt(d['q3'])}",
            _fmt(d["max_possible"]), str(d["full"]), str(d["zero"])]


def _marked(text: str, spans: list[list[int]]) -> str:
    out, at = [], 0
    for a, b in sorted(spans):
        if a < at:
            a = at
        if b <= a:
            continue
        out.append(esc_code(text[at:a]) + "<mark>" + esc_code(text[a:b]) + "</mark>")
        at = b
    out.append(esc_code(text[at:]))
    return "".join(out)


def _folded(title: str, body: str) -> str:
    return f"<details><summary>{esc(title)}</summary>{body}</details>"


def _too_few(report: dict, judged: int) -> str:
    left = len(report["items"]) - judged
    return (f"{left} of {len(report['items'])} tests had fewer than {MIN_STUDENTS} students: too few to judge by "
            f"discrimination (its standard error is about 1/sqrt(n), over 0.3 below {MIN_STUDENTS}), and no test is "
            f"doubted on fewer than {MIN_GROUP} students passing or failing it.")


def panel(report: dict) -> str:
    """The first screen: "What to act on" (firstscreen.first_screen's facts, the terminal's
    words), each section linked to the table below that lists it all, its first ``SHOWN``
    students by name with their points and what to do (a note's advice by its kind); the partial
    uploads counted under it; one line when there is nothing."""
    facts = report["act_on"]
    out = ['<section class="act" id="act"><h2>What to act on</h2>']
    if facts["sections"]:
        out.append("<ul>")
        for s in facts["sections"]:
            head = f'<a href="#{s["anchor"]}"><strong>{esc(s["head"])}</strong></a>'
            rows = "".join(f"<li>{esc(e['text'])}</li>" for e in s["entries"][:SHOWN])
            if len(s["entries"]) > SHOWN:
                rows += f'<li class="more"><a href="#{s["anchor"]}">and {len(s["entries"]) - SHOWN} more</a></li>'
            rows += "".join(f'<li class="todo">advice: {esc(a)}</li>' for a in s.get("advice", ()))
            out.append(f'<li>{head}. <span class="todo">{esc(s["todo"])}.</span><ul>{rows}</ul></li>')
        out.append("</ul>")
        if facts["quiet"]:
            out.append(f"<p><small>Checked: {esc('; '.join(facts['quiet']))}.</small></p>")
    else:
        out.append(f"<p>Nothing to act on: {esc('; '.join(facts['quiet']))}.</p>")
    partial = facts["partial"]["entries"]
    if partial:
        names = "; ".join(esc(e["who"]) for e in partial[:SHOWN_PARTIAL])
        more = f" and {len(partial) - SHOWN_PARTIAL} more" if len(partial) > SHOWN_PARTIAL else ""
        out.append(f'<p><small><a href="#partial">Below: {esc(facts["partial"]["head"])}</a>: {names}{more}.</small></p>')
    if facts.get("gpu"):
        out.append(f"<p>{esc(gpu_line(facts['gpu']))}.</p>")
    out.append("</section>")
    return "".join(out)


def _listed(report: dict, kind: str) -> list[dict]:
    """The entries of the first screen's section ``kind`` (all of them), or []."""
    return next((s["entries"] for s in report["act_on"]["sections"] if s["kind"] == kind), [])


def render(report: dict, code: dict[str, dict[str, str]]) -> str:
    """The page, from ``build``'s report and each student's graded modules (key -> problem -> text).
    It opens on what to act on (``panel``), then the sections that detail it; a section with
    nothing to say is one name in the closing "nothing to report" line; in a class under
    ``SMALL`` the item analysis starts folded."""
    name = lambda key: esc(who(report, key))  # noqa: E731 (the roster's names, and the folder)
    t = report["total"]
    small = report["graded"] < SMALL
    quiet: list[str] = []  # the sections that had nothing to say
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Class report</title>"
             f"<style>{STYLE}</style></head><body><h1>Class report</h1>",
             f"<p>{report['students']} upload(s) from {report['people']} student(s), {report['graded']} graded, "
             f"out of {_fmt(report['possible'])} points."
             f" <small>Nothing here changes a grade; the similarity pairs are evidence for a person.</small></p>"]
    parts.append(panel(report))
    charged = _listed(report, "charged")
    if charged:
        parts.append('<h2 id="charged">Charged for a forbidden shortcut</h2><p><small>A forbidden call seen to run '
                     "for a ruled function, or removed code used: every test of that function scores 0 (the "
                     "student's report quotes the rule). What re-teach counts per function, by name here."
                     "</small></p>")
        parts.append(_table(["student", "what was used", "points taken"],
                            [[esc(e["who"]), esc(e["what"]), _fmt(float(e["points"]))] for e in charged],
                            ["", "", "num"]))
    broken = _listed(report, "broken")
    if broken:
        parts.append('<h2 id="incidents">Did not import, timeouts and crashes</h2><p><small>Each module that does '
                     "not import (its problem's tests fail for it), each function that hung, crashed or killed its "
                     "worker or ran out of memory (it cost only the tests that call it), and each grading that "
                     "crashed or was interrupted (it has no grade: run the batch again).</small></p>")
        parts.append(_table(["student", "what happened", "points lost"],
                            [[esc(e["who"]), esc(e["what"]), _fmt(float(e["points"]))] for e in broken],
                            ["", "", "num"]))
    if report["incidents"]:
        parts.append("<h3>Each function that hung or crashed</h3>")
        parts.append(_table(["student", "what", "what happened", "points lost"], [
            [name(i["student"]), esc(i["what"]), esc(incident_how(i)), _fmt(float(i.get("points", 0.0)))]
            for i in report["incidents"]], ["", "", "", "num"]))
    if not broken:
        quiet.append("modules that do not import, timeouts and crashes")
    if report.get("review"):  # first: what a person must read (no point was taken for any of it)
        parts.append('<h2 id="review">Notes for review</h2><p><small>Constructs that could have blinded the honest-work '
                     "watch. No point was taken for any of them: read each line, and regrade by hand if it hid "
                     "a forbidden shortcut.</small></p>")
        parts.append(_table(["student", "where", "what", "seen", "points at stake", "advice (by kind)"], [
            [name(r["student"]), esc(f"{r['file']}:{r['line']}"), esc(f"{r['kind']}: {r['construct']}"),
             esc(r["seen"]), _fmt(r["at_stake"]), esc(advice(r["kind"]))] for r in report["review"]],
            ["", "", "", "", "num", ""]))
    zero = _listed(report, "zero")
    if zero:
        parts.append('<h2 id="low">At zero or near zero</h2><p><small>Uploads that could not be graded, the stubs '
                     "as given, and totals under a tenth of the points where what was handed in does not work "
                     "either: often the wrong files. A student named above (charged, or a module that does not "
                     "import) is not named again.</small></p>")
        parts.append(_table(["student", "why", "points not earned"],
                            [[esc(e["who"]), esc(e["what"]), _fmt(float(e["points"]))] for e in zero],
                            ["", "", "num"]))
    partial = report["act_on"]["partial"]["entries"]
    if partial:
        parts.append(f'<h2 id="partial">Partial uploads ({len(partial)})</h2><p><small>Some problems not handed '
                     "in or the stub as given, and what was handed in works: nothing to act on; their missing "
                     "problems score 0 as they should.</small></p>")
        parts.append(_table(["student", "what was handed in"],
                            [[esc(e["who"]), esc(e["what"])] for e in partial]))
    parts.append("<h2>Scores</h2>")
    if t.get("n"):
        rows = [_describe_row("total", t) + [""]] + [
            _describe_row(p["problem"], p) + [str(len(p["not_attempted"])) if p["not_attempted"] else ""]
            for p in report["problems"] if p.get("n")]
        parts.append(_table(["", "mean", "median", "quartiles", "out of", "full marks", "at 0", "not attempted"], rows,
                            ["", "num", "num", "num", "num", "num", "num", "num"]))
        parts.append("<p><small>A problem's figures are over the students who attempted it (a module missing or "
                     "the stub as given is no attempt); the total's over every graded upload.</small></p>")
        plots = [histogram_svg(t["histogram"], "total")] + [
            histogram_svg(p["histogram"], p["problem"], 200, 90) for p in report["problems"] if p.get("n")]
        parts.append('<div class="grid">' + "".join(f'<div class="card">{svg}</div>' for svg in plots) + "</div>")
    if report["statuses"]:
        parts.append("<h3>Statuses</h3>" + _table(["status", "students", "who"], [
            [esc(k), str(len(v)), ", ".join(map(name, v))] for k, v in report["statuses"].items()]))
    judged = sum(1 for i in report["items"] if i.get("judged", True))
    if report["doubt"]:
        parts.append('<h2 id="doubt">Tests to doubt</h2>')
        if judged < len(report["items"]):
            parts.append(f"<p><small>{_too_few(report, judged)}</small></p>")
        parts.append(_table(["test", "problem", "pass rate", "discrimination", "within its problem", "why"], [
            [esc(f"{i['number']} {i['name']}"), esc(i["problem"]), _fmt(i["pass_rate"]), _fmt(i["discrimination"]),
             _fmt(i.get("within")), f'<span class="flag">{esc("; ".join(i["flags"]))}</span>'] for i in report["doubt"]]))
    elif report["items"] and not judged:
        parts.append(f'<p id="doubt"><small>Tests to doubt: {_too_few(report, judged)}</small></p>')
    else:
        quiet.append("tests to doubt (none that nobody passes or that the better students fail more)")
    if report.get("redundant"):
        names = {i["number"]: i["name"] for i in report["items"]}
        body = ("<p><small>In this class each group adds one test's information: one may be redundant, or they "
                "share one cause. No test is doubted for it" + (f"; in a class of {report['graded']} many share a "
                                                                  "pattern by chance" if small else "")
                + ".</small></p>" + _table(["tests", "first of them"], [
                    [esc(" = ".join(g["tests"])), esc(names.get(g["tests"][0], g["name"]))] for g in report["redundant"]]))
        parts.append(_folded(f"Tests with the same outcome for every student ({len(report['redundant'])} groups)", body))
    teach = []
    if report["mistakes"]:
        teach.append("<h3>Named mistakes</h3>" + _table(["mistake", "students", "tests", "handout"], [
            [esc(m["name"]), str(m["students"]), esc(", ".join(m["tests"])), esc(m["handout"])]
            for m in report["mistakes"]], ["", "num", "", ""]))
    else:
        quiet.append("named mistakes")
    top = sorted(report["messages"], key=lambda m: -m["students"])[:15]
    if top:
        teach.append("<h3>Common failures without a named mistake</h3>" + _table(["test", "message", "students"], [
            [esc(f"{m['number']} {m['name']}"), esc(m["message"]), str(m["students"])] for m in top], ["", "", "num"]))
    else:
        quiet.append("failures without a named mistake")
    if report["honest_work"]:
        teach.append("<h3>Honest-work violations</h3>" + _table(["function", "used", "students"], [
            [esc(h["function"]), esc(h["used"]), str(h["students"])] for h in report["honest_work"]], ["", "", "num"]))
    else:
        quiet.append("honest-work violations")
    if teach:
        parts.append("<h2>What to re-teach</h2>" + "".join(teach))
    if report["items"]:
        body = ("<p><small>pass rate: the share of students who passed (of those it ran for and who attempted its "
                "problem); discrimination: the corrected point-biserial correlation of the test with the rest of the "
                "total (and, within its problem, with the rest of that problem's score).</small></p>"
                + _table(["test", "points", "n", "pass rate", "discrimination", "within its problem"], [
                    [esc(f"{i['number']} {i['name']}"), _fmt(i["points"]), str(i["n"]), _fmt(i["pass_rate"]),
                     _fmt(i["discrimination"]) if i.get("judged", True) else "too few",
                     _fmt(i.get("within")) if i.get("judged", True) else "too few"] for i in report["items"]],
                    ["", "num", "num", "num", "num", "num"]))
        parts.append(_folded(f"Item analysis ({len(report['items'])} tests; folded: a class of {report['graded']})", body)
                     if small else f"<h2>Item analysis</h2>{body}")
    if report.get("flaky"):
        parts.append("<h2>Flaky tests</h2>" + _table(["test", "students whose gradings disagreed"], [
            [esc(f"{f['number']} {f['name']}"), ", ".join(map(name, f["students"]))] for f in report["flaky"]]))
    elif report.get("flaky") is not None:
        quiet.append("flaky tests")
    if report.get("regrades"):
        parts.append("<h2>What the last regrade or rescore changed</h2>" + _table(["student", "why", "before", "after", "change",
                                                                   "tests flipped"], [
            [name(r["student"]), esc(r["why"]), _fmt(r["before"]), _fmt(r["after"]), f"{r['delta']:+g}",
             esc(", ".join(f"{f['number']} {f['before']}→{f['after']}" for f in r["flipped"]))]
            for r in report["regrades"]]))
        parts.append(_tests_changed(report["regrades"], name))
    sim = report.get("similarity")
    if sim is None:
        quiet.append("similar code (not compared)")
    elif not sim["pairs"]:
        quiet.append(f"similar code (no pair at or above {sim['threshold']:g}, {sim['compared']} comparisons)")
    else:
        parts.append('<h2 id="similar">Similar code</h2>')
        parts.append(f"<p>{len(sim['pairs'])} pair(s) with both files at least {sim['threshold']:g} covered by the "
                     f"match ({sim['compared']} comparisons after the pre-filter).</p>")
        # one row per two uploads (or an upload and a known text), their modules in it: a student
        # whose every module is the reference is one row, not twelve
        together: dict[tuple[str, str], list[dict]] = {}
        for p in sim["pairs"]:
            together.setdefault((p["a"], p["b"]), []).append(p)
        rows = sorted(together.items(), key=lambda kv: (-len(kv[1]), -max(p["score"] for p in kv[1]), kv[0]))
        parts.append(_table(["a", "b", "modules", "problems (score)"], [
            [name(a), name(b), str(len(ps)), esc(", ".join(f"{p['problem']} ({_fmt(p['score'])})" for p in ps))]
            for (a, b), ps in rows[:50]], ["", "", "num", ""]))
        for p in sim["pairs"]:
            if "a_spans" not in p:
                break
            left = code.get(p["a"], {}).get(p["problem"])
            right = code.get(p["b"], {}).get(p["problem"])
            if left is None or right is None:
                continue
            parts.append(_folded(f"{p['problem']}: {who(report, p['a'])} ~ {who(report, p['b'])} ({_fmt(p['score'])}, "
                                 f"covered {_fmt(p['a_share'])} / {_fmt(p['b_share'])})",
                                 f'<div class="pair"><div><pre>{_marked(left, p["a_spans"])}</pre></div>'
                                 f'<div><pre>{_marked(right, p["b_spans"])}</pre></div></div>'))
    if sim is not None and sim.get("too_large"):
        parts.append(f"<p>Too large to compare (over {too_large_limit()}, not fingerprinted): "
                     + "; ".join(f"{name(k)} ({esc(', '.join(f'{p}.py' for p in ps))})"
                                 for k, ps in too_large_by_student(sim).items()) + ".</p>")
    if quiet:
        parts.append(f'<p class="quiet"><small>Nothing to report: {esc("; ".join(quiet))}.</small></p>')
    parts.append("</body></html>")
    return "\n".join(parts)


def _tests_changed(regrades: list[dict], name) -> str:
    """Why scores moved where the tests changed between the two grades: each changed test whose
    verdict or points moved for some upload, what changed, why, and whose verdict it moved
    (``name``: a student's key as the page names them, escaped)."""
    rows: dict[str, dict] = {}
    for r in regrades:
        for t in r.get("tests_changed", ()):
            rows.setdefault(t["test"], {**t, "students": []})["students"].append(r["student"])
    if not rows:
        return ""
    return ("<h3>Why the tests changed</h3><p>The tests changed between the two grades "
            "(tests/rubric_history.json; <code>python -m grader history</code>): each changed test whose "
            "verdict or points moved for an upload, with those uploads (<code>python -m grader history "
            "BEFORE AFTER</code> explains one upload test by test).</p>" + _table(["test", "what changed", "why", "students"], [
                [esc(t), esc(r["what"]), esc(r["why"]), ", ".join(map(name, r["students"]))]
                for t, r in sorted(rows.items())]))
