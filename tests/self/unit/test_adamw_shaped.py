"""seam/adamw_shaped.py: what the probes hand over has torch's AdamW's (and Adam(amsgrad)'s) state,
bytes and hyperparameters, but cannot do AdamW's job: a submission whose AdamW delegates to it
fails the trajectory tests."""

import torch

from seam import InProcess
from seam.adamw_shaped import AdamWShaped
from seam.probes.optim import describe_state, make_optimizer, run_adamw, run_state_model
from tests.common.optim import TRAJ
from tests.hidden.test_optim import tensor_bytes
from tests.self.submissions import reference_text, reference_with

SPEC = {"seed": 3, "steps": 30, "checkpoints": [1, 30],
        "groups": [{"shapes": [[4, 3], [3]], "hyper": {}}, {"shapes": [[5]], "hyper": {"lr": 5e-2, "weight_decay": 0.5}}]}


def _far(a: torch.Tensor, b: torch.Tensor) -> bool:
    return not torch.allclose(a, b, **TRAJ)


def test_its_state_is_torchs_and_its_update_is_not():
    for kind, torchs in (("adamw_layout", torch.optim.AdamW), ("amsgrad_layout",
                                                               lambda ps: torch.optim.Adam(ps, amsgrad=True))):
        for dtype in (torch.float32, torch.bfloat16, torch.float64):
            model, mine = run_state_model(kind, dtype, 3)
            torch_model, manual = run_state_model("adamw", dtype, 3, adamw_cls=torchs)
            assert (describe_state(mine, list(model.parameters()), values=False)
                    == describe_state(manual, list(torch_model.parameters()), values=False))
            assert tensor_bytes(list(mine.state.values())) == tensor_bytes(list(manual.state.values())) > 0
        assert mine.param_groups[0].keys() == torchs([torch.nn.Parameter(torch.zeros(2))]).param_groups[0].keys()
    handed = make_optimizer("adamw_layout", [torch.nn.Parameter(torch.zeros(2))])
    assert not isinstance(handed, (torch.optim.Adam, torch.optim.AdamW))
    got, want = run_adamw(AdamWShaped, SPEC), run_adamw(torch.optim.AdamW, SPEC)
    assert got["state_counts"] == want["state_counts"]
    for g_params, w_params in zip(got["checkpoints"], want["checkpoints"]):
        assert all(_far(g, w) for g, w in zip(g_params, w_params))  # every parameter, from the first step


DELEGATES = '''
_handed = []
_own_memory_by_stage = memory_by_stage
def memory_by_stage(model, optimizer, x, y):
    _handed.append(type(optimizer))  # keeps the class of what the probe hands over
    return _own_memory_by_stage(model, optimizer, x, y)
def AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    return _handed[0](params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
'''


def test_an_adamw_that_delegates_to_it_misses_torchs_trajectory(tmp_path):
    """The watch blinded (``watched=False``): the delegation is not charged, and still the AdamW it
    makes does not follow torch.optim.AdamW."""
    folder = reference_with(tmp_path / "s", {"optim": reference_text("optim") + "\nimport torch\n" + DELEGATES})
    impl = InProcess(folder, package=f"adamw_shaped_{tmp_path.name}", watched=False)
    impl.probes.memory_stages(kind="adamw_layout", in_dim=8, out_dim=4, layers=1, batch=2, dtype=torch.float32, seed=0)
    got = impl.probes.adamw_run(spec=SPEC)["checkpoints"]
    want = run_adamw(torch.optim.AdamW, SPEC)["checkpoints"]
    assert all(_far(g, w) for g_params, w_params in zip(got, want) for g, w in zip(g_params, w_params))
