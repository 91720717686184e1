"""Probes for training: get_batch on real memmaps, train_step, checkpoints, bf16.

Helper objects are PyTorch's own (an nn.Sequential model) and an optimizer with torch's AdamW's
state but not its update (seam/adamw_shaped.py: torch's AdamW is not in the sandbox,
seam/absent.py), never another problem's student code. Files go to a fresh temporary directory (in the sandbox, TMPDIR is the
worker's private scratch directory) and are removed afterwards.

The builders below (``make_model``, ``make_optimizer``, ``make_batches``, ``token_data``) are
deterministic and are imported by the tests too, which rebuild the same objects in the grader's
process to compute the oracles.
"""

import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import manual_seed, probe
from ..adamw_shaped import AdamWShaped
from .. import smaps

D_IN, HIDDEN = 12, 16
LR, WEIGHT_DECAY = 1e-2, 0.1

# Token files: values (A * i + B) mod P are distinct for i < P, so a window's start can be read
# off its first value. P is the largest prime that fits the dtype's range.
_TOKEN_MODULUS = {"uint8": 251, "uint16": 65521, "int32": 2_147_483_647, "uint32": 2_147_483_647,
                  "int64": 2_147_483_647}
_A, _B = 48271, 12345


def token_data(n: int, dtype: str) -> np.ndarray:
    """n distinct token ids of the given numpy dtype (n must not exceed the dtype's modulus)."""
    p = _TOKEN_MODULUS[dtype]
    if n > p:
        raise ValueError(f"at most {p} distinct {dtype} tokens")
    return ((_A * np.arange(n, dtype=np.int64) + _B) % p).astype(dtype)


def make_model(seed: int) -> nn.Module:
    """A small float32 MLP regressor: (B, D_IN) -> (B,)."""
    manual_seed(seed)
    return nn.Sequential(nn.Linear(D_IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1), nn.Flatten(0))


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    """seam/adamw_shaped.py's optimizer: torch's AdamW's state, SGD with momentum's update."""
    return AdamWShaped(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)


