"""memory — the training-memory ledger: model states, ZeRO sharding, activations.

Honest solution, functional style: the ZeRO stages as a table of sharded kinds, integer ceil
division, comprehensions over the recipe.
"""

import math

# A recipe is the ledger of what training keeps per parameter: a list of
# (name, bytes_per_param, kind) with kind one of "params", "grads", "optimizer".
# The kind decides which ZeRO stage shards the entry (see model_state_bytes).
#
# Why the fp32 master weights are kind "params" (not "optimizer"): the notes' ledger lists
# "parameters / master parameters" together as one item of the model states, next to
# "gradients" and "optimizer moments m, v" (notes 001) — a master copy holds the weights
# themselves, only in a wider dtype, while "optimizer" here means the Adam moments alone.
# Consequence: ZeRO stage 1/2 shard only m and v (and grads at stage 2); the master copy is
# sharded at stage 3 together with the bf16 weights. (DeepSpeed's ZeRO paper instead counts
# the fp32 master copy among the optimizer states, K = 12, and shards it from stage 1.)
FP32_ADAMW: list[tuple[str, int, str]] = [
    ("fp32 params", 4, "params"),
    ("fp32 grads", 4, "grads"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 16 bytes per parameter (notes 000)

BF16_MIXED_ADAMW: list[tuple[str, int, str]] = [
    ("bf16 params", 2, "params"),
    ("fp32 master params", 4, "params"),
    ("fp32 grads", 4, "grads"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 18 bytes per parameter (notes 001)

BF16_MIXED_ADAMW_BF16_GRADS: list[tuple[str, int, str]] = [
    ("bf16 params", 2, "params"),
    ("bf16 grads", 2, "grads"),
    ("fp32 master params", 4, "params"),
    ("adam m (fp32)", 4, "optimizer"),
    ("adam v (fp32)", 4, "optimizer"),
]  # 16 bytes per parameter (notes 004)

KINDS: tuple[str, ...] = ("params", "grads", "optimizer")

# ZeRO stage -> the kinds it shards across the data-parallel ranks
_SHARDED: dict[int, frozenset[str]] = {
    0: frozenset(),
    1: frozenset({"optimizer"}),
    2: frozenset({"optimizer", "grads"}),
    3: frozenset({"optimizer", "grads", "params"}),
}

# Korthikanti et al. 2022: bytes per (s·b·h) for a block's inputs and intermediates, and per
# (a·s²·b) for the attention scores, softmax and dropout mask
_SBH_BYTES, _AS2B_BYTES = 34, 5


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _entries(recipe: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    if not isinstance(recipe, (list, tuple)) or not recipe:
        raise ValueError("a recipe is a non-empty list of (name, bytes_per_param, kind)")
    for entry in recipe:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError(f"a recipe entry is (name, bytes_per_param, kind), got {entry!r}")
        _, nbytes, kind = entry
        if not _is_int(nbytes) or nbytes <= 0:
            raise ValueError(f"bytes per parameter must be a positive int, got {nbytes!r} in {entry!r}")
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r} in {entry!r}; kinds are {KINDS}")
    return [tuple(e) for e in recipe]


def bytes_per_param(recipe: list[tuple[str, int, str]]) -> int:
    return sum(nbytes for _, nbytes, _ in _entries(recipe))


def model_state_bytes(
    n_params: int,
    recipe: list[tuple[str, int, str]],
    data_parallel: int = 1,
    zero_stage: int = 0,
) -> dict[str, int]:
    entries = _entries(recipe)
    if not _is_int(n_params) or n_params < 0:
        raise ValueError(f"n_params must be a non-negative int, got {n_params!r}")
    if not _is_int(data_parallel) or data_parallel < 1:
        raise ValueError(f"data_parallel must be an int >= 1, got {data_parallel!r}")
    if not _is_int(zero_stage) or zero_stage not in _SHARDED:
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    full = {kind: n_params * sum(b for _, b, k in entries if k == kind) for kind in KINDS}
    per_rank = {kind: -(-full[kind] // data_parallel) if kind in _SHARDED[zero_stage] else full[kind]
                for kind in KINDS}
    return {**per_rank, "total": sum(per_rank.values())}


def max_trainable_params(total_hbm_bytes: int | float, bytes_per_param: int | float) -> float:
    for name, v in (("total_hbm_bytes", total_hbm_bytes), ("bytes_per_param", bytes_per_param)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {v!r}")
    return float(total_hbm_bytes / bytes_per_param)


def megatron_activation_bytes(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    layers: int,
    store_attention_matrix: bool = True,
) -> int:
    sizes = dict(seq_len=seq_len, batch=batch, hidden=hidden, heads=heads, layers=layers)
    bad = [name for name, v in sizes.items() if not (_is_int(v) and v > 0)]
    if bad:
        raise ValueError(f"sizes must be positive ints: {', '.join(bad)}")
    if hidden % heads:
        raise ValueError(f"hidden {hidden} is not divisible by heads {heads}")
    s, b, h, a = seq_len, batch, hidden, heads
    per_layer = _SBH_BYTES * s * b * h + (_AS2B_BYTES * a * s * s * b if store_attention_matrix else 0)
    return layers * per_layer
