"""A honest-work rule whose options cannot work together is refused when it is made
(seam/rule_check.py), with one line naming the rule and the options: each contradiction the
watch (seam/honest.py) would otherwise turn into a rule that never charges."""

import dataclasses

import pytest

from seam.problems import PROBLEMS, RULED, Problem, Rule, ruled
from seam.rule_check import refusal, torch_refusal

TEXT = dict(name="fits by hand", may_not="numpy's fits", why="the fit is the problem", handout="scaling",
            quote="fit it yourself")

# options -> what the one line must say (besides the rule's name)
CONTRADICTIONS = {
    "nothing to watch": (dict(), "forbids nothing the watch can see"),
    "another library's function as an op": (dict(ops=("numpy.polyfit",)), "ops='numpy.polyfit'"),
    "a module that is no dotted name": (dict(modules=("numpy/lib",)), "modules='numpy/lib'"),
    "must that is no dotted name": (dict(must="ein ops"), "must='ein ops'"),
    "numbers with must": (dict(must="einops", numbers=True), "numbers=True"),
    "numbers with a module outside torch": (dict(modules=("numpy",), numbers=True), "modules='numpy'"),
    "numbers with a submodule outside torch": (dict(modules=("torch.optim", "scipy.optimize"), numbers=True),
                                               "modules='scipy.optimize'"),
    "must among modules": (dict(modules=("einops",), must="einops"), "must='einops' and modules='einops'"),
    "must inside a forbidden package": (dict(modules=("einops",), must="einops.einops"),
                                        "must='einops.einops' and modules='einops'"),
    "must taken out of the sandbox": (dict(ops=("einsum",), must="einops", absent=("einops",)),
                                      "must='einops' and absent='einops'"),
    "an absent module it does not forbid": (dict(modules=("torch.optim.adamw",), absent=("torch.optim.sgd",)),
                                            "absent='torch.optim.sgd'"),
    "an absent kernel it does not forbid": (dict(ops=("_fused_adamw_",), absent=("aten._fused_adam_",)),
                                            "absent='aten._fused_adam_'"),
}


@pytest.mark.parametrize("case", CONTRADICTIONS)
def test_a_rule_whose_options_contradict_is_refused_in_one_line(case):
    options, says = CONTRADICTIONS[case]
    with pytest.raises(ValueError) as refused:
        Rule(**TEXT, **options)
    message = str(refused.value)
    assert "\n" not in message and "'fits by hand'" in message and says in message, message


@pytest.mark.parametrize("options", [
    dict(modules=("numpy",)),                                   # another library, watched from the start
    dict(modules=("torch.utils.flop_counter",), numbers=True),   # torch's own: a count needs a torch op
    dict(modules=("thop",), numbers=True, absent=("thop",)),     # not in the sandbox at all
    dict(ops=("_fused_adamw_",), absent=("aten._fused_adamw_",)),
    dict(casts=True, numbers=True), dict(must="einops", ops=("einsum",)),
], ids=str)
def test_the_options_that_work_together_make_a_rule(options):
    assert refusal(Rule(**TEXT, **options)) is None


def test_an_op_torch_does_not_have_is_refused_when_the_watch_is_imported():
    """ops are matched against torch's calls only: "polyfit" would never be seen (seam/honest.py
    runs this check over the registry at import)."""
    message = torch_refusal(Rule(**TEXT, ops=("stride", "polyfit")))
    assert "'fits by hand'" in message and "ops='polyfit'" in message and "\n" not in message
    assert torch_refusal(Rule(**TEXT, ops=("stride", "T", "linear", "_fused_adamw_", "_enable_profiler"))) is None


def test_every_rule_of_the_registry_passes_both_checks():
    for rule in dict.fromkeys(RULED.values()):
        assert refusal(rule) is None and torch_refusal(rule) is None, rule.name


def test_the_registry_refuses_a_rule_on_no_problem_a_name_that_is_none_or_two_rules():
    rule = Rule(**TEXT, modules=("numpy",))
    problems = dict(PROBLEMS)
    assert ruled({**problems, "scaling": Problem("scaling", "t", rules=((rule, ("fit",)),))})["scaling.fit"] is rule
    cases = {"handout='nowhere' is no problem": (dataclasses.replace(rule, handout="nowhere"), ("fit",)),
             "covers 'fit.x', not a name": (rule, ("fit.x",)),
             "scaling.fit has two rules": (rule, ("fit", "fit"))}
    for says, entry in cases.items():
        with pytest.raises(ValueError, match=says):
            ruled({**problems, "scaling": Problem("scaling", "t", rules=(entry,))})
