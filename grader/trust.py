"""The trust model's honest-work table, rule by rule: what enforces each rule and what routes
remain, each with the points it puts at stake. README.md's tables are made from this module
(`python -m grader rubric --write`; a self-test checks they are current).

A rule is enforced by up to four things, strongest first:
- absent: what it forbids is not in the sandbox's Python (seam/absent.py, the rule's ``absent``);
- the allow-list: a graded module that could blind the watch is refused before it runs
  (seam/allowed.py), which costs every ruled function;
- watched: seam/honest.py sees the forbidden code run (how, by the rule's kind below);
- behaviour: tests whose cases the forbidden library cannot answer (a format torch has no dtype
  for, a layout it will not build): points a shortcut loses even with the watch blinded, as
  measured by tests/self/behaviour.py (its record, grader.paths.BEHAVIOUR).
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
    Route("`torch.finfo(dtype).max` / `.eps` ... in the dtype limits",
          "`torch.finfo` is a C type whose attributes no profiler or mode sees: left out of the rule rather "
          "than pretended (the formats torch has no dtype for are the behaviour cases)",
          ("dtypes.max_value", "dtypes.eps", "dtypes.smallest_normal", "dtypes.smallest_subnormal")),
    Route("a module reached through an object library code hands back, which the allow-list does not follow "
          "(a callback a library calls with a module, an attribute of what a library returns), then the "
          "watch's hooks removed and restored",
          "every check runs in the student's process; the allow-list reads the names the text holds", EVERY),
    Route("a dunder's name built at run time and read off `self` (`getattr(self, name)`): one step into "
          "its own class and bound methods",
          "names on `self` are left free for honest code (`getattr(self, key.lower())`); every further step "
          "off what that returns is refused unless its name is provably no dunder", EVERY),
    Route("bytes unpickled (`pickle.loads`, `torch.load(weights_only=False)`): unpickling calls what the bytes "
          "name, ctypes or the seam among them",
          "the allow-list reads code, not data; torch.save / torch.load of a checkpoint is honest code", EVERY),
    Route("a process started at import (the allow-list lets `subprocess` and `multiprocessing` be imported), "
          "fed through a pipe",
          "no thread or process is started under the function, and nothing of theirs runs in it", EVERY),
    Route("an identity einops call in front of hand-written `view` / `transpose`",
          "what torch computes from an einops result counts as einops' (a correct `rearrange` then `@` must "
          "pass)", _of("named axes through einops")),
    Route("an AdamW / Adam that a probe hands to `optimizer_state_bytes`, `memory_by_stage` or the training "
          "loop (the seam's hand-written twin of torch's), kept and driven later by their `AdamW`",
          "the probes must hand over an optimizer that works as torch's, so its class stays in the worker behind "
          "those objects; its code running under a ruled function is still seen by the watch (by its file)",
          ("optim.AdamW",)),
    Route("`torch.profiler` / `torch.autograd.profiler` for FLOPs",
          "`with_flops` is a field of the profiler's config, not code of its own: taking out what starts the "
          "profiler (`torch._C._autograd._prepare_profiler` / `_enable_profiler`) would leave `record_function` "
          "and the optimizers working but take `torch.profiler` from every problem; the watch sees their code "
          "run", _of("FLOPs counted from the shapes")),
    Route("numpy or plain Python doing what a forbidden torch call would",
          "the rules name PyTorch's code; a reimplementation of it is the student's own work", ()),
)


def measured() -> dict:
    """tests/self/behaviour.py's record, function by function: {"tests": {test: points},
    "how": [test], "taken": {shortcut: [test]}}; {} where it was not recorded."""
    record = json.loads(BEHAVIOUR.read_text()) if BEHAVIOUR.exists() else {}
    return {f: entry for problem in record.values() for f, entry in problem["functions"].items()}


def _tests(functions, record) -> dict[tuple[str, str], float]:
    """(problem, test) -> points, for the tests that call any of ``functions``."""
    return {(f.split(".")[0], test): points for f in functions for test, points in record.get(f, {}).get("tests", {}).items()}


def _points(tests: dict) -> str:
    return f"{sum(tests.values()):g}"


def behaviour(functions, record) -> str:
    """What the best measured shortcut of each function loses with the watch blinded, and which
    functions no shortcut was measured for."""
    lost, unmeasured = {}, []
    for f in functions:
        entry = record.get(f)
        if not entry or not entry["taken"]:
            unmeasured.append(f"`{f}`")
            continue
        best = max(entry["taken"].values(), key=lambda names: sum(entry["tests"][n] for n in names))
        lost.update({(f.split(".")[0], t): p for t, p in entry["tests"].items() if t not in best})
    text = f"{_points(lost)} pt" + (f" ({len(lost)} test{'s' * (len(lost) != 1)})" if lost else "")
    return text + (f"; no shortcut measured for {', '.join(unmeasured)}" if unmeasured else "")


def rules_table() -> str:
    """One row per rule: its functions and points, and each thing that enforces it."""
    record = measured()
    lines = ["| rule | functions | points | not in the sandbox (seam/absent.py) | refused before it runs | "
             "watched by | behaviour: lost by a shortcut the watch cannot see |", "|---|---|---|---|---|---|---|"]
    by_rule: dict[Rule, list[str]] = {}
    for function, rule in RULED.items():
        by_rule.setdefault(rule, []).append(function)
    for rule, functions in by_rule.items():
        how = [SEEN[k] for k in SEEN if getattr(rule, k)]
        gone = ", ".join(f"`{m}`" for m in rule.absent) or "nothing (honest code elsewhere needs it)"
        lines.append(f"| {rule.name} | {', '.join(f'`{f}`' for f in functions)} | {_points(_tests(functions, record))} "
                     f"| {gone} | the allow-list (seam/allowed.py) | {'; '.join(how)} | {behaviour(functions, record)} |")
    return "\n".join(lines)


def routes_table() -> str:
    """Every route that remains, with the points of the tests it reaches."""
    record = measured()
    lines = ["| shortcut | why it is not seen | points at stake |", "|---|---|---|"]
    for route in ROUTES:
        functions = tuple(RULED) if route.functions == EVERY else route.functions
        at_stake = f"{_points(_tests(functions, record))} (the tests of {EVERY})" if route.functions == EVERY else (
            _points(_tests(functions, record)) if functions else "none: that is the work")
        lines.append(f"| {route.shortcut} | {route.why} | {at_stake} |")
    return "\n".join(lines)
