"""flops — FLOPs of matmuls, Linear layers, a Transformer forward pass and a training run.

Honest solution, functional style: everything is built from one rule, matmul_flops = 2·m·k·n.
"""

import math
from functools import partial, reduce
from operator import mul

from .adamw_accounting import TransformerConfig

_FIELDS = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _sizes(*sizes: int) -> tuple[int, ...]:
    if not all(_is_int(s) and s >= 0 for s in sizes):
        raise ValueError(f"sizes must be non-negative ints, got {sizes!r}")
    return sizes


def _config(cfg: TransformerConfig) -> dict[str, int]:
    values = {name: getattr(cfg, name, None) for name in _FIELDS}
    bad = sorted(name for name, v in values.items() if not (_is_int(v) and v > 0))
    if bad:
        raise ValueError(f"config fields must be positive ints: {bad}")
    if values["d_model"] % values["num_heads"]:
        raise ValueError(f"d_model {values['d_model']} is not divisible by num_heads {values['num_heads']}")
    return values


def _non_negative_finite(name: str, v: object) -> None:
    if not _is_real(v) or not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {v!r}")


def matmul_flops(m: int, k: int, n: int) -> int:
    return 2 * reduce(mul, _sizes(m, k, n), 1)


def linear_flops(tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    _sizes(tokens, d_in, d_out)
    products = {
        "forward": (tokens, d_in, d_out),          # Y  = X @ W
        "backward_input": (tokens, d_out, d_in),   # dX = dY @ W^T
        "backward_weight": (d_in, tokens, d_out),  # dW = X^T @ dY
    }
    counts = {name: matmul_flops(*shape) for name, shape in products.items()}
    return {**counts, "total": sum(counts.values())}


def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:
    c = _config(cfg)
    if not _is_int(seq_len) or seq_len <= 0:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    T, L, d, dff, V = seq_len, c["num_layers"], c["d_model"], c["d_ff"], c["vocab_size"]
    per_token = partial(matmul_flops, T)
    terms = {
        "attn_proj": L * 4 * per_token(d, d),
        "attn_scores": L * (matmul_flops(T, d, T) + matmul_flops(T, T, d)),  # QK^T and AV, all heads
        "ffn": L * 3 * per_token(d, dff),
        "lm_head": per_token(d, V),
    }
    return {**terms, "total": sum(terms.values())}


def training_flops(n_params: int | float, n_tokens: int | float) -> float:
    _non_negative_finite("n_params", n_params)
    _non_negative_finite("n_tokens", n_tokens)
    return float(6 * n_params * n_tokens)


def training_seconds(
    total_flops: int | float, n_gpus: int, peak_flops: int | float, mfu: int | float
) -> float:
    _non_negative_finite("total_flops", total_flops)
    if not _is_int(n_gpus) or n_gpus < 1:
        raise ValueError(f"n_gpus must be an int >= 1, got {n_gpus!r}")
    if not _is_real(peak_flops) or not math.isfinite(peak_flops) or peak_flops <= 0:
        raise ValueError(f"peak_flops must be positive and finite, got {peak_flops!r}")
    if not _is_real(mfu) or not 0 < mfu <= 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    return float(total_flops / (n_gpus * peak_flops * mfu))
