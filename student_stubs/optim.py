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
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        """Apply one AdamW update to every parameter that has a gradient (see the class docstring).

        Returns `closure()` (evaluated with grad enabled) when a closure is given, else None.
        """
        raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError
