"""training: what the public and hidden tests share. Checks of get_batch's windows, and the
oracles (torch's F.mse_loss, the probes' optimizer: seam/adamw_shaped.py) rebuilt here from the
same seeds as the probes use."""

import dataclasses

import numpy as np
import torch
import torch.nn.functional as F

from tests.checks import Mistake, expect_equal, fail, show
from seam.probes.training import make_batches, make_model, make_optimizer


def expect_batch_tensors(x, y, batch_size: int, context_length: int, what: str) -> None:
    """x and y: int64 tensors of shape (batch_size, context_length)."""
    for name, t in (("x", x), ("y", y)):
        if type(t) is not torch.Tensor:
            fail(f"{what}: {name} is not a tensor", show(t), "torch.Tensor")
        expect_equal(t.dtype, torch.int64, f"{what}: {name}.dtype")
        expect_equal(tuple(t.shape), (batch_size, context_length), f"{what}: {name}.shape")


def window_starts(x: torch.Tensor, y: torch.Tensor, data: np.ndarray, what: str) -> np.ndarray:
    """Check that every row of x is a window data[s : s + T] and y is data[s + 1 : s + T + 1]
    with 0 <= s <= len(data) - T - 1 (data's values must be distinct); return the starts s."""
    n, T = len(data), x.shape[1]
    values = data.astype(np.int64)
    order = np.argsort(values, kind="stable")
    first = x[:, 0].numpy()
    pos = np.clip(np.searchsorted(values[order], first), 0, n - 1)
    starts = order[pos]
    unknown = np.flatnonzero(values[starts] != first)
    if unknown.size:
        b = int(unknown[0])
        fail(f"{what}: row x[{b}] does not start with a token of the data", show(x[b]), "a window of data")
    bad = np.flatnonzero(starts > n - T - 1)
    if bad.size:
        b = int(bad[0])
        fail(f"{what}: row {b} starts at {int(starts[b])}; valid starts are 0..{n - T - 1} "
             f"(len(data) = {n}, T = {T})", int(starts[b]), f"<= {n - T - 1}")
    index = starts[:, None] + np.arange(T + 1)[None, :]             # (rows, T + 1)
    window = torch.from_numpy(values[index])
    for name, got, want in (("x", x, window[:, :-1]), ("y", y, window[:, 1:])):
        wrong = (got != want).any(dim=1).nonzero().flatten()
        if wrong.numel():
            b = int(wrong[0])
            note = "y must be x shifted left by one position" if name == "y" else ""
            fail(f"{what}: {name}[{b}] is not data[{int(starts[b])}{' + 1' if name == 'y' else ''} : ...]",
                 got[b], want[b], note)
    return starts


@dataclasses.dataclass(frozen=True, eq=False)
class Windows:
    """What a get_batch probe is due: x, y of (batch_size, context_length) windows of ``data``."""
    data: np.ndarray
    batch_size: int
    context_length: int
    device: str = "cpu"

    def __repr__(self) -> str:
        return (f"int64 x, y of shape ({self.batch_size}, {self.context_length}) on {self.device}: "
                f"windows of the {len(self.data)} tokens, y shifted by one")


def expect_windows(got: dict, due: Windows, what: str) -> np.ndarray:
    """x and y of a get_batch probe are windows of due.data; returns their starts."""
    expect_batch_tensors(got["x"], got["y"], due.batch_size, due.context_length, what)
    return window_starts(got["x"], got["y"], due.data, what)


def expect_memmap_batch(got: dict, due: Windows, what: str) -> None:
    """probes.get_batch_memmap: a tuple (x, y) of windows, both on due.device."""
    expect_equal(got["returned"], "tuple", f"{what} returns")
    expect_windows(got, due, what)
    expect_equal((got["x_device"], got["y_device"]), (due.device, due.device), f"{what}: devices of x and y")

FORGOT_ZERO_GRAD = Mistake(
    "forgetting optimizer.zero_grad()", None,
    "backward() adds to .grad: without zero_grad after the step, the next step uses the sum of all "
    "gradients so far.", "training", "`optimizer.zero_grad()` is important, \"otherwise gradients accumulate\"")

# The loop against the same loop written here with the same pieces: the submission's forward and
# loss are torch's own and its optimizer is the probes' (seam/adamw_shaped.py), so losses agree to float32 round-off of a mean (~1e-7 relative; 1e-5
# leaves 100x) and the weights after up to 5 steps within a few ulps of the updates (rtol 1e-4,
# atol 1e-6 for weights near 0). Forgetting zero_grad or stepping twice moves both by percent.
LOSS = dict(rtol=1e-5)
STEPS = dict(rtol=1e-4, atol=1e-6)
# bf16 keeps 8 significant bits: the loss moves by a few 1e-3 relative (max 2.2e-3 measured over
# 20 seeds); 1e-2 leaves room and still rejects a loss computed some other way.
BF16_LOSS = dict(rtol=1e-2)


