"""A hand-written Linear and MLP: stores on their own modules, an init by apply, setattr(self, ...)."""

import math

import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, d_in: int, d_out: int, dtype=None, device=None):
        super().__init__()
        std = math.sqrt(2 / (d_in + d_out))
        w = torch.empty(d_out, d_in, dtype=dtype or torch.float32, device=device)
        self.weight = nn.Parameter(nn.init.trunc_normal_(w, std=std, a=-3 * std, b=3 * std))

    def forward(self, x):
        return x @ self.weight.T

    def extra_repr(self):
        return f"d_in={self.weight.shape[1]}, d_out={self.weight.shape[0]}"


class MLP(nn.Module):
    def __init__(self, sizes, **names):
        super().__init__()
        self.layers = nn.ModuleList(Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        for name, value in names.items():
            setattr(self, name, value)  # their own object, by a name they were given

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x

    def __getitem__(self, i):
        return self.layers[i]

    def __len__(self):
        return len(self.layers)

    def describe(self, field: str):
        return getattr(self, field) if hasattr(self, field) else None


def _init(module):
    if isinstance(module, Linear):
        with torch.no_grad():
            module.weight.data = torch.full_like(module.weight, 0.01)


if __name__ == "__main__":
    model = MLP([4, 8, 2], tag="tiny")
    model.apply(_init)
    model.layers[0].weight = nn.Parameter(torch.zeros(8, 4))
    model[1].weight.data = model[1].weight.data * 2
    out = model(torch.randn(3, 4))
    out.sum().backward()
    xs = list(model.parameters())
    for i in range(len(xs)):
        xs[i].grad = None
    model.training_note = "frozen"
    assert out.shape == (3, 2) and model.describe("tag") == "tiny" and len(model) == 2
    print("ok", model.layers[0].extra_repr(), model.training_note)
