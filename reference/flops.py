"""flops — FLOPs of matmuls, Linear layers, a Transformer forward pass and a training run.

Handout: assignment/problems/flops.md. Notes (assignment/notes/): 001 (2mkn, the 100×256 @
256×512 Linear, 6PD, the 70B / 15T-token napkin problem), 000 (why 6, 144 days), 004 (the
GPT-2 XL per-term forward FLOPs at T = 1024 and 16384, LLaMA 2 7B on 1024 H100s).

Convention: one multiply plus one add is 2 FLOPs, so a dot product of length k costs 2k.
FLOP counts of integer shapes are exact ints; totals built from real numbers are floats.
"""

import math

from .adamw_accounting import TransformerConfig  # (the handout's given dataclass: the stub's in a partial upload)


def _check_count(name: str, value: int) -> None:
    # Sizes are ints >= 0 (an empty matmul is legal and costs 0 FLOPs).
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")


def _check_config(cfg: TransformerConfig) -> None:
    # Its own check, not adamw_accounting's: a module needs nothing of another problem's but the
    # given dataclass (an upload of flops.py alone imports the stub's TransformerConfig).
    for name in ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"TransformerConfig.{name} must be a positive int, got {value!r}")
    if cfg.d_model % cfg.num_heads != 0:
        raise ValueError(f"d_model={cfg.d_model} is not divisible by num_heads={cfg.num_heads}")


def _check_real(name: str, value: int | float, *, positive: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    if not positive and value < 0:
        raise ValueError(f"{name} must be non-negative, got {value!r}")



def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of an (m×k) @ (k×n) matrix product, as an int: 2·m·k·n.

    The output has m·n elements, each a length-k dot product (k multiplies + k adds).
    Sizes may be 0 (the product then costs 0 FLOPs); a negative size raises ValueError.

    Example (notes 001): matmul_flops(100, 256, 512) == 26_214_400.
    """
    _check_count("m", m)
    _check_count("k", k)
    _check_count("n", n)
    return int(2 * m * k * n)


def linear_flops(tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    """FLOPs of a bias-free Linear layer Y = X @ W on `tokens` rows, X: (tokens, d_in),
    W: (d_in, d_out). Returns a dict of ints with keys:

    - "forward":          Y  = X @ W        2·tokens·d_in·d_out
    - "backward_input":   dX = dY @ Wᵀ      2·tokens·d_out·d_in
    - "backward_weight":  dW = Xᵀ @ dY      2·d_in·tokens·d_out
    - "total":            the sum, 3 × forward (6 FLOPs per parameter per token)

    A negative size raises ValueError.

    Example (notes 001): linear_flops(100, 256, 512) gives 26_214_400 for each of the three
    products and total 78_643_200.
    """
    forward = matmul_flops(tokens, d_in, d_out)  # (tokens×d_in) @ (d_in×d_out)
    backward_input = matmul_flops(tokens, d_out, d_in)  # (tokens×d_out) @ (d_out×d_in)
    backward_weight = matmul_flops(d_in, tokens, d_out)  # (d_in×tokens) @ (tokens×d_out)
    return {
        "forward": forward,
        "backward_input": backward_input,
        "backward_weight": backward_weight,
        "total": forward + backward_input + backward_weight,
    }


def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:
    """Forward-pass FLOPs of one sequence of length T = seq_len, matrix products only.

    cfg is a TransformerConfig (from adamw_accounting); its context_length is NOT used:
    seq_len may exceed it (the notes evaluate the GPT-2 XL shape at T = 16384). With
    L = num_layers, d = d_model, dff = d_ff, V = vocab_size, returns a dict of ints:

    - "attn_proj":   L · 2·T·(4·d²)       W_Q, W_K, W_V, W_O
    - "attn_scores": L · 2·2·T²·d         QKᵀ and AV, each a (T×d)(d×T)-sized product summed
                                          over heads (independent of num_heads)
    - "ffn":         L · 2·T·(3·d·dff)    SwiGLU: three d × dff matrices
    - "lm_head":     2·T·V·d              the final projection to logits
    - "total":       the sum of the four

    Embedding lookup, norms, softmax, activations and residual adds are not counted.

    Raises ValueError for a bad config (non-positive field, d_model not divisible by
    num_heads) or seq_len <= 0.

    Example (notes 004), GPT2_XL: at T = 1024 total = 4_513_336_524_800 (4.51 TFLOPs;
    attn_proj 22%, QKᵀ+AV 7%, FFN 67%, lm_head 4%); at T = 16384 total =
    149_522_795_724_800 (149.52 TFLOPs; attn_proj 11%, QKᵀ+AV 55%, FFN 32%, lm_head 2%).
    """
    _check_config(cfg)
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len <= 0:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    T, L, d, dff, V = seq_len, cfg.num_layers, cfg.d_model, cfg.d_ff, cfg.vocab_size
    attn_proj = L * 2 * T * (4 * d * d)
    # QKᵀ: (T×d_head)(d_head×T) per head, summed over heads = T²·d multiply-adds; AV the same
    attn_scores = L * 2 * 2 * T * T * d
    ffn = L * 2 * T * (3 * d * dff)
    lm_head = 2 * T * V * d
    return {
        "attn_proj": int(attn_proj),
        "attn_scores": int(attn_scores),
        "ffn": int(ffn),
        "lm_head": int(lm_head),
        "total": int(attn_proj + attn_scores + ffn + lm_head),
    }


def training_flops(n_params: int | float, n_tokens: int | float) -> float:
    """Approximate total training compute C = 6·N·D FLOPs, as a float.

    N = n_params (dense parameters each token passes through), D = n_tokens (tokens actually
    processed, all epochs counted). 2 FLOPs per parameter per token forward, 4 backward.
    Negative or non-finite inputs raise ValueError (0 is allowed).

    Example (notes 001): training_flops(70e9, 15e12) == 6.3e24.
    """
    _check_real("n_params", n_params, positive=False)
    _check_real("n_tokens", n_tokens, positive=False)
    return float(6 * n_params * n_tokens)


def training_seconds(
    total_flops: int | float, n_gpus: int, peak_flops: int | float, mfu: int | float
) -> float:
    """Wall-clock seconds to do total_flops on n_gpus devices, as a float:

        total_flops / (n_gpus · peak_flops · mfu)

    peak_flops is one device's peak FLOP/s; mfu is the achieved fraction of it, in (0, 1].
    Raises ValueError for total_flops < 0, n_gpus < 1 (must be an int), peak_flops <= 0, or
    mfu outside (0, 1].

    Example (notes 000/001): 70B parameters, 15T tokens, 1024 H100 at 989.5e12 FLOP/s (the
    notes round it to 989), 50% MFU: training_seconds(6.3e24, 1024, 989.5e12, 0.5)
    ≈ 1.2435e7 s ≈ 143.9 days (the notes: "≈ 144 天"). Notes 004: LLaMA 2 7B, C = 6 · 6.7e9 · 2e12, 1024 H100 at 40% MFU -> ≈ 2.3 days.
    """
    _check_real("total_flops", total_flops, positive=False)
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, int) or n_gpus < 1:
        raise ValueError(f"n_gpus must be an int >= 1, got {n_gpus!r}")
    _check_real("peak_flops", peak_flops, positive=True)
    if isinstance(mfu, bool) or not isinstance(mfu, (int, float)) or not 0 < mfu <= 1:
        raise ValueError(f"mfu must be a number in (0, 1], got {mfu!r}")
    return float(total_flops / (n_gpus * peak_flops * mfu))
