"""optim — alternative: the textbook AdamW formula with explicit bias-corrected moments.

Differences from the reference: the update is written as m_hat = m / (1 - beta1^t),
v_hat = v / (1 - beta2^t), p -= lr * m_hat / (sqrt(v_hat) + eps) (a different grouping of the
same formula, equal to torch's to float32 round-off); the moments are updated with mul_/add_
instead of lerp_/addcmul_; the hyperparameter checks are a table of predicates; the state
bytes are counted with an explicit stack walk; memory_by_stage builds its records in a loop
over the stage names.
"""

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor


def _finite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _validate(lr: Any, betas: Any, eps: Any, weight_decay: Any) -> None:
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair, got {betas!r}")
    rules = [
        ("lr", lr, lambda v: v >= 0),
        ("eps", eps, lambda v: v >= 0),
        ("weight_decay", weight_decay, lambda v: v >= 0),
        ("beta1", betas[0], lambda v: 0 <= v < 1),
        ("beta2", betas[1], lambda v: 0 <= v < 1),
    ]
    for name, value, ok in rules:
        if not _finite_number(value) or not ok(value):
            raise ValueError(f"invalid {name}: {value!r}")


class AdamW(torch.optim.Optimizer):
    """AdamW with decoupled weight decay; the same trajectory as `torch.optim.AdamW`."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        _validate(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})
        for g in self.param_groups:
            _validate(g["lr"], g["betas"], g["eps"], g["weight_decay"])

    def _update(self, p: Tensor, lr: float, beta1: float, beta2: float, eps: float, wd: float) -> None:
        g = p.grad
        st = self.state[p]
        if not st:
            st["step"] = 0
            st["exp_avg"] = torch.zeros_like(p)
            st["exp_avg_sq"] = torch.zeros_like(p)
        t = int(st["step"]) + 1
        st["step"] = t
        m, v = st["exp_avg"], st["exp_avg_sq"]

        p.mul_(1.0 - lr * wd)                       # decoupled decay first
        m.mul_(beta1).add_(g, alpha=1.0 - beta1)
        v.mul_(beta2).add_(g * g, alpha=1.0 - beta2)

        m_hat = m / (1.0 - beta1**t)
        v_hat = v / (1.0 - beta2**t)
        p.sub_(lr * m_hat / (v_hat.sqrt() + eps))

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        """Apply one AdamW update to every parameter that has a gradient."""
        result = None
        if closure is not None:
            with torch.enable_grad():
                result = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group["lr"], b1, b2, group["eps"], group["weight_decay"])
        return result


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by the tensors in `optimizer.state`, as int."""
    total = 0
    stack: list[Any] = list(optimizer.state.values())
    while stack:
        item = stack.pop()
        if torch.is_tensor(item):
            total += item.numel() * item.element_size()
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return int(total)


def memory_by_stage(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> dict[str, dict[str, int]]:
    """Measure parameter, gradient and optimizer-state bytes at the three stages of notes 000."""
    params = list(model.parameters())
    if len(params) == 0:
        raise ValueError("the model has no parameters")
    on_gpu = params[0].is_cuda

    def record() -> dict[str, int]:
        r = {
            "params": sum(p.numel() * p.element_size() for p in params),
            "grads": sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None),
            "optimizer": optimizer_state_bytes(optimizer),
        }
        r["total"] = r["params"] + r["grads"] + r["optimizer"]
        if on_gpu:
            r["allocated"] = torch.cuda.memory_allocated(params[0].device)
        return {k: int(v) for k, v in r.items()}

    def backward() -> None:
        out = model(x)
        if out.shape != y.shape:
            raise ValueError(f"output shape {tuple(out.shape)} differs from target shape {tuple(y.shape)}")
        F.mse_loss(out, y).backward()

    result = {}
    for stage, action in (("created", None), ("after_backward", backward), ("after_step", optimizer.step)):
        if action is not None:
            action()
        result[stage] = record()
    return result
