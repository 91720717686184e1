from tests.self.shortcuts import Shortcut

_WRAPPER = '''
class AdamW(torch.optim.Optimizer):
    """AdamW, by keeping torch's inside."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        params = list(params)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self._inner = {inner}
        self.state = self._inner.state
        self.param_groups = self._inner.param_groups

    def step(self, closure=None):
        {step}
'''
_TORCH = "torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=False)"

SHORTCUTS = [
    Shortcut("optim", "AdamW", "a subclass of torch.optim.AdamW", "class AdamW(torch.optim.AdamW):\n    pass\n"),
    # the optimizer the probes hand over, reached by name: its state is AdamW's, its update is not
    Shortcut("optim", "AdamW", "the probes' optimizer kept inside",
             _WRAPPER.format(inner="__import__('seam.adamw_shaped', fromlist=['AdamWShaped']).AdamWShaped(params, "
                                   "lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)",
                             step="return self._inner.step(closure)")),
    Shortcut("optim", "AdamW", "torch's AdamW kept inside", _WRAPPER.format(inner=_TORCH, step="return self._inner.step(closure)")),
    Shortcut("optim", "AdamW", "Adam with decoupled decay, imported inside",
             _WRAPPER.format(inner="__import__('torch.optim', fromlist=['Adam']).Adam(params, lr=lr, betas=betas, "
                                   "eps=eps, weight_decay=weight_decay, decoupled_weight_decay=True)",
                             step="return self._inner.step(closure)")),
    Shortcut("optim", "AdamW", "the functional adamw through getattr", '''
import importlib

_functional = getattr(importlib.import_module("torch.optim.adamw"), "adamw")


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.grad is not None]
            for p in ps:
                if not self.state[p]:
                    self.state[p] = {"step": torch.tensor(0.0), "exp_avg": torch.zeros_like(p),
                                     "exp_avg_sq": torch.zeros_like(p)}
            st = [self.state[p] for p in ps]
            _functional(ps, [p.grad for p in ps], [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st],
                              [], [s["step"] for s in st], foreach=False, amsgrad=False, beta1=group["betas"][0],
                              beta2=group["betas"][1], lr=group["lr"], weight_decay=group["weight_decay"],
                              eps=group["eps"], maximize=False)
        return loss
'''),
    Shortcut("optim", "AdamW", "torch's AdamW stepped in a thread",
             _WRAPPER.format(inner=_TORCH, step="import threading\n        out = []\n        t = threading.Thread("
                                                "target=lambda: out.append(self._inner.step(closure)))\n        "
                                                "t.start()\n        t.join()\n        return out[0]")),
    Shortcut("optim", "AdamW", "torch's AdamW under DisableTorchFunction and _disable_current_modes",
             _WRAPPER.format(inner=_TORCH, step="from torch.utils._python_dispatch import _disable_current_modes\n"
                                                "        with torch._C.DisableTorchFunction(), _disable_current_modes():\n"
                                                "            return self._inner.step(closure)")),
]
