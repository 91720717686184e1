"""adamw_accounting, alternative: per-token and per-sequence quantities with prints. The
parameter count is assembled as embedding + blocks + head in another grouping; the activation
count is B times the per-sequence count (A is linear in B); max_batch_size uses divmod on the
budget left after the fixed 16·P; training_days divides by 86400 and the throughput in another
order (floats). Validation collects every problem before raising, and each function can print
a short summary.
"""

import math
from dataclasses import astuple, dataclass

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

DEBUG = False
BYTES_FP32 = 4
ADAMW_STATE_BYTES = 4 * BYTES_FP32  # weight, gradient, m, v


def _say(msg: str) -> None:
    if DEBUG:
        print(f"[adamw_accounting] {msg}")


def _problems_with(cfg: TransformerConfig) -> list[str]:
    names = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")
    problems = [f"{n}={v!r} is not a positive int" for n, v in zip(names, astuple(cfg))
                if isinstance(v, bool) or not isinstance(v, int) or v <= 0]
    if not problems and cfg.d_model % cfg.num_heads != 0:
        problems.append(f"d_model={cfg.d_model} not divisible by num_heads={cfg.num_heads}")
    return problems


def _check(cfg: TransformerConfig, **counts) -> None:
    problems = _problems_with(cfg)
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            problems.append(f"{name}={value!r} is not a positive int")
    if problems:
        raise ValueError("bad input: " + "; ".join(problems))


def _per_sequence_activations(cfg: TransformerConfig) -> int:
    """A(1): activation elements kept for one sequence of T tokens."""
    T, D, H, F, V, L = (cfg.context_length, cfg.d_model, cfg.num_heads, cfg.d_ff, cfg.vocab_size,
                        cfg.num_layers)
    per_token_per_block = 8 * D + 2 * F      # norms, projections, SwiGLU intermediates
    attention_per_block = 2 * H * T * T      # scores and softmax, every head
    per_token_outside = D + 2 * V            # final norm, logits, softmax
    return L * (T * per_token_per_block + attention_per_block) + T * per_token_outside


def parameter_count(cfg: TransformerConfig) -> int:
    """Number of trainable parameters P = 2VD + D + L(2D + 4D² + 3DF), as an int."""
    _check(cfg)
    V, D, F, L = cfg.vocab_size, cfg.d_model, cfg.d_ff, cfg.num_layers
    embedding = V * D
    attention = 4 * D * D
    ffn = 3 * D * F
    norms = 2 * D
    lm_head_and_final_norm = D * V + D
    P = embedding + L * attention + L * ffn + L * norms + lm_head_and_final_norm
    _say(f"P = {P:,d}")
    return P


def activation_count(cfg: TransformerConfig, batch_size: int) -> int:
    """Activation elements A(B) = B·A(1), as an int."""
    _check(cfg, batch_size=batch_size)
    A = batch_size * _per_sequence_activations(cfg)
    _say(f"A({batch_size}) = {A:,d}")
    return A


def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    """16·P + 4·A(B) bytes."""
    fixed = ADAMW_STATE_BYTES * parameter_count(cfg)
    activations = BYTES_FP32 * activation_count(cfg, batch_size)
    _say(f"peak at B={batch_size}: {fixed / 1e9:.2f} GB fixed + {activations / 1e9:.2f} GB activations")
    return fixed + activations


def max_batch_size(cfg: TransformerConfig, memory_bytes: int) -> int:
    """Largest B with 16·P + 4·B·A(1) <= memory_bytes (integer arithmetic); 0 if none."""
    _check(cfg)
    if isinstance(memory_bytes, bool) or not isinstance(memory_bytes, int):
        raise ValueError(f"memory_bytes must be an int, got {memory_bytes!r}")
    if memory_bytes < 0:
        raise ValueError(f"memory_bytes must be non-negative, got {memory_bytes}")
    left = memory_bytes - ADAMW_STATE_BYTES * parameter_count(cfg)
    if left < 0:
        _say("the model states alone do not fit")
        return 0
    batches, _unused = divmod(left, BYTES_FP32 * _per_sequence_activations(cfg))
    return batches


def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    """6·B·T·P FLOPs for one step."""
    _check(cfg, batch_size=batch_size)
    flops_per_token = 6 * parameter_count(cfg)
    return flops_per_token * cfg.context_length * batch_size


def training_days(
    cfg: TransformerConfig,
    batch_size: int,
    steps: int,
    peak_flops: int | float,
    mfu: int | float,
) -> float:
    """steps · 6BTP / (peak_flops · mfu) / 86400 days, as a float."""
    _check(cfg, batch_size=batch_size, steps=steps)
    for name, value in (("peak_flops", peak_flops), ("mfu", mfu)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, got {value!r}")
    if not (0 < peak_flops < math.inf):
        raise ValueError(f"peak_flops must be positive and finite, got {peak_flops!r}")
    if not (0 < mfu <= 1):
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    achieved = float(mfu) * float(peak_flops)          # FLOP/s actually delivered
    flops_per_day = achieved * 86400.0
    days = steps * adamw_step_flops(cfg, batch_size) / flops_per_day
    _say(f"{days:.2f} days ({days / 365.25:.1f} years)")
    return float(days)
