from tests.self.bugs import Bug

BUGS = [
    Bug("adamw_accounting", "tied embedding and LM head (V·D once)",
        "    return int(2 * V * D + D + L * per_block)",
        "    return int(V * D + D + L * per_block)"),
    Bug("adamw_accounting", "attention matrix per layer, not per head",
        "    per_block = 8 * B * T * D + 2 * B * H * T * T + 2 * B * T * F",
        "    per_block = 8 * B * T * D + 2 * B * T * T + 2 * B * T * F"),
    Bug("adamw_accounting", "memory counts only weights and Adam moments (12 bytes/param)",
        "    return int(16 * parameter_count(cfg) + 4 * activation_count(cfg, batch_size))",
        "    return int(12 * parameter_count(cfg) + 4 * activation_count(cfg, batch_size))"),
    Bug("adamw_accounting", "forward-only FLOPs (2·B·T·P)",
        "    return int(6 * batch_size * cfg.context_length * parameter_count(cfg))",
        "    return int(2 * batch_size * cfg.context_length * parameter_count(cfg))"),
]
