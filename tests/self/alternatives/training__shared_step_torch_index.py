"""training — alternative: torch-built window indices and one shared step function.

Differences from the reference: get_batch builds the (B, T + 1) index matrix with torch
(starts[:, None] + torch.arange(T + 1)), fancy-indexes the memmap with its numpy view and
casts only the gathered windows with astype; x and y are narrow() views; validation is done
with an early assert-like helper. train_step and bf16_train_step share one `_step` that takes
a context manager (contextlib.nullcontext for float32, torch.autocast for bf16); the
checkpoint is assembled with dict() and checked on load for its three keys.
"""

import contextlib
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

_DEVICE_TYPES = ("cpu", "cuda")


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


def get_batch(
    data: np.ndarray,
    batch_size: int,
    context_length: int,
    device: str | torch.device,
    generator: torch.Generator | None = None,
) -> tuple[Int[Tensor, "batch seq"], Int[Tensor, "batch seq"]]:
    """Sample `batch_size` random windows of token ids; return inputs and next-token targets."""
    _require(batch_size > 0 and context_length > 0, "batch_size and context_length must be positive")
    _require(data.ndim == 1, f"expected 1-D token ids, got {data.ndim}-D")
    _require(np.issubdtype(data.dtype, np.integer), f"expected integer token ids, got {data.dtype}")
    n = data.shape[0]
    _require(n > context_length, f"need len(data) > context_length, got {n} <= {context_length}")
    try:
        dev = torch.device(device)
    except Exception as exc:  # torch raises RuntimeError for an unknown device string
        raise ValueError(f"invalid device {device!r}") from exc

    starts = torch.randint(0, n - context_length, (batch_size,), generator=generator)
    idx = starts.unsqueeze(1) + torch.arange(context_length + 1).unsqueeze(0)  # (B, T + 1)
    windows = data[idx.numpy()].astype(np.int64)                              # only B windows
    w = torch.from_numpy(windows).to(dev)
    x = w.narrow(1, 0, context_length).contiguous()
    y = w.narrow(1, 1, context_length).contiguous()
    return x, y


def _step(model, optimizer, x, y, ctx) -> float:
    with ctx:
        out = model(x)
        _require(out.shape == y.shape, f"model(x) is {tuple(out.shape)} but y is {tuple(y.shape)}")
        loss = F.mse_loss(out, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.detach().cpu())


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
) -> float:
    """One step of the notes' MSE training loop; returns the loss before the update."""
    return _step(model, optimizer, x, y, contextlib.nullcontext())


def save_checkpoint(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    step: int,
    path: str | os.PathLike,
) -> None:
    """Save everything needed to resume: model, optimizer state dicts and the step."""
    _require(step >= 0, f"step must be >= 0, got {step}")
    torch.save(dict(model=model.state_dict(), optimizer=optimizer.state_dict(), step=step), os.fspath(path))


def load_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
) -> int:
    """Restore a checkpoint written by `save_checkpoint`; return the step."""
    ckpt = torch.load(os.fspath(path), map_location="cpu", weights_only=True)
    missing = {"model", "optimizer", "step"} - set(ckpt)
    _require(not missing, f"checkpoint lacks {sorted(missing)}")
    optimizer.load_state_dict(ckpt["optimizer"])
    model.load_state_dict(ckpt["model"])
    return int(ckpt["step"])


def bf16_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Float[Tensor, "batch *dims"],
    y: Float[Tensor, "batch *out"],
    device_type: str,
) -> float:
    """`train_step` with the forward pass and the loss under bf16 autocast (notes 001)."""
    _require(device_type in _DEVICE_TYPES, f"device_type must be one of {_DEVICE_TYPES}, got {device_type!r}")
    _require(x.device.type == device_type, f"device_type {device_type!r} but x is on {x.device}")
    return _step(model, optimizer, x, y, torch.autocast(device_type=device_type, dtype=torch.bfloat16))
