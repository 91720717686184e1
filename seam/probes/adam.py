"""torch's Adam and AdamW written out by hand: the optimizers the probes hand to a submission
(``optimizer_state_bytes``, ``memory_by_stage``, ``train_step``, the checkpoints). In the sandbox
torch's own are not there (seam/absent.py), so nothing a probe hands over runs them; the tests
compare with torch's own, in the grader's process.

They keep torch's state (per parameter: ``step``, a 0-d tensor on the CPU; ``exp_avg``,
``exp_avg_sq`` and with amsgrad ``max_exp_avg_sq``, each like the parameter), torch's
``param_groups`` keys and torch's arithmetic, in torch's order (torch/optim/adam.py,
``_single_tensor_adam``, the step torch takes on the CPU), so that on the CPU the two agree bit
for bit and an honest submission cannot tell them apart. No options beyond those the probes use.
"""

import torch


class Adam(torch.optim.Optimizer):
    torch_class = "torch.optim.adam.Adam"  # in the sandbox, isinstance(it, torch.optim.Adam) holds

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 *, decoupled_weight_decay=False):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": False, "foreach": None, "capturable": False,
                                  "differentiable": False, "fused": None,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad, state = p.grad, self.state[p]
                if not state:  # lazily, as torch: a parameter that never had a gradient has no state
                    scalar = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
                    state["step"] = torch.tensor(0.0, dtype=scalar, device="cpu")
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    if amsgrad:
                        state["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = state["step"].item()
                bias_correction1 = 1 - beta1 ** step
                bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
                if amsgrad:
                    torch.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
                    denom = (state["max_exp_avg_sq"].sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-(lr / bias_correction1))
        return loss


class AdamW(Adam):
    torch_class = "torch.optim.adamw.AdamW"  # in the sandbox, isinstance(it, torch.optim.AdamW) holds

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, decoupled_weight_decay=True)