def fp32_oracle(seed: int, steps: int, batch: int) -> tuple[list[float], list[torch.Tensor]]:
    """The notes' loop with the probes' own pieces: losses before each update, final parameters."""
    model = make_model(seed)
    optimizer = make_optimizer(model)
    losses = []
    for x, y in make_batches(seed, steps, batch):
        loss = F.mse_loss(model(x), y)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return losses, [p.detach().clone() for p in model.parameters()]


def expect_train_step_run(got: dict, due: tuple[list[float], list[torch.Tensor]], what: str) -> None:
    """probes.train_step_run against ``due`` = fp32_oracle(seed, steps, batch)."""
    losses, params = due
    for i in range(len(losses)):
        expect_equal(got["losses"][i], losses[i], f"{what}: loss returned by call {i + 1}", **LOSS,
                     note="the loss of the weights before the update, as a Python float")
        expect_equal(got["optimizer_steps"][i], i + 1,
                     f"{what}: optimizer.step() calls after {i + 1} train_step call(s)")
        if got["grads_cleared"][i] is not True:  # (the hint only for the failure it explains)
            expect_equal(got["grads_cleared"][i], True, f"{what}: gradients cleared (None or zero) after "
                         f"call {i + 1}", note=FORGOT_ZERO_GRAD.hint().strip())
    for i, (g, w) in enumerate(zip(got["params"], params, strict=True)):
        expect_equal(g, w, f"{what}: parameter {i} after {len(losses)} steps (vs the same loop run by the grader)",
                     **STEPS)


def resume_due(save_at: int) -> dict:
    """What probes.checkpoint_resume is due besides resumed == straight (bit for bit)."""
    return {"saved_keys": ["model", "optimizer", "step"], "saved_step": save_at, "loaded_step": save_at}


def expect_resume_exact(got: dict, due: dict, what: str) -> None:
    expect_equal(got["saved_keys"], due["saved_keys"],
                 f"{what}: keys of the saved checkpoint (torch.load(weights_only=True))")
    expect_equal(got["saved_step"], due["saved_step"], f"{what}: checkpoint['step']")
    expect_equal(got["loaded_step"], due["loaded_step"], f"{what}: load_checkpoint returns the step")
    straight, resumed = got["straight"], got["resumed"]
    for i, (g, w) in enumerate(zip(resumed["params"], straight["params"], strict=True)):
        expect_equal(g, w, f"{what}: parameter {i}, resumed vs uninterrupted (bit for bit)")
    expect_equal(len(resumed["optimizer"]["state"]), len(straight["optimizer"]["state"]),
                 f"{what}: parameters with optimizer state after resuming")
    for i, (g, w) in enumerate(zip(resumed["optimizer"]["state"], straight["optimizer"]["state"])):
        expect_equal(g, w, f"{what}: optimizer state of parameter {i}, resumed vs uninterrupted (bit for bit)",
                     note="save and restore optimizer.state_dict() as well as the model's")
    expect_equal(resumed["optimizer"]["param_groups"], straight["optimizer"]["param_groups"],
                 f"{what}: optimizer hyperparameters after resuming")


def bf16_due(seed: int, batch: int, device_type: str = "cpu") -> dict:
    """What probes.bf16_step_run is due: a loss near the float32 loss of the same weights (computed
    on the CPU), and the parameters left on ``device_type``."""
    model = make_model(seed)
    x, y = make_batches(seed, 1, batch)[0]
    with torch.no_grad():
        return {"fp32_loss": F.mse_loss(model(x), y).item(), "device": device_type}


def expect_bf16_step(got: dict, due: dict, what: str) -> None:
    if not got["matmul_dtypes"]:
        fail(f"{what}: the model's forward did not run", [], "two nn.Linear outputs")
    for d in got["matmul_dtypes"]:
        expect_equal(d, torch.bfloat16, f"{what}: dtype of an nn.Linear output inside the forward",
                     note="run the forward under torch.autocast(device_type, dtype=torch.bfloat16)")
    for d in got["param_dtypes"]:
        expect_equal(d, torch.float32, f"{what}: parameter dtype after the step",
                     note="the float32 weights are the master copy; never cast the model to bf16")
    for d in got["param_devices"]:
        expect_equal(d.split(":")[0], due["device"], f"{what}: parameter device after the step")
    expect_equal(got["state_entries"], len(got["param_dtypes"]), f"{what}: parameters with optimizer state")
    expect_equal(got["state_dtypes"], [torch.float32], f"{what}: dtypes of the optimizer's exp_avg/exp_avg_sq")
    expect_equal(got["optimizer_steps"], 1, f"{what}: optimizer.step() calls")
    expect_equal(got["grads_cleared"], True, f"{what}: gradients cleared after the step")
    expect_equal(all(got["params_changed"]), True, f"{what}: every parameter updated")
    expect_equal(got["grad_scaler_calls"], [], f"{what}: GradScaler calls",
                 note="bf16 has float32's exponent range: no GradScaler (notes 001)")
    loss = got["loss"]
    expect_equal(type(loss), float, f"{what}: type of the returned loss")
    expect_equal(loss, due["fp32_loss"], f"{what}: bf16 loss vs the float32 loss of the same weights", **BF16_LOSS)
