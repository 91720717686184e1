"""The trust model's honest-work tables (grader/trust.py): made from the registry and from the
record of what a shortcut earns with the watch blinded (tests/self/behaviour.py), which must be
current; the measurement itself is sound (a library-only shortcut answers what the library can,
and gives up where it cannot); every route's points are those of the tests it reaches."""

import pytest
import torch

from grader import trust
from seam import InProcess
from seam.problems import RULED
from tests.common.adamw_accounting import config
from tests.common.dtypes import FP16, f32, fmt
from tests.self import behaviour

RERUN = ("run `python -m tests.self.regen` (it reruns `python -m tests.self.behaviour record` for what is stale, "
         "then `python -m grader rubric --write`)")


def test_the_record_is_current_and_covers_every_ruled_function():
    record = behaviour.load()
    stale = behaviour.stale(record)
    assert not stale, f"tests/self/behaviour.json is stale for {stale}: {RERUN}"
    recorded = {f for entry in record.values() for f in entry["functions"]}
    assert recorded == set(RULED), f"the record's functions differ from the rules': {RERUN}"


def test_every_recorded_function_has_tests_and_a_shortcut_takes_only_those():
    for function, entry in trust.measured().items():
        assert entry["tests"], f"{function}: no graded test calls it"
        for shortcut, taken in entry["taken"].items():
            assert set(taken) <= set(entry["tests"]), (function, shortcut)
            assert set(entry["how"]) <= set(taken), (function, shortcut)  # a blinded watch passes them


def test_kept_counts_what_the_best_shortcut_keeps():
    record = {"p.f": {"tests": {"a": 1, "b": 2, "c": 4}, "how": [], "taken": {"x": ["a"], "y": ["a", "b"]}},
              "p.g": {"tests": {"c": 4}, "how": [], "taken": {}}}
    assert trust.kept(["p.f"], record) == "3 pt (2 tests)"  # y takes a and b: only c is lost
    # c is lost by p.f's best shortcut, so a shortcut of both keeps it not, whatever p.g's does
    assert trust.kept(["p.f", "p.g"], record) == "3 pt (2 tests); no shortcut measured for `p.g`"
    record["p.g"]["taken"] = {"z": ["c"]}
    record["p.h"] = {"tests": {"a": 1, "d": 8}, "how": [], "taken": {"w": ["d"]}}
    assert trust.kept(["p.f", "p.h"], record) == "10 pt (2 tests)"  # a lost by p.h's, c by p.f's


def test_a_route_reaching_every_ruled_function_counts_each_test_once():
    record = trust.measured()
    everything = trust._tests(tuple(RULED), record)
    assert len(everything) == len({(f.split(".")[0], t) for f in RULED for t in record[f]["tests"]})
    row = next(line for line in trust.routes_table().splitlines() if "blinds the watch" in line)
    assert f"| {sum(everything.values()):g} (the tests of every ruled function): " in row


def test_every_route_names_ruled_functions():
    for route in trust.ROUTES:
        if route.functions != trust.EVERY:
            assert set(route.functions) <= set(RULED), route.shortcut


@pytest.mark.parametrize("shortcut", behaviour.library_shortcuts(), ids=lambda s: s.qualified)
def test_a_library_shortcut_answers_what_the_library_can(shortcut, tmp_path):
    """Each measured shortcut is a working answer where torch can give one (so the points it
    takes are real) and gives up, not guesses, where torch cannot."""
    impl = InProcess(shortcut.build(tmp_path / "s"), package=f"trust_{tmp_path.name}", watched=False)
    ref = InProcess(behaviour.REFERENCE, package=f"trust_ref_{tmp_path.name}", watched=False)
    assert shortcut.qualified in _SMALL or shortcut.qualified in _BEYOND, "give it a case below"
    if shortcut.qualified in _SMALL:
        args = _SMALL[shortcut.qualified]
        got, want = impl.call(shortcut.qualified, *args), ref.call(shortcut.qualified, *args)
        assert torch.equal(got, want) if isinstance(want, torch.Tensor) else got == want, (got, want)
    if shortcut.qualified in _BEYOND:
        with pytest.raises(NotImplementedError):
            impl.call(shortcut.qualified, *_BEYOND[shortcut.qualified])


