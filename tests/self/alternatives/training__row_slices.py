"""training — alternative: get_batch reads each window with a slice, one row at a time.

Differences from the reference: get_batch loops over the sampled starts and slices
data[s : s + T + 1] (a slice of a memmap reads only that window), builds x and y from a
preallocated int64 numpy buffer, and moves them to the device without pinned memory;
validation is a chain of checks in a helper; the shape check sits inside each step function;
checkpoints are written and read through open file objects (pathlib), with a print on save.
"""

import os
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor


def _validated_device(batch_size, context_length, data, device) -> torch.device:
    problems = []
    if batch_size <= 0:
        problems.append(f"batch_size={batch_size} must be > 0")
    if context_length <= 0:
        problems.append(f"context_length={context_length} must be > 0")
    if problems:
        raise ValueError("; ".join(problems))
    if len(data.shape) != 1:
        raise ValueError(f"data must be 1-D, got shape {data.shape}")
    if data.dtype.kind not in "iu":
        raise ValueError(f"data must hold integers, got {data.dtype}")
    if data.shape[0] <= context_length:
        raise ValueError(f"len(data)={data.shape[0]} leaves no target for context_length={context_length}")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(f"bad device {device!r}: {exc}") from None


def get_batch(
    data: np.ndarray,
    batch_size: int,
    context_length: int,
    device: str | torch.device,
    generator: torch.Generator | None = None,
) -> tuple[Int[Tensor, "batch seq"], Int[Tensor, "batch seq"]]:
    """Sample `batch_size` random windows of token ids; return inputs and next-token targets."""
    dev = _validated_device(batch_size, context_length, data, device)
    T = context_length
    starts = torch.randint(0, len(data) - T, (batch_size,), generator=generator).tolist()
    buf = np.empty((batch_size, T + 1), dtype=np.int64)
    for row, s in enumerate(starts):
        buf[row] = data[s : s + T + 1]        # only this window is read
    x = torch.from_numpy(buf[:, :T].copy())
    y = torch.from_numpy(buf[:, 1:].copy())
    return x.to(dev), y.to(dev)


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> float:
    """One step of the notes' MSE training loop; returns the loss before the update."""
    pred = model(x)
    if pred.shape != y.shape:
        raise ValueError(f"prediction {tuple(pred.shape)} vs target {tuple(y.shape)}")
    loss = F.mse_loss(pred, y)
    value = loss.item()          # the loss with the weights before the update
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(value)


def save_checkpoint(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    path: str | os.PathLike,
) -> None:
    """Save {"model", "optimizer", "step"} with torch.save."""
    if step < 0:
        raise ValueError(f"negative step {step}")
    target = Path(path)
    with target.open("wb") as fh:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, fh)
    print(f"saved checkpoint at step {step} to {target}")


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    """Restore a checkpoint written by `save_checkpoint`; return the step."""
    with Path(path).open("rb") as fh:
        ckpt = torch.load(fh, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return int(ckpt["step"])


def bf16_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
    device_type: str,
) -> float:
    """`train_step` with the forward pass and the loss under bf16 autocast (notes 001)."""
    if device_type != "cpu" and device_type != "cuda":
        raise ValueError(f"device_type must be 'cpu' or 'cuda', not {device_type!r}")
    if device_type != x.device.type:
        raise ValueError(f"x is on {x.device.type}, device_type is {device_type}")
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
        pred = model(x)
        if pred.shape != y.shape:
            raise ValueError(f"prediction {tuple(pred.shape)} vs target {tuple(y.shape)}")
        loss = F.mse_loss(pred, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
