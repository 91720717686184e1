"""optim — AdamW written by hand, and where its memory goes (4, 8, 16 bytes per parameter).

Handout: assignment/problems/optim.md. Notes (assignment/notes/): 000 (the 2048x2048 three-stage
measurement: 16, 32, 64 MiB), 001 (the 16P-byte ledger, training loop), 004 (Adam m and v
in fp32).
"""

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor


class AdamW(torch.optim.Optimizer):
    """AdamW with decoupled weight decay; the same trajectory as `torch.optim.AdamW`.

    Constructor: `AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)`,
    the same defaults as `torch.optim.AdamW`. `params` is an iterable of tensors or of
    param-group dicts (each group may override lr, betas, eps, weight_decay), passed to
    `torch.optim.Optimizer.__init__(params, defaults)`.
    Raises ValueError for: lr < 0, eps < 0, a beta outside [0, 1), weight_decay < 0
    (non-finite values included), in the constructor's own arguments, even where every
    group overrides them (as torch's does). A bad value in a group's own override is not
    graded either way (torch.optim.AdamW does not check it; the reference raises
    ValueError for it).

    `step(closure=None)`: if `closure` is given, call it under `torch.enable_grad()` and
    return its value (else return None). Then, under `torch.no_grad()`, for every group and
    every parameter p in it whose `p.grad` is not None (parameters without a gradient are
    skipped and get no state), with g = p.grad, lr, (beta1, beta2), eps, wd from p's group:

        t = state["step"] + 1                                # per parameter, starts at 1
        p     <- p * (1 - lr * wd)                           # decoupled decay, FIRST
        m     <- beta1 * m + (1 - beta1) * g                 # exp_avg
        v     <- beta2 * v + (1 - beta2) * g * g             # exp_avg_sq
        step_size = lr / (1 - beta1 ** t)                    # Python floats
        denom     = sqrt(v) / sqrt(1 - beta2 ** t) + eps
        p     <- p - step_size * m / denom

    To reproduce torch's float32 rounding exactly, do the tensor updates in place the way
    torch's single-tensor path does: `p.mul_(1 - lr * wd)`, `m.lerp_(g, 1 - beta1)`,
    `v.mul_(beta2).addcmul_(g, g, value=1 - beta2)`,
    `denom = (v.sqrt() / bias_correction2 ** 0.5).add_(eps)`,
    `p.addcdiv_(m, denom, value=-step_size)`; other groupings of the same formula agree to
    float32 round-off (about 1e-7 relative per step).

    State (created lazily at the first step that sees a gradient for p, so before the first
    step the optimizer holds no memory): `self.state[p]` has exactly three keys:
    - `"step"`: a Python int, the number of updates applied to p. (torch keeps a 0-d float32
      CPU tensor here; an int is exact for any number of steps, whereas float32 stops
      counting at 2**24, and it holds no tensor bytes, so the ledger below shows exactly
      8 bytes per parameter.) Loading a state dict whose step is a 0-d tensor also works:
      use `int(state["step"])`.
    - `"exp_avg"`, `"exp_avg_sq"`: `torch.zeros_like(p)` at creation — same shape, dtype and
      device as p (float32 params: 4 + 4 = 8 bytes per parameter).
    """

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        _check_hyperparameters(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)
        # Groups may override the defaults: check what each group ended up with.
        for group in self.param_groups:
            _check_hyperparameters(
                group["lr"], group["betas"], group["eps"], group["weight_decay"]
            )

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        """Apply one AdamW update to every parameter that has a gradient (see the class docstring).

        Returns `closure()` (evaluated with grad enabled) when a closure is given, else None.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.is_sparse:
                    raise ValueError("AdamW does not support sparse gradients")

                state = self.state[p]
                if len(state) == 0:
                    # Lazy init: the 8 bytes/param of optimizer state appear only now.
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

                # int(...) also accepts torch's 0-d tensor step from a loaded state dict.
                step = int(state["step"]) + 1
                state["step"] = step

                # Decoupled weight decay acts on the weights before the Adam update.
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)

                # Moments, same in-place ops (same rounding) as torch's single-tensor path.
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                # Bias corrections in Python double precision.
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5

                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)

        return loss


def _check_hyperparameters(
    lr: Any, betas: Any, eps: Any, weight_decay: Any
) -> None:
    # Group dicts bypass the constructor's annotations, so check types here as well.
    def _real(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return float(value)

    if _real("lr", lr) < 0.0:
        raise ValueError(f"Invalid learning rate: {lr} (must be >= 0)")
    if _real("eps", eps) < 0.0:
        raise ValueError(f"Invalid eps: {eps} (must be >= 0)")
    if _real("weight_decay", weight_decay) < 0.0:
        raise ValueError(f"Invalid weight_decay: {weight_decay} (must be >= 0)")
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    for i, beta in enumerate(betas):
        if not 0.0 <= _real(f"beta{i + 1}", beta) < 1.0:
            raise ValueError(f"Invalid beta{i + 1}: {beta} (must be in [0, 1))")


def _tensor_bytes(obj: Any) -> int:
    # Bytes of every tensor inside obj (a tensor, or dicts/lists/tuples of them).
    if isinstance(obj, Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(v) for v in obj)
    return 0


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by the tensors in `optimizer.state`, as int.

    Sum `t.numel() * t.element_size()` over every tensor value in every per-parameter state
    dict (`optimizer.state[p]` for all p). Non-tensor entries (this module's int step) count 0.
    0 before the first step (the state is created lazily).
    Example: this module's AdamW on a float32 Linear(2048, 2048) after one step:
    exp_avg + exp_avg_sq = 2 * 4,194,304 * 4 = 33,554,432 bytes (notes 000: "32 MB", i.e. MiB).
    (For `torch.optim.AdamW` the same sum is 4 bytes larger per parameter tensor: its step
    is a 0-d float32 tensor on the CPU.)
    """
    return int(sum(_tensor_bytes(state) for state in optimizer.state.values()))


