"""memory (hidden): the ledger against the bytes of real tensors (allocated on the meta
device: real shapes and dtypes, no memory), ZeRO sharding against real shards of a flat buffer,
Korthikanti et al.'s activations against an itemised list of the tensors a block keeps, and seeded
random cases against the reference."""

import random

import pytest
import torch

from tests.checks import ROUNDING, case, check_cases, raises
from tests.common.memory import BF16_MIXED_ADAMW, BF16_MIXED_ADAMW_BF16_GRADS, FP32_ADAMW, mistakes

KINDS = ("params", "grads", "optimizer")
DTYPE_OF_SIZE = {1: torch.uint8, 2: torch.bfloat16, 4: torch.float32, 8: torch.float64}
SHARDED_AT = {0: (), 1: ("optimizer",), 2: ("optimizer", "grads"), 3: ("optimizer", "grads", "params")}


def random_recipe(rng: random.Random, sizes=(1, 2, 4, 8)):
    return [(f"entry {i}", rng.choice(sizes), rng.choice(KINDS)) for i in range(rng.randint(1, 6))]


def real_bytes_by_kind(n_params: int, recipe) -> dict:
    """Allocate, per recipe entry, a tensor of n_params elements of a dtype of that many bytes
    (params, grads, Adam moments ...) on the meta device, and add up .nbytes by kind."""
    out = dict.fromkeys(KINDS, 0)
    with torch.device("meta"):
        for _, nbytes, kind in recipe:
            out[kind] += torch.empty(n_params, dtype=DTYPE_OF_SIZE[nbytes]).nbytes
    return out


