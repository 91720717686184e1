"""What changed between two readings of the tests (facts.extract), per test, and how a run of
change sets reads as one line per test.

A change set's record (``diff``): {"tests": {test id: change}, "shared": {definition: tests
reaching it}}, a change holding any of
  points [a, b]; tolerance {name: [a, b]}; cases [names]; code [names] ("test body" for its own);
  added points; removed points; split_into [ids] / split_from id; merged_from [ids] / merged_into
  id; renamed_from id / renamed_to id.
A split is a heuristic: one test removed and two or more added in its module whose names start
with its name's stem, their points adding up to its points; a merge the other way round; a
rename a removed and an added test with the same body and points.
"""

from .facts import shared

BODY = "test body"


def _module(test_id: str) -> str:
    return test_id.partition("::")[0]


def _name(test_id: str) -> str:
    return test_id.partition("::")[2]


def _stems(name: str) -> list[str]:
    """A name and the name less its last ``_word`` (test_adamw_small -> test_adamw), as prefixes."""
    head = name.rpartition("_")[0]
    return [name] + ([head] if head.count("_") >= 1 else [])


def _parts(whole: str, pieces: list[str], points: dict) -> list[str] | None:
    """The pieces that are ``whole`` split (same module, a stem of its name, points adding up)."""
    for stem in _stems(_name(whole)):
        found = [p for p in pieces if _module(p) == _module(whole) and _name(p).startswith(stem)
                 and _name(p) != _name(whole)]
        if len(found) >= 2 and abs(sum(points[p] for p in found) - points[whole]) < 1e-9:
            return sorted(found)
    return None


def _tolerance(defs: dict, name: str) -> str | None:
    d = defs.get(name)
    return d["tol"] if d and d["kind"] == "tolerance" else None


def _changed_uses(old: dict, new: dict, a: dict, b: dict) -> dict:
    """The definitions of a test that changed between the readings, by kind."""
    out: dict = {}
    for q in sorted(set(a["uses"]) | set(b["uses"])):
        before, after = old["defs"].get(q) if q in a["uses"] else None, new["defs"].get(q) if q in b["uses"] else None
        if before is not None and after is not None and before["fp"] == after["fp"]:
            continue
        tol_a, tol_b = (_tolerance(old["defs"], q) if before else None), (_tolerance(new["defs"], q) if after else None)
        if tol_a is not None or tol_b is not None:
            if tol_a != tol_b:
                out.setdefault("tolerance", {})[q] = [tol_a, tol_b]
            continue
        kind = (after or before)["kind"]
        out.setdefault("cases" if kind == "cases" else "code", []).append(q)
    return out


def diff(old: dict | None, new: dict) -> dict:
    """One change set: ``new``'s tests against ``old``'s (None: every test is added)."""
    old = old or {"tests": {}, "defs": {}}
    tests: dict = {}
    for t in sorted(set(old["tests"]) & set(new["tests"])):
        a, b = old["tests"][t], new["tests"][t]
        change = _changed_uses(old, new, a, b)
        if a["points"] != b["points"]:
            change["points"] = [a["points"], b["points"]]
        if a["body"] != b["body"]:
            change.setdefault("code", []).insert(0, BODY)
        if change:
            tests[t] = change
    removed = sorted(set(old["tests"]) - set(new["tests"]))
    added = sorted(set(new["tests"]) - set(old["tests"]))
    points = {t: old["tests"][t]["points"] for t in removed} | {t: new["tests"][t]["points"] for t in added}
    for r in list(removed):  # renamed: the same body and points under another name
        same = [a for a in added if new["tests"][a]["body"] == old["tests"][r]["body"] and points[a] == points[r]]
        if len(same) == 1:
            tests[r], tests[same[0]] = {"renamed_to": same[0]}, {"renamed_from": r}
            removed.remove(r), added.remove(same[0])
    for r in list(removed):
        parts = _parts(r, added, points)
        if parts:
            tests[r] = {"split_into": parts}
            for p in parts:
                tests[p] = {"split_from": r, "added": points[p]}
                added.remove(p)
            removed.remove(r)
    for a in list(added):
        parts = _parts(a, removed, points)
        if parts:
            tests[a] = {"merged_from": parts, "added": points[a]}
            for p in parts:
                tests[p] = {"merged_into": a}
                removed.remove(p)
            added.remove(a)
    tests.update({t: {"removed": points[t]} for t in removed})
    tests.update({t: {"added": points[t]} for t in added})
    changed_shared = {}
    for q, d in new["defs"].items():
        if shared(q) and d["kind"] != "tolerance" and old["defs"].get(q, {}).get("fp") != d["fp"] and old["tests"]:
            changed_shared[q] = d.get("tests", 0)
    return {"tests": dict(sorted(tests.items())), "shared": changed_shared}


