"""modules — a bias-free Linear layer, the Cruncher deep linear model, parameter accounting.

Honest solution, functional style: thin modules, the accounting as sums over parameters().
"""

import math

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor


def _positive_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _init_truncated_normal_(weight: Tensor, fan_in: int) -> Tensor:
    """N(0, 1/fan_in) truncated at ±3σ (absolute cut-offs for trunc_normal_)."""
    std = 1.0 / math.sqrt(fan_in)
    return nn.init.trunc_normal_(weight, mean=0.0, std=std, a=-3 * std, b=3 * std)


class Linear(nn.Module):
    """y = x @ W with W of shape (input_dim, output_dim), no bias."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        if not (_positive_int(input_dim) and _positive_int(output_dim)):
            raise ValueError(f"Linear needs positive int sizes, got ({input_dim!r}, {output_dim!r})")
        super().__init__()
        self.input_dim, self.output_dim = input_dim, output_dim
        weight = torch.empty(input_dim, output_dim, device=device, dtype=dtype)
        self.weight = nn.Parameter(_init_truncated_normal_(weight, input_dim))

    def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
        if x.dim() == 0 or x.shape[-1] != self.input_dim:
            raise ValueError(f"expected (..., {self.input_dim}), got {tuple(x.shape)}")
        return torch.matmul(x, self.weight)


class Cruncher(nn.Module):
    """num_layers × Linear(dim, dim), then Linear(dim, 1), the trailing size-1 dim dropped."""

    def __init__(self, dim: int, num_layers: int) -> None:
        if not _positive_int(dim):
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        if not (isinstance(num_layers, int) and not isinstance(num_layers, bool) and num_layers >= 0):
            raise ValueError(f"num_layers must be a non-negative int, got {num_layers!r}")
        super().__init__()
        self.layers = nn.ModuleList([Linear(dim, dim) for _ in range(num_layers)])
        self.final = Linear(dim, 1)

    def forward(self, x: Float[Tensor, "... dim"]) -> Float[Tensor, "..."]:
        for layer in self.layers:
            x = layer(x)
        return self.final(x).squeeze(-1)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def parameter_bytes(module: nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())
