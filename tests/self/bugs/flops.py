from tests.self.bugs import Bug

BUGS = [
    Bug("flops", "a multiply-add counted as 1 FLOP",
        "    return int(2 * m * k * n)",
        "    return int(m * k * n)"),
    Bug("flops", "backward counted as 1x forward (total = 2x forward)",
        '        "total": forward + backward_input + backward_weight,',
        '        "total": 2 * forward,'),
    Bug("flops", "forgets the lm_head in the total",
        '        "total": int(attn_proj + attn_scores + ffn + lm_head),',
        '        "total": int(attn_proj + attn_scores + ffn),'),
    Bug("flops", "counts QK^T but not AV",
        "    attn_scores = L * 2 * 2 * T * T * d",
        "    attn_scores = L * 2 * T * T * d"),
    Bug("flops", "FFN counted with two matrices (GELU MLP), not SwiGLU's three",
        "    ffn = L * 2 * T * (3 * d * dff)",
        "    ffn = L * 2 * T * (2 * d * dff)"),
    Bug("flops", "attention scores use d_head instead of d_model",
        "    attn_scores = L * 2 * 2 * T * T * d",
        "    attn_scores = L * 2 * 2 * T * T * (d // cfg.num_heads)"),
    # a real answer: inference's count for a training run
    Bug("flops", "training compute without the backward pass (2·N·D)",
        "    return float(6 * n_params * n_tokens)",
        "    return float(2 * n_params * n_tokens)", mistake="the backward pass forgotten"),
    Bug("flops", "training_seconds ignores the MFU",
        "    return float(total_flops / (n_gpus * peak_flops * mfu))",
        "    return float(total_flops / (n_gpus * peak_flops))"),
]
