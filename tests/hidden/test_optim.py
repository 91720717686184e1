"""optim (hidden): AdamW against torch.optim.AdamW (the oracle, run here on the same
gradients) over hundreds of steps and several parameter groups, its state, its validation;
optimizer_state_bytes and memory_by_stage against counts made here from the same optimizers;
and, on a CUDA runner, the allocator's view of the three stages."""

import random

import pytest
import torch

from tests.checks import case, check_cases, expect_equal, fail, raises, within
from tests.common.optim import TRAJ
from tests.hidden.optim_mistakes import ADAMW_MISTAKES
from seam.probes.optim import (OPTIMIZER_KINDS, build_memory_model, make_optimizer, memory_inputs,
                               run_adamw, run_closure, run_state_model)



def torch_adamw(spec: dict) -> dict:
    """The oracle: ``run_adamw`` with torch.optim.AdamW (same gradients), and its checkpoints' steps."""
    return {**run_adamw(torch.optim.AdamW, spec), "at_steps": spec["checkpoints"]}


def same_trajectory(got: dict, want: dict, what: str, counts: bool = False):
    if len(got["checkpoints"]) != len(want["checkpoints"]):
        fail(f"{what}: number of checkpoints", len(got["checkpoints"]), len(want["checkpoints"]))
    for step, g_params, w_params in zip(want["at_steps"], got["checkpoints"], want["checkpoints"]):
        for i, (g, w) in enumerate(zip(g_params, w_params)):
            if not (isinstance(g, torch.Tensor) and g.dtype == w.dtype and g.shape == w.shape
                    and within(g, w, **TRAJ)):
                err = (g.double() - w.double()).abs().max().item() if isinstance(g, torch.Tensor) \
                    and g.shape == w.shape else float("nan")
                fail(f"{what}: parameter {i} after step {step}", g, w,
                     f"expected torch.optim.AdamW's value on the same gradients; max |error| {err:.3g}; "
                     f"tolerance rtol={TRAJ['rtol']:g}, atol={TRAJ['atol']:g}")
    if counts:
        expect_equal(got["state_counts"], want["state_counts"],
                     f"{what}: number of parameters with optimizer state before the first step and after each step",
                     note="state is created at the first step on which a parameter has a gradient")


# Moments after 25 steps: exponential averages of the same gradients in float32, relative to the
# tensor's own scale (a moment can be ~0 where the gradients cancel); any grouping of the update stays
# within a few ulps (~1e-6), while a wrong beta or a missed step is off by percent.
MOMENTS = 1e-4
# One MSE step of the same float32 model from the same weights: a submission's loss and backward are
# torch's own, so only the optimizer's grouping differs, by a few ulps of the update (~1e-7); no step,
# two steps or a zeroed gradient moves the weights by ~lr = 1e-3.
ONE_STEP = dict(rtol=1e-5, atol=1e-6)


def groups_spec(seed: int, steps: int = 200) -> dict:
    return {"seed": seed, "steps": steps, "checkpoints": [1, 2, 5, 20, 100, steps],
            "defaults": {"lr": 2e-3, "weight_decay": 0.05},
            "groups": [
                {"shapes": [[5, 3], [7]], "hyper": {}},                                        # the defaults above
                {"shapes": [[4, 4], [3]], "hyper": {"lr": 1e-2, "weight_decay": 0.0}},         # no decay
                {"shapes": [[6], [2, 3]], "hyper": {"lr": 5e-2, "weight_decay": 0.5, "betas": (0.8, 0.99)},
                 "grad_scale": 3.0},                                                           # strong decay
                {"shapes": [[9]], "hyper": {"lr": 3e-3, "eps": 1e-6, "weight_decay": 0.1},
                 "grad_scale": 1e-4},                                                          # eps matters
            ]}


@pytest.mark.points(2)
def test_adamw_matches_torch_param_groups(impl, ref):
    """AdamW follows torch.optim.AdamW over 200 steps: four param groups, weight decay 0 and non-zero, the defaults"""
    cases = [case(spec=groups_spec(seed), what=f"AdamW(4 groups, defaults lr=2e-3, weight_decay=0.05), seed {seed}")
             for seed in (1, 2)]
    # all constructor defaults (lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01), plain param list
    cases.append(case(spec={"seed": 3, "steps": 200, "checkpoints": [1, 3, 200], "plain": True,
                            "groups": [{"shapes": [[8, 2], [5], [1]]}]}, what="AdamW(params) with all defaults"))
    check_cases(impl, "probes.adamw_run", cases, ref=ref, oracle=torch_adamw, compare=same_trajectory,
                mistakes=ADAMW_MISTAKES)


