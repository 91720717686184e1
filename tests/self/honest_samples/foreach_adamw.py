"""An AdamW with torch's multi-tensor (_foreach_*) kernels, the way a student speeds one up."""

import math

import torch


class ForeachAdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        if lr < 0:
            raise ValueError(f"bad lr {lr}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def set_lr(self, lr):
        for group in self.param_groups:
            group["lr"] = lr

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            beta1, beta2 = group["betas"]
            grads, ms, vs = [], [], []
            for p in params:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                self.state[p]["step"] += 1
                grads.append(p.grad)
                ms.append(state["exp_avg"])
                vs.append(state["exp_avg_sq"])
            torch._foreach_mul_(params, 1 - group["lr"] * group["weight_decay"])
            torch._foreach_lerp_(ms, grads, 1 - beta1)
            torch._foreach_mul_(vs, beta2)
            torch._foreach_addcmul_(vs, grads, grads, value=1 - beta2)
            for p, m, v in zip(params, ms, vs):
                t = self.state[p]["step"]
                step_size = group["lr"] / (1 - beta1 ** t)
                denom = (v.sqrt() / math.sqrt(1 - beta2 ** t)).add_(group["eps"])
                p.addcdiv_(m, denom, value=-step_size)
        return loss


def reset_like(model: torch.nn.Module, other: torch.nn.Module) -> None:
    """Copy another model's weights in place (what a checkpoint loader does)."""
    with torch.no_grad():
        for mine, theirs in zip(model.parameters(), other.parameters()):
            mine.data.copy_(theirs.data)


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(3, 2))
    reference = torch.optim.AdamW([w.detach().clone().requires_grad_()], lr=0.1)
    mine = ForeachAdamW([w], lr=0.1)
    for _ in range(3):
        for opt in (mine, reference):
            p = opt.param_groups[0]["params"][0]
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
    assert torch.allclose(w, reference.param_groups[0]["params"][0], atol=1e-6)
    mine.set_lr(0.01)
    print("ok", w.shape)
