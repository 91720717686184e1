"""optim — AdamW written by hand, and where its memory goes (4, 8, 16 bytes per parameter).

Honest solution, functional style: the update runs on whole lists of tensors with torch's
_foreach_ ops; the ledgers are comprehensions over the tensors.
"""

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_hyperparameters(lr: float, betas: tuple[float, float], eps: float, weight_decay: float) -> None:
    if not _finite(lr) or lr < 0:
        raise ValueError(f"Invalid learning rate: {lr!r}")
    if not _finite(eps) or eps < 0:
        raise ValueError(f"Invalid epsilon value: {eps!r}")
    try:
        beta1, beta2 = betas
    except (TypeError, ValueError):
        raise ValueError(f"betas must be a pair, got {betas!r}") from None
    for i, beta in enumerate((beta1, beta2)):
        if not _finite(beta) or not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta!r}")
    if not _finite(weight_decay) or weight_decay < 0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay!r}")


class AdamW(torch.optim.Optimizer):
    """AdamW with decoupled weight decay, the same trajectory as torch.optim.AdamW."""

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

    def _fresh_state(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state.update(step=0, exp_avg=torch.zeros_like(p, memory_format=torch.preserve_format),
                         exp_avg_sq=torch.zeros_like(p, memory_format=torch.preserve_format))
        return state

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            states = [self._fresh_state(p) for p in params]
            for s in states:
                s["step"] = int(s["step"]) + 1
            grads = [p.grad for p in params]
            exp_avgs = [s["exp_avg"] for s in states]
            exp_avg_sqs = [s["exp_avg_sq"] for s in states]

            torch._foreach_mul_(params, 1 - lr * wd)                      # decoupled decay, first
            torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)              # m
            torch._foreach_mul_(exp_avg_sqs, beta2)                       # v
            torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1 - beta2)

            bias2_roots = [math.sqrt(1 - beta2 ** s["step"]) for s in states]
            step_sizes = [-lr / (1 - beta1 ** s["step"]) for s in states]
            denoms = torch._foreach_sqrt(exp_avg_sqs)
            torch._foreach_div_(denoms, bias2_roots)
            torch._foreach_add_(denoms, eps)
            torch._foreach_addcdiv_(params, exp_avgs, denoms, step_sizes)
        return loss


def _tensor_bytes(t: Tensor) -> int:
    return t.numel() * t.element_size()


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    return sum(_tensor_bytes(v) for state in optimizer.state.values() for v in state.values()
               if isinstance(v, Tensor))


def _ledger(model: nn.Module, optimizer: torch.optim.Optimizer, device: torch.device) -> dict[str, int]:
    params = list(model.parameters())
    record = {
        "params": sum(map(_tensor_bytes, params)),
        "grads": sum(_tensor_bytes(p.grad) for p in params if p.grad is not None),
        "optimizer": optimizer_state_bytes(optimizer),
    }
    record["total"] = sum(record.values())
    if device.type == "cuda":
        record["allocated"] = int(torch.cuda.memory_allocated(device))
    return record


def memory_by_stage(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> dict[str, dict[str, int]]:
    first = next(iter(model.parameters()), None)
    if first is None:
        raise ValueError("the model has no parameters")
    device = first.device
    stages = {"created": _ledger(model, optimizer, device)}
    pred = model(x)
    if pred.shape != y.shape:
        raise ValueError(f"model output {tuple(pred.shape)} and target {tuple(y.shape)} differ in shape")
    F.mse_loss(pred, y).backward()
    stages["after_backward"] = _ledger(model, optimizer, device)
    optimizer.step()
    stages["after_step"] = _ledger(model, optimizer, device)
    return stages
