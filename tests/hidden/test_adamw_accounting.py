"""adamw_accounting (hidden): random configurations against the reference, and
parameter counts against a real PyTorch model of the same shape."""

import random

import pytest
import torch
from torch import nn

from tests.checks import CONDITIONED, case, check_cases, expect_equal, raises
from tests.common.adamw_accounting import config, mistakes, params

def random_configs(seed: int, n: int):
    rng = random.Random(seed)
    return [config(rng.randint(2, 200_000), rng.choice([1, 7, 128, 1024, 4096, 32768]), rng.randint(1, 128),
                   heads * rng.randint(1, 256), heads, rng.randint(1, 50_000))
            for heads in (rng.randint(1, 32) for _ in range(n))]


def small_configs(seed: int, n: int):
    """Small enough to build as a real model."""
    rng = random.Random(seed)
    return [config(rng.randint(2, 300), rng.randint(1, 64), rng.randint(1, 3), heads * rng.randint(1, 8), heads,
                   rng.randint(1, 40)) for heads in (rng.randint(1, 4) for _ in range(n))]


class TinyTransformer(nn.Module):
    """The architecture the formulas assume, built from PyTorch parts, to count real parameters."""

    def __init__(self, vocab_size, context_length, num_layers, d_model, num_heads, d_ff):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            block = nn.Module()
            block.norm1, block.norm2 = nn.RMSNorm(d_model), nn.RMSNorm(d_model)  # gain only
            block.qkvo = nn.ModuleList(nn.Linear(d_model, d_model, bias=False) for _ in range(4))
            block.swiglu = nn.ModuleList([nn.Linear(d_model, d_ff, bias=False), nn.Linear(d_ff, d_model, bias=False),
                                          nn.Linear(d_model, d_ff, bias=False)])
            self.blocks.append(block)
        self.final_norm = nn.RMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)  # untied


def real_parameter_count(cfg) -> int:
    with torch.device("meta"):
        return sum(p.numel() for p in TinyTransformer(**cfg.fields).parameters())


@pytest.mark.points(2)
def test_parameter_count_matches_real_model(impl):
    """parameter_count equals the parameters of a real PyTorch model of that shape"""
    check_cases(impl, "adamw_accounting.parameter_count", [(c,) for c in small_configs(7, 12)],
                oracle=real_parameter_count, note="oracle: the parameters of a meta-device PyTorch model of that shape")


@pytest.mark.points(2)
def test_parameter_and_activation_counts_random(impl, ref):
    """parameter_count and activation_count equal the reference on 500 random configurations"""
    cfgs = random_configs(11, 500)
    check_cases(impl, "adamw_accounting.parameter_count", [(c,) for c in cfgs],
                ref=ref, mistakes=mistakes("parameter_count"))
    rng = random.Random(12)
    check_cases(impl, "adamw_accounting.activation_count", [(c, rng.randint(1, 64)) for c in cfgs],
                ref=ref, mistakes=mistakes("activation_count"))


@pytest.mark.points(2)
def test_memory_and_batch_random(impl, ref):
    """peak_memory_bytes and max_batch_size equal the reference (fits / does not fit edges too)"""
    cfgs = random_configs(13, 300)
    rng = random.Random(14)
    check_cases(impl, "adamw_accounting.peak_memory_bytes", [(c, rng.randint(1, 32)) for c in cfgs],
                ref=ref, mistakes=mistakes("peak_memory_bytes"))
    calls = []
    for c in cfgs[:100]:  # a budget of exactly the peak memory of some batch, one byte either side, any
        edge = ref.adamw_accounting.peak_memory_bytes(c, rng.randint(1, 16))
        calls += [(c, edge), (c, edge - 1), (c, edge + 1), (c, rng.randint(1, 10**12))]
    for c in (config(32000, 10**6, 32, 4096, 32, 11008), config(50257, 2**20, 96, 12288, 96, 49152)):
        # million-token contexts: a sequence needs ~1e16 bytes, so a float division rounds the
        # budget one byte short of 3 sequences up to 3; the answer is 2
        edge = ref.adamw_accounting.peak_memory_bytes(c, 3)
        calls += [(c, edge), (c, edge - 1)]
    check_cases(impl, "adamw_accounting.max_batch_size", calls,
                ref=ref, mistakes=mistakes("max_batch_size"))


@pytest.mark.points(2)
def test_flops_and_days_random(impl, ref):
    """adamw_step_flops (exact ints) and training_days (rtol 1e-9) equal the reference, batches past 64 bits too"""
    cfgs = random_configs(15, 300)
    rng = random.Random(16)
    check_cases(impl, "adamw_accounting.adamw_step_flops", [(c, rng.randint(1, 4096)) for c in cfgs],
                ref=ref, mistakes=mistakes("adamw_step_flops"))
    check_cases(impl, "adamw_accounting.training_days",
                [(c, rng.randint(1, 4096), rng.randint(1, 10**6), rng.choice([19.5e12, 312e12, 989.5e12]),
                  rng.uniform(0.05, 1.0)) for c in cfgs], ref=ref, **CONDITIONED, mistakes=mistakes("training_days"))
    # batches past 64 bits (B·T·P more than any tensor holds): only the arithmetic answers
    big = [(c, 2 ** rng.randint(40, 80) + rng.randint(0, 99)) for c in cfgs[:50]]
    check_cases(impl, "adamw_accounting.adamw_step_flops", big, ref=ref)
    check_cases(impl, "adamw_accounting.training_days", [(c, b, rng.randint(1, 10**6), 989.5e12, 0.5) for c, b in big],
                ref=ref, **CONDITIONED)


@pytest.mark.points(1)
def test_bad_input(impl):
    """bad configurations, batches, steps, budgets, peaks and MFUs raise ValueError; valid neighbours still work"""
    good, bad = config(100, 16, 2, 32, 4, 64), raises(ValueError)
    check_cases(impl, "adamw_accounting.parameter_count",
                [case(config(100, 16, 2, 30, 4, 64), want=bad), case(config(100, 16, 0, 32, 4, 64), want=bad)])
    check_cases(impl, "adamw_accounting.activation_count",
                [case(good, -1, want=bad), case(config(100, 16, 2, 30, 4, 64), 1, want=bad)])
    check_cases(impl, "adamw_accounting.peak_memory_bytes", [case(good, 0, want=bad)])
    check_cases(impl, "adamw_accounting.adamw_step_flops",
                [case(good, 0, want=bad), case(good, 1, want=6 * 16 * params(good)),
                 case(good, 2**64, want=6 * 2**64 * 16 * params(good))])
    # a budget of 0 bytes is valid (nothing fits), a negative one is not
    check_cases(impl, "adamw_accounting.max_batch_size", [case(good, -1, want=bad), case(good, 0, want=0)])
    # the valid neighbour is due a float (its value is tested above): compare the type only
    check_cases(impl, "adamw_accounting.training_days",
                [case(good, 1, 10, 19.5e12, 0.0, want=bad), case(good, 1, 10, 19.5e12, 1.5, want=bad),
                 case(good, 1, 10, -1.0, 0.5, want=bad), case(good, 1, 10, 0.0, 0.5, want=bad),
                 case(good, 1, 0, 19.5e12, 0.5, want=bad), case(good, 1, 10, 19.5e12, 1.0, want=float),
                 case(good, 1, 10, 0.5, 1.0, want=float), case(good, 2**64, 10, 19.5e12, 1.5, want=bad),
                 case(good, 2**64, 10, 19.5e12, 1.0, want=float)],
                compare=lambda got, due, what: expect_equal(type(got), due, f"type of {what}"))
