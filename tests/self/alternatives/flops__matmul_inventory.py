"""flops — alternative: an explicit inventory of every matrix product.

Instead of closed-form terms, each function lists the matmuls it performs as (m, k, n)
shapes — per attention head for QKᵀ and AV, per gradient for the Linear layer — and adds up
matmul_flops over the list. The per-layer inventory is multiplied by the number of layers.
Training compute is split into its forward (2·N·D) and backward (4·N·D) parts, and the
training time divides by each factor in turn. Prints a breakdown when VERBOSE is set.
"""

import math

from .adamw_accounting import TransformerConfig

VERBOSE = False


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _dot_product_flops(k: int) -> int:
    # k multiplies and k adds
    return k + k


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of an (m×k) @ (k×n) matrix product, as an int: 2·m·k·n."""
    for name, size in zip("mkn", (m, k, n)):
        if not _is_int(size) or size < 0:
            raise ValueError(f"matmul size {name} must be an int >= 0, got {size!r}")
    outputs = m * n
    return outputs * _dot_product_flops(k)


def linear_flops(tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    """FLOPs of a bias-free Linear layer's forward and backward matmuls (dict of ints)."""
    products = {
        # name: (rows, inner, cols) of the product
        "forward": (tokens, d_in, d_out),          # X (tokens×d_in) @ W (d_in×d_out)
        "backward_input": (tokens, d_out, d_in),   # dY (tokens×d_out) @ Wᵀ (d_out×d_in)
        "backward_weight": (d_in, tokens, d_out),  # Xᵀ (d_in×tokens) @ dY (tokens×d_out)
    }
    out = {name: matmul_flops(*shape) for name, shape in products.items()}
    out["total"] = sum(out.values())
    return out


def _validate_config(cfg) -> None:
    fields = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")
    for field in fields:
        value = getattr(cfg, field, None)
        if not _is_int(value) or value < 1:
            raise ValueError(f"config field {field} must be a positive int, got {value!r}")
    if cfg.d_model % cfg.num_heads:
        raise ValueError("num_heads must divide d_model")


def _layer_inventory(T: int, d: int, heads: int, dff: int) -> list[tuple[str, int, tuple[int, int, int]]]:
    """(term, how many times, (m, k, n)) for every matmul in one Transformer block."""
    dh = d // heads
    return [
        ("attn_proj", 4, (T, d, d)),        # Q, K, V and output projections
        ("attn_scores", heads, (T, dh, T)),  # Q_h @ K_hᵀ, one per head
        ("attn_scores", heads, (T, T, dh)),  # softmax(…)_h @ V_h, one per head
        ("ffn", 2, (T, d, dff)),             # W1 and W3 of SwiGLU
        ("ffn", 1, (T, dff, d)),             # W2 of SwiGLU
    ]


def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:
    """Forward-pass matmul FLOPs of one sequence of length seq_len, by term (dict of ints)."""
    _validate_config(cfg)
    if not _is_int(seq_len) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    terms = {"attn_proj": 0, "attn_scores": 0, "ffn": 0, "lm_head": 0}
    for term, count, shape in _layer_inventory(seq_len, cfg.d_model, cfg.num_heads, cfg.d_ff):
        terms[term] += cfg.num_layers * count * matmul_flops(*shape)
    terms["lm_head"] = matmul_flops(seq_len, cfg.d_model, cfg.vocab_size)
    terms["total"] = sum(terms.values())
    if VERBOSE:
        for name, value in terms.items():
            print(f"{name:>12}: {value:.3e} ({value / terms['total']:.0%})")
    return terms


def training_flops(n_params: int | float, n_tokens: int | float) -> float:
    """C ≈ 6·N·D = 2·N·D (forward) + 4·N·D (backward), as a float."""
    for name, value in (("n_params", n_params), ("n_tokens", n_tokens)):
        if not _is_real(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    per_token_pass = n_params * n_tokens
    forward = 2 * per_token_pass
    backward = 4 * per_token_pass
    return float(forward + backward)


def training_seconds(
    total_flops: int | float, n_gpus: int, peak_flops: int | float, mfu: int | float
) -> float:
    """total_flops / (n_gpus · peak_flops · mfu), as a float."""
    if not _is_real(total_flops) or total_flops < 0:
        raise ValueError(f"total_flops must be a finite number >= 0, got {total_flops!r}")
    if not _is_int(n_gpus) or n_gpus < 1:
        raise ValueError(f"n_gpus must be an int >= 1, got {n_gpus!r}")
    if not _is_real(peak_flops) or peak_flops <= 0:
        raise ValueError(f"peak_flops must be finite and > 0, got {peak_flops!r}")
    if not _is_real(mfu) or not (0 < mfu <= 1):
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    seconds = total_flops / n_gpus
    seconds = seconds / peak_flops
    seconds = seconds / mfu
    if VERBOSE:
        print(f"{seconds:.4g} s = {seconds / 86400:.2f} days")
    return float(seconds)