def missing_grads_spec(seed: int) -> dict:
    return {"seed": seed, "steps": 120, "checkpoints": [1, 4, 8, 30, 120], "groups": [
        {"shapes": [[3, 3], [4]], "hyper": {"lr": 1e-2}, "none_prob": 0.4, "late": 6},
        {"shapes": [[5], [2, 2], [6]], "hyper": {"lr": 2e-2, "weight_decay": 0.2}, "none_prob": 0.25, "late": 3},
        {"shapes": [[4]], "hyper": {"weight_decay": 0.0}},
        {"shapes": [[3]], "hyper": {"lr": 1e-2, "weight_decay": 1.0}},  # decay exactly 1: still decays
    ]}


@pytest.mark.points(2)
def test_adamw_skips_missing_grads(impl):
    """parameters whose grad is None are left alone that step; each parameter counts its own steps"""
    check_cases(impl, "probes.adamw_run", [
        case(spec=missing_grads_spec(seed), what=f"AdamW with grads None on some steps (seed {seed})")
        for seed in (4, 5, 6)],
        oracle=torch_adamw, compare=lambda got, want, what: same_trajectory(got, want, what, counts=True),
        mistakes=ADAMW_MISTAKES)


STATE_SPEC = {"seed": 7, "steps": 25, "checkpoints": [], "groups": [
    {"shapes": [[4, 3], [5]], "hyper": {"weight_decay": 0.1}},
    {"shapes": [[6], [2, 5]], "hyper": {"lr": 1e-2}, "none_prob": 0.3, "late": 4},
    {"shapes": [[3, 2]], "dtype": torch.float64},
    {"shapes": [[7]], "dtype": torch.bfloat16},
    {"shapes": [[2, 2], [3]], "late": 10**6},   # first parameter never gets a gradient
]}


def same_state(got: dict, want: dict, _what: str):
    expect_equal(len(got["state"]), len(want["state"]), "number of parameters described")
    for i, (g, w) in enumerate(zip(got["state"], want["state"])):
        what = f"optimizer.state of parameter {i}"
        if w is None:
            expect_equal(g, None, f"{what} (it never had a gradient: no state)")
            continue
        if g is None:
            fail(what, None, "{'step', 'exp_avg', 'exp_avg_sq'}")
        expect_equal(sorted(g), ["exp_avg", "exp_avg_sq", "step"], f"{what}: keys")
        step = g["step"]
        if isinstance(step, torch.Tensor):
            if step.numel() != 1 or step.dim() != 0:
                fail(f"{what}['step']", step, int(w["step"]), "the step count is an int or a 0-d tensor")
            step = int(step.item()) if float(step.item()).is_integer() else float(step.item())
        expect_equal(step, int(w["step"]), f"{what}['step']")
        for key in ("exp_avg", "exp_avg_sq"):
            gt, wt = g[key], w[key]
            if not isinstance(gt, torch.Tensor) or gt.dtype != wt.dtype or gt.shape != wt.shape:
                fail(f"{what}['{key}'] (same shape and dtype as the parameter)", gt, wt)
            if wt.dtype == torch.bfloat16:
                continue  # bfloat16 moments: only shape and dtype (rounding differs by grouping)
            # moments are averages of gradients: round-off relative to the tensor's own scale
            scale = wt.abs().max().item()
            if not within(gt, wt, rtol=MOMENTS, atol=MOMENTS * scale):
                fail(f"{what}['{key}'] after 25 steps", gt, wt,
                     f"expected torch.optim.AdamW's {key}; tolerance rtol={MOMENTS:g}, atol={MOMENTS:g}*max|{key}|")


@pytest.mark.points(2)
def test_adamw_state(impl):
    """AdamW's state per parameter is {step, exp_avg, exp_avg_sq}: the two moments in the parameter's dtype, as torch's"""
    check_cases(impl, "probes.adamw_run", [case(spec=STATE_SPEC, what="AdamW's state after 25 steps (seed 7)")],
                oracle=torch_adamw, compare=same_state)


@pytest.mark.points(1)
def test_adamw_lazy_state(impl):
    """no optimizer state exists before the first step (0 bytes), and only for parameters that had a gradient"""
    spec = {"seed": 8, "steps": 3, "checkpoints": [],
            "groups": [{"shapes": [[3], [4]], "late": 2}, {"shapes": [[2]], "late": 10**6}]}
    check_cases(impl, "probes.adamw_run", [case(spec=spec, want=[0, 1, 1, 2], what=(
        "parameters with state: before any step, after steps 1, 2, 3 (parameter 0 has no grad on steps 1-2, "
        "parameter 2 never)"))], compare=lambda got, due, what: expect_equal(got["state_counts"], due, what))
    check_cases(impl, "probes.state_bytes", [
        case(kind="adamw", dtype=dtype, steps=0, want={"bytes": 0, "state": [None] * 5},
             what=f"optimizer_state_bytes(AdamW(...)) and optimizer.state of the 5 parameters before the first step "
                  f"({dtype})") for dtype in (torch.float32, torch.bfloat16)])


