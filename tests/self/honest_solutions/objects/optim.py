"""optim — AdamW written by hand, and where its memory goes (4, 8, 16 bytes per parameter).

Honest solution, object style: hyperparameters as a validated dataclass, a per-parameter loop
with torch's in-place ops, a `Ledger` dataclass for the three stages.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor

logger = logging.getLogger(__name__)


class HasState(Protocol):
    state: dict


@dataclass(frozen=True, slots=True)
class Hyper:
    lr: float
    beta1: float
    beta2: float
    eps: float
    weight_decay: float

    def __post_init__(self) -> None:
        def finite(v: object) -> bool:
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

        if not finite(self.lr) or self.lr < 0:
            raise ValueError(f"Invalid learning rate: {self.lr}")
        if not finite(self.eps) or self.eps < 0:
            raise ValueError(f"Invalid epsilon value: {self.eps}")
        for i, beta in enumerate((self.beta1, self.beta2)):
            if not finite(beta) or not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        if not finite(self.weight_decay) or self.weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {self.weight_decay}")
        if self.weight_decay * self.lr >= 1:
            warnings.warn(f"lr * weight_decay = {self.lr * self.weight_decay} >= 1 zeroes or flips the weights",
                          stacklevel=4)

    @classmethod
    def of(cls, group: dict[str, Any]) -> Hyper:
        beta1, beta2 = group["betas"]
        return cls(group["lr"], beta1, beta2, group["eps"], group["weight_decay"])


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
        try:
            beta1, beta2 = betas
        except (TypeError, ValueError):
            raise ValueError(f"betas must be a pair of floats, got {betas!r}") from None
        hyper = Hyper(lr, beta1, beta2, eps, weight_decay)
        super().__init__(params, dict(lr=hyper.lr, betas=(hyper.beta1, hyper.beta2), eps=hyper.eps,
                                      weight_decay=hyper.weight_decay))

    def __repr__(self) -> str:
        n = sum(len(g["params"]) for g in self.param_groups)
        return f"AdamW({len(self.param_groups)} groups, {n} parameters, {len(self.state)} with state)"

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:  # lazily, at the first gradient
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
        return state

    def _update(self, p: Tensor, h: Hyper) -> None:
        grad = p.grad
        state = self._state_of(p)
        t = int(state["step"]) + 1
        state["step"] = t
        m, v = state["exp_avg"], state["exp_avg_sq"]

        p.mul_(1 - h.lr * h.weight_decay)
        m.lerp_(grad, 1 - h.beta1)
        v.mul_(h.beta2).addcmul_(grad, grad, value=1 - h.beta2)
        step_size = h.lr / (1 - h.beta1**t)
        denom = (v.sqrt() / math.sqrt(1 - h.beta2**t)).add_(h.eps)
        p.addcdiv_(m, denom, value=-step_size)

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            h = Hyper.of(group)
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, h)
        logger.debug("step done: %r", self)
        return loss


def optimizer_state_bytes(optimizer: HasState) -> int:
    total = 0
    for per_param in optimizer.state.values():
        for value in per_param.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total


@dataclass(slots=True)
class Ledger:
    params: int
    grads: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer

    @classmethod
    def take(cls, model: nn.Module, optimizer: torch.optim.Optimizer) -> Ledger:
        params = list(model.parameters())
        return cls(
            params=sum(p.numel() * p.element_size() for p in params),
            grads=sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None),
            optimizer=optimizer_state_bytes(optimizer),
        )

    def record(self, device: torch.device) -> dict[str, int]:
        out = {**asdict(self), "total": self.total}
        if device.type == "cuda":
            out["allocated"] = torch.cuda.memory_allocated(device)
        return out


def memory_by_stage(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> dict[str, dict[str, int]]:
    params = list(model.parameters())
    if not params:
        raise ValueError("memory_by_stage needs a model with parameters")
    device = params[0].device
    if optimizer_state_bytes(optimizer):
        warnings.warn("the optimizer already holds state: 'created' is not a fresh start", stacklevel=2)

    records = {"created": Ledger.take(model, optimizer).record(device)}
    out = model(x)
    if out.shape != y.shape:
        raise ValueError(f"model(x) has shape {tuple(out.shape)} but y has {tuple(y.shape)}")
    loss = F.mse_loss(out, y)
    loss.backward()
    records["after_backward"] = Ledger.take(model, optimizer).record(device)
    optimizer.step()
    records["after_step"] = Ledger.take(model, optimizer).record(device)
    return records
