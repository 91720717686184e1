from tests.self.bugs import Bug

P_LINE = "    return int(2 * V * D + D + L * per_block)"
A_BLOCK = "    per_block = 8 * B * T * D + 2 * B * H * T * T + 2 * B * T * F"
A_LINE = "    return int(cfg.num_layers * per_block + B * T * D + 2 * B * T * cfg.vocab_size)"
FLOPS_LINE = "    return int(6 * batch_size * cfg.context_length * parameter_count(cfg))"

BUGS = [
    Bug("adamw_accounting", "tied embedding and LM head (V·D once)", P_LINE,
        "    return int(V * D + D + L * per_block)", mistake="tied embedding and LM head"),
    Bug("adamw_accounting", "attention matrix per layer, not per head", A_BLOCK,
        "    per_block = 8 * B * T * D + 2 * B * T * T + 2 * B * T * F",
        mistake="attention matrices per layer, not per head"),
    Bug("adamw_accounting", "memory counts only weights and Adam moments (12 bytes/param)",
        "    return int(16 * parameter_count(cfg) + 4 * activation_count(cfg, batch_size))",
        "    return int(12 * parameter_count(cfg) + 4 * activation_count(cfg, batch_size))",
        mistake="12 bytes per parameter"),
    Bug("adamw_accounting", "forward-only FLOPs (2·B·T·P)", FLOPS_LINE,
        "    return int(2 * batch_size * cfg.context_length * parameter_count(cfg))",
        mistake="forward FLOPs only"),
    # the published answers' mistakes: each is named in the failure message
    Bug("adamw_accounting", "two-matrix FFN (P = 1,635,537,600)",
        "    per_block = 2 * D + 4 * D * D + 3 * D * F", "    per_block = 2 * D + 4 * D * D + 2 * D * F",
        mistake="a two-matrix FFN"),
    Bug("adamw_accounting", "80 GB read as 80 GiB (batch 3, not 2)",
        "    if memory_bytes < fixed:", "    memory_bytes = memory_bytes * 2**30 // 10**9\n    if memory_bytes < fixed:",
        mistake="the budget read in GiB"),
    Bug("adamw_accounting", "QKᵀ scores kept, their softmax left out", A_BLOCK,
        "    per_block = 8 * B * T * D + B * H * T * T + 2 * B * T * F", mistake="one T×T matrix per head"),
    Bug("adamw_accounting", "logits counted once", A_LINE,
        "    return int(cfg.num_layers * per_block + B * T * D + B * T * cfg.vocab_size)",
        mistake="the logits counted once"),
    Bug("adamw_accounting", "step FLOPs from the matmuls, attention included", FLOPS_LINE,
        "    T, L, D = cfg.context_length, cfg.num_layers, cfg.d_model\n"
        "    return int(3 * (2 * batch_size * T * parameter_count(cfg) + 4 * L * batch_size * T * T * D))",
        mistake="the attention matmuls (QKᵀ and AV) added"),
    Bug("adamw_accounting", "step FLOPs with QKᵀ but not AV", FLOPS_LINE,
        "    T, L, D = cfg.context_length, cfg.num_layers, cfg.d_model\n"
        "    return int(3 * (2 * batch_size * T * parameter_count(cfg) + 2 * L * batch_size * T * T * D))",
        mistake="one attention matmul (QKᵀ or AV, not both)"),
    Bug("adamw_accounting", "tokens per step forgotten (6·P per step)", FLOPS_LINE,
        "    return int(6 * parameter_count(cfg))", mistake="the tokens per step forgotten"),
    # a real answer: the batch kept, the context length forgotten
    Bug("adamw_accounting", "context length forgotten (6·B·P per step)", FLOPS_LINE,
        "    return int(6 * batch_size * parameter_count(cfg))", mistake="the context length forgotten"),
]
