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
    raise NotImplementedError


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
    raise NotImplementedError


def peak_memory_bytes(cfg: TransformerConfig, batch_size: int) -> int:
    """Peak training memory in bytes for fp32 + AdamW, as an int: 16·P + 4·A(B).

    16 bytes per parameter = 4 (fp32 weight) + 4 (gradient) + 4 (Adam m) + 4 (Adam v);
    4 bytes per fp32 activation element. P = parameter_count(cfg),
    A(B) = activation_count(cfg, batch_size).

    Raises ValueError for a bad config or batch_size <= 0.

    Example: peak_memory_bytes(GPT2_XL, 1) == 34_032_921_600 + 15_517_753_344
    == 49_550_674_944 bytes (notes 000: 34.03 GB fixed + 15.52 GB per batch element).
    """
    raise NotImplementedError


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
    raise NotImplementedError


def adamw_step_flops(cfg: TransformerConfig, batch_size: int) -> int:
    """FLOPs of one AdamW training step, as an int: 6·B·T·P.

    B = batch_size, T = context_length, P = parameter_count(cfg). Forward 2·B·T·P, backward
    4·B·T·P (input gradients + weight gradients); the AdamW update itself (~10·P) and the
    attention-score matmuls are ignored, as in the notes.

    Raises ValueError for a bad config or batch_size <= 0.

    Example (notes 000): adamw_step_flops(GPT2_XL, 1024) == 13_382_289_299_865_600
    (≈ 1.34e16 = 13.4 PFLOPs).
    """
    raise NotImplementedError


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
    raise NotImplementedError
