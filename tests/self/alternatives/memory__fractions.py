"""memory, alternative: exact rational arithmetic. The ZeRO shard is math.ceil of a
fractions.Fraction (instead of negated floor division), the HBM bound is the Fraction
total/bytes rounded once to float, and the activation ledger is the handout's factored form
s·b·h·(34 + 5·a·s/h) evaluated as a Fraction (exact, then converted to int). Each entry's
bytes are accumulated into per-kind totals first; validation is a single helper that returns
the entries.

Units: bytes are ints; GB = 10**9 bytes, GiB = 2**30 bytes.
"""

import math
from fractions import Fraction

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

_SHARDED_FROM_STAGE = {"optimizer": 1, "grads": 2, "params": 3}  # kind -> first ZeRO stage that shards it


def _entries(recipe) -> list[tuple[str, int, str]]:
    """The recipe's entries, validated; ValueError on anything malformed."""
    try:
        entries = list(recipe)
    except TypeError:
        raise ValueError(f"recipe must be a list of entries, got {recipe!r}") from None
    if not entries:
        raise ValueError("recipe is empty")
    checked = []
    for entry in entries:
        try:
            name, nbytes, kind = entry
        except (TypeError, ValueError):
            raise ValueError(f"recipe entry must be (name, bytes_per_param, kind), got {entry!r}") from None
        if type(nbytes) is not int or nbytes < 1:
            raise ValueError(f"bytes_per_param of {name!r} must be a positive int, got {nbytes!r}")
        if kind not in _SHARDED_FROM_STAGE:
            raise ValueError(f"unknown kind {kind!r} for {name!r}")
        checked.append((name, nbytes, kind))
    return checked


def _int_at_least(name: str, value, low: int) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def bytes_per_param(recipe: list[tuple[str, int, str]]) -> int:
    """Total bytes kept per parameter by a recipe, as an int: the sum of its bytes_per_param."""
    total = 0
    for _, nbytes, _ in _entries(recipe):
        total += nbytes
    return total


def model_state_bytes(
    n_params: int,
    recipe: list[tuple[str, int, str]],
    data_parallel: int = 1,
    zero_stage: int = 0,
) -> dict[str, int]:
    """Bytes of model state held by ONE data-parallel rank, by kind, plus "total"."""
    _int_at_least("n_params", n_params, 0)
    entries = _entries(recipe)
    _int_at_least("data_parallel", data_parallel, 1)
    if type(zero_stage) is not int or not 0 <= zero_stage <= 3:
        raise ValueError(f"zero_stage must be one of 0, 1, 2, 3, got {zero_stage!r}")
    per_param = {kind: 0 for kind in KINDS}
    for _, nbytes, kind in entries:
        per_param[kind] += nbytes
    result = {}
    for kind in KINDS:
        full = n_params * per_param[kind]
        if zero_stage >= _SHARDED_FROM_STAGE[kind]:
            result[kind] = math.ceil(Fraction(full, data_parallel))  # the busiest rank
        else:
            result[kind] = full
    result["total"] = sum(result[kind] for kind in KINDS)
    return result


def max_trainable_params(total_hbm_bytes: int | float, bytes_per_param: int | float) -> float:
    """Upper bound on the parameters whose model states fit: total_hbm_bytes / bytes_per_param."""
    exact = []
    for name, value in (("total_hbm_bytes", total_hbm_bytes), ("bytes_per_param", bytes_per_param)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value!r}")
        exact.append(Fraction(value))
    return float(exact[0] / exact[1])


def megatron_activation_bytes(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    layers: int,
    store_attention_matrix: bool = True,
) -> int:
    """Korthikanti et al. activation bytes, s·b·h·(34 + 5·a·s/h) per layer (34·s·b·h without the
    attention matrix), times layers, as an exact int."""
    s = _int_at_least("seq_len", seq_len, 1)
    b = _int_at_least("batch", batch, 1)
    h = _int_at_least("hidden", hidden, 1)
    a = _int_at_least("heads", heads, 1)
    n_layers = _int_at_least("layers", layers, 1)
    if h % a:
        raise ValueError(f"hidden={h} is not divisible by heads={a}")
    bytes_per_element_of_sbh = Fraction(34)
    if store_attention_matrix:
        bytes_per_element_of_sbh += Fraction(5 * a * s, h)
    per_layer = s * b * h * bytes_per_element_of_sbh
    total = n_layers * per_layer
    assert total.denominator == 1  # s·b·h cancels the /h
    return int(total)
