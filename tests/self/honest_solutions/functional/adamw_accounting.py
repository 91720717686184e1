"""adamw_accounting — parameters, activations, memory, FLOPs and days of fp32 AdamW.

Honest solution, functional style: one validator, the notes' closed forms as small functions.
"""

import math
from dataclasses import dataclass, fields


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

_FIELDS = tuple(f.name for f in fields(TransformerConfig))
_BYTES_PER_PARAM = 16  # fp32 weight + gradient + Adam m + Adam v
_BYTES_PER_ACTIVATION = 4  # fp32
_SECONDS_PER_DAY = 86_400


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _shape(cfg: TransformerConfig) -> tuple[int, int, int, int, int, int]:
    """(V, T, L, D, H, F) of a valid config, else ValueError."""
    values = tuple(getattr(cfg, name, None) for name in _FIELDS)
    bad = [name for name, v in zip(_FIELDS, values) if not _positive_int(v)]
    if bad:
        raise ValueError(f"config fields must be positive ints: {', '.join(bad)}")
    V, T, L, D, H, F = values
    if D % H:
        raise ValueError(f"d_model={D} is not divisible by num_heads={H}")
    return V, T, L, D, H, F


def _batch(batch_size: int) -> int:
    if not _positive_int(batch_size):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return batch_size


def parameter_count(cfg: TransformerConfig) -> int:
    V, _, L, D, _, F = _shape(cfg)
    per_block = 2 * D + 4 * D * D + 3 * D * F
    return 2 * V * D + D + L * per_block


def activation_count(cfg: TransformerConfig, batch_size: int) -> int:
    V, T, L, D, H, F = _shape(cfg)
    B = _batch(batch_size)
    per_block = 8 * B * T * D + 2 * B * H * T * T + 2 * B * T * F
    return L * per_block + B * T * D + 2 * B * T * V


def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    return _BYTES_PER_PARAM * parameter_count(cfg) + _BYTES_PER_ACTIVATION * activation_count(cfg, batch_size)


def max_batch_size(cfg: TransformerConfig, memory_bytes: int) -> int:
    if not isinstance(memory_bytes, int) or isinstance(memory_bytes, bool) or memory_bytes < 0:
        raise ValueError(f"memory_bytes must be a non-negative int, got {memory_bytes!r}")
    fixed = _BYTES_PER_PARAM * parameter_count(cfg)
    per_sequence = _BYTES_PER_ACTIVATION * activation_count(cfg, 1)
    return max(0, (memory_bytes - fixed) // per_sequence)


def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    _, T, *_ = _shape(cfg)
    return 6 * _batch(batch_size) * T * parameter_count(cfg)


def training_days(
    cfg: TransformerConfig,
    batch_size: int,
    steps: int,
    peak_flops: int | float,
    mfu: int | float,
) -> float:
    if not _positive_int(steps):
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    if isinstance(peak_flops, bool) or not isinstance(peak_flops, (int, float)) \
            or not (math.isfinite(peak_flops) and peak_flops > 0):
        raise ValueError(f"peak_flops must be positive and finite, got {peak_flops!r}")
    if isinstance(mfu, bool) or not isinstance(mfu, (int, float)) or not 0 < mfu <= 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    total = steps * adamw_step_flops(cfg, batch_size)
    return total / (peak_flops * mfu) / _SECONDS_PER_DAY

