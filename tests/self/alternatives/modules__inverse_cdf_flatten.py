"""modules, alternative: the truncated normal is built by hand with the inverse CDF (uniform
draws between Φ(-3) and Φ(3), mapped through √2·erfinv(2u - 1)) instead of trunc_normal_; the
forward flattens the leading dims to a 2-d matrix, multiplies with torch.mm and restores the
shape; Cruncher keeps an explicit index loop and validates with a helper; the counts walk
named_parameters() and use Tensor.nbytes. A describe() helper prints a model's parameters.
"""

import math

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor

CUTOFF = 3.0  # truncate at ±3 standard deviations


def _require_positive(**dims) -> None:
    for name, value in dims.items():
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")


def _std_normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def truncated_normal(shape: tuple[int, ...], std: float, device=None, dtype=None) -> Tensor:
    """N(0, std²) truncated at ±CUTOFF·std, by inverse-CDF sampling (computed in float64)."""
    lo, hi = _std_normal_cdf(-CUTOFF), _std_normal_cdf(CUTOFF)
    u = torch.empty(shape, dtype=torch.float64, device=device).uniform_(lo, hi)
    z = math.sqrt(2.0) * torch.erfinv(2.0 * u - 1.0)
    z = z.clamp_(-CUTOFF, CUTOFF)  # only guards against float round-off at the very ends
    return (z * std).to(dtype if dtype is not None else torch.get_default_dtype())


class Linear(nn.Module):
    """A bias-free linear map y = x @ W with W of shape (input_dim, output_dim)."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        _require_positive(input_dim=input_dim, output_dim=output_dim)
        self.input_dim = input_dim
        self.output_dim = output_dim
        std = 1.0 / math.sqrt(input_dim)
        self.weight = nn.Parameter(truncated_normal((input_dim, output_dim), std, device=device, dtype=dtype))

    def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
        """(..., input_dim) -> (..., output_dim)."""
        if x.dim() == 0 or x.size(-1) != self.input_dim:
            raise ValueError(f"expected (..., {self.input_dim}), got {tuple(x.shape)}")
        leading = x.shape[:-1]
        flat = x.reshape(-1, self.input_dim)          # (N, d_in)
        out = torch.mm(flat, self.weight)             # (N, d_out)
        return out.reshape(*leading, self.output_dim)

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, output_dim={self.output_dim}, bias=False"


class Cruncher(nn.Module):
    """num_layers × Linear(dim, dim), then Linear(dim, 1), trailing size-1 dim dropped."""

    def __init__(self, dim: int, num_layers: int) -> None:
        super().__init__()
        _require_positive(dim=dim)
        if num_layers < 0:
            raise ValueError(f"num_layers must be >= 0, got {num_layers}")
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(Linear(dim, dim))
        self.final = Linear(dim, 1)

    def forward(self, x: Float[Tensor, "... dim"]) -> Float[Tensor, "..."]:
        """Output of shape x.shape[:-1]."""
        h = x
        for i in range(len(self.layers)):
            h = self.layers[i](h)
        y = self.final(h)
        return y.reshape(y.shape[:-1])


def count_parameters(module: nn.Module) -> int:
    """Number of scalar parameters (named_parameters() yields a shared tensor once)."""
    total = 0
    for _name, p in module.named_parameters():
        total += p.numel()
    return total


def parameter_bytes(module: nn.Module) -> int:
    """Bytes held by the parameters, each in its own dtype."""
    total = 0
    for _name, p in module.named_parameters():
        total += p.nbytes
    return total


def describe(module: nn.Module) -> None:
    """Print each parameter with its shape and size, then the totals."""
    for name, p in module.named_parameters():
        print(f"{name:<24} {tuple(p.shape)!s:<16} {p.dtype}  {p.nbytes:,d} B")
    print(f"total: {count_parameters(module):,d} parameters, {parameter_bytes(module):,d} bytes")
