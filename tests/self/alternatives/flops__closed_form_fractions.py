"""flops — alternative: one factored closed form and exact fractions.

The per-layer forward cost is written as 2·T·d·(4·d + 2·T + 3·d_ff) and split into its terms
afterwards; linear_flops returns 3 × forward written as a single product; real-valued
results (6·N·D and the training time) are computed exactly with fractions.Fraction and
rounded to float once at the end. Validation is a table of (name, value, rule) rows.
"""

import math
from fractions import Fraction

from .adamw_accounting import TransformerConfig


def _check(rows) -> None:
    """rows: (name, value, rule) with rule one of 'size0', 'size1', 'count', 'pos', 'frac'."""
    for name, value, rule in rows:
        if rule in ("size0", "size1"):
            ok = type(value) is int and value >= (0 if rule == "size0" else 1)
        else:
            ok = (type(value) in (int, float)) and math.isfinite(value)
            if ok and rule == "count":
                ok = value >= 0
            elif ok and rule == "pos":
                ok = value > 0
            elif ok and rule == "frac":
                ok = 0 < value <= 1
        if not ok:
            raise ValueError(f"invalid {name}: {value!r} (rule {rule})")


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of an (m×k) @ (k×n) matrix product, as an int: 2·m·k·n."""
    _check([("m", m, "size0"), ("k", k, "size0"), ("n", n, "size0")])
    return math.prod((2, m, k, n))


def linear_flops(tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    """Forward, both backward products and their total for a bias-free Linear layer."""
    one = matmul_flops(tokens, d_in, d_out)  # all three products have the same three sizes
    return {
        "forward": one,
        "backward_input": matmul_flops(tokens, d_out, d_in),
        "backward_weight": matmul_flops(d_in, tokens, d_out),
        "total": 3 * one,
    }


def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:
    """Forward-pass matmul FLOPs by term, from the factored per-layer form
    2·T·d·(4·d + 2·T + 3·d_ff) per layer plus 2·T·d·V for the head."""
    _check([(f"cfg.{f}", getattr(cfg, f), "size1")
            for f in ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")])
    if cfg.d_model % cfg.num_heads != 0:
        raise ValueError(f"d_model {cfg.d_model} is not a multiple of num_heads {cfg.num_heads}")
    _check([("seq_len", seq_len, "size1")])
    T, L, d = seq_len, cfg.num_layers, cfg.d_model
    common = 2 * T * d * L  # every per-layer term is this times something
    parts = {"attn_proj": 4 * d, "attn_scores": 2 * T, "ffn": 3 * cfg.d_ff}
    out = {name: common * factor for name, factor in parts.items()}
    out["lm_head"] = 2 * T * d * cfg.vocab_size
    # total from the factored form, which must agree with the sum of the terms
    out["total"] = common * sum(parts.values()) + out["lm_head"]
    assert out["total"] == sum(v for k, v in out.items() if k != "total")
    return out


def training_flops(n_params: int | float, n_tokens: int | float) -> float:
    """C = 6·N·D computed exactly, then rounded to a float."""
    _check([("n_params", n_params, "count"), ("n_tokens", n_tokens, "count")])
    return float(6 * Fraction(n_params) * Fraction(n_tokens))


def training_seconds(
    total_flops: int | float, n_gpus: int, peak_flops: int | float, mfu: int | float
) -> float:
    """total_flops / (n_gpus · peak_flops · mfu) computed exactly, then rounded to a float."""
    _check([("total_flops", total_flops, "count"), ("n_gpus", n_gpus, "size1"),
            ("peak_flops", peak_flops, "pos"), ("mfu", mfu, "frac")])
    effective = n_gpus * Fraction(peak_flops) * Fraction(mfu)  # achieved FLOP/s of the cluster
    return float(Fraction(total_flops) / effective)
