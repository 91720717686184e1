"""An optimizer shaped like torch's AdamW that is not one: what the probes hand to a submission's
``optimizer_state_bytes``, ``memory_by_stage``, ``train_step`` and checkpoints.

Those functions need an optimizer whose state is laid out as torch's AdamW's, but nothing a probe
hands over may compute AdamW's update: a student could keep the object's class and have their own
AdamW delegate to it (torch's own is not in the sandbox: seam/absent.py). So the STATE is torch's
(per parameter, created at its first step with a gradient: ``step``, a 0-d float32 tensor on the
CPU; ``exp_avg``, ``exp_avg_sq`` and with amsgrad ``max_exp_avg_sq``, each ``zeros_like(p)``), so
are the ``param_groups`` keys, and the UPDATE is SGD with momentum and decoupled weight decay:
``p *= 1 - lr * weight_decay; exp_avg = beta1 * exp_avg + grad; p -= lr * exp_avg``.
``exp_avg_sq`` (an average of grad², and its running maximum) is kept up to date and never used.
The tests run this same class in the grader's process as the oracle of what a submission does
with it.
"""

import torch


class AdamWShaped(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": False, "foreach": None, "capturable": False,
                                  "differentiable": False, "fused": None, "decoupled_weight_decay": True})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:  # lazily, as torch's: a parameter that never had a gradient has no state
                    scalar = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
                    state["step"] = torch.tensor(0.0, dtype=scalar, device="cpu")
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                p.mul_(1 - group["lr"] * group["weight_decay"])
                state["exp_avg"].mul_(beta1).add_(p.grad)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                if group["amsgrad"]:
                    torch.maximum(state["max_exp_avg_sq"], state["exp_avg_sq"], out=state["max_exp_avg_sq"])
                p.add_(state["exp_avg"], alpha=-group["lr"])
        return loss
