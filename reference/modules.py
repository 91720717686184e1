"""modules — a bias-free Linear layer, the Cruncher deep linear model, parameter accounting.

Handout: assignment/problems/modules.md. Notes (assignment/notes/): 001 (Linear, Cruncher,
truncated-normal initialisation, "64*64 + 64*64 + 64 = 8256"), 000 (4 bytes per fp32 parameter).
"""

import math

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor


class Linear(nn.Module):
    """A bias-free linear map y = x @ W, written by hand (notes 001).

    Constructor: `Linear(input_dim, output_dim, device=None, dtype=None)`.
    - `self.weight` is an `nn.Parameter` of shape (input_dim, output_dim) (note: input first,
      the transpose of `nn.Linear`'s (out, in) layout), created with
      `torch.empty(input_dim, output_dim, device=device, dtype=dtype)` (so `dtype=None` gives
      the default dtype, float32).
    - Initialisation: `nn.init.trunc_normal_(weight, mean=0.0, std=std, a=-3 * std, b=3 * std)`
      with `std = 1 / sqrt(input_dim)`, i.e. a normal truncated at ±3 standard deviations.
      Beware: `trunc_normal_`'s `a` and `b` are absolute bounds, not multiples of std (the
      notes' `a=-3, b=3` would truncate at ±3 absolute, which never bites for std < 1).
      Why 1/sqrt(input_dim): each output is a sum of input_dim terms, so with unit-variance
      inputs the outputs have variance ~1 whatever the width.
    - There is no bias.
    - Non-positive `input_dim` or `output_dim` raises ValueError.

    `forward(x)` returns `x @ self.weight` over any number of leading dims:
    (..., input_dim) -> (..., output_dim). Do not use `torch.nn.Linear` or
    `torch.nn.functional.linear`. An input whose last dim is not `input_dim` raises ValueError.

    Example: `Linear(2048, 2048)` has 2048 * 2048 = 4,194,304 parameters, 16,777,216 bytes
    in float32 (notes 000: "16 MB", which is 16 MiB = 16 * 2**20 bytes).
    """

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError(
                f"Linear dims must be positive, got input_dim={input_dim}, output_dim={output_dim}"
            )
        self.input_dim = input_dim
        self.output_dim = output_dim
        # (d_in, d_out): forward is a plain x @ W, no transpose.
        self.weight = nn.Parameter(torch.empty(input_dim, output_dim, device=device, dtype=dtype))
        std = 1.0 / math.sqrt(input_dim)
        # a/b are absolute cut-offs: ±3 std, not ±3.
        nn.init.trunc_normal_(self.weight, mean=0.0, std=std, a=-3.0 * std, b=3.0 * std)

    def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
        """Return `x @ self.weight`: (..., input_dim) -> (..., output_dim).

        Raises ValueError if `x.shape[-1] != input_dim`.
        """
        if x.shape[-1] != self.input_dim:
            raise ValueError(
                f"expected last dim {self.input_dim}, got input of shape {tuple(x.shape)}"
            )
        # matmul broadcasts over the leading dims: (..., d_in) @ (d_in, d_out) -> (..., d_out)
        return x @ self.weight


class Cruncher(nn.Module):
    """The notes' deep linear model: `num_layers` Linear(dim, dim), then Linear(dim, 1).

    Constructor: `Cruncher(dim, num_layers)`.
    - `self.layers = nn.ModuleList([Linear(dim, dim) for _ in range(num_layers)])`
    - `self.final = Linear(dim, 1)`
    - `dim` must be positive and `num_layers` non-negative, else ValueError.

    `forward(x)`: apply the layers in order, then `final`, then drop the trailing size-1
    dim (`squeeze(-1)`): input (..., dim) -> output of shape `x.shape[:-1]`.

    Parameter count: num_layers * dim**2 + dim. Example (notes 001):
    `Cruncher(dim=64, num_layers=2)` has 64*64 + 64*64 + 64 = 8256 parameters.
    """

    def __init__(self, dim: int, num_layers: int) -> None:
        super().__init__()
        if dim <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        if num_layers < 0:
            raise ValueError(f"num_layers must be non-negative, got {num_layers}")
        self.layers = nn.ModuleList([Linear(dim, dim) for _ in range(num_layers)])
        self.final = Linear(dim, 1)

    def forward(self, x: Float[Tensor, "... dim"]) -> Float[Tensor, "..."]:
        """Return the model output, shape `x.shape[:-1]`."""
        for layer in self.layers:
            x = layer(x)  # (..., dim) -> (..., dim)
        return self.final(x).squeeze(-1)  # (..., 1) -> (...)


def count_parameters(module: nn.Module) -> int:
    """Number of scalar parameters: `sum(p.numel() for p in module.parameters())`, as int.

    A parameter shared between submodules is counted once (`parameters()` de-duplicates).
    Example: `count_parameters(Cruncher(64, 2))` is 8256.
    """
    return int(sum(p.numel() for p in module.parameters()))


def parameter_bytes(module: nn.Module) -> int:
    """Bytes held by the parameters: `sum(p.numel() * p.element_size())`, as int.

    Uses each parameter's own dtype (float32: 4 bytes, bfloat16: 2 bytes, ...).
    Example: `parameter_bytes(Cruncher(64, 2))` is 8256 * 4 = 33,024; a float32
    Linear(2048, 2048) holds 16,777,216 bytes (notes 000: "16 MB", i.e. 16 MiB).
    """
    return int(sum(p.numel() * p.element_size() for p in module.parameters()))
