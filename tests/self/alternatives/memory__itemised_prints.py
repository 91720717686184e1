"""memory, alternative: an itemised ledger with prints. Every entry becomes a line item
(name, kind, bytes on this rank) that is printed when verbose; each kind's shard uses divmod
(quotient + 1 if a remainder is left) rather than negated floor division; the ZeRO stages are a
table of sets; the HBM bound is checked with try/except around math.isfinite; the activations
are summed term by term over the layers' tensors (the 34·s·b·h block term, then the s×s
attention term per head) instead of one expression.

Units: bytes are ints; GB = 10**9 bytes, GiB = 2**30 bytes.
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

VERBOSE = False  # set True to print the ledger while debugging

# which kinds each ZeRO stage shards across the data-parallel ranks
ZERO_SHARDS: dict[int, frozenset[str]] = {
    0: frozenset(),
    1: frozenset({"optimizer"}),
    2: frozenset({"optimizer", "grads"}),
    3: frozenset({"optimizer", "grads", "params"}),
}


def _log(*args) -> None:
    if VERBOSE:
        print("[memory]", *args)


def _validate_recipe(recipe) -> None:
    if not recipe:
        raise ValueError("a recipe needs at least one entry")
    for i, entry in enumerate(recipe):
        if not isinstance(entry, (tuple, list)) or len(entry) != 3:
            raise ValueError(f"entry {i} is not (name, bytes_per_param, kind): {entry!r}")
        nbytes, kind = entry[1], entry[2]
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise ValueError(f"entry {i}: bytes_per_param must be an int, got {nbytes!r}")
        if nbytes <= 0:
            raise ValueError(f"entry {i}: bytes_per_param must be positive, got {nbytes}")
        if kind not in KINDS:
            raise ValueError(f"entry {i}: kind {kind!r} is not one of {KINDS}")


def _require_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _ceil_div(numerator: int, denominator: int) -> int:
    quotient, remainder = divmod(numerator, denominator)
    return quotient + (1 if remainder else 0)


def bytes_per_param(recipe: list[tuple[str, int, str]]) -> int:
    """Total bytes kept per parameter by a recipe, as an int: the sum of its bytes_per_param."""
    _validate_recipe(recipe)
    total = sum(entry[1] for entry in recipe)
    _log(f"{len(recipe)} entries, {total} bytes/param")
    return total


def model_state_bytes(
    n_params: int,
    recipe: list[tuple[str, int, str]],
    data_parallel: int = 1,
    zero_stage: int = 0,
) -> dict[str, int]:
    """Bytes of model state held by ONE data-parallel rank, by kind, plus "total"."""
    _require_int("n_params", n_params, 0)
    _validate_recipe(recipe)
    _require_int("data_parallel", data_parallel, 1)
    if isinstance(zero_stage, bool) or zero_stage not in ZERO_SHARDS:
        raise ValueError(f"zero_stage must be 0..3, got {zero_stage!r}")
    sharded = ZERO_SHARDS[zero_stage]
    full_by_kind: dict[str, int] = {}
    for name, nbytes, kind in recipe:
        item = n_params * nbytes
        full_by_kind[kind] = full_by_kind.get(kind, 0) + item
        _log(f"  {name:<20} {kind:<9} {item:>20,d} B (all ranks' view)")
    ledger = {}
    for kind in KINDS:
        full = full_by_kind.get(kind, 0)
        ledger[kind] = _ceil_div(full, data_parallel) if kind in sharded else full
    ledger["total"] = ledger["params"] + ledger["grads"] + ledger["optimizer"]
    _log(f"ZeRO-{zero_stage} over {data_parallel} ranks: {ledger}")
    return ledger


def max_trainable_params(total_hbm_bytes: int | float, bytes_per_param: int | float) -> float:
    """Upper bound on the parameters whose model states fit: total_hbm_bytes / bytes_per_param."""
    for name, value in (("total_hbm_bytes", total_hbm_bytes), ("bytes_per_param", bytes_per_param)):
        if isinstance(value, bool):
            raise ValueError(f"{name} must be a number, not a bool")
        try:
            finite = math.isfinite(value)
        except TypeError:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if not (finite and value > 0):
            raise ValueError(f"{name} must be positive and finite, got {value!r}")
    bound = total_hbm_bytes / bytes_per_param
    _log(f"{total_hbm_bytes:.4g} B / {bytes_per_param} B/param = {bound:.4g} params at most")
    return float(bound)


def megatron_activation_bytes(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    layers: int,
    store_attention_matrix: bool = True,
) -> int:
    """Korthikanti et al. activation bytes, 34·s·b·h + 5·a·s²·b per layer (34·s·b·h without the
    attention matrix), times layers, as an exact int."""
    sizes = {"seq_len": seq_len, "batch": batch, "hidden": hidden, "heads": heads, "layers": layers}
    for name, value in sizes.items():
        _require_int(name, value, 1)
    if hidden % heads != 0:
        raise ValueError(f"heads={heads} does not divide hidden={hidden}")
    block_term = 34 * seq_len * batch * hidden           # the block's 16-bit inputs and intermediates
    scores_per_head = seq_len * seq_len * batch           # one s×s matrix per sequence
    attention_term = 0
    if store_attention_matrix:
        # per head: the scores and the softmax, 2 bytes each, plus the 1-byte dropout mask
        attention_term = heads * scores_per_head * (2 + 2 + 1)
    total = layers * (block_term + attention_term)
    _log(f"activations: {total:,d} B over {layers} layers")
    return total
