"""adamw_accounting — parameters, activations, memory, FLOPs and days of fp32 AdamW.

Honest solution, object style: a `ModelShape` view of the config with properties for each term,
a decorator that validates arguments by rule, and a NamedTuple for the memory split.
"""

from __future__ import annotations

import inspect
import logging
import math
import warnings
from dataclasses import dataclass
from enum import Enum
from functools import wraps
from typing import Callable, NamedTuple

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TransformerConfig:
    """Shape of a decoder-only Transformer (all fields are ints).

    Architecture assumed by every function below (notes 000): untied token embedding and LM
    head, RMSNorm with a gain vector only (two per block, one final), no biases, attention
    with four d_model × d_model matrices (W_Q, W_K, W_V, W_O), SwiGLU FFN with three
    d_model × d_ff matrices.
    """

    vocab_size: int
    context_length: int
    num_layers: int
    d_model: int
    num_heads: int
    d_ff: int


# GPT-2 XL shape with a SwiGLU FFN (notes 000 and 004).
GPT2_XL = TransformerConfig(
    vocab_size=50257, context_length=1024, num_layers=48, d_model=1600, num_heads=25, d_ff=6400
)

SECONDS_PER_DAY = 24 * 60 * 60


class Rule(Enum):
    POSITIVE_INT = "a positive int"
    NON_NEGATIVE_INT = "a non-negative int"
    POSITIVE_FINITE = "a positive finite number"
    FRACTION = "a number in (0, 1]"

    def accepts(self, value: object) -> bool:
        if isinstance(value, bool):
            return False
        match self:
            case Rule.POSITIVE_INT:
                return isinstance(value, int) and value > 0
            case Rule.NON_NEGATIVE_INT:
                return isinstance(value, int) and value >= 0
            case Rule.POSITIVE_FINITE:
                return isinstance(value, (int, float)) and math.isfinite(value) and value > 0
            case Rule.FRACTION:
                return isinstance(value, (int, float)) and 0 < value <= 1
        return False


def validated(**rules: Rule) -> Callable[[Callable], Callable]:
    """Check the named arguments against their rules; ValueError names the first that fails."""

    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @wraps(fn)
        def wrapper(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs).arguments
            for name, rule in rules.items():
                if name in arguments and not rule.accepts(arguments[name]):
                    raise ValueError(f"{fn.__name__}: {name} must be {rule.value}, got {arguments[name]!r}")
            return fn(*args, **kwargs)

        return wrapper

    return decorate


class FixedAndPerSequence(NamedTuple):
    fixed: int          # 16 bytes per parameter
    per_sequence: int   # 4 bytes per activation element of one sequence


@dataclass(frozen=True, slots=True)
class ModelShape:
    """A validated config, with the notes' terms as properties."""

    V: int
    T: int
    L: int
    D: int
    H: int
    F: int

    @classmethod
    def of(cls, cfg: TransformerConfig) -> ModelShape:
        names = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")
        values = [getattr(cfg, n, None) for n in names]
        for name, v in zip(names, values):
            if not Rule.POSITIVE_INT.accepts(v):
                raise ValueError(f"config field {name} must be a positive int, got {v!r}")
        shape = cls(*values)
        if shape.D % shape.H:
            raise ValueError(f"d_model={shape.D} is not divisible by num_heads={shape.H}")
        return shape

    def __repr__(self) -> str:
        return f"ModelShape(V={self.V}, T={self.T}, L={self.L}, D={self.D}, H={self.H}, F={self.F})"

    @property
    def per_block_params(self) -> int:
        return 2 * self.D + 4 * self.D**2 + 3 * self.D * self.F

    @property
    def params(self) -> int:
        return 2 * self.V * self.D + self.D + self.L * self.per_block_params

    def activations(self, B: int) -> int:
        T, D, H, F, V = self.T, self.D, self.H, self.F, self.V
        per_block = 8 * B * T * D + 2 * B * H * T**2 + 2 * B * T * F
        return self.L * per_block + B * T * D + 2 * B * T * V

    @property
    def memory(self) -> FixedAndPerSequence:
        return FixedAndPerSequence(16 * self.params, 4 * self.activations(1))


@validated()
def parameter_count(cfg: TransformerConfig) -> int:
    return ModelShape.of(cfg).params


@validated(batch_size=Rule.POSITIVE_INT)
def activation_count(cfg: TransformerConfig, batch_size: int) -> int:
    return ModelShape.of(cfg).activations(batch_size)


@validated(batch_size=Rule.POSITIVE_INT)
def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    shape = ModelShape.of(cfg)
    return 16 * shape.params + 4 * shape.activations(batch_size)


@validated(memory_bytes=Rule.NON_NEGATIVE_INT)
def max_batch_size(cfg: TransformerConfig, memory_bytes: int) -> int:
    fixed, per_sequence = ModelShape.of(cfg).memory
    logger.debug("budget %d: fixed %d, per sequence %d", memory_bytes, fixed, per_sequence)
    if memory_bytes < fixed:
        return 0
    return (memory_bytes - fixed) // per_sequence


@validated(batch_size=Rule.POSITIVE_INT)
def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    shape = ModelShape.of(cfg)
    return 6 * batch_size * shape.T * shape.params


@validated(batch_size=Rule.POSITIVE_INT, steps=Rule.POSITIVE_INT, peak_flops=Rule.POSITIVE_FINITE,
           mfu=Rule.FRACTION)
def training_days(
    cfg: TransformerConfig,
    batch_size: int,
    steps: int,
    peak_flops: int | float,
    mfu: int | float,
) -> float:
    if mfu > 0.75:
        warnings.warn(f"an MFU of {mfu} is far above what large runs reach (~0.3-0.6)", stacklevel=3)
    flops = steps * adamw_step_flops(cfg, batch_size)
    return flops / (peak_flops * mfu) / SECONDS_PER_DAY