def _ledger(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(
        p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None
    )
    opt = optimizer_state_bytes(optimizer)
    record = {"params": int(params), "grads": int(grads), "optimizer": int(opt)}
    record["total"] = record["params"] + record["grads"] + record["optimizer"]
    device = next(model.parameters()).device
    if device.type == "cuda":
        record["allocated"] = int(torch.cuda.memory_allocated(device))
    return record


def memory_by_stage(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> dict[str, dict[str, int]]:
    """Measure parameter, gradient and optimizer-state bytes at the three stages of notes 000.

    Procedure (one training step, MSE regression):
    1. record stage "created" (the model and optimizer as given);
    2. `loss = F.mse_loss(model(x), y)`; `loss.backward()`; record "after_backward";
    3. `optimizer.step()`; record "after_step". Do NOT zero the gradients before this last
       record (they are part of the step's footprint).
    Each record is counted from the tensors themselves:
    `{"params": sum over model.parameters() of numel * element_size,
      "grads": the same over p.grad for parameters whose grad is not None,
      "optimizer": optimizer_state_bytes(optimizer),
      "total": params + grads + optimizer}`,
    and, when the model's parameters live on a CUDA device, also
    `"allocated": torch.cuda.memory_allocated(device)` (absent on CPU). All values are ints.
    Returns `{"created": {...}, "after_backward": {...}, "after_step": {...}}`.
    Raises ValueError if `model(x)` and `y` have different shapes, or the model has no
    parameters.

    Example (notes 000): a float32 bias-free 2048x2048 linear layer (4,194,304 parameters)
    with this module's AdamW gives totals 16,777,216 / 33,554,432 / 67,108,864 bytes: 4, 8 and
    16 bytes per parameter (the notes' "16 MB, 32 MB, 64 MB" are MiB, 2**20 bytes).
    """
    if next(model.parameters(), None) is None:
        raise ValueError("model has no parameters")
    stages: dict[str, dict[str, int]] = {}
    stages["created"] = _ledger(model, optimizer)

    pred = model(x)
    if pred.shape != y.shape:
        raise ValueError(
            f"model output shape {tuple(pred.shape)} != target shape {tuple(y.shape)}"
        )
    loss = F.mse_loss(pred, y)
    loss.backward()
    del pred, loss  # drop our references so only params + grads stay allocated
    stages["after_backward"] = _ledger(model, optimizer)

    optimizer.step()
    stages["after_step"] = _ledger(model, optimizer)
    return stages
