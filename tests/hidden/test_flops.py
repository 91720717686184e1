"""flops (hidden): PyTorch's own FLOP counter on real forward/backward passes, and
seeded random cases against the reference.

The oracle is ``torch.utils.flop_counter.FlopCounterMode``: it counts the FLOPs of every matrix
product PyTorch actually dispatches (2 per multiply-add), forward and backward. Tensors live on
the meta device, so shapes are real but nothing is computed: large shapes cost nothing.
"""

import contextlib
import math
import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from tests.checks import ROUNDING, case, check_cases, expect_equal, raises
from tests.common.adamw_accounting import config
from tests.common.flops import mistakes

PARTS = ("attn_proj", "attn_scores", "ffn", "lm_head")


def counted(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def torch_matmul_flops(m: int, k: int, n: int) -> int:
    with torch.device("meta"):
        return counted(lambda: torch.empty(m, k) @ torch.empty(k, n))


def torch_linear_flops(tokens: int, d_in: int, d_out: int) -> dict:
    """FlopCounterMode on F.linear's forward, and on backward passes that need dX only, dW only, both."""
    with torch.device("meta"):
        x, w, dy = torch.empty(tokens, d_in), torch.empty(d_out, d_in), torch.empty(tokens, d_out)
        forward = counted(lambda: F.linear(x, w))
        # only X needs a gradient: forward + dX = dY @ W; only W: forward + dW = dYᵀ @ X
        with_dx = counted(lambda: F.linear(x.requires_grad_(), w).backward(dy))
        x.requires_grad_(False)
        with_dw = counted(lambda: F.linear(x, w.requires_grad_()).backward(dy))
        w.requires_grad_(False)
        both = counted(lambda: F.linear(x.requires_grad_(), w.requires_grad_()).backward(dy))
    return {"forward": forward, "backward_input": with_dx - forward, "backward_weight": with_dw - forward,
            "total": both}


class SwiGLUTransformer(nn.Module):
    """The architecture transformer_forward_flops counts, from PyTorch parts: pre-norm blocks with
    causal multi-head attention (W_Q, W_K, W_V, W_O; QKᵀ and AV as batched matmuls) and a SwiGLU
    FFN (three d×d_ff matrices), a final norm and an untied lm_head. Its only matrix products are
    the ones the formula counts; embedding, norms, softmax, SiLU and residual adds do no matmul."""

    def __init__(self, vocab_size, num_layers, d_model, num_heads, d_ff):
        super().__init__()
        self.heads = num_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            b = nn.Module()
            b.norm1, b.norm2 = nn.RMSNorm(d_model), nn.RMSNorm(d_model)
            b.wq, b.wk, b.wv, b.wo = (nn.Linear(d_model, d_model, bias=False) for _ in range(4))
            b.w1, b.w3 = nn.Linear(d_model, d_ff, bias=False), nn.Linear(d_model, d_ff, bias=False)
            b.w2 = nn.Linear(d_ff, d_model, bias=False)
            self.blocks.append(b)
        self.final_norm = nn.RMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, tally: dict):
        """Logits for ``tokens`` (batch, T); ``tally[part]`` accumulates the FLOPs PyTorch counts
        inside each part (a FlopCounterMode per part, nested in the caller's)."""

        @contextlib.contextmanager
        def part(name):
            with FlopCounterMode(display=False) as counter:
                yield
            tally[name] = tally.get(name, 0) + counter.get_total_flops()

        x = self.embed(tokens)
        bsz, T, d = x.shape
        dh = d // self.heads
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        for b in self.blocks:
            h = b.norm1(x)
            with part("attn_proj"):
                q, k, v = b.wq(h), b.wk(h), b.wv(h)
            q, k, v = (t.view(bsz, T, self.heads, dh).transpose(1, 2) for t in (q, k, v))
            with part("attn_scores"):
                scores = q @ k.transpose(-1, -2)
            att = (scores / math.sqrt(dh)).masked_fill(~mask, float("-inf")).softmax(dim=-1)
            with part("attn_scores"):
                o = att @ v
            o = o.transpose(1, 2).reshape(bsz, T, d)
            with part("attn_proj"):
                x = x + b.wo(o)
            h = b.norm2(x)
            with part("ffn"):
                x = x + b.w2(F.silu(b.w1(h)) * b.w3(h))
        x = self.final_norm(x)
        with part("lm_head"):
            return self.lm_head(x)


def torch_forward_flops(cfg, seq_len: int) -> dict:
    """FlopCounterMode's count of one real forward pass (batch 1) of the model, per part."""
    fields = cfg.fields
    with torch.device("meta"):
        model = SwiGLUTransformer(fields["vocab_size"], fields["num_layers"], fields["d_model"],
                                  fields["num_heads"], fields["d_ff"])
        tokens = torch.zeros(1, seq_len, dtype=torch.long)
        tally: dict = {}
        with FlopCounterMode(display=False) as whole:
            model(tokens, tally)
    out = {p: tally.get(p, 0) for p in PARTS}
    # every matmul of the forward pass sits in one of the four parts: nothing uncounted
    assert whole.get_total_flops() == sum(out.values()), "oracle model does matmuls outside the parts"
    out["total"] = whole.get_total_flops()
    return out


