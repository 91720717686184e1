"""modules — a bias-free Linear layer, the Cruncher deep linear model, parameter accounting.

Honest solution, object style: constructor arguments checked by a decorator, `extra_repr`s,
properties for the sizes, and a Protocol for "anything with parameters".
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator
from functools import wraps
from typing import Callable, Protocol

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor

logger = logging.getLogger(__name__)


class HasParameters(Protocol):
    def parameters(self, recurse: bool = True) -> Iterator[nn.Parameter]: ...


def sizes_checked(*names: str, allow_zero: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Check that the named constructor arguments (positional, after self) are ints > 0 (>= 0 for
    those in allow_zero)."""

    def decorate(init: Callable) -> Callable:
        @wraps(init)
        def wrapper(self, *args, **kwargs):
            given = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
            for name in names:
                value = given.get(name)
                low = 0 if name in allow_zero else 1
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise ValueError(f"{type(self).__name__}: {name} must be an int >= {low}, got {value!r}")
            return init(self, *args, **kwargs)

        return wrapper

    return decorate


class Linear(nn.Module):
    """y = x @ weight, weight of shape (input_dim, output_dim), N(0, 1/input_dim) cut at ±3σ."""

    @sizes_checked("input_dim", "output_dim")
    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(input_dim, output_dim, device=device, dtype=dtype))
        if self.weight.dtype in (torch.float16, torch.bfloat16):
            warnings.warn(f"a {self.weight.dtype} Linear keeps no float32 master copy of its weight",
                          stacklevel=2)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        sigma = self.init_std
        nn.init.trunc_normal_(self.weight, mean=0.0, std=sigma, a=-3 * sigma, b=3 * sigma)

    @property
    def input_dim(self) -> int:
        return self.weight.shape[0]

    @property
    def output_dim(self) -> int:
        return self.weight.shape[1]

    @property
    def init_std(self) -> float:
        return 1 / math.sqrt(self.input_dim)

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, output_dim={self.output_dim}, bias=False"

    def forward(self, x: Float[Tensor, "... d_in"]) -> Float[Tensor, "... d_out"]:
        if x.ndim < 1 or x.shape[-1] != self.input_dim:
            raise ValueError(f"{self!r}: input's last dim must be {self.input_dim}, got shape {tuple(x.shape)}")
        return x @ self.weight


class Cruncher(nn.Module):
    """num_layers × Linear(dim, dim), then Linear(dim, 1); output shape x.shape[:-1]."""

    @sizes_checked("dim", "num_layers", allow_zero=("num_layers",))
    def __init__(self, dim: int, num_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Linear(dim, dim) for _ in range(num_layers))
        self.final = Linear(dim, 1)
        logger.debug("built %r", self)

    @property
    def dim(self) -> int:
        return self.final.input_dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}, num_layers={len(self.layers)}"

    def forward(self, x: Float[Tensor, "... dim"]) -> Float[Tensor, "..."]:
        h = x
        for layer in self.layers:
            h = layer(h)
        return self.final(h).squeeze(-1)


def count_parameters(module: HasParameters) -> int:
    total = 0
    for p in module.parameters():
        total += p.numel()
    return int(total)


def parameter_bytes(module: HasParameters) -> int:
    by_dtype: dict[torch.dtype, int] = {}
    for p in module.parameters():
        by_dtype[p.dtype] = by_dtype.get(p.dtype, 0) + p.numel()
    logger.debug("parameters by dtype: %s", by_dtype)
    return int(sum(n * dtype.itemsize for dtype, n in by_dtype.items()))