@pytest.mark.points(1)
def test_adamw_closure(impl):
    """step(closure) evaluates the closure with grad enabled and returns its loss; step() returns None"""
    def compare(got: dict, want: dict, _what: str):
        expect_equal(got["closure_return"], 5.25, "AdamW.step(closure) return value (loss = sum(p^2) at p = [1, -2, 0.5])")
        expect_equal(got["plain_return"], None, "AdamW.step() return value")
        expect_equal(got["after_closure"], want["after_closure"], "p after step(closure), as torch.optim.AdamW", **TRAJ)
        expect_equal(got["after_plain"], want["after_plain"], "p after a second step()", **TRAJ)
    check_cases(impl, "probes.adamw_closure", [case(what="AdamW([p], lr=0.1, weight_decay=0.5).step(closure), then step()")],
                oracle=lambda: run_closure(torch.optim.AdamW), compare=compare)


@pytest.mark.points(1)
def test_adamw_validation(impl):
    """bad lr, eps, betas or weight_decay (NaN and inf too) raise ValueError; valid edge values are kept as given"""
    nan, inf = float("nan"), float("inf")
    bad = [{"lr": -1e-3}, {"lr": nan}, {"lr": inf}, {"lr": -inf}, {"eps": -1e-8}, {"eps": nan},
           {"betas": (1.0, 0.999)}, {"betas": (0.9, 1.0)}, {"betas": (-0.1, 0.999)}, {"betas": (0.9, -1e-3)},
           {"betas": (0.9, nan)}, {"betas": (1.5, 0.5)}, {"weight_decay": -1e-2}, {"weight_decay": nan},
           {"weight_decay": inf}]
    good = [{}, {"lr": 0.0}, {"lr": 10.0}, {"eps": 0.0}, {"eps": 0.5}, {"betas": (0.0, 0.0)},
            {"betas": (0.999999, 0.999999)}, {"weight_decay": 0.0}, {"weight_decay": 5.0},
            {"lr": 7e-4, "betas": (0.5, 0.6), "eps": 1e-10, "weight_decay": 0.3}]
    defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
    check_cases(impl, "probes.adamw_construct", [
        *(case(kwargs=kw, want={**defaults, **kw},
               what=f"AdamW([p], **{kw}) then param_groups[0]'s lr, betas, eps, weight_decay") for kw in good),
        *(case(kwargs=kw, want=raises("ValueError"), what=f"AdamW([p], **{kw})") for kw in bad),
        # bad constructor arguments raise even where the group overrides them (as torch's do); a
        # group's own bad override is not tested: torch.optim.AdamW does not check it, nor does the handout say
        case(kwargs={"lr": -1e-3}, group_overrides={"lr": 0.5}, want=raises("ValueError"),
             what="AdamW([{'params': [p], 'lr': 0.5}], lr=-1e-3)"),
        case(kwargs={"eps": -1e-8}, group_overrides={"eps": 1e-8}, want=raises("ValueError"),
             what="AdamW([{'params': [p], 'eps': 1e-8}], eps=-1e-8)"),
        # a group may override the defaults
        case(kwargs={"lr": 1e-3}, group_overrides={"lr": 0.5, "weight_decay": 0.0},
             want={**defaults, "lr": 0.5, "weight_decay": 0.0},
             what="AdamW([{'params': [p], 'lr': 0.5, 'weight_decay': 0.0}], lr=1e-3): the group's hyperparameters")])


# ---- optimizer_state_bytes ------------------------------------------------------------------------

def tensor_bytes(obj) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict) and "tensor_shape" in obj:  # a probe's description of a tensor
        return torch.Size(obj["tensor_shape"]).numel() * torch.empty((), dtype=obj["dtype"]).element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