def small_configs(seed: int, n: int):
    """(config, seq_len) pairs; seq_len may exceed context_length (the notes do)."""
    rng = random.Random(seed)
    return [(config(rng.randint(2, 500), rng.randint(1, 64), rng.randint(1, 3), heads * rng.randint(1, 12), heads,
                    rng.randint(1, 96)), rng.randint(1, 80)) for heads in (rng.randint(1, 6) for _ in range(n))]


def random_configs(seed: int, n: int):
    rng = random.Random(seed)
    return [(config(rng.randint(2, 300_000), rng.choice([1, 128, 2048, 131072]), rng.randint(1, 200),
                    heads * rng.randint(1, 512), heads, rng.randint(1, 100_000)),
             rng.choice([1, 2, 7, 512, 1024, 4096, 16384, 131072, rng.randint(1, 10**6)]))
            for heads in (rng.randint(1, 128) for _ in range(n))]


def past_64_bits(seed: int, n: int):
    """(m, k, n) sizes of 2**40 .. 2**80, with zeros and ones: products no tensor (64-bit sizes)
    can hold, real or meta, so no FLOP counter has one to count; the reference's answers."""
    rng = random.Random(seed)
    return [tuple(rng.choice([0, 1, rng.randint(1, 4096), 2 ** rng.randint(40, 80) + rng.randint(0, 10**6)])
                  for _ in range(3)) for _ in range(n)] + [(2**64, 2**64, 2**64), (1, 2**63, 2), (2**70, 3, 0)]


def configs_past_64_bits(seed: int, n: int):
    """(config, seq_len) pairs with a sequence or a width of 2**40 .. 2**70: past any tensor's size."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        heads = rng.randint(1, 64)
        d = heads * rng.choice([rng.randint(1, 128), 2 ** rng.randint(40, 70)])
        out.append((config(rng.choice([2, 50257, 2 ** rng.randint(40, 70)]), rng.randint(1, 4096), rng.randint(1, 96), d,
                           heads, rng.choice([rng.randint(1, 10**5), 2 ** rng.randint(40, 70) + 1])),
                    rng.choice([1, 4096, 2 ** rng.randint(40, 70)])))
    return out


def entry(key: str):
    """Compare one entry of a dict answer only."""
    return lambda got, due, what: expect_equal(got[key], due[key], f"{what}[{key!r}]")


@pytest.mark.points(1)
def test_matmul_flops_match_flop_counter(impl, ref):
    """matmul_flops equals PyTorch's FlopCounterMode on real (m×k) @ (k×n) products, empty ones too, and the reference past 64 bits"""
    rng = random.Random(301)
    calls = [(rng.choice([0, 1, rng.randint(1, 64), rng.randint(1, 20_000)]),
              rng.choice([0, 1, rng.randint(1, 64), rng.randint(1, 20_000)]),
              rng.choice([0, 1, rng.randint(1, 64), rng.randint(1, 20_000)])) for _ in range(80)]
    check_cases(impl, "flops.matmul_flops", calls, oracle=torch_matmul_flops,
                note="oracle: torch.utils.flop_counter.FlopCounterMode")
    check_cases(impl, "flops.matmul_flops", past_64_bits(311, 40), ref=ref)


@pytest.mark.points(2)
def test_linear_flops_match_autograd(impl, ref):
    """linear_flops equals FlopCounterMode on a real Linear's forward and each backward product, and the reference past 64 bits"""
    rng = random.Random(302)
    calls = [(rng.randint(1, 5000), rng.randint(1, 5000), rng.randint(1, 5000)) for _ in range(40)]
    calls += [(1, 1, 1), (100, 256, 512), (3, 1, 4096)]
    check_cases(impl, "flops.linear_flops", calls, oracle=torch_linear_flops,
                note="oracle: FlopCounterMode on a forward + backward pass of F.linear")
    check_cases(impl, "flops.linear_flops", past_64_bits(312, 40), ref=ref)


@pytest.mark.points(3)
def test_transformer_forward_matches_real_model(impl, ref):
    """transformer_forward_flops equals FlopCounterMode on a real SwiGLU transformer's forward pass, term by term, and the reference past 64 bits"""
    cases = small_configs(303, 14)
    cases += [(config(11, 4, 1, 6, 3, 5), 1), (config(50, 8, 2, 16, 1, 40), 33), (config(97, 2, 3, 24, 8, 7), 64)]
    check_cases(impl, "flops.transformer_forward_flops", cases, oracle=torch_forward_flops,
                note="oracle: FlopCounterMode on a forward pass of a SwiGLU transformer of that shape")
    check_cases(impl, "flops.transformer_forward_flops", configs_past_64_bits(313, 20), ref=ref)


