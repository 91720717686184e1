"""flops — FLOPs of matmuls, Linear layers, a Transformer forward pass and a training run.

Honest solution, object style: a `Matmul` NamedTuple knows its own cost; a layer is an inventory
of matmuls; arguments are checked by a decorator with an enum of rules.
"""

from __future__ import annotations

import inspect
import logging
import math
import warnings
from enum import Enum
from functools import wraps
from typing import Callable, NamedTuple

from .adamw_accounting import TransformerConfig

logger = logging.getLogger(__name__)


class Rule(Enum):
    SIZE = "a non-negative int"
    POSITIVE_INT = "a positive int"
    AMOUNT = "a non-negative finite number"
    PEAK = "a positive finite number"
    FRACTION = "a number in (0, 1]"

    def accepts(self, v: object) -> bool:
        if isinstance(v, bool):
            return False
        if self in (Rule.SIZE, Rule.POSITIVE_INT):
            return isinstance(v, int) and v >= (0 if self is Rule.SIZE else 1)
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            return False
        return {Rule.AMOUNT: v >= 0, Rule.PEAK: v > 0, Rule.FRACTION: 0 < v <= 1}[self]


def checked(**rules: Rule) -> Callable[[Callable], Callable]:
    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @wraps(fn)
        def wrapper(*args, **kwargs):
            for name, value in signature.bind(*args, **kwargs).arguments.items():
                rule = rules.get(name)
                if rule is not None and not rule.accepts(value):
                    raise ValueError(f"{fn.__name__}: {name} must be {rule.value}, got {value!r}")
            return fn(*args, **kwargs)

        return wrapper

    return decorate


class Matmul(NamedTuple):
    """An (m×k) @ (k×n) product."""

    m: int
    k: int
    n: int

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n


def _config(cfg: TransformerConfig) -> TransformerConfig:
    names = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")
    for name in names:
        if not Rule.POSITIVE_INT.accepts(getattr(cfg, name, None)):
            raise ValueError(f"config field {name} must be a positive int, got {getattr(cfg, name, None)!r}")
    if cfg.d_model % cfg.num_heads:
        raise ValueError(f"d_model {cfg.d_model} is not divisible by num_heads {cfg.num_heads}")
    return cfg


@checked(m=Rule.SIZE, k=Rule.SIZE, n=Rule.SIZE)
def matmul_flops(m: int, k: int, n: int) -> int:
    return Matmul(m, k, n).flops


@checked(tokens=Rule.SIZE, d_in=Rule.SIZE, d_out=Rule.SIZE)
def linear_flops(tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    inventory = {
        "forward": Matmul(tokens, d_in, d_out),
        "backward_input": Matmul(tokens, d_out, d_in),
        "backward_weight": Matmul(d_in, tokens, d_out),
    }
    counts = {name: mm.flops for name, mm in inventory.items()}
    counts["total"] = sum(counts.values())
    return counts


@checked(seq_len=Rule.POSITIVE_INT)
def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:
    c = _config(cfg)
    T, d = seq_len, c.d_model
    if T > c.context_length:
        warnings.warn(f"seq_len {T} is past the context length {c.context_length}", stacklevel=3)
    per_layer = {
        "attn_proj": [Matmul(T, d, d)] * 4,
        "attn_scores": [Matmul(T, d, T), Matmul(T, T, d)],
        "ffn": [Matmul(T, d, c.d_ff)] * 3,
    }
    counts = {term: c.num_layers * sum(mm.flops for mm in mms) for term, mms in per_layer.items()}
    counts["lm_head"] = Matmul(T, d, c.vocab_size).flops
    counts["total"] = sum(counts.values())
    logger.debug("forward FLOPs at T=%d: %s", T, counts)
    return counts


@checked(n_params=Rule.AMOUNT, n_tokens=Rule.AMOUNT)
def training_flops(n_params: int | float, n_tokens: int | float) -> float:
    return 6.0 * n_params * n_tokens


@checked(total_flops=Rule.AMOUNT, n_gpus=Rule.POSITIVE_INT, peak_flops=Rule.PEAK, mfu=Rule.FRACTION)
def training_seconds(
    total_flops: int | float, n_gpus: int, peak_flops: int | float, mfu: int | float
) -> float:
    return total_flops / (n_gpus * peak_flops * mfu)
