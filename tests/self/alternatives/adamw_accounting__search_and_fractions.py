"""adamw_accounting, alternative: itemised tensors and a search. parameter_count sums the
numel of every weight tensor listed by shape (embedding, norms, projections, FFN, head);
activation_count sums an itemised list of kept tensors; max_batch_size finds the largest
fitting B by doubling then bisection on peak_memory_bytes (instead of the closed-form floor);
training_days is evaluated exactly with fractions.Fraction and rounded once to float.
"""

import math
from dataclasses import dataclass, fields
from fractions import Fraction

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


def _validate(cfg: TransformerConfig) -> None:
    for f in fields(TransformerConfig):
        value = getattr(cfg, f.name)
        if type(value) is not int or value < 1:
            raise ValueError(f"{f.name} must be a positive int, got {value!r}")
    if cfg.d_model % cfg.num_heads:
        raise ValueError(f"num_heads={cfg.num_heads} does not divide d_model={cfg.d_model}")


def _positive_int(name: str, value) -> int:
    if type(value) is not int or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _weight_shapes(cfg: TransformerConfig) -> list[tuple[int, ...]]:
    """Shapes of every trainable tensor of the model (untied embedding/head, gain-only norms)."""
    V, D, F = cfg.vocab_size, cfg.d_model, cfg.d_ff
    shapes: list[tuple[int, ...]] = [(V, D)]                     # token embedding
    for _ in range(cfg.num_layers):
        shapes += [(D,), (D,)]                                   # two RMSNorm gains
        shapes += [(D, D)] * 4                                   # W_Q, W_K, W_V, W_O
        shapes += [(D, F), (F, D), (D, F)]                       # SwiGLU W1, W2, W3
    shapes += [(D,), (D, V)]                                     # final norm gain, LM head
    return shapes


def parameter_count(cfg: TransformerConfig) -> int:
    """Number of trainable parameters P = 2VD + D + L(2D + 4D² + 3DF), as an int."""
    _validate(cfg)
    return sum(math.prod(shape) for shape in _weight_shapes(cfg))


def activation_count(cfg: TransformerConfig, batch_size: int) -> int:
    """Activation elements A(B) = L(8BTD + 2BHT² + 2BTF) + BTD + 2BTV, as an int."""
    _validate(cfg)
    B = _positive_int("batch_size", batch_size)
    T, D, H, F, V = cfg.context_length, cfg.d_model, cfg.num_heads, cfg.d_ff, cfg.vocab_size
    tokens = B * T
    per_block = [
        tokens * D,        # input of RMSNorm 1
        tokens * D,        # input of RMSNorm 2
        tokens * D * 4,    # inputs/outputs of the Q, K, V, O projections
        tokens * D * 2,    # the remaining d_model-wide tensors of the block
        B * H * T * T,     # QKᵀ scores
        B * H * T * T,     # softmax
        tokens * F * 2,    # SwiGLU inner activations
    ]
    head = [tokens * D, tokens * V, tokens * V]  # final norm, logits, cross-entropy softmax
    return cfg.num_layers * sum(per_block) + sum(head)


def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    """16·P + 4·A(B) bytes (fp32 weights, grads, Adam m and v; fp32 activations)."""
    states = 4 + 4 + 4 + 4  # weight, gradient, m, v
    return states * parameter_count(cfg) + 4 * activation_count(cfg, batch_size)


def max_batch_size(cfg: TransformerConfig, memory_bytes: int) -> int:
    """Largest B with peak_memory_bytes(cfg, B) <= memory_bytes, 0 if none, found by search."""
    _validate(cfg)
    if type(memory_bytes) is not int or memory_bytes < 0:
        raise ValueError(f"memory_bytes must be a non-negative int, got {memory_bytes!r}")

    def fits(b: int) -> bool:
        return peak_memory_bytes(cfg, b) <= memory_bytes

    if not fits(1):
        return 0
    lo, hi = 1, 2          # invariant: fits(lo), and hi is the next candidate
    while fits(hi):
        lo, hi = hi, hi * 2
    # now fits(lo) and not fits(hi): bisect
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    """6·B·T·P FLOPs for one step (forward 2, backward 4 per parameter per token)."""
    P = parameter_count(cfg)
    tokens = _positive_int("batch_size", batch_size) * cfg.context_length
    forward = 2 * tokens * P
    backward = 4 * tokens * P
    return forward + backward


def training_days(
    cfg: TransformerConfig,
    batch_size: int,
    steps: int,
    peak_flops: int | float,
    mfu: int | float,
) -> float:
    """steps · 6BTP / (peak_flops · mfu) / 86400 days, as a float (exact until the last step)."""
    _positive_int("steps", steps)
    if isinstance(peak_flops, bool) or not isinstance(peak_flops, (int, float)) \
            or not math.isfinite(peak_flops) or peak_flops <= 0:
        raise ValueError(f"peak_flops must be a positive finite number, got {peak_flops!r}")
    if isinstance(mfu, bool) or not isinstance(mfu, (int, float)) or math.isnan(mfu) or not (0 < mfu <= 1):
        raise ValueError(f"mfu must lie in (0, 1], got {mfu!r}")
    work = Fraction(steps * adamw_step_flops(cfg, batch_size))
    rate = Fraction(peak_flops) * Fraction(mfu)
    return float(work / rate / SECONDS_PER_DAY)
