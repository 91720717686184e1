"""modules (public). The notes' parameter counts, a hand-checkable forward, snapshots."""

import pytest
import torch

from tests.checks import case, check_cases, expect_equal
from tests.common.modules import mistakes
from tests.snapshot import check_snapshot

TORCH_KINDS = ("mlp", "tied", "buffers", "mixed_dtypes", "frozen", "no_params", "bf16_embedding", "nested")

SNAPSHOT_INPUTS = {
    # count_parameters / parameter_bytes on torch's own modules (tied weights, buffers, dtypes ...)
    "probes.count_torch_module": [(k,) for k in TORCH_KINDS],
    # ... and on the submission's own Linear / Cruncher
    "probes.count_own_module": [("Linear", (3, 5)), ("Linear", (1, 1)), ("Cruncher", (8, 3)),
                                ("Cruncher", (5, 0))],
    # constructor and forward rules: parameter count, or output shape for an all-zero input
    "probes.construct": [("Linear", (0, 3)), ("Linear", (3, -1)), ("Linear", (1, 1)), ("Linear", (4, 3), (2, 4)),
                         ("Linear", (4, 3), (2, 5)), ("Linear", (4, 3), (4,)), ("Linear", (4, 3), (0, 4)),
                         ("Cruncher", (0, 2)), ("Cruncher", (4, -1)), ("Cruncher", (4, 0)),
                         ("Cruncher", (4, 2), (3, 5, 4)), ("Cruncher", (4, 2), (4,)), ("Cruncher", (4, 2), (3, 5))],
}


@pytest.mark.points(1)
def test_notes_cruncher_8256(impl):
    """Cruncher(dim=64, num_layers=2) has 64*64 + 64*64 + 64 = 8256 parameters, 33,024 bytes (notes 001)"""
    expect_equal(impl.probes.count_own_module(cls="Cruncher", args=(64, 2)), (8256, 33_024),
                 "(count_parameters, parameter_bytes) of Cruncher(64, 2)")
    run = impl.probes.cruncher_run(dim=64, num_layers=2, seed=0, xs=[torch.randn(5, 64)])
    expect_equal(run["names"], ["layers.0.weight", "layers.1.weight", "final.weight"],
                 "Cruncher(64, 2).named_parameters() names")
    expect_equal(tuple(run["outs"][0].shape), (5,), "Cruncher(64, 2)(x).shape for x of shape (5, 64)")


@pytest.mark.points(1)
def test_notes_linear_2048(impl):
    """a float32 Linear(2048, 2048) has 4,194,304 parameters, 16,777,216 bytes: the notes' "16 MB" (notes 000)"""
    expect_equal(impl.probes.count_own_module(cls="Linear", args=(2048, 2048)), (4_194_304, 16_777_216),
                 "(count_parameters, parameter_bytes) of Linear(2048, 2048)")


@pytest.mark.points(1)
def test_linear_forward_by_hand(impl):
    """Linear's weight is (input_dim, output_dim) and forward is x @ weight, no bias, any leading dims"""
    w = torch.tensor([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])         # (input_dim=2, output_dim=3)
    x1 = torch.tensor([3.0, 4.0])                                  # no leading dim
    x2 = torch.tensor([[[1.0, 1.0], [0.0, -2.0]]])                 # leading dims (1, 2)

    def compare(got: dict, due: dict, _what: str):
        expect_equal(got["weight_shape"], due["weight_shape"], "Linear(2, 3).weight.shape")
        if "ys" in due:  # a named mistake's answer has the weight's shape alone (the probe stops there)
            expect_equal(got["ys"], due["ys"], "Linear(2, 3) with weight [[1, 0, -1], [2, 1, 0]] applied to x of "
                         "shapes (2,) and (1, 2, 2)")
    check_cases(impl, "probes.linear_forward", [case(weight=w, xs=[x1, x2], want={"weight_shape": (2, 3), "ys": [
        torch.tensor([11.0, 4.0, -3.0]), torch.tensor([[[3.0, 1.0, -1.0], [-4.0, -2.0, 0.0]]])]})],
        compare=compare, mistakes=mistakes("linear_forward"))


@pytest.mark.points(1)
def test_counts_snapshots(impl):
    """count_parameters and parameter_bytes match the snapshots on torch modules and your own"""
    check_snapshot(impl, "probes.count_torch_module")
    check_snapshot(impl, "probes.count_own_module")


@pytest.mark.points(1)
def test_constructor_and_shape_rules(impl):
    """bad dims and a wrong input width raise ValueError; Cruncher's output has shape x.shape[:-1]"""
    check_snapshot(impl, "probes.construct")