@pytest.mark.points(2)
def test_counts_random(impl, ref):
    """matmul_flops, linear_flops and transformer_forward_flops equal the reference exactly on large random shapes, past 64 bits too"""
    rng = random.Random(304)
    check_cases(impl, "flops.matmul_flops",
                [tuple(rng.randint(0, 10**rng.randint(1, 7)) for _ in range(3)) for _ in range(400)], ref=ref)
    check_cases(impl, "flops.linear_flops",
                [tuple(rng.randint(1, 10**rng.randint(1, 7)) for _ in range(3)) for _ in range(400)], ref=ref)
    check_cases(impl, "flops.transformer_forward_flops", random_configs(305, 400), ref=ref)
    check_cases(impl, "flops.matmul_flops", past_64_bits(314, 100), ref=ref)
    check_cases(impl, "flops.linear_flops", past_64_bits(315, 100), ref=ref)
    check_cases(impl, "flops.transformer_forward_flops", configs_past_64_bits(316, 100), ref=ref)


@pytest.mark.points(2)
def test_training_compute_and_time_random(impl, ref):
    """training_flops = 6·N·D and training_seconds equal the reference (rtol 1e-12) on random runs"""
    rng = random.Random(306)
    calls = [(rng.choice([rng.randint(0, 10**12), 10 ** rng.uniform(5, 13)]),
              rng.choice([rng.randint(0, 10**13), 10 ** rng.uniform(6, 14)])) for _ in range(300)]
    check_cases(impl, "flops.training_flops", calls, ref=ref, **ROUNDING, mistakes=mistakes("training_flops"))
    calls = [(10 ** rng.uniform(15, 26), rng.randint(1, 100_000), rng.choice([19.5e12, 312e12, 989e12, 2.25e15]),
              rng.choice([1.0, 0.5, rng.uniform(0.01, 1.0)])) for _ in range(300)]
    calls += [(0.0, 1, 1e12, 0.3), (6.3e24, 1024, 989e12, 0.5), (10**20, 3, 10**15, 1)]
    check_cases(impl, "flops.training_seconds", calls, ref=ref, **ROUNDING)
    # consistency: 6·N·D is the total of linear_flops for a layer of N = d_in·d_out parameters
    layers = [(100, 256, 512), (4096, 4096, 11008), (7, 3, 5), (2**64, 4096, 4096), (3, 2**40, 2**40)]
    linear = check_cases(impl, "flops.linear_flops", layers, ref=ref, compare=entry("total"))
    check_cases(impl, "flops.training_flops", [
        case(d_in * d_out, tokens, want=float(g["total"]),
             what=f"training_flops({d_in * d_out}, {tokens}) vs linear_flops({tokens}, {d_in}, {d_out})['total']")
        for (tokens, d_in, d_out), g in zip(layers, linear)], **ROUNDING)


@pytest.mark.points(1)
def test_bad_input(impl, ref):
    """negative sizes, bad configs, seq_len 0, no GPUs and an MFU outside (0, 1] raise ValueError; neighbours work"""
    good, bad = config(100, 16, 2, 32, 4, 64), raises(ValueError)
    check_cases(impl, "flops.matmul_flops", [case(-1, 2, 3, want=bad), case(2, -3, 4, want=bad),
                                             case(2, 3, -4, want=bad), case(0, 2, 3, want=0),
                                             case(2**64, -1, 2, want=bad), case(2**64, 2**64, 2)], ref=ref)
    check_cases(impl, "flops.linear_flops", [case(10, -1, 3, want=bad), case(-5, 2, 2, want=bad),
                                             case(10, 1, 3, want={"total": 180}), case(2**64, 2**64, -2, want=bad),
                                             case(2**64, 2**64, 2)], ref=ref, compare=entry("total"))
    check_cases(impl, "flops.transformer_forward_flops",
                [case(config(100, 16, 2, 30, 4, 64), 16, want=bad), case(config(100, 16, 0, 32, 4, 64), 16, want=bad),
                 case(good, 0, want=bad), case(good, -3, want=bad), case(good, 1, want={"lm_head": 2 * 100 * 32}),
                 case(config(100, 16, 2, 2**64, 3, 64), 16, want=bad), case(good, 2**64)],
                ref=ref, compare=entry("lm_head"))
    check_cases(impl, "flops.training_flops", [case(-1.0, 1e9, want=bad), case(1e9, float("inf"), want=bad),
                                               case(0, 1e9, want=0.0), case(1e9, 0, want=0.0),
                                               case(-(2**64), 2**40, want=bad), case(2**40, 2**40)], ref=ref)
    check_cases(impl, "flops.training_seconds",
                [case(-1.0, 8, 989e12, 0.5, want=bad), case(1e20, 0, 989e12, 0.5, want=bad),
                 case(1e20, 8, 0.0, 0.5, want=bad), case(1e20, 8, 989e12, 0.0, want=bad),
                 case(1e20, 8, 989e12, 1.01, want=bad), case(1e20, 8, 1e14, 1.0, want=1e20 / 8e14),
                 case(0.0, 1, 1e12, 0.3, want=0.0), case(10.0, 2, 0.5, 1.0, want=10.0)], **ROUNDING)
