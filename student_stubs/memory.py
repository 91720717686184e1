"""memory — the training-memory ledger: model states, ZeRO sharding, activations.

Handout: assignment/problems/memory.md. Notes (assignment/notes/): 001 (no memorised constant:
elements × dtype bytes × copies/shards; bf16 mixed precision 2 + 4 + 4 + 8 = 18 B/param;
8 × 80 GB / 18 ≈ 35.6B), 000 (fp32 AdamW 16 B/param), 004 (LLaMA 2 7B at 16 B/param =
99.8 GiB; Korthikanti et al. activations 97.0 GiB / 17.0 GiB at s = 4096).

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


def bytes_per_param(recipe: list[tuple[str, int, str]]) -> int:
    """Total bytes kept per parameter by a recipe, as an int: the sum of its bytes_per_param.

    Raises ValueError for an empty recipe, an entry that is not (name, positive int bytes,
    kind) or a kind not in ("params", "grads", "optimizer").

    Examples: bytes_per_param(FP32_ADAMW) == 16, bytes_per_param(BF16_MIXED_ADAMW) == 18,
    bytes_per_param(BF16_MIXED_ADAMW_BF16_GRADS) == 16.
    """
    raise NotImplementedError


def model_state_bytes(
    n_params: int,
    recipe: list[tuple[str, int, str]],
    data_parallel: int = 1,
    zero_stage: int = 0,
) -> dict[str, int]:
    """Bytes of model state held by ONE data-parallel rank, by kind. Returns a dict of ints
    with keys "params", "grads", "optimizer" and "total" (the sum of the three).

    For each kind, full = n_params × (sum of bytes_per_param of the recipe's entries of that
    kind). ZeRO shards kinds across the data_parallel ranks:
      stage 0: nothing sharded (plain data parallelism: every rank holds everything)
      stage 1: "optimizer" sharded
      stage 2: "optimizer" and "grads" sharded
      stage 3: "optimizer", "grads" and "params" sharded
    A sharded kind costs ceil(full / data_parallel) bytes per rank (ceil division of the
    kind's total bytes, in integer arithmetic); an unsharded kind costs full. A kind the
    recipe does not mention costs 0. Note the given recipes put the fp32 master weights
    under "params" (see the comment above FP32_ADAMW).

    Raises ValueError if n_params < 0, data_parallel < 1, zero_stage not in 0..3, or the
    recipe is bad (see bytes_per_param). n_params is an int: the tests pass ints only, so a
    float n_params is not graded either way (the reference raises ValueError for it).

    Example (notes 004): LLaMA 2 7B, model_state_bytes(6_700_000_000,
    BF16_MIXED_ADAMW_BF16_GRADS) == {"params": 40_200_000_000, "grads": 13_400_000_000,
    "optimizer": 53_600_000_000, "total": 107_200_000_000} (99.8 GiB). With
    data_parallel=8, zero_stage=1: optimizer 6_700_000_000, total 60_300_000_000.
    """
    raise NotImplementedError


def max_trainable_params(total_hbm_bytes: int | float, bytes_per_param: int | float) -> float:
    """Upper bound on the parameters whose model states fit, as a float:
    total_hbm_bytes / bytes_per_param.

    Ignores activations, temporaries and fragmentation, so it is only an upper bound
    (and assumes the states are fully sharded over all devices whose HBM is summed).
    Raises ValueError if either argument is non-positive or non-finite.

    Example (notes 001): 8 × 80 GB at 18 B/param:
    max_trainable_params(8 * 80e9, 18) ≈ 3.556e10 (≈ 35.6B parameters).
    """
    raise NotImplementedError


def megatron_activation_bytes(
    seq_len: int,
    batch: int,
    hidden: int,
    heads: int,
    layers: int,
    store_attention_matrix: bool = True,
) -> int:
    """Activation bytes of a GPT-style model (Korthikanti et al. 2022: 16-bit activations, no
    recomputation, no tensor/sequence parallelism), as an exact int.

    With s = seq_len, b = batch, h = hidden, a = heads, per layer:
        store_attention_matrix=True:   s·b·h·(34 + 5·a·s/h) = 34·s·b·h + 5·a·s²·b
        store_attention_matrix=False:  34·s·b·h   (the s×s scores/softmax are not stored,
                                                  as with FlashAttention)
    times `layers`. Compute it as 34·s·b·h + 5·a·s·s·b (all ints, no division), so the
    result is exact.

    Raises ValueError if any size is not a positive int or hidden is not divisible by heads.

    Example (notes 004), LLaMA 2 7B shape s=4096, b=1, h=4096, a=32, 32 layers:
    megatron_activation_bytes(4096, 1, 4096, 32, 32) == 104_152_956_928 (97.0 GiB);
    with store_attention_matrix=False: 18_253_611_008 (17.0 GiB).
    """
    raise NotImplementedError
