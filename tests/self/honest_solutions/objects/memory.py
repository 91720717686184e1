"""memory — the training-memory ledger: model states, ZeRO sharding, activations.

Honest solution, object style: a recipe becomes a list of `Entry` NamedTuples, the kinds and the
ZeRO stages are enums, and the per-rank ledger is a small dataclass.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import asdict, dataclass
from enum import Enum, IntEnum
from functools import wraps
from typing import Callable, NamedTuple

logger = logging.getLogger(__name__)

# A recipe is the ledger of what training keeps per parameter: a list of
# (name, bytes_per_param, kind) with kind one of "params", "grads", "optimizer".
# The kind decides which ZeRO stage shards the entry (see model_state_bytes).
#
# Why the fp32 master weights are kind "params" (not "optimizer"): the notes' ledger lists
# "parameters / master parameters" together as one item of the model states, next to
# "gradients" and "optimizer moments m, v" (notes 001) — a master copy holds the weights
# themselves, only in a wider dtype, while "optimizer" here means the Adam moments alone.
# Consequence: ZeRO stage 1/2 shard only m and v (and grads at stage 2); the master copy is
# sharded at stage 3 together with the bf16 weights. (DeepSpeed's ZeRO paper instead counts
# the fp32 master copy among the optimizer states, K = 12, and shards it from stage 1.)
FP32_ADAMW: list[tuple[str, int, str]] = [
    ("fp32 params", 4, "params"),
    ("fp32 grads", 4, "grads"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 16 bytes per parameter (notes 000)

BF16_MIXED_ADAMW: list[tuple[str, int, str]] = [
    ("bf16 params", 2, "params"),
    ("fp32 master params", 4, "params"),
    ("fp32 grads", 4, "grads"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 18 bytes per parameter (notes 001)

BF16_MIXED_ADAMW_BF16_GRADS: list[tuple[str, int, str]] = [
    ("bf16 params", 2, "params"),
    ("bf16 grads", 2, "grads"),
    ("fp32 master params", 4, "params"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 16 bytes per parameter (notes 004)

KINDS: tuple[str, ...] = ("params", "grads", "optimizer")


class Kind(str, Enum):
    PARAMS = "params"
    GRADS = "grads"
    OPTIMIZER = "optimizer"


class ZeroStage(IntEnum):
    NONE = 0
    OPTIMIZER = 1
    GRADIENTS = 2
    PARAMETERS = 3

    def shards(self, kind: Kind) -> bool:
        first_stage = {Kind.OPTIMIZER: 1, Kind.GRADS: 2, Kind.PARAMS: 3}[kind]
        return self >= first_stage


class Entry(NamedTuple):
    name: str
    bytes_per_param: int
    kind: Kind


@dataclass(slots=True)
class RankLedger:
    params: int = 0
    grads: int = 0
    optimizer: int = 0

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer

    def as_dict(self) -> dict[str, int]:
        return {**asdict(self), "total": self.total}


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_recipe(recipe: list[tuple[str, int, str]]) -> list[Entry]:
    if not isinstance(recipe, (list, tuple)) or len(recipe) == 0:
        raise ValueError("a recipe must be a non-empty list of (name, bytes_per_param, kind)")
    entries = []
    for item in recipe:
        try:
            name, nbytes, kind = item
        except (TypeError, ValueError):
            raise ValueError(f"recipe entry {item!r} is not (name, bytes_per_param, kind)") from None
        if not _is_int(nbytes) or nbytes <= 0:
            raise ValueError(f"recipe entry {item!r}: bytes_per_param must be a positive int")
        try:
            entries.append(Entry(name, nbytes, Kind(kind)))
        except ValueError:
            raise ValueError(f"recipe entry {item!r}: kind must be one of {KINDS}") from None
    return entries


def takes_recipe(fn: Callable) -> Callable:
    """Parse the recipe argument (the first or second positional one) before the call."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        where = 0 if fn.__name__ == "bytes_per_param" else 1
        if "recipe" in kwargs:
            kwargs["recipe"] = parse_recipe(kwargs["recipe"])
        elif len(args) > where:
            args = (*args[:where], parse_recipe(args[where]), *args[where + 1:])
        return fn(*args, **kwargs)

    return wrapper


@takes_recipe
def bytes_per_param(recipe: list[tuple[str, int, str]]) -> int:
    return sum(entry.bytes_per_param for entry in recipe)


@takes_recipe
def model_state_bytes(
    n_params: int,
    recipe: list[tuple[str, int, str]],
    data_parallel: int = 1,
    zero_stage: int = 0,
) -> dict[str, int]:
    if not _is_int(n_params) or n_params < 0:
        raise ValueError(f"n_params must be a non-negative int, got {n_params!r}")
    if not _is_int(data_parallel) or data_parallel < 1:
        raise ValueError(f"data_parallel must be a positive int, got {data_parallel!r}")
    if not _is_int(zero_stage) or zero_stage not in set(ZeroStage):
        raise ValueError(f"zero_stage must be 0..3, got {zero_stage!r}")
    stage = ZeroStage(zero_stage)
    if stage is not ZeroStage.NONE and data_parallel == 1:
        warnings.warn(f"ZeRO stage {int(stage)} with one rank shards nothing", stacklevel=3)
    ledger = RankLedger()
    for kind in Kind:
        full = n_params * sum(e.bytes_per_param for e in recipe if e.kind is kind)
        held = -(-full // data_parallel) if stage.shards(kind) else full  # ceil, in integers
        setattr(ledger, kind.value, held)
    logger.debug("stage %s over %d ranks: %r", stage.name, data_parallel, ledger)
    return ledger.as_dict()


def max_trainable_params(total_hbm_bytes: int | float, bytes_per_param: int | float) -> float:
    for name, value in (("total_hbm_bytes", total_hbm_bytes), ("bytes_per_param", bytes_per_param)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value <= 0:
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return total_hbm_bytes / bytes_per_param


def megatron_activation_bytes(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    layers: int,
    store_attention_matrix: bool = True,
) -> int:
    sizes = {"seq_len": seq_len, "batch": batch, "hidden": hidden, "heads": heads, "layers": layers}
    for name, value in sizes.items():
        if not _is_int(value) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if hidden % heads:
        raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads})")
    s, b, h, a = seq_len, batch, hidden, heads
    per_layer = 34 * s * b * h
    if store_attention_matrix:
        per_layer += 5 * a * s * s * b
    return layers * per_layer
