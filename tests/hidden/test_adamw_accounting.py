"""Problem 6 · adamw_accounting (hidden): random configurations against the reference, and
parameter counts against a real PyTorch model of the same shape."""

import random

import pytest
import torch
from torch import nn

from tests.public.test_adamw_accounting import config
from tests.seam.checks import call_text, expect_agree, expect_equal, expect_error

FIELDS = ("vocab_size", "context_length", "num_layers", "d_model", "num_heads", "d_ff")


def random_configs(seed: int, n: int):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        heads = rng.randint(1, 32)
        out.append(config(rng.randint(2, 200_000), rng.choice([1, 7, 128, 1024, 4096, 32768]),
                          rng.randint(1, 128), heads * rng.randint(1, 256), heads, rng.randint(1, 50_000)))
    return out


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


@pytest.mark.points(2)
def test_parameter_count_matches_real_model(impl):
    """parameter_count equals the parameters of a real PyTorch model of that shape"""
    rng = random.Random(7)
    for _ in range(12):
        heads = rng.randint(1, 4)
        fields = dict(vocab_size=rng.randint(2, 300), context_length=rng.randint(1, 64),
                      num_layers=rng.randint(1, 3), d_model=heads * rng.randint(1, 8),
                      num_heads=heads, d_ff=rng.randint(1, 40))
        with torch.device("meta"):
            real = sum(p.numel() for p in TinyTransformer(**fields).parameters())
        cfg = config(**fields)
        expect_equal(impl.adamw_accounting.parameter_count(cfg), real, f"parameter_count({fields})")


@pytest.mark.points(2)
def test_parameter_and_activation_counts_random(impl, ref):
    """parameter_count and activation_count equal the reference on 500 random configurations"""
    cfgs = random_configs(11, 500)
    expect_agree(impl, ref, "adamw_accounting.parameter_count", [(c,) for c in cfgs])
    rng = random.Random(12)
    expect_agree(impl, ref, "adamw_accounting.activation_count", [(c, rng.randint(1, 64)) for c in cfgs])


@pytest.mark.points(2)
def test_memory_and_batch_random(impl, ref):
    """peak_memory_bytes and max_batch_size equal the reference (fits / does not fit edges too)"""
    cfgs = random_configs(13, 300)
    rng = random.Random(14)
    expect_agree(impl, ref, "adamw_accounting.peak_memory_bytes", [(c, rng.randint(1, 32)) for c in cfgs])
    calls = []
    for c in cfgs[:100]:
        b = rng.randint(1, 16)
        edge = ref.adamw_accounting.peak_memory_bytes(c, b)
        calls += [(c, edge), (c, edge - 1), (c, edge + 1), (c, rng.randint(1, 10**12))]
    expect_agree(impl, ref, "adamw_accounting.max_batch_size", calls)


@pytest.mark.points(2)
def test_flops_and_days_random(impl, ref):
    """adamw_step_flops (exact ints) and training_days (rtol 1e-9) equal the reference"""
    cfgs = random_configs(15, 300)
    rng = random.Random(16)
    expect_agree(impl, ref, "adamw_accounting.adamw_step_flops", [(c, rng.randint(1, 4096)) for c in cfgs])
    expect_agree(impl, ref, "adamw_accounting.training_days",
          [(c, rng.randint(1, 4096), rng.randint(1, 10**6), rng.choice([19.5e12, 312e12, 989.5e12]),
            rng.uniform(0.05, 1.0)) for c in cfgs], rtol=1e-9)


@pytest.mark.points(1)
def test_bad_input(impl):
    """bad configurations, batches and MFUs raise ValueError; valid neighbours still work"""
    good = config(100, 16, 2, 32, 4, 64)
    bad_calls = [("parameter_count", (config(100, 16, 2, 30, 4, 64),)),
                 ("parameter_count", (config(100, 16, 0, 32, 4, 64),)),
                 ("activation_count", (good, -1)),
                 ("peak_memory_bytes", (good, 0)),
                 ("training_days", (good, 1, 10, 19.5e12, 0.0)),
                 ("training_days", (good, 1, 10, 19.5e12, 1.5)),
                 ("training_days", (good, 1, 10, -1.0, 0.5))]
    for name, args in bad_calls:
        got = impl.map(f"adamw_accounting.{name}", [args])[0]
        expect_error(got, ValueError, call_text(f"adamw_accounting.{name}", args))
    expect_equal(type(impl.adamw_accounting.training_days(good, 1, 10, 19.5e12, 1.0)), float,
                 "type of training_days(..., mfu=1.0)")