@pytest.mark.points(2)
def test_optimizer_state_bytes(impl):
    """optimizer_state_bytes equals the bytes of the state's tensors for torch's SGD, optimizers with Adam's and AdamW's state, and your AdamW"""
    def state_bytes(kind, dtype, steps):  # your AdamW: None, its state as it is (moments + an int or 0-d step)
        return None if kind == "adamw" else tensor_bytes(list(run_state_model(kind, dtype, steps)[1].state.values()))
    for adam in (True, False):
        note = "torch.optim's Adam/AdamW state keeps a 0-d float32 step tensor per parameter (4 bytes)" if adam else ""
        check_cases(impl, "probes.state_bytes", [
            case(kind=kind, dtype=dtype, steps=steps, what=f"optimizer_state_bytes({kind} after {steps} steps, {dtype})")
            for kind in OPTIMIZER_KINDS if kind.endswith("_layout") == adam
            for dtype in (torch.float32, torch.bfloat16, torch.float64) for steps in (0, 1, 3)],
            oracle=state_bytes, compare=lambda got, due, what: expect_equal(
                got["bytes"], tensor_bytes(got["state"]) if due is None else due, what, note=note))


# ---- memory_by_stage ------------------------------------------------------------------------------

def expected_stages(param_bytes: int, optimizer_bytes: int) -> dict:
    p = param_bytes
    return {"created": {"params": p, "grads": 0, "optimizer": 0, "total": p},
            "after_backward": {"params": p, "grads": p, "optimizer": 0, "total": 2 * p},
            "after_step": {"params": p, "grads": p, "optimizer": optimizer_bytes, "total": 2 * p + optimizer_bytes}}


