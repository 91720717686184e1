"""training — batches from a memmap, the training step, checkpoints, bf16 autocast.

Honest solution, functional style: one shared step function with the forward pass as a
parameter (plain or under autocast), numpy fancy indexing of the sampled windows only.
"""

import contextlib
import os
from collections.abc import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

_CHECKPOINT_KEYS = ("model", "optimizer", "step")
_AUTOCAST_DEVICES = ("cpu", "cuda")


def _positive_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v > 0


def _device(device: str | torch.device) -> torch.device:
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(f"not a torch device: {device!r} ({e})") from None


def get_batch(
    data: np.ndarray,
    batch_size: int,
    context_length: int,
    device: str | torch.device,
    generator: torch.Generator | None = None,
) -> tuple[Int[Tensor, "batch seq"], Int[Tensor, "batch seq"]]:
    if not _positive_int(batch_size) or not _positive_int(context_length):
        raise ValueError(f"batch_size and context_length must be positive ints, got {batch_size!r}, "
                         f"{context_length!r}")
    if not isinstance(data, np.ndarray) or data.ndim != 1 or not np.issubdtype(data.dtype, np.integer):
        raise ValueError("data must be a 1-D numpy array of integer token ids")
    target = _device(device)
    n, T = len(data), int(context_length)
    if n <= T:
        raise ValueError(f"{n} tokens leave no room for a window of {T} plus its target")
    starts = torch.randint(0, n - T, (int(batch_size),), generator=generator)
    window_index = starts.numpy()[:, None] + np.arange(T + 1)[None, :]   # (B, T + 1)
    windows = torch.from_numpy(data[window_index].astype(np.int64))     # only these pages are read
    return windows[:, :-1].contiguous().to(target), windows[:, 1:].contiguous().to(target)


def _step(model: nn.Module, optimizer: torch.optim.Optimizer, x: Tensor, y: Tensor,
          forward_context: Callable[[], contextlib.AbstractContextManager]) -> float:
    with forward_context():
        pred = model(x)
        if pred.shape != y.shape:
            raise ValueError(f"model output {tuple(pred.shape)} and target {tuple(y.shape)} differ in shape")
        loss = F.mse_loss(pred, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> float:
    return _step(model, optimizer, x, y, contextlib.nullcontext)


def save_checkpoint(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    path: str | os.PathLike,
) -> None:
    if not isinstance(step, (int, np.integer)) or isinstance(step, (bool, np.bool_)) or step < 0:
        raise ValueError(f"step must be a non-negative int, got {step!r}")
    torch.save(dict(zip(_CHECKPOINT_KEYS, (model.state_dict(), optimizer.state_dict(), int(step)))), path)


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return int(checkpoint["step"])


def bf16_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
    device_type: str,
) -> float:
    if device_type not in _AUTOCAST_DEVICES:
        raise ValueError(f"device_type must be one of {_AUTOCAST_DEVICES}, got {device_type!r}")
    if x.device.type != device_type:
        raise ValueError(f"device_type {device_type!r} is not x's device ({x.device.type})")
    return _step(model, optimizer, x, y,
                 lambda: torch.autocast(device_type=device_type, dtype=torch.bfloat16))
