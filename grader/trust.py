"""The trust model's honest-work table, rule by rule: what enforces each rule and what a
shortcut still keeps, each with its points. docs/honest-work.md's tables are made from this module
(`python -m grader rubric --write`; a self-test checks they are current).

Points rest on evidence, strongest first:
- absent: what a rule forbids is not in the sandbox's Python (seam/absent.py, the rule's
  ``absent``): a shortcut through it raises, whatever blinded the watch;
- behaviour: tests whose cases the forbidden library cannot answer (a format torch has no dtype
  for, a layout it will not build): the points a shortcut loses even with the watch blinded, as
  measured by tests/self/behaviour.py (its record, grader.paths.BEHAVIOUR);
- watched: seam/honest.py sees the forbidden code run, and charges the function it ran for.
A construct that could blind the watch takes no point: it is a note for review (seam/review.py).
"""

import dataclasses
import json

from .paths import BEHAVIOUR
from seam.problems import RULED, Rule

# How the watch sees each kind of rule (a Rule's non-empty field -> the words).
SEEN = {"modules": "the profiler: their code running under the function, or a class of theirs as a base",
        "ops": "the profiler (C calls by name) and a TorchFunctionMode (every spelling)",
        "casts": "a TorchDispatchMode (every ATen op, also casts made in C++); the profiler too where the "
                 "modules reach torch by names made at run time",
        "must": "a TorchFunctionMode (what einops' code computes with torch, and what is computed from that); "
                "the profiler too where the modules reach torch by names made at run time"}
EVERY = "every ruled function"


@dataclasses.dataclass(frozen=True)
class Route:
    """A way round a rule that no check closes: the points of the tests that call ``functions``
    are at stake (``EVERY``: all ruled functions; () for none)."""
    shortcut: str
    why: str
    functions: tuple[str, ...] | str


def _of(*names: str) -> tuple[str, ...]:
    """The ruled functions of the rules named (``Rule.name``)."""
    return tuple(f for f, rule in RULED.items() if rule.name in names)


ROUTES = (
    Route("a construct that blinds the watch (a thread, a profiler set from C, torch's mode stacks popped, "
          "a module reached by a name made at run time), then the library's shortcut",
          "the watch runs in the student's process; the construct is a note for review naming the student "
          "(seam/review.py), never a charge: what the shortcut keeps is the last column of the table above",
          EVERY),
    Route("`torch.finfo(dtype).max` / `.eps` ... in the dtype limits",
          "`torch.finfo` is a C type whose attributes no profiler or mode sees: left out of the rule rather "
          "than pretended (the formats torch has no dtype for are the behaviour cases)",
          ("dtypes.max_value", "dtypes.eps", "dtypes.smallest_normal", "dtypes.smallest_subnormal")),
    Route("an identity einops call in front of hand-written `view` / `transpose`",
          "what torch computes from an einops result counts as einops' (a correct `rearrange` then `@` must "
          "pass)", _of("named axes through einops")),
    Route("`torch.profiler` / `torch.autograd.profiler` for FLOPs",
          "`with_flops` is a field of the profiler's config, not code of its own: taking out what starts the "
          "profiler (`torch._C._autograd._prepare_profiler` / `_enable_profiler`) would leave `record_function` "
          "and the optimizers working but take `torch.profiler` from every problem; the watch sees their code "
          "run", _of("FLOPs counted from the shapes")),
    Route("numpy or plain Python doing what a forbidden torch call would",
          "the rules name PyTorch's code; a reimplementation of it is the student's own work", ()),
)


def measured(facts=None) -> dict:
    """tests/self/behaviour.py's record, function by function: {"tests": {test: points},
    "how": [test], "taken": {shortcut: [test]}}; {} where it was not recorded. With ``facts``
    (the collected tests, grader/rubric.py ``collect``), each test's points are its marker's now:
    the record keeps which tests a shortcut passes, a verdict, and a change of points alone
    re-runs no shortcut (its inputs hash leaves the markers' points out)."""
    record = json.loads(BEHAVIOUR.read_text()) if BEHAVIOUR.exists() else {}
    now = {(f.problem, f.nodeid.split("::")[-1]): f.points for f in facts or ()}
    return {f: {**entry, "tests": {t: now.get((problem, t), points) for t, points in entry["tests"].items()}}
            for problem, record_of in record.items() for f, entry in record_of["functions"].items()}


def _tests(functions, record) -> dict[tuple[str, str], float]:
    """(problem, test) -> points, for the tests that call any of ``functions``."""
    return {(f.split(".")[0], test): points for f in functions for test, points in record.get(f, {}).get("tests", {}).items()}


def _points(tests: dict) -> str:
    return f"{sum(tests.values()):g}"


def kept(functions, record) -> str:
    """The points the best measured shortcut keeps with the watch blinded: the tests of
    ``functions`` that no function's best shortcut fails (a test of a function with no measured
    shortcut counts as kept), and which functions no shortcut was measured for."""
    tests, lost, unmeasured = _tests(functions, record), set(), []
    for f in functions:
        entry = record.get(f)
        if not entry or not entry["taken"]:
            unmeasured.append(f"`{f}`")
            continue
        best = max(entry["taken"].values(), key=lambda names: sum(entry["tests"][n] for n in names))
        lost |= {(f.split(".")[0], t) for t in entry["tests"] if t not in best}
    keep = {k: v for k, v in tests.items() if k not in lost}
    text = f"{_points(keep)} pt" + (f" ({len(keep)} test{'s' * (len(keep) != 1)})" if keep else "")
    return text + (f"; no shortcut measured for {', '.join(unmeasured)}" if unmeasured else "")


def rules_table(facts=None) -> str:
    """One row per rule: its functions and points, and each thing that enforces it."""
    record = measured(facts)
    lines = ["| rule | functions | points | not in the sandbox (seam/absent.py) | watched by "
             "| kept by the best shortcut with the watch blinded (measured) |", "|---|---|---|---|---|---|"]
    by_rule: dict[Rule, list[str]] = {}
    for function, rule in RULED.items():
        by_rule.setdefault(rule, []).append(function)
    for rule, functions in by_rule.items():
        how = [SEEN[k] for k in SEEN if getattr(rule, k)]
        gone = ", ".join(f"`{m}`" for m in rule.absent) or "nothing (honest code elsewhere needs it)"
        lines.append(f"| {rule.name} | {', '.join(f'`{f}`' for f in functions)} | {_points(_tests(functions, record))} "
                     f"| {gone} | {'; '.join(how)} | {kept(functions, record)} |")
    return "\n".join(lines)


def routes_table(facts=None) -> str:
    """Every route that remains, with the points it reaches and what its best measured shortcut
    keeps with the watch blinded (a route to every ruled function: what each rule keeps)."""
    record = measured(facts)
    lines = ["| shortcut | why it is not seen | points it reaches: kept by the best measured shortcut |",
             "|---|---|---|"]
    for route in ROUTES:
        if route.functions == EVERY:
            by_rule: dict = {}
            for function, rule in RULED.items():
                by_rule.setdefault(rule.name, []).append(function)
            keeps = sum(float(kept(fs, record).split(" pt")[0]) for fs in by_rule.values())
            at_stake = f"{_points(_tests(tuple(RULED), record))} (the tests of {EVERY}): {keeps:g} pt, each rule's above"
        elif route.functions:
            at_stake = f"{_points(_tests(route.functions, record))}: {kept(route.functions, record)}"
        else:
            at_stake = "none: that is the work"
        lines.append(f"| {route.shortcut} | {route.why} | {at_stake} |")
    return "\n".join(lines)