def memory_cases(seed: int, n: int):
    rng = random.Random(seed)
    for i in range(n):
        kind = ["adamw_layout", "torch_sgd_momentum", "adamw", "amsgrad_layout"][i % 4]
        dtype = [torch.float32, torch.float32, torch.bfloat16, torch.float64][(i // 4 + i) % 4]
        in_dim, out_dim, layers, batch = rng.randint(1, 40), rng.randint(1, 40), rng.randint(1, 3), rng.randint(1, 6)
        yield case(kind=kind, in_dim=in_dim, out_dim=out_dim, layers=layers, batch=batch, dtype=dtype,
                   seed=rng.randint(0, 10**6), what=f"memory_by_stage(model={layers} x nn.Linear(bias=False) "
                                                    f"{in_dim}->{out_dim}, {dtype}, optimizer={kind}, batch {batch})")


def memory_oracle(kind, in_dim, out_dim, layers, batch, dtype, seed) -> dict:
    """One MSE step here: the parameters' bytes, the optimizer's (None for your AdamW) and the weights after it."""
    model = build_memory_model(in_dim, out_dim, layers, dtype, "cpu", seed)
    opt = make_optimizer(kind, model.parameters(), torch.optim.AdamW)
    x, y = memory_inputs(in_dim, out_dim, batch, dtype, "cpu", seed)
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    return {"param_bytes": (in_dim * out_dim + (layers - 1) * out_dim * out_dim) * dtype.itemsize,
            "optimizer": None if kind == "adamw" else tensor_bytes(list(opt.state.values())),
            "weights": None if kind == "adamw" or dtype == torch.bfloat16 else [p.detach() for p in model.parameters()]}


def same_ledger(got: dict, due: dict, what: str):
    opt_bytes = tensor_bytes(got["state"]) if due["optimizer"] is None else due["optimizer"]
    expect_equal(got["stages"], expected_stages(due["param_bytes"], opt_bytes), what)
    # one step of F.mse_loss + optimizer.step(): compare with the same step done here
    for i, (g, w) in enumerate(zip(got["weights"], due["weights"] or [])):
        expect_equal(g, w, f"{what}: layer {i} weight after the step", **ONE_STEP)


@pytest.mark.points(2)
@pytest.mark.how
def test_memory_by_stage_random(impl):
    """memory_by_stage's ledger equals the tensors' bytes at the three stages; it takes exactly one MSE step"""
    check_cases(impl, "probes.memory_stages", memory_cases(81, 12), oracle=memory_oracle, compare=same_ledger)


@pytest.mark.points(1)
def test_memory_by_stage_bad_input(impl):
    """a target shaped unlike the model's output, or a model without parameters, raises ValueError"""
    linear = dict(kind="adamw_layout", in_dim=6, out_dim=4, layers=1, batch=3, dtype=torch.float32, seed=0, device="cpu")
    check_cases(impl, "probes.memory_stages", [
        *(case(**linear, y_shape=y_shape, want=raises("ValueError"),
               what=f"memory_by_stage with model output (3, 4) and y of shape {y_shape}")
          for y_shape in [(3, 5), (3,), (3, 4, 1), (2, 4)]),
        case(**linear, y_shape=(3, 4), want=2 * 24 * 4, what="valid neighbour: y of shape (3, 4)")],
        compare=lambda got, due, what: expect_equal(got["stages"]["after_backward"]["total"], due, what))
    check_cases(impl, "probes.memory_no_params",
                [case(want=raises("ValueError"), what="memory_by_stage(nn.ReLU(), ...): a model without parameters")])


# ---- GPU --------------------------------------------------------------------------------------------
#
# A real model on the GPU: 3 x nn.Linear(2048, 2048, bias=False), P = 12,582,912 fp32 parameters, so
# 4P = 48 MiB. The probe warms up first (a throw-away forward/backward of the same shapes creates
# cuBLAS's workspace), reads a baseline with x and y alive, then measures memory_allocated minus
# that baseline. Tolerance 1 MiB: the caching allocator rounds each block up to 512 bytes, and a
# submission may legitimately keep its prediction or loss (8 x 2048 x 4 = 64 KiB) or 0-d step
# tensors on the device; one byte per parameter more or less is 12 MiB, twelve times the tolerance.
GPU_DIM, GPU_LAYERS, GPU_BATCH = 2048, 3, 8
GPU_P = GPU_LAYERS * GPU_DIM * GPU_DIM
GPU_TOL = 2**20
GPU_MODEL = dict(in_dim=GPU_DIM, out_dim=GPU_DIM, layers=GPU_LAYERS, batch=GPU_BATCH, dtype=torch.float32, device="cuda")


def near(got, expected: int, what: str, tol: int = GPU_TOL):
    if type(got) is not int or abs(got - expected) > tol:
        fail(what, got, expected, f"tolerance ±{tol} bytes (P = {GPU_P:,} parameters)")


@pytest.mark.gpu
@pytest.mark.points(2)
@pytest.mark.time_limit(120)
def test_gpu_allocator_shows_4_8_16_bytes(impl):
    """on the GPU, with your AdamW, torch.cuda.memory_allocated grows by 4, 8 and 16 bytes per parameter"""
    def compare(r: dict, n_params: int, _what: str):
        m = r["measured"]
        expect_equal(r["n_params"], n_params, "parameters of the GPU model")
        near(m["created"], 4 * GPU_P, "allocated bytes after creating the model and your AdamW (4 bytes/param)")
        near(m["before_step"], 8 * GPU_P, "allocated bytes after backward, just before optimizer.step() (8 bytes/param)")
        near(m["after_step"], 16 * GPU_P, "allocated bytes right after your AdamW's step (16 bytes/param)")
        near(m["returned"], 16 * GPU_P, "allocated bytes once memory_by_stage has returned (16 bytes/param)")
    check_cases(impl, "probes.memory_stages", [case(kind="adamw", seed=0, **GPU_MODEL, want=GPU_P,
                                                    what="memory_by_stage on the GPU, your AdamW")], compare=compare)


@pytest.mark.gpu
@pytest.mark.points(1)
@pytest.mark.time_limit(120)
@pytest.mark.how
def test_gpu_ledger_matches_allocator(impl):
    """on the GPU, memory_by_stage's ledger and its 'allocated' readings agree with torch.cuda.memory_allocated"""
    def compare(r: dict, ledger: dict, _what: str):
        stages, base, m = r["stages"], r["base"], r["measured"]
        expect_equal({s: {k: v for k, v in d.items() if k != "allocated"} for s, d in stages.items()}, ledger,
                     "memory_by_stage ledger on the GPU (without 'allocated')")
        for stage in ("created", "after_backward", "after_step"):
            if "allocated" not in stages[stage]:
                fail(f"memory_by_stage(...)['{stage}'] keys", sorted(stages[stage]),
                     ["allocated", "grads", "optimizer", "params", "total"])
            near(stages[stage]["allocated"] - base, stages[stage]["total"],
                 f"['{stage}']['allocated'] minus the baseline vs the ledger's total")
        near(stages["created"]["allocated"] - base, m["created"], "['created']['allocated'] vs the allocator at creation")
        near(stages["after_backward"]["allocated"] - base, m["before_step"],
             "['after_backward']['allocated'] vs the allocator just before step()")
        near(stages["after_step"]["allocated"] - base, m["after_step"],
             "['after_step']['allocated'] vs the allocator after step()")
    # AdamW's state layout keeps its 0-d float32 step tensors on the CPU: 4 bytes each in the ledger
    ledger = expected_stages(4 * GPU_P, 8 * GPU_P + 4 * GPU_LAYERS)
    check_cases(impl, "probes.memory_stages", [case(kind="adamw_layout", seed=1, **GPU_MODEL, want=ledger,
                                                    what="memory_by_stage on the GPU, an optimizer with AdamW's state")], compare=compare)