E3M4 = fmt("e3m4", 3, 4, True, True)
_SMALL = {"dtypes.round_to": (f32([0.1, 1.7, -3.3]), FP16), "dtypes.max_value": (FP16,), "dtypes.eps": (FP16,),
          "dtypes.smallest_normal": (FP16,), "dtypes.smallest_subnormal": (FP16,),
          "tensors.contiguous_strides": ((2, 3, 4),), "tensors.element_offset": ((3, 4), (1, 3), (2, -1), 5),
          "tensors.is_contiguous": ((3, 4), (1, 3)), "tensors.transpose": ((3, 4), (4, 1), 0, 1),
          "tensors.select": ((3, 4), (4, 1), 2, 1, -1), "tensors.narrow": ((3, 4), (4, 1), 0, 1, 1, 2),
          "tensors.view_strides": ((3, 4), (4, 1), (2, 6)), "tensors.reshape_copies": ((3, 4), (1, 3), (12,)),
          "flops.matmul_flops": (3, 5, 7), "flops.linear_flops": (100, 256, 512), "flops.training_flops": (7e9, 10**6),
          "flops.transformer_forward_flops": (config(97, 2, 3, 24, 8, 7), 64),
          "intensity.matmul_intensity": (64, 256, 1024, 2), "einops.attention_scores_flops": (2, 3, 5, 4, 8),
          "adamw_accounting.adamw_step_flops": (config(100, 16, 2, 32, 4, 64), 3),
          "adamw_accounting.training_days": (config(100, 16, 2, 32, 4, 64), 3, 10, 19.5e12, 0.5)}
_HUGE = ((2 ** 64, 3), (2 ** 63 + 3, 1))
_BEYOND = {"dtypes.round_to": (f32([0.1, 1.7, -3.3]), E3M4), "dtypes.eps": (E3M4,),
           "dtypes.nvfp4_quantize": (f32([0.5] * 16),),  # torch casts into no 4-bit float
           "tensors.contiguous_strides": (_HUGE[0],), "tensors.is_contiguous": _HUGE,
           "tensors.view_strides": (*_HUGE, (2 ** 63, -1)),
           "flops.matmul_flops": (2 ** 64, 3, 1), "flops.linear_flops": (2 ** 40, 2 ** 40, 1),
           "flops.training_flops": (70e9, 15e12),
           "flops.transformer_forward_flops": (config(97, 2, 3, 24, 8, 7), 2 ** 64),
           "intensity.matmul_intensity": (2 ** 40, 2 ** 40, 1, 2), "einops.attention_scores_flops": (1, 2 ** 64, 1, 1, 1),
           "adamw_accounting.adamw_step_flops": (config(100, 16, 2, 32, 4, 64), 2 ** 64),
           "adamw_accounting.training_days": (config(100, 16, 2, 32, 4, 64), 2 ** 64, 10, 19.5e12, 0.5)}


def test_the_tables_take_each_tests_points_from_its_marker_now():
    """The record keeps which tests a shortcut passes; the points are the markers' when the tables
    are made, so a re-weighting reruns no shortcut (its inputs hash leaves the points out:
    tests/self/unit/test_staleness.py) and the tables still say the new points."""
    import dataclasses
    from grader.rubric import collect
    facts = collect()
    record = trust.measured(facts)
    function, entry = next((f, e) for f, e in record.items() if e["taken"])
    test = next(iter(entry["tests"]))
    moved = [dataclasses.replace(x, points=x.points + 5)
             if (x.problem, x.nodeid.split("::")[-1]) == (function.split(".")[0], test) else x for x in facts]
    assert trust.measured(moved)[function]["tests"][test] == entry["tests"][test] + 5
    assert trust.rules_table(moved) != trust.rules_table(facts)