def make_batches(seed: int, steps: int, batch: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(10_000 + seed)
    return [(torch.randn(batch, D_IN, generator=g), torch.randn(batch, generator=g))
            for _ in range(steps)]


def _params(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _grads_cleared(model: nn.Module) -> bool:
    return all(p.grad is None or not bool(p.grad.any()) for p in model.parameters())


def _step_counter(optimizer: torch.optim.Optimizer) -> list[int]:
    count = [0]
    optimizer.register_step_post_hook(lambda opt, args, kwargs: count.__setitem__(0, count[0] + 1))
    return count


def _optimizer_state(optimizer: torch.optim.Optimizer) -> dict:
    """The optimizer's state as plain data: per parameter (in order) its tensors; the hyperparameters."""
    sd = optimizer.state_dict()
    state = []
    for index in sorted(sd["state"]):
        entry = sd["state"][index]
        state.append({k: (v.detach().clone() if isinstance(v, torch.Tensor) else v)
                      for k, v in sorted(entry.items())})
    groups = [{k: v for k, v in group.items() if k != "params"} for group in sd["param_groups"]]
    return {"state": state, "param_groups": groups}


def _device_text(t) -> str:
    return str(t.device) if isinstance(t, torch.Tensor) else f"not a tensor: {type(t).__name__}"


# --------------------------------------------------------------------------- get_batch


def _open_tokens(folder: Path, tokens: np.ndarray, fmt: str) -> np.ndarray:
    """Write tokens to a file in ``folder`` and open it lazily: a raw np.memmap or an .npy file
    loaded with np.load(mmap_mode="r") (the notes' way). Either way an np.memmap."""
    if fmt == "npy":
        path = folder / "tokens.npy"
        np.save(path, tokens)
        data = np.load(path, mmap_mode="r")
    else:
        path = folder / "tokens.bin"
        tokens.tofile(path)
        data = np.memmap(path, dtype=tokens.dtype, mode="r", shape=tokens.shape)
    assert isinstance(data, np.memmap)
    return data


@probe("training", calls="get_batch")
def get_batch_memmap(c, n: int, dtype: str, batch_size: int, context_length: int,
                     seed: int | None, fmt: str = "bin", device: str = "cpu") -> dict:
    """get_batch on an np.memmap of token_data(n, dtype); seed None passes generator=None."""
    mod = c.module("training")
    generator = None if seed is None else torch.Generator().manual_seed(seed)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        data = _open_tokens(Path(folder), token_data(n, dtype), fmt)
        out = mod.get_batch(data, batch_size, context_length, device, generator=generator)
        del data
    if type(out) is not tuple or len(out) != 2:
        return {"returned": f"{type(out).__name__} (expected a tuple (x, y))"}
    x, y = out
    return {"returned": "tuple", "x": x, "y": y, "x_device": _device_text(x), "y_device": _device_text(y)}


@probe("training", calls="get_batch")
def get_batch_reproducibility(c, n: int, batch_size: int, context_length: int, seed: int) -> dict:
    """Batches from seeded generators and from the seeded global RNG, on one memmap."""
    mod = c.module("training")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        data = _open_tokens(Path(folder), token_data(n, "int32"), "bin")

        def batch(generator):
            return mod.get_batch(data, batch_size, context_length, "cpu", generator=generator)[0]

        out = {"same_seed": [batch(torch.Generator().manual_seed(seed)),
                             batch(torch.Generator().manual_seed(seed))],
               "other_seed": batch(torch.Generator().manual_seed(seed + 1))}
        g = torch.Generator().manual_seed(seed)
        out["consecutive"] = [batch(g), batch(g)]
        global_draws = []
        for _ in range(2):
            manual_seed(seed)
            global_draws.append(batch(None))
        out["global_seed"] = global_draws
        del data
    return out


@probe("training", calls="get_batch", how="get_batch reads only the sampled windows of the memmap (resident pages)")
def get_batch_pages_touched(c, n: int, batch_size: int, context_length: int, seed: int) -> dict:
    """How much of a large uint32 memmap get_batch maps into memory (resident bytes, read here
    before and after the call). The memmap stays mapped until the next request (``c.kept``), so
    the trusted side can read the same mapping from outside: ``Impl.resident_bytes(*mapping)``."""
    mod = c.module("training")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        path = os.path.join(folder, "big_tokens.bin")
        np.arange(n, dtype=np.uint32).tofile(path)
        data = np.memmap(path, dtype=np.uint32, mode="r", shape=(n,))
        mapping = smaps.identity(path)
        before = smaps.resident_bytes("self", *mapping)
        x, y = mod.get_batch(data, batch_size, context_length, "cpu",
                             generator=torch.Generator().manual_seed(seed))
        after = smaps.resident_bytes("self", *mapping)
        c.kept.append(data)
    return {"file_bytes": 4 * n, "before": before, "after": after, "mapping": mapping, "x": x, "y": y}


# --------------------------------------------------------------------------- train_step


@probe("training", calls="train_step")
def train_step_run(c, seed: int, steps: int, batch: int) -> dict:
    """``steps`` calls of train_step on make_model(seed) + make_optimizer and make_batches(...)."""
    mod = c.module("training")
    model = make_model(seed)
    optimizer = make_optimizer(model)
    count = _step_counter(optimizer)
    losses, step_counts, cleared = [], [], []
    for x, y in make_batches(seed, steps, batch):
        losses.append(mod.train_step(model, optimizer, x, y))
        step_counts.append(count[0])
        cleared.append(_grads_cleared(model))
    return {"losses": losses, "optimizer_steps": step_counts, "grads_cleared": cleared,
            "params": _params(model)}


@probe("training", calls="train_step")
def train_step_shape_mismatch(c, seed: int, batch: int, target_shape: tuple) -> float:
    """train_step where the model's output is (batch,) and the target has ``target_shape``."""
    mod = c.module("training")
    model = make_model(seed)
    x, _ = make_batches(seed, 1, batch)[0]
    y = torch.randn(*target_shape)
    return mod.train_step(model, make_optimizer(model), x, y)


# --------------------------------------------------------------------------- checkpoints


def _run_steps(mod, model, optimizer, batches) -> list:
    return [mod.train_step(model, optimizer, x, y) for x, y in batches]


@probe("training", calls="save_checkpoint / load_checkpoint / train_step")
def checkpoint_resume(c, seed: int, total_steps: int, save_at: int, batch: int,
                      pathlike: bool = False) -> dict:
    """Train total_steps without interruption, and train save_at steps, save, load into a fresh
    model (initialised differently) and a fresh optimizer, train the rest. Same batches."""
    mod = c.module("training")
    batches = make_batches(seed, total_steps, batch)

    model = make_model(seed)
    optimizer = make_optimizer(model)
    _run_steps(mod, model, optimizer, batches)
    straight = {"params": _params(model), "optimizer": _optimizer_state(optimizer)}

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        path = os.path.join(folder, "ckpt.pt")
        where = Path(path) if pathlike else path
        model = make_model(seed)
        optimizer = make_optimizer(model)
        _run_steps(mod, model, optimizer, batches[:save_at])
        mod.save_checkpoint(model, optimizer, save_at, where)
        saved = torch.load(path, map_location="cpu", weights_only=True)
        keys = sorted(saved) if isinstance(saved, dict) else f"not a dict: {type(saved).__name__}"
        saved_step = saved.get("step") if isinstance(saved, dict) else None
        saved_step = saved_step if type(saved_step) in (int, float, bool) else repr(saved_step)
        del saved, model, optimizer

        fresh = make_model(seed + 1000)       # different weights: loading must overwrite them
        fresh_optimizer = make_optimizer(fresh)  # no state yet: loading must restore it
        step = mod.load_checkpoint(where, fresh, fresh_optimizer)
    _run_steps(mod, fresh, fresh_optimizer, batches[save_at:])
    resumed = {"params": _params(fresh), "optimizer": _optimizer_state(fresh_optimizer)}
    return {"straight": straight, "resumed": resumed, "loaded_step": step, "saved_keys": keys,
            "saved_step": saved_step}


_UNPICKLED: list[str] = []


def _note_unpickled(tag: str) -> str:
    """Runs only when a loader unpickles arbitrary objects (torch.load with weights_only=False)."""
    _UNPICKLED.append(tag)
    return tag


class _Smuggled:
    """An object no weights-only loader accepts: unpickling it calls _note_unpickled."""

    def __reduce__(self):
        return _note_unpickled, ("smuggled",)


@probe("training", calls="load_checkpoint", how="load_checkpoint unpickles no arbitrary object (weights_only)")
def load_checkpoint_smuggled_object(c) -> bool:
    """load_checkpoint of a file whose dict also holds an arbitrary object; True if the object was
    unpickled (its code ran), False if the loader refused it (weights_only=True raises)."""
    mod = c.module("training")
    model = make_model(0)
    optimizer = make_optimizer(model)
    _UNPICKLED.clear()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        path = os.path.join(folder, "ckpt.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 3,
                    "smuggled": _Smuggled()}, path)
        fresh = make_model(1)
        try:
            mod.load_checkpoint(path, fresh, make_optimizer(fresh))
        except NotImplementedError:
            raise
        except Exception:  # the refusal: its type is torch's (or the student's own), not graded
            pass
    return bool(_UNPICKLED)


@probe("training", calls="save_checkpoint")
def save_checkpoint_bad_step(c, step: int) -> None:
    mod = c.module("training")
    model = make_model(0)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        mod.save_checkpoint(model, make_optimizer(model), step, os.path.join(folder, "ckpt.pt"))


# --------------------------------------------------------------------------- bf16


@contextlib.contextmanager
def _record_grad_scalers(log: list):
    """Note every GradScaler created or used (torch.amp.GradScaler is the base class of the
    cuda/cpu variants), without changing what it does."""
    cls = torch.amp.GradScaler
    originals = {name: getattr(cls, name) for name in ("__init__", "scale", "step")}

    def wrap(name):
        original = originals[name]

        def recorded(self, *args, **kwargs):
            log.append(name)
            return original(self, *args, **kwargs)
        return recorded

    for name in originals:
        setattr(cls, name, wrap(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(cls, name, original)


@probe("training", calls="bf16_train_step", how="bf16_train_step uses no GradScaler")
def bf16_step_run(c, seed: int, batch: int, device_type: str = "cpu") -> dict:
    """One bf16_train_step on make_model(seed) (moved to device_type) with make_optimizer.

    Records, from inside the model, the dtype of every nn.Linear output (the matmul results)
    during the call; then the dtypes of parameters, gradients and optimizer state after it."""
    mod = c.module("training")
    model = make_model(seed).to(device_type)
    optimizer = make_optimizer(model)
    count = _step_counter(optimizer)
    x, y = make_batches(seed, 1, batch)[0]
    x, y = x.to(device_type), y.to(device_type)
    matmul_dtypes = []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.register_forward_hook(lambda module, args, out: matmul_dtypes.append(out.dtype))
    before = _params(model)
    scalers: list[str] = []
    with _record_grad_scalers(scalers):
        loss = mod.bf16_train_step(model, optimizer, x, y, device_type)
    after = _params(model)
    state_dtypes = sorted({v.dtype for entry in optimizer.state.values() for k, v in entry.items()
                           if isinstance(v, torch.Tensor) and k != "step"}, key=str)
    return {"loss": loss, "matmul_dtypes": matmul_dtypes,
            "param_dtypes": [p.dtype for p in model.parameters()],
            "param_devices": [str(p.device) for p in model.parameters()],
            "state_dtypes": state_dtypes, "state_entries": len(optimizer.state),
            "optimizer_steps": count[0], "grads_cleared": _grads_cleared(model),
            "params_changed": [not torch.equal(a, b) for a, b in zip(before, after)],
            "grad_scaler_calls": scalers}


@probe("training", calls="bf16_train_step")
def bf16_step_bad(c, seed: int, batch: int, device_type: str, target_shape: tuple | None = None,
                  device: str = "cpu") -> float:
    """bf16_train_step on tensors (and model) on ``device`` with the given device_type (and
    optionally a bad target). device "meta" puts x on a device whose type is neither cpu nor cuda."""
    mod = c.module("training")
    model = make_model(seed).to(device)
    x, y = make_batches(seed, 1, batch)[0]
    if target_shape is not None:
        y = torch.randn(*target_shape)
    return mod.bf16_train_step(model, make_optimizer(model), x.to(device), y.to(device), device_type)
