"""training — batches from a memmap, the training step, checkpoints, bf16 autocast.

Honest solution, object style: a `TokenWindows` sampler, a small `Trainer` that owns the loop
(plain or bf16), and a `Checkpoint` NamedTuple; the public functions keep the stub's signatures.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

logger = logging.getLogger(__name__)


class Precision(Enum):
    FP32 = "float32"
    BF16 = "bf16 autocast"


class Checkpoint(NamedTuple):
    model: dict
    optimizer: dict
    step: int

    def save(self, path: str | os.PathLike) -> None:
        torch.save(self._asdict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Checkpoint:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        return cls(blob["model"], blob["optimizer"], int(blob["step"]))


@dataclass(slots=True)
class TokenWindows:
    """Random windows of T + 1 consecutive tokens from a 1-D token array (read lazily)."""

    data: np.ndarray
    context_length: int

    def __post_init__(self) -> None:
        T = self.context_length
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
            raise ValueError(f"context_length must be a positive int, got {T!r}")
        if not isinstance(self.data, np.ndarray) or self.data.ndim != 1 \
                or not np.issubdtype(self.data.dtype, np.integer):
            raise ValueError("data must be a 1-D numpy array of integer token ids")
        if len(self.data) <= T:
            raise ValueError(f"{len(self.data)} tokens leave no room for a window of {T} and its target")
        if not isinstance(self.data, np.memmap):
            logger.debug("data is an in-memory array of %d tokens", len(self.data))

    @property
    def n_starts(self) -> int:
        return len(self.data) - self.context_length

    def sample(self, batch_size: int, generator: torch.Generator | None) -> tuple[Tensor, Tensor]:
        starts = torch.randint(0, self.n_starts, (batch_size,), generator=generator)
        offsets = np.arange(self.context_length + 1)
        rows = self.data[starts.numpy()[:, None] + offsets]     # fancy indexing: only these windows
        windows = torch.tensor(rows, dtype=torch.int64)
        return windows[:, :-1], windows[:, 1:]


@dataclass
class Trainer:
    """One MSE step at a time: forward (optionally under bf16 autocast), backward, step, clear."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    precision: Precision = Precision.FP32
    device_type: str = "cpu"
    losses: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.precision is Precision.BF16 and self.device_type not in ("cpu", "cuda"):
            raise ValueError(f"device_type must be 'cpu' or 'cuda', got {self.device_type!r}")

    def __repr__(self) -> str:
        return f"Trainer({type(self.model).__name__}, {type(self.optimizer).__name__}, {self.precision.value}, " \
               f"{len(self.losses)} steps)"

    def _forward_context(self) -> contextlib.AbstractContextManager:
        if self.precision is Precision.BF16:
            return torch.autocast(device_type=self.device_type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step(self, x: Tensor, y: Tensor) -> float:
        if self.precision is Precision.BF16 and x.device.type != self.device_type:
            raise ValueError(f"device_type {self.device_type!r} does not match x on {x.device}")
        with self._forward_context():
            pred = self.model(x)
            if pred.shape != y.shape:
                raise ValueError(f"model output {tuple(pred.shape)} does not match target {tuple(y.shape)}")
            loss = F.mse_loss(pred, y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        value = loss.item()
        self.losses.append(value)
        logger.debug("%r: loss %.6g", self, value)
        return value


def get_batch(
    data: np.ndarray,
    batch_size: int,
    context_length: int,
    device: str | torch.device,
    generator: torch.Generator | None = None,
) -> tuple[Int[Tensor, "batch seq"], Int[Tensor, "batch seq"]]:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    windows = TokenWindows(data, context_length)
    try:
        target = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(f"invalid device {device!r}: {e}") from None
    if windows.n_starts < batch_size:
        warnings.warn(f"only {windows.n_starts} distinct windows for a batch of {batch_size}", stacklevel=2)
    x, y = windows.sample(int(batch_size), generator)
    return x.to(target), y.to(target)


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> float:
    return Trainer(model, optimizer).step(x, y)


def save_checkpoint(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    path: str | os.PathLike,
) -> None:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"step must be a non-negative int, got {step!r}")
    Checkpoint(model.state_dict(), optimizer.state_dict(), int(step)).save(path)


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    checkpoint = Checkpoint.load(path)
    model.load_state_dict(checkpoint.model)
    optimizer.load_state_dict(checkpoint.optimizer)
    return checkpoint.step


def bf16_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
    device_type: str,
) -> float:
    return Trainer(model, optimizer, Precision.BF16, device_type).step(x, y)
