from tests.self.bugs import Bug

DECAY_TO_UPDATE = ("                # Decoupled weight decay acts on the weights before the Adam update.\n                if weight_decay != 0:\n                    p.mul_(1 - lr * weight_decay)\n\n                # Moments, same in-place ops (same rounding) as torch's single-tensor path.\n                exp_avg.lerp_(grad, 1 - beta1)\n                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n\n                # Bias corrections in Python double precision.\n                bias_correction1 = 1 - beta1**step\n                bias_correction2 = 1 - beta2**step\n                step_size = lr / bias_correction1\n                bias_correction2_sqrt = bias_correction2**0.5\n\n                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)\n                p.addcdiv_(exp_avg, denom, value=-step_size)\n")

BUGS = [
    Bug("optim", "forgot the bias correction of the first moment",
        "                bias_correction1 = 1 - beta1**step\n",
        "                bias_correction1 = 1.0\n", mistake="no bias correction of the first moment"),
    Bug("optim", "L2 weight decay added to the gradient instead of decoupled decay",
        "                if weight_decay != 0:\n                    p.mul_(1 - lr * weight_decay)\n",
        "                if weight_decay != 0:\n                    grad = grad.add(p, alpha=weight_decay)\n",
        mistake="L2 weight decay"),
    Bug("optim", "decay applied after the Adam update",
        DECAY_TO_UPDATE,
        "                # Moments, same in-place ops (same rounding) as torch's single-tensor path.\n                exp_avg.lerp_(grad, 1 - beta1)\n                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n\n                # Bias corrections in Python double precision.\n                bias_correction1 = 1 - beta1**step\n                bias_correction2 = 1 - beta2**step\n                step_size = lr / bias_correction1\n                bias_correction2_sqrt = bias_correction2**0.5\n\n                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)\n                p.addcdiv_(exp_avg, denom, value=-step_size)\n                if weight_decay != 0:\n                    p.mul_(1 - lr * weight_decay)\n",
        mistake="weight decay applied after the Adam update"),
    Bug("optim", "eps inside the square root",
        "                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)",
        "                denom = (exp_avg_sq / bias_correction2).add_(eps).sqrt_()", mistake="eps inside the square root"),
    Bug("optim", "moments kept in float64",
        '                grad = p.grad\n                if grad.is_sparse:\n                    raise ValueError("AdamW does not support sparse gradients")\n\n                state = self.state[p]\n                if len(state) == 0:\n                    # Lazy init: the 8 bytes/param of optimizer state appear only now.\n                    state["step"] = 0\n                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n',
        '                grad = p.grad.double()  # moments in double precision\n                if grad.is_sparse:\n                    raise ValueError("AdamW does not support sparse gradients")\n\n                state = self.state[p]\n                if len(state) == 0:\n                    # Lazy init: the 8 bytes/param of optimizer state appear only now.\n                    state["step"] = 0\n                    state["exp_avg"] = torch.zeros_like(p, dtype=torch.float64)\n                    state["exp_avg_sq"] = torch.zeros_like(p, dtype=torch.float64)\n'),
    Bug("optim", "one global step counter instead of one per parameter",
        '        for group in self.param_groups:\n            lr = group["lr"]\n            beta1, beta2 = group["betas"]\n            eps = group["eps"]\n            weight_decay = group["weight_decay"]\n            for p in group["params"]:\n                if p.grad is None:\n                    continue\n                grad = p.grad\n                if grad.is_sparse:\n                    raise ValueError("AdamW does not support sparse gradients")\n\n                state = self.state[p]\n                if len(state) == 0:\n                    # Lazy init: the 8 bytes/param of optimizer state appear only now.\n                    state["step"] = 0\n                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]\n\n                # int(...) also accepts torch\'s 0-d tensor step from a loaded state dict.\n                step = int(state["step"]) + 1\n',
        '        self._t = getattr(self, "_t", 0) + 1\n        for group in self.param_groups:\n            lr = group["lr"]\n            beta1, beta2 = group["betas"]\n            eps = group["eps"]\n            weight_decay = group["weight_decay"]\n            for p in group["params"]:\n                if p.grad is None:\n                    continue\n                grad = p.grad\n                if grad.is_sparse:\n                    raise ValueError("AdamW does not support sparse gradients")\n\n                state = self.state[p]\n                if len(state) == 0:\n                    # Lazy init: the 8 bytes/param of optimizer state appear only now.\n                    state["step"] = 0\n                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)\n                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]\n\n                # int(...) also accepts torch\'s 0-d tensor step from a loaded state dict.\n                step = self._t\n'),
    Bug("optim", "gradients zeroed before the after_step record",
        "    optimizer.step()\n    stages[\"after_step\"]",
        "    optimizer.step()\n    optimizer.zero_grad()\n    stages[\"after_step\"]"),
    Bug("optim", "optimizer_state_bytes counts only the first moment",
        "    return int(sum(_tensor_bytes(state) for state in optimizer.state.values()))",
        "    return int(sum(_tensor_bytes(state.get(\"exp_avg\")) for state in optimizer.state.values()))"),
    # CS336 assignment 1's algorithm, coded literally: decay after the update, and eps added to the
    # raw sqrt(v) with both bias corrections folded into the step size (named: a bare
    # "max |error| 0.00125" would not tell its author which step is wrong)
    Bug("optim", "CS336 assignment 1's AdamW, literally", DECAY_TO_UPDATE,
        "                exp_avg.lerp_(grad, 1 - beta1)\n"
        "                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n"
        "                alpha_t = lr * (1 - beta2**step) ** 0.5 / (1 - beta1**step)\n"
        "                p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-alpha_t)\n"
        "                if weight_decay != 0:\n"
        "                    p.mul_(1 - lr * weight_decay)\n",
        mistake="CS336 assignment 1's AdamW, coded literally"),
]
