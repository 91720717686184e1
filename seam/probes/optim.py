"""Probes for optim: drive the implementation's AdamW, optimizer_state_bytes and
memory_by_stage, and hand back plain data. No expected answers live here.

The scenario builders (``run_adamw``, ``run_state_model``, ``memory_scenario``) are plain
functions that take the optimizer classes as arguments: a probe runs them with the
implementation's AdamW, and the tests run the very same function locally with
``torch.optim.AdamW`` (the oracle). Models are always torch's own modules (nn.Linear), so a bug in
problem 7 never costs points here. Where a probe hands over an optimizer of its own with Adam's
state ("adamw_layout", "amsgrad_layout"), it is seam/adamw_shaped.py's: torch's state layout, not
torch's update (torch's Adam and AdamW are not in the sandbox: seam/absent.py); the tests run the
same one in the grader's process.

``memory_scenario`` is the GPU test's driver too. On a CUDA device it first runs a warm-up
forward/backward through a throw-away model of the same shapes (so the cuBLAS workspace exists
before the baseline is read), keeps x and y alive in the baseline, and measures
``torch.cuda.memory_allocated`` minus the baseline at creation, right before and right after
``optimizer.step()`` (by wrapping the optimizer's ``step``), and after ``memory_by_stage``
returns. On the CPU the same code runs without those measurements, so its CPU parts are tested
on every machine.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import manual_seed, probe
from ..adamw_shaped import AdamWShaped


def _encode_state_value(v, values: bool):
    if isinstance(v, torch.Tensor):
        if values:
            return v.detach().to("cpu").clone()
        return {"tensor_shape": tuple(v.shape), "dtype": v.dtype, "device": v.device.type}
    if type(v) in (bool, int, float, str) or v is None:
        return v
    return f"<{type(v).__module__}.{type(v).__qualname__}>"


def describe_state(optimizer, params, values: bool = True) -> list:
    """For each parameter (in order): None if the optimizer holds no state for it, else its state
    dict with tensors copied to the CPU (or, with ``values=False``, described by
    {"tensor_shape", "dtype", "device"}) and other values as plain data (or a type name)."""
    state = getattr(optimizer, "state", {})
    out = []
    for p in params:
        st = state.get(p) if hasattr(state, "get") else None
        if not st:
            out.append(None)
            continue
        out.append({(k if type(k) is str else f"<key {k!r}>"): _encode_state_value(v, values)
                    for k, v in dict(st).items()})
    return out


def _count_nonempty(optimizer, params) -> int:
    state = getattr(optimizer, "state", {})
    return sum(1 for p in params if hasattr(state, "get") and state.get(p))


# ---- AdamW trajectories -----------------------------------------------------------------------

def run_adamw(adamw_cls, spec: dict) -> dict:
    """Run an optimizer on seeded parameters and gradients described by ``spec``.

    spec = {"seed": int, "steps": int, "checkpoints": [step, ...],
            "plain": bool (pass a plain list of params, one group),
            "defaults": {constructor kwargs} (optional),
            "groups": [{"shapes": [shape, ...], "hyper": {lr/betas/eps/weight_decay overrides},
                        "dtype": torch dtype (default float32), "grad_scale": float (default 1),
                        "none_prob": probability that a param has grad None on a step,
                        "late": number of first steps on which the group's first param has no grad}]}
    Gradients are drawn from the spec's generator (the optimizer never touches it), so any
    optimizer class sees the same gradients. Returns the parameters at each checkpoint, the
    number of parameters with state after each step, and the final state (describe_state).
    """
    g = torch.Generator().manual_seed(spec["seed"])
    groups = []
    for gs in spec["groups"]:
        dtype = gs.get("dtype", torch.float32)
        ps = [nn.Parameter(torch.randn(tuple(s), generator=g, dtype=torch.float32).to(dtype))
              for s in gs["shapes"]]
        groups.append((gs, ps))
    params = [p for _, ps in groups for p in ps]
    defaults = dict(spec.get("defaults", {}))
    if spec.get("plain"):
        opt = adamw_cls(params, **defaults)
    else:
        opt = adamw_cls([{"params": ps, **gs.get("hyper", {})} for gs, ps in groups], **defaults)
    counts = [_count_nonempty(opt, params)]
    checkpoints = []
    for t in range(1, spec["steps"] + 1):
        for gs, ps in groups:
            for i, p in enumerate(ps):
                none = float(torch.rand((), generator=g)) < gs.get("none_prob", 0.0)
                grad = torch.randn(p.shape, generator=g) * gs.get("grad_scale", 1.0)
                if i == 0 and t <= gs.get("late", 0):
                    none = True
                p.grad = None if none else grad.to(p.dtype)
        opt.step()
        counts.append(_count_nonempty(opt, params))
        if t in spec.get("checkpoints", ()):
            checkpoints.append([p.detach().clone() for p in params])
    return {"checkpoints": checkpoints, "state_counts": counts, "state": describe_state(opt, params)}


@probe("optim", calls="AdamW")
def adamw_run(c, spec: dict):
    """``run_adamw`` with the implementation's AdamW."""
    return run_adamw(c.module("optim").AdamW, spec)


def run_closure(adamw_cls) -> dict:
    """step(closure) on a 2-parameter quadratic; then step() without a closure. A strong weight
    decay (0.5: lr·wd = 0.05), so that decay applied after the update, off by lr²·wd·update per
    step, stands 100x beyond the trajectory tolerance (benchmarks/margins.py; at the default 0.01
    it stood at 2x)."""
    p = nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    opt = adamw_cls([p], lr=0.1, weight_decay=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    ret = opt.step(closure)
    after_closure = p.detach().clone()
    ret_value = float(ret.detach()) if isinstance(ret, torch.Tensor) and ret.numel() == 1 else repr(ret)
    plain = opt.step()  # p.grad from the closure is still there
    return {"closure_return": ret_value, "after_closure": after_closure,
            "plain_return": None if plain is None else repr(plain), "after_plain": p.detach().clone()}


@probe("optim", calls="AdamW.step")
def adamw_closure(c):
    """``run_closure`` with the implementation's AdamW."""
    return run_closure(c.module("optim").AdamW)


@probe("optim", calls="AdamW")
def adamw_construct(c, kwargs: dict, group_overrides=None):
    """Build AdamW over one parameter with ``kwargs``; returns the group's hyperparameters."""
    p = nn.Parameter(torch.zeros(3))
    params = [{"params": [p], **group_overrides}] if group_overrides else [p]
    opt = c.module("optim").AdamW(params, **kwargs)
    grp = opt.param_groups[0]
    return {k: (tuple(grp[k]) if k == "betas" else grp[k]) for k in ("lr", "betas", "eps", "weight_decay")}


# ---- optimizer_state_bytes ---------------------------------------------------------------------

OPTIMIZER_KINDS = ("adamw_layout", "amsgrad_layout", "torch_sgd", "torch_sgd_momentum", "adamw")


def make_optimizer(kind: str, params, adamw_cls=None):
    """``adamw_layout`` / ``amsgrad_layout``: seam/adamw_shaped.py's optimizer, with torch's AdamW's
    state (and Adam(amsgrad=True)'s: max_exp_avg_sq too); ``adamw``: ``adamw_cls``, the
    implementation's AdamW (torch's in the tests' oracles)."""
    if kind == "adamw_layout":
        return AdamWShaped(params)
    if kind == "amsgrad_layout":
        return AdamWShaped(params, weight_decay=0.0, amsgrad=True)
    if kind == "torch_sgd":
        return torch.optim.SGD(params, lr=0.01)
    if kind == "torch_sgd_momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    if kind == "adamw":
        return adamw_cls(params)
    raise ValueError(f"unknown optimizer kind {kind!r}")


def run_state_model(kind: str, dtype, steps: int, adamw_cls=None):
    """A small torch MLP (one frozen layer that never gets a gradient), ``steps`` MSE steps."""
    manual_seed(5)
    model = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 3, bias=False), nn.Linear(3, 2))
    model.to(dtype)
    model[3].requires_grad_(False)
    params = list(model.parameters())
    opt = make_optimizer(kind, [p for p in params if p.requires_grad], adamw_cls)
    for _ in range(steps):
        x, y = torch.randn(4, 6, dtype=dtype), torch.randn(4, 2, dtype=dtype)
        F.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    return model, opt


@probe("optim", calls="optimizer_state_bytes")
def state_bytes(c, kind: str, dtype, steps: int):
    """optimizer_state_bytes after ``steps`` steps of ``run_state_model``; plus what the state holds."""
    mod = c.module("optim")
    model, opt = run_state_model(kind, dtype, steps, adamw_cls=mod.AdamW)
    return {"bytes": mod.optimizer_state_bytes(opt),
            "state": describe_state(opt, list(model.parameters()), values=False)}


@probe("optim", calls="optimizer_state_bytes")
def state_bytes_only(c, kind: str, dtype, steps: int):
    """Just optimizer_state_bytes after ``steps`` steps of ``run_state_model`` (for snapshots)."""
    mod = c.module("optim")
    _, opt = run_state_model(kind, dtype, steps, adamw_cls=mod.AdamW)
    return mod.optimizer_state_bytes(opt)


# ---- memory_by_stage -----------------------------------------------------------------------------

def build_memory_model(in_dim: int, out_dim: int, layers: int, dtype, device, seed: int) -> nn.Module:
    """``layers`` bias-free torch nn.Linear: in_dim -> out_dim -> out_dim ... (notes 000's model for 1)."""
    manual_seed(seed)
    return nn.Sequential(*[nn.Linear(in_dim if i == 0 else out_dim, out_dim, bias=False, dtype=dtype, device=device)
                           for i in range(layers)])


def memory_inputs(in_dim: int, out_dim: int, batch: int, dtype, device, seed: int, y_shape=None):
    g = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn(batch, in_dim, generator=g).to(dtype=dtype, device=device)
    y = torch.randn(y_shape or (batch, out_dim), generator=g).to(dtype=dtype, device=device)
    return x, y


@probe("optim", calls="memory_by_stage", how="memory_by_stage's ledger against the bytes of the real tensors")
def memory_stages(c, kind: str, in_dim: int, out_dim: int, layers: int, batch: int, dtype, seed: int,
                  device: str = "cpu", y_shape=None):
    """memory_by_stage on ``build_memory_model`` with optimizer ``kind`` (see make_optimizer).

    Returns the implementation's ledger, the weights after its step (models up to 1e5
    parameters), the optimizer state's tensor shapes, and on CUDA the baseline (bytes allocated
    after a warm-up, x and y alive) and the allocator's own readings above it: "created",
    "before_step", "after_step", "returned"; None on the CPU.
    """
    mod = c.module("optim")
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    x, y = memory_inputs(in_dim, out_dim, batch, dtype, dev, seed, y_shape)
    base = 0
    if cuda:
        warm = build_memory_model(in_dim, out_dim, layers, dtype, dev, seed)
        out = warm(x)
        F.mse_loss(out, torch.zeros_like(out)).backward()
        del warm, out
        torch.cuda.synchronize(dev)
        base = torch.cuda.memory_allocated(dev)
    model = build_memory_model(in_dim, out_dim, layers, dtype, dev, seed)
    opt = make_optimizer(kind, model.parameters(), mod.AdamW)
    measured = {}
    if cuda:
        measured["created"] = torch.cuda.memory_allocated(dev) - base
        real_step = opt.step

        def step(*args, **kwargs):
            torch.cuda.synchronize(dev)
            measured["before_step"] = torch.cuda.memory_allocated(dev) - base
            out = real_step(*args, **kwargs)
            torch.cuda.synchronize(dev)
            measured["after_step"] = torch.cuda.memory_allocated(dev) - base
            return out

        opt.step = step
    stages = mod.memory_by_stage(model, opt, x, y)
    if cuda:
        torch.cuda.synchronize(dev)
        measured["returned"] = torch.cuda.memory_allocated(dev) - base
    params = list(model.parameters())
    n_params = sum(p.numel() for p in params)
    return {"stages": stages, "n_params": n_params,
            "weights": [p.detach().to("cpu").clone() for p in params] if n_params <= 10**5 else None,
            "state": describe_state(opt, params, values=False),
            "base": base if cuda else None, "measured": measured if cuda else None}


@probe("optim", calls="memory_by_stage")
def memory_ledger(c, kind: str, in_dim: int, out_dim: int, layers: int, batch: int, dtype, seed: int):
    """Just the ledger of ``memory_stages`` on the CPU (for snapshots)."""
    return memory_stages(c, kind, in_dim, out_dim, layers, batch, dtype, seed)["stages"]


@probe("optim", calls="memory_by_stage")
def memory_no_params(c):
    """memory_by_stage on a model without parameters (an nn.ReLU) and torch's SGD over a dummy."""
    mod = c.module("optim")
    dummy = nn.Parameter(torch.zeros(1))
    x = torch.randn(2, 3)
    return mod.memory_by_stage(nn.ReLU(), torch.optim.SGD([dummy], lr=0.1), x, x.clone())
