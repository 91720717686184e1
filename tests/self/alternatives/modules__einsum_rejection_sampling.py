"""modules, alternative: the forward pass is torch.einsum('...i,io->...o') instead of `@`; the
truncated normal is drawn by rejection sampling (draw N(0, σ²), redraw every value beyond ±3σ
until none is left) instead of torch.nn.init.trunc_normal_; Cruncher runs its layers with
functools.reduce; the counting functions de-duplicate parameters by identity themselves.
"""

import math
from functools import reduce

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor


def _truncated_normal_(weight: Tensor, std: float, cutoff: float = 3.0) -> Tensor:
    """Fill `weight` in place with N(0, std²) conditioned on |w| <= cutoff·std (rejection)."""
    with torch.no_grad():
        # draw in float32 (a dtype every generator supports), then cast into the weight
        sample = torch.randn(weight.shape, device=weight.device, dtype=torch.float32) * std
        bound = cutoff * std
        outside = sample.abs() > bound
        while bool(outside.any()):
            n = int(outside.sum())
            sample[outside] = torch.randn(n, device=weight.device, dtype=torch.float32) * std
            outside = sample.abs() > bound
        weight.copy_(sample)
    return weight


class Linear(nn.Module):
    """A bias-free linear map y = x @ W with W of shape (input_dim, output_dim)."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        if not input_dim > 0:
            raise ValueError(f"input_dim must be positive, got {input_dim}")
        if not output_dim > 0:
            raise ValueError(f"output_dim must be positive, got {output_dim}")
        super().__init__()
        self.input_dim, self.output_dim = input_dim, output_dim
        weight = torch.empty((input_dim, output_dim), device=device, dtype=dtype)
        _truncated_normal_(weight, std=input_dim ** -0.5)
        self.weight = nn.Parameter(weight)

    def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
        """(..., input_dim) -> (..., output_dim)."""
        if x.shape[-1:] != (self.input_dim,):
            raise ValueError(f"Linear({self.input_dim}, {self.output_dim}) got input of shape {tuple(x.shape)}")
        return torch.einsum("...i,io->...o", x, self.weight)


class Cruncher(nn.Module):
    """num_layers × Linear(dim, dim), then Linear(dim, 1), trailing size-1 dim dropped."""

    def __init__(self, dim: int, num_layers: int) -> None:
        if not dim > 0 or not num_layers >= 0:
            raise ValueError(f"Cruncher needs dim > 0 and num_layers >= 0, got dim={dim}, num_layers={num_layers}")
        super().__init__()
        self.layers = nn.ModuleList(Linear(dim, dim) for _ in range(num_layers))
        self.final = Linear(dim, 1)

    def forward(self, x: Float[Tensor, "... dim"]) -> Float[Tensor, "..."]:
        """Output of shape x.shape[:-1]."""
        hidden = reduce(lambda h, layer: layer(h), self.layers, x)
        return self.final(hidden)[..., 0]


def _unique_parameters(module: nn.Module) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for _name, p in module.named_parameters(remove_duplicate=False):
        seen.setdefault(id(p), p)
    return list(seen.values())


def count_parameters(module: nn.Module) -> int:
    """Number of scalar parameters, each shared tensor counted once."""
    return sum(p.numel() for p in _unique_parameters(module))


def parameter_bytes(module: nn.Module) -> int:
    """Bytes held by the parameters, each in its own dtype."""
    return sum(p.numel() * p.element_size() for p in _unique_parameters(module))
