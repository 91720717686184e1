from tests.self.bugs import Bug

BUGS = [
    Bug("memory", "ZeRO stage 1 shards the grads too",
        '    sharded = ("optimizer", "grads", "params")[:zero_stage]',
        '    sharded = ("optimizer", "grads", "params")[:zero_stage + (zero_stage == 1)]'),
    Bug("memory", "floor division instead of ceil for shards",
        "        out[kind] = int(-(-full // data_parallel)) if kind in sharded else int(full)",
        "        out[kind] = int(full // data_parallel) if kind in sharded else int(full)"),
    Bug("memory", "ZeRO stage 3 forgets to shard the params",
        '    sharded = ("optimizer", "grads", "params")[:zero_stage]',
        '    sharded = ("optimizer", "grads", "params")[:min(zero_stage, 2)]'),
    Bug("memory", "attention-matrix term without the heads (5·s²·b)",
        "        per_layer += 5 * a * s * s * b",
        "        per_layer += 5 * s * s * b"),
    Bug("memory", "activations of one layer only",
        "    return int(layers * per_layer)",
        "    return int(per_layer)"),
    Bug("memory", "HBM taken in GiB when given in bytes (GB)",
        "    return float(total_hbm_bytes / bytes_per_param)",
        "    return float(total_hbm_bytes / 2**30 * 10**9 / bytes_per_param)", mistake="GB and GiB mixed up"),
]
