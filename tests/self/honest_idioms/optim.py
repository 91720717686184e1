"""Idioms in optim.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "copy.deepcopy of a module-level defaults dict",
        "students keep torch's defaults in one dict and copy it before filling it in",
        (("import math\n", "import copy\nimport math\n"),
         ("class AdamW(torch.optim.Optimizer):\n", '''DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}


class AdamW(torch.optim.Optimizer):
'''),
         ("        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)\n",
          '''        defaults = copy.deepcopy(DEFAULTS)
        defaults.update(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
'''))),
    Idiom(
        "a generator of the parameters that have a gradient",
        "students name the loop's filter with a small generator function",
        (('''            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
''', '''            for p in _with_grad(group):
                grad = p.grad
'''),
         ('''def _check_hyperparameters(
''', '''def _with_grad(group: dict[str, Any]) -> Iterable[Tensor]:
    for p in group["params"]:
        if p.grad is not None:
            yield p


def _check_hyperparameters(
'''))),
    Idiom(
        "getattr(module, name) over the names of model.named_parameters()",
        "students walk a dotted parameter name down the module tree to reach the tensor",
        (('''    params = sum(p.numel() * p.element_size() for p in model.parameters())
''', '''    params = sum(_parameter(model, name).numel() * _parameter(model, name).element_size()
                 for name, _ in model.named_parameters())
'''),
         ('''def _ledger(''', '''def _parameter(model: nn.Module, name: str) -> Tensor:
    module = model
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _ledger('''))),
]
