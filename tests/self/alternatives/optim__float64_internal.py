"""optim — alternative: each update computed in float64 and rounded back once.

Differences from the reference: the hyperparameters are checked in a helper method on the
optimizer (by try/float conversion); step() first collects (param, grad, state) for every
parameter with a gradient, then updates them; the arithmetic is done on float64 copies
(decay, moments, bias corrections, update) and the moments and the parameter are written
back into their own dtype with copy_. The step count is kept as an int. optimizer_state_bytes
uses a recursive generator; memory_by_stage checks the shapes before the backward pass with an
early return style and prints nothing unless asked.
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
    """AdamW with decoupled weight decay; the same trajectory as `torch.optim.AdamW`."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self._check(defaults)
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._check(group)

    @staticmethod
    def _check(h: dict) -> None:
        def num(name: str, v: Any) -> float:
            if isinstance(v, bool):
                raise ValueError(f"{name} must be a number, got {v!r}")
            try:
                f = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a number, got {v!r}") from None
            if f != f or f in (math.inf, -math.inf):
                raise ValueError(f"{name} must be finite, got {v!r}")
            return f

        if num("lr", h["lr"]) < 0:
            raise ValueError(f"lr must be >= 0, got {h['lr']}")
        if num("eps", h["eps"]) < 0:
            raise ValueError(f"eps must be >= 0, got {h['eps']}")
        if num("weight_decay", h["weight_decay"]) < 0:
            raise ValueError(f"weight_decay must be >= 0, got {h['weight_decay']}")
        betas = h["betas"]
        try:
            b1, b2 = betas
        except (TypeError, ValueError):
            raise ValueError(f"betas must be a pair, got {betas!r}") from None
        for name, b in (("beta1", b1), ("beta2", b2)):
            bf = num(name, b)
            if bf < 0 or bf >= 1:
                raise ValueError(f"{name} must be in [0, 1), got {b}")

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Tensor | float | None:
        """Apply one AdamW update to every parameter that has a gradient."""
        if closure is None:
            loss = None
        else:
            with torch.enable_grad():
                loss = closure()

        work = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                work.append((p, state, group))

        for p, state, group in work:
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            t = int(state["step"]) + 1
            state["step"] = t

            g = p.grad.double()
            p64 = p.double() * (1 - lr * wd)
            m64 = state["exp_avg"].double() * beta1 + (1 - beta1) * g
            v64 = state["exp_avg_sq"].double() * beta2 + (1 - beta2) * g * g
            denom = v64.sqrt() / math.sqrt(1 - beta2**t) + eps
            p64 = p64 - (lr / (1 - beta1**t)) * m64 / denom

            state["exp_avg"].copy_(m64)
            state["exp_avg_sq"].copy_(v64)
            p.copy_(p64)
        return loss


def _tensors(obj: Any):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by the tensors in `optimizer.state`, as int."""
    n = 0
    for per_param in optimizer.state.values():
        for t in _tensors(per_param):
            n += t.numel() * t.element_size()
    return n


def _nbytes(ts) -> int:
    return sum(t.numel() * t.element_size() for t in ts)


def memory_by_stage(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> dict[str, dict[str, int]]:
    """Measure parameter, gradient and optimizer-state bytes at the three stages of notes 000."""
    first = next(iter(model.parameters()), None)
    if first is None:
        raise ValueError("memory_by_stage needs a model with parameters")
    device = first.device

    def snap() -> dict[str, int]:
        ps = list(model.parameters())
        p_bytes = _nbytes(ps)
        g_bytes = _nbytes([p.grad for p in ps if p.grad is not None])
        o_bytes = optimizer_state_bytes(optimizer)
        out = {"params": p_bytes, "grads": g_bytes, "optimizer": o_bytes,
               "total": p_bytes + g_bytes + o_bytes}
        if device.type == "cuda":
            out["allocated"] = torch.cuda.memory_allocated(device)
        return out

    created = snap()
    prediction = model(x)
    if tuple(prediction.shape) != tuple(y.shape):
        raise ValueError(f"model(x) has shape {tuple(prediction.shape)}, y has {tuple(y.shape)}")
    F.mse_loss(prediction, y).backward()
    prediction = None
    after_backward = snap()
    optimizer.step()
    after_step = snap()
    return {"created": created, "after_backward": after_backward, "after_step": after_step}