def short(qualified: str, test_id: str = "") -> str:
    """A definition as a line names it: bare in the test's own module, else with its module
    less the leading "tests." ("common.optim.TRAJ", "probes.optim.run_closure")."""
    own = _module(test_id).removesuffix(".py").replace("/", ".") + "."
    if test_id and qualified.startswith(own):
        return qualified[len(own):]
    return qualified.removeprefix("tests.").removeprefix("seam.")


def _tol_text(name: str, a: str | None, b: str | None) -> str:
    """"TRAJ rtol 1e-05 -> 0.0001" where both are rtol/atol lists differing in values, else whole."""
    if a is None:
        return f"{name} {b} (new)"
    if b is None:
        return f"{name} {a} (no longer used)"
    pa, pb = (dict(p.split("=", 1) for p in t.split(", ")) if all("=" in p and "(" not in p for p in t.split(", "))
              else None for t in (a, b))
    if pa is not None and pb is not None and set(pa) == set(pb):
        return f"{name} " + ", ".join(f"{k} {pa[k]} -> {pb[k]}" for k in pa if pa[k] != pb[k])
    return f"{name} {a} -> {b}"


def compose(sets: list[tuple[dict, str]]) -> dict:
    """Change sets in order, each (its diff, its why), as one change per test: points and
    tolerances as chains (a -> b -> c, repeats dropped), names as unions, the whys in order."""
    out: dict = {}
    for change_set, why in sets:
        for t, c in change_set["tests"].items():
            o = out.setdefault(t, {"why": []})
            if why and why not in o["why"]:
                o["why"].append(why)
            if "points" in c:
                chain = o.setdefault("points", [c["points"][0]])
                chain.append(c["points"][1])
            for name, (a, b) in c.get("tolerance", {}).items():
                o.setdefault("tolerance", {}).setdefault(name, [a]).append(b)
            for key in ("cases", "code", "split_into", "merged_from"):
                if key in c:
                    o[key] = list(dict.fromkeys([*o.get(key, []), *c[key]]))
            for key in ("added", "removed", "split_from", "merged_into", "renamed_from", "renamed_to"):
                if key in c:
                    o[key] = c[key]
            gone = {"removed", "split_into", "merged_into", "renamed_to"} & set(c)
            o["last"] = "removed" if gone else "here"
    return out


def what(test_id: str, c: dict) -> str:
    """A composed change (``compose``) in words: "points 2 -> 3; tolerance TRAJ rtol ...". A test
    added since is told as added with its points now, one gone as gone: nothing else matters."""
    chain = [p for i, p in enumerate(c.get("points", [])) if i == 0 or p != c["points"][i - 1]]
    if c.get("last") == "removed":
        for key, verb in (("split_into", "split into"), ("merged_into", "merged into"), ("renamed_to", "renamed to")):
            if key in c:
                targets = c[key] if isinstance(c[key], list) else [c[key]]
                return f"{verb} {' and '.join(map(_name, targets))}"
        return f"removed ({c['removed']:g} pt)" if "removed" in c else "removed"
    if "added" in c:
        now = chain[-1] if chain else c["added"]
        for key, verb in (("split_from", "split from"), ("merged_from", "merged from")):
            if key in c:
                sources = c[key] if isinstance(c[key], list) else [c[key]]
                return f"{verb} {' and '.join(map(_name, sources))} ({now:g} pt)"
        return f"added ({now:g} pt)"
    parts = [f"renamed from {_name(c['renamed_from'])}"] if "renamed_from" in c else []
    if len(chain) > 1:
        parts.append("points " + " -> ".join(f"{p:g}" for p in chain))
    for name, tols in c.get("tolerance", {}).items():
        label = short(name, test_id)
        if len(tols) == 2 or tols[0] is None or tols[-1] is None:
            parts.append("tolerance " + _tol_text(label, tols[0], tols[-1]))
        else:
            parts.append(f"tolerance {label} " + " -> ".join(str(x) for x in tols))
    if c.get("cases"):
        parts.append("cases changed (" + ", ".join(short(q, test_id) for q in c["cases"]) + ")")
    if c.get("code"):
        parts.append("checking code changed (" + ", ".join(short(q, test_id) for q in c["code"]) + ")")
    return "; ".join(parts) or "changed"
