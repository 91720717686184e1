"""training — batches from a memmap, the training step, checkpoints, bf16 autocast.

Handout: assignment/problems/training.md. Notes (assignment/notes/): 001 (the Cruncher training
loop, `np.load(..., mmap_mode='r')`, checkpoint dict, `torch.autocast` with bf16 and no
GradScaler).
"""

import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor


def get_batch(
    data: np.ndarray,
    batch_size: int,
    context_length: int,
    device: str | torch.device,
    generator: torch.Generator | None = None,
) -> tuple[Int[Tensor, "batch seq"], Int[Tensor, "batch seq"]]:
    """Sample `batch_size` random windows of token ids; return inputs and next-token targets.

    `data` is a 1-D integer array of token ids (typically an `np.memmap` from
    `np.load(path, mmap_mode="r")`, notes 001). Let n = len(data), T = context_length.
    - Start positions: `starts = torch.randint(0, n - T, (batch_size,), generator=generator)`,
      i.e. uniform over [0, n - T - 1] inclusive, drawn exactly this way so that a seeded
      `torch.Generator` (a CPU generator) gives reproducible batches; `generator=None` uses
      torch's global RNG.
    - `x[b] = data[starts[b] : starts[b] + T]`, `y[b] = data[starts[b] + 1 : starts[b] + T + 1]`
      (y is x shifted left by one position).
    - Read only the sampled windows (fancy-index the array with the (B, T + 1) window
      indices); never convert the whole array (no `np.asarray(data)` / `torch.from_numpy(data)`
      of a multi-GB memmap).
    Returns `(x, y)`: two int64 tensors of shape (batch_size, context_length) on `device`.
    Raises ValueError if `batch_size` or `context_length` is not positive, if `data` is not
    1-D with an integer dtype, if `len(data) <= context_length` (no room for a target), or if
    `device` is not a valid torch device string.
    Example: data = np.arange(100), T = 8: every row of x is 8 consecutive integers s..s+7 with
    0 <= s <= 91, and y = x + 1.
    """
    raise NotImplementedError


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> float:
    """One step of the notes' MSE training loop; returns the loss before the update.

    In order: `pred = model(x)`; `loss = F.mse_loss(pred, y)`; `loss.backward()`;
    `optimizer.step()`; `optimizer.zero_grad(set_to_none=True)` (otherwise gradients would
    accumulate into the next step). Returns `loss.item()` as a Python float.
    Raises ValueError if `model(x)` and `y` have different shapes.
    Example: with Cruncher(64, 2), x of shape (B, 64) and y of shape (B,), the returned loss
    is the mean of (model(x) - y) ** 2 computed with the weights before the step.
    """
    raise NotImplementedError


def save_checkpoint(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    path: str | os.PathLike,
) -> None:
    """Save everything needed to resume: `torch.save({"model": model.state_dict(),
    "optimizer": optimizer.state_dict(), "step": step}, path)`.

    Exactly those three keys. Raises ValueError if `step` is negative.
    """
    raise NotImplementedError


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    """Restore a checkpoint written by `save_checkpoint` into `model` and `optimizer`; return the step.

    Load with `torch.load(path, map_location="cpu", weights_only=True)` (weights_only: the
    file is only unpickled as tensors and plain containers, never arbitrary objects;
    map_location="cpu": a GPU checkpoint also opens on a CPU machine; `load_state_dict`
    then copies each tensor to the device of the model's parameters), then
    `model.load_state_dict(ckpt["model"])` and `optimizer.load_state_dict(ckpt["optimizer"])`.
    Returns `int(ckpt["step"])`.
    Resuming is exact: training N steps without interruption and training k steps, saving,
    loading into a fresh model and optimizer, then training N - k steps give bit-identical
    parameters (same batches assumed).
    """
    raise NotImplementedError


def bf16_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
    device_type: str,
) -> float:
    """`train_step` with the forward pass and the loss under bf16 autocast (notes 001).

    - Inside `with torch.autocast(device_type=device_type, dtype=torch.bfloat16):` compute
      `pred = model(x)` and `loss = F.mse_loss(pred, y)`. Autocast runs matmuls such as
      `x @ weight` in bfloat16 (it casts copies of the float32 weights), and keeps the loss
      reduction in float32.
    - Outside the autocast block: `loss.backward()`, `optimizer.step()`,
      `optimizer.zero_grad(set_to_none=True)`.
    - No GradScaler: bf16 has float32's 8-bit exponent, so gradients do not underflow the way
      fp16's do. Parameters, gradients and optimizer state stay float32 (the float32 weights
      are the master copy).
    Returns `loss.item()` as a Python float; it is close to (not equal to) the float32 loss.
    Raises ValueError if `device_type` is not "cpu" or "cuda", if it differs from `x.device.type`
    (autocast for another device type would silently do nothing), or if `model(x)` and `y`
    have different shapes.
    """
    raise NotImplementedError
