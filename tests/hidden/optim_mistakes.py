"""optim (hidden): the named AdamW mistakes (tests.checks.Mistake) its tests recognise in a
trajectory. Each is AdamW with exactly one published slip, run here on the test's own gradients
(``seam.probes.optim.run_adamw``), so a submission whose trajectory follows it (within the
trajectory tolerance) is told which slip it made and where the handout says otherwise. Not in
tests/common: its VariantAdamW is, with its defaults, a correct AdamW, and tests/common ships to
students."""

import torch

from seam.probes.optim import run_adamw
from tests.checks import Mistake


class VariantAdamW(torch.optim.Optimizer):
    """AdamW, or one of its classic misreadings, in the plainest float32 ops.

    decay: "first" (the handout's: p ← p·(1 − lr·wd), then the Adam update), "after" (the same
    decay after the update: CS336 assignment 1's algorithm), or "l2" (wd·p added to the
    gradient: Adam with L2, not AdamW). eps: "corrected" (eps added to sqrt(v̂), torch's and the
    handout's), "raw" (eps added to sqrt(v) with the bias corrections folded into the step size
    α_t = lr·sqrt(1 − β2^t)/(1 − β1^t): CS336 assignment 1's), or "inside" (sqrt(v̂ + eps)).
    first_moment_correction: False drops the 1/(1 − β1^t)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, *,
                 decay="first", eps_mode="corrected", first_moment_correction=True):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.decay, self.eps_mode, self.correct_m = decay, eps_mode, first_moment_correction

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad + wd * p if self.decay == "l2" else p.grad
                state = self.state[p]
                if not state:
                    state.update(step=0, exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
                state["step"] += 1
                t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
                if self.decay == "first":
                    p.mul_(1 - lr * wd)
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                c1 = (1 - b1**t) if self.correct_m else 1.0
                c2 = 1 - b2**t
                if self.eps_mode == "raw":
                    p.addcdiv_(m, v.sqrt().add_(eps), value=-lr * c2**0.5 / c1)
                elif self.eps_mode == "inside":
                    p.addcdiv_(m, (v / c2).add_(eps).sqrt_(), value=-lr / c1)
                else:
                    p.addcdiv_(m, (v.sqrt() / c2**0.5).add_(eps), value=-lr / c1)
                if self.decay == "after":
                    p.mul_(1 - lr * wd)


def _trajectory(**variant):
    """A Mistake's answer: the trajectory (as the probe reports it) of that variant on a spec."""
    cls = type("Variant", (VariantAdamW,), {"__init__": lambda self, params, **kw: VariantAdamW.__init__(
        self, params, **kw, **variant)})
    return lambda spec: {**run_adamw(cls, spec), "at_steps": spec["checkpoints"]}


APPLIED_FIRST = "applied **first**, to the weights, not added to the gradient"
ADAMW_MISTAKES = [
    Mistake("CS336 assignment 1's AdamW, coded literally (weight decay after the update, eps added to "
            "the raw sqrt(v))", _trajectory(decay="after", eps_mode="raw"),
            "This problem's AdamW is torch.optim.AdamW's: decay the weights first, then the Adam update, "
            "with eps added to sqrt(v̂) after the bias correction; the two orderings drift apart by about "
            "lr·wd·|update| per step.", "optim", APPLIED_FIRST),
    Mistake("weight decay applied after the Adam update", _trajectory(decay="after"),
            "torch.optim.AdamW (and this problem) multiplies the weights by (1 − lr·wd) before the update.",
            "optim", APPLIED_FIRST),
    Mistake("L2 weight decay (wd·p added to the gradient: Adam, not AdamW)", _trajectory(decay="l2"),
            "AdamW's decay is decoupled: it scales the weights, it never enters the moments.", "optim",
            APPLIED_FIRST),
    Mistake("eps inside the square root", _trajectory(eps_mode="inside"),
            "eps is added to sqrt(v̂), outside the root.", "optim", "sqrt(v)/sqrt(1−β2^t) + eps"),
    Mistake("no bias correction of the first moment", _trajectory(first_moment_correction=False),
            "The step is lr/(1−β1^t) · m / (...): without 1/(1−β1^t) the first steps are up to 10× too small.",
            "optim", "p ← p − lr/(1−β1^t) · m"),
]