def rank0_shard(full_bytes: int, data_parallel: int) -> int:
    """Bytes on the busiest rank when a flat buffer of full_bytes is split over data_parallel ranks
    (torch.chunk: equal shards of ceil(full / dp) bytes, the last one shorter)."""
    with torch.device("meta"):
        shards = torch.empty(full_bytes, dtype=torch.uint8).chunk(data_parallel)
    got = shards[0].numel()
    assert got == -(-full_bytes // data_parallel)  # the same as hand-computed ceil division
    return got


def expected_state(n_params, recipe, dp, stage) -> dict:
    full = real_bytes_by_kind(n_params, recipe)
    out = {k: rank0_shard(v, dp) if k in SHARDED_AT[stage] else v for k, v in full.items()}
    out["total"] = sum(out[k] for k in KINDS)
    return out


def korthikanti_ledger(s, b, h, a, layers, store_attention_matrix=True) -> int:
    """Bytes of the tensors one GPT block keeps for backward (Korthikanti et al. 2022, 16-bit
    activations, 1-byte dropout masks, no recomputation), built as real meta tensors, × layers."""
    bf16, mask = torch.bfloat16, torch.uint8
    keep = [((s, b, h), bf16)] * 2  # inputs of the two layer norms
    keep += [((s, b, h), bf16)] * 3  # input of the QKV projections; Q and K for QKᵀ
    keep += [((s, b, h), bf16), ((s, b, h), bf16), ((s, b, h), mask)]  # V; input of W_O; attention dropout mask
    keep += [((s, b, h), bf16), ((s, b, 4 * h), bf16), ((s, b, 4 * h), bf16), ((s, b, h), mask)]  # MLP
    if store_attention_matrix:  # softmax output, its dropout mask, the dropout output (used by AV)
        keep += [((b, a, s, s), bf16), ((b, a, s, s), mask), ((b, a, s, s), bf16)]
    with torch.device("meta"):
        return layers * sum(torch.empty(shape, dtype=dt).nbytes for shape, dt in keep)


def random_cases(rng: random.Random, n: int):
    cases = []
    for _ in range(n):
        recipe = rng.choice([FP32_ADAMW, BF16_MIXED_ADAMW, BF16_MIXED_ADAMW_BF16_GRADS, random_recipe(rng)])
        n_params = rng.choice([0, 1, rng.randint(1, 1000), rng.randint(1, 10**12)])
        cases.append((n_params, recipe, rng.choice([1, 2, 3, 7, 8, 64, rng.randint(1, 5000)]), rng.randint(0, 3)))
    return cases


@pytest.mark.points(2)
def test_model_state_matches_real_tensors(impl):
    """without ZeRO, model_state_bytes equals the nbytes of real params, grads and Adam-state tensors"""
    rng = random.Random(501)
    cases = [(n, recipe, dp, 0) for n, recipe, dp, _ in random_cases(rng, 60)]
    cases += [(6_700_000_000, BF16_MIXED_ADAMW, 1, 0), (124_000_000, FP32_ADAMW, 8, 0)]
    check_cases(impl, "memory.model_state_bytes", cases, oracle=expected_state,
                note="oracle: .nbytes of one meta tensor of n_params elements per recipe entry")
    recipes = [FP32_ADAMW, BF16_MIXED_ADAMW] + [random_recipe(rng) for _ in range(20)]
    check_cases(impl, "memory.bytes_per_param", [(r,) for r in recipes],
                oracle=lambda recipe: sum(real_bytes_by_kind(1, recipe).values()))


@pytest.mark.points(2)
def test_zero_sharding(impl):
    """ZeRO 1 shards the optimizer state, 2 also grads, 3 also params: ceil(bytes / ranks) on the busiest rank"""
    rng = random.Random(502)
    cases = [(n, recipe, dp, stage) for n, recipe, dp, stage in random_cases(rng, 120) if stage > 0]
    # sizes that do not divide evenly, ranks > bytes, one rank, and the notes' 7B on 8 GPUs
    cases += [(1_000_003, BF16_MIXED_ADAMW, 7, s) for s in (1, 2, 3)]
    cases += [(3, FP32_ADAMW, 100, s) for s in (1, 2, 3)] + [(10**9 + 1, FP32_ADAMW, 1, 3)]
    cases += [(6_700_000_000, BF16_MIXED_ADAMW_BF16_GRADS, 8, s) for s in (1, 2, 3)]
    check_cases(impl, "memory.model_state_bytes", cases, oracle=expected_state,
                note="oracle: full bytes per kind from real tensors; sharded kinds split with torch.chunk")


@pytest.mark.points(2)
def test_megatron_matches_itemised_ledger(impl):
    """megatron_activation_bytes equals the bytes of the tensors a GPT block keeps (Korthikanti et al.), with and without the s×s matrices"""
    rng = random.Random(503)
    cases = [(rng.randint(1, 8192), rng.randint(1, 16), a * rng.randint(1, 256), a, rng.randint(1, 96),
              rng.random() < 0.5) for a in (rng.randint(1, 64) for _ in range(40))]
    cases += [(4096, 1, 4096, 32, 32, True), (4096, 1, 4096, 32, 32, False), (1, 1, 1, 1, 1, True)]
    check_cases(impl, "memory.megatron_activation_bytes", cases, oracle=korthikanti_ledger,
                note="oracle: sum of .nbytes of the kept tensors (bf16 activations, uint8 dropout masks)")


@pytest.mark.points(2)
def test_random_against_reference(impl, ref):
    """every memory function equals the reference on random inputs (exact ints; floats rtol 1e-12)"""
    rng = random.Random(504)
    check_cases(impl, "memory.bytes_per_param", [(random_recipe(rng, sizes=range(1, 33)),) for _ in range(200)],
                ref=ref)
    cases = [(n, random_recipe(rng, sizes=range(1, 33)) if rng.random() < 0.3 else recipe, dp, stage)
             for n, recipe, dp, stage in random_cases(rng, 400)]
    check_cases(impl, "memory.model_state_bytes", cases, ref=ref)
    check_cases(impl, "memory.max_trainable_params",
                [(rng.choice([rng.randint(1, 10**14), 10 ** rng.uniform(9, 15)]),
                  rng.choice([2, 4, 6, 16, 18, 20, 12.5])) for _ in range(200)], ref=ref, **ROUNDING,
                mistakes=mistakes("max_trainable_params"))
    # large shapes too: the result must be exact, beyond float precision
    check_cases(impl, "memory.megatron_activation_bytes",
                [(rng.randint(1, 10**6), rng.randint(1, 4096), a * rng.randint(1, 1024), a, rng.randint(1, 200),
                  rng.random() < 0.5) for a in (rng.randint(1, 128) for _ in range(300))], ref=ref)


@pytest.mark.points(1)
def test_bad_input(impl):
    """bad recipes, negative sizes, 0 ranks, ZeRO stage 4 and heads not dividing hidden raise ValueError; neighbours work"""
    bad = raises(ValueError)
    check_cases(impl, "memory.bytes_per_param",
                [case([], want=bad), case([("m", 4, "moments")], want=bad), case([("w", 0, "params")], want=bad),
                 case([("w", -2, "params")], want=bad), case([("w", 1, "params")], want=1)])
    check_cases(impl, "memory.model_state_bytes",
                [case(-1, FP32_ADAMW, want=bad), case(10, FP32_ADAMW, 0, 1, want=bad),
                 case(10, FP32_ADAMW, 2, 4, want=bad), case(10, FP32_ADAMW, 2, -1, want=bad),
                 case(10, [("m", 4, "adam")], 2, 1, want=bad),
                 case(0, FP32_ADAMW, 4, 3, want={"params": 0, "grads": 0, "optimizer": 0, "total": 0}),
                 case(10, [("w", 4, "params")], 3, 3, want={"params": 14, "grads": 0, "optimizer": 0, "total": 14})])
    check_cases(impl, "memory.max_trainable_params",
                [case(0.0, 16, want=bad), case(80e9, 0, want=bad), case(-80e9, 16, want=bad),
                 case(float("inf"), 16, want=bad), case(80e9, 16, want=5e9)], **ROUNDING,
                mistakes=mistakes("max_trainable_params"))
    check_cases(impl, "memory.megatron_activation_bytes",
                [case(0, 1, 4096, 32, 32, want=bad), case(4096, 1, 4096, 30, 32, want=bad),
                 case(4096, 0, 4096, 32, 32, want=bad), case(4096, 1, 4096, 32, 0, want=bad),
                 case(1, 1, 3, 3, 1, want=34 * 3 + 5 * 3)])
