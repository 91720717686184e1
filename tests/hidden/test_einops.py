"""einops (hidden): seeded random shapes against PyTorch's own ops (matmul, view + transpose,
reshape, mean) and the reference; split_heads must return a view of its input (seen by a probe
beside the submission); bad shapes and names raise ValueError."""

import random

import pytest
import torch

from tests.checks import case, check_cases, raises
from tests.common.einops import MEAN32, SCORES


def tensor(rng: random.Random, *shape: int) -> torch.Tensor:
    dtype = rng.choice([torch.float32, torch.float32, torch.float64])
    return torch.randn(*shape, generator=torch.Generator().manual_seed(rng.randrange(2**31)), dtype=dtype)


def qk_cases(seed: int, n: int) -> list:
    """(query, key) pairs: batch 1-3, seq 0-6, heads 1-4, dim 1-16, float32 or float64."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        b, s1, s2, h, d = rng.randint(1, 3), rng.randint(0, 6), rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 16)
        q = tensor(rng, b, s1, h, d)
        out.append(case(q, tensor(rng, b, s2, h, d).to(q.dtype)))
    return out


def scores_oracle(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q.transpose(1, 2) @ k.permute(0, 2, 3, 1)


def hidden_cases(seed: int, n: int) -> list:
    """(x, num_heads) with hidden = heads × dim, heads 1-6, dim 1-8."""
    rng = random.Random(seed)
    return [case(tensor(rng, rng.randint(1, 3), rng.randint(1, 5), h * rng.randint(1, 8)), h)
            for h in (rng.randint(1, 6) for _ in range(n))]


def split_oracle(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    return x.view(x.shape[0], x.shape[1], num_heads, -1).transpose(1, 2)


X = torch.zeros(2, 3, 12)

BAD_QK = [case(torch.zeros(2, 3, 2, 4), torch.zeros(3, 5, 2, 4), want=raises(ValueError)),   # batch differs
          case(torch.zeros(2, 3, 2, 4), torch.zeros(2, 5, 3, 4), want=raises(ValueError)),   # heads differ
          case(torch.zeros(2, 3, 2, 4), torch.zeros(2, 5, 2, 5), want=raises(ValueError)),   # dim differs
          case(torch.zeros(3, 2, 4), torch.zeros(3, 2, 4), want=raises(ValueError)),         # 3-d
          case(torch.zeros(1, 2, 3, 2, 4), torch.zeros(1, 2, 3, 2, 4), want=raises(ValueError)),  # 5-d
          # only one of them not 4-d; a 0-d key has no batch size to compare, so only a 4-d check catches it
          case(torch.zeros(2, 3, 2, 4), torch.zeros(2, 2, 4), want=raises(ValueError)),
          case(torch.zeros(2, 3, 2, 4), torch.zeros(()), want=raises(ValueError))]

BAD_SPLIT = [case(X, 5, want=raises(ValueError)), case(X, 0, want=raises(ValueError)),
             case(X, -3, want=raises(ValueError)), case(X, True, want=raises(ValueError)),
             case(X, 4.0, want=raises(ValueError)), case(torch.zeros(3, 12), 4, want=raises(ValueError)),
             case(torch.zeros(1, 2, 3, 12), 4, want=raises(ValueError))]


@pytest.mark.points(2)
def test_attention_scores_random(impl, ref):
    """attention_scores equals query.transpose(1, 2) @ key.permute(0, 2, 3, 1) on 300 random shapes, float32 and float64, seq 0 included"""
    check_cases(impl, "einops.attention_scores", qk_cases(1, 300), ref=ref, oracle=scores_oracle, **SCORES)


@pytest.mark.points(1)
def test_attention_scores_bad_shapes(impl, ref):
    """attention_scores raises ValueError when batch, heads or dim differ, or an input is not 4-d"""
    check_cases(impl, "einops.attention_scores", BAD_QK, ref=ref)


@pytest.mark.points(2)
def test_split_heads_random(impl, ref):
    """split_heads equals x.view(b, s, h, -1).transpose(1, 2) bit for bit on 300 random shapes; bad head counts raise ValueError"""
    check_cases(impl, "einops.split_heads", hidden_cases(2, 300) + BAD_SPLIT, ref=ref, oracle=split_oracle)


def view_oracle(x: torch.Tensor, num_heads: int) -> dict:
    view = split_oracle(x, num_heads)
    return {"out": view, "shares_storage": True, "stride": tuple(view.stride()), "storage_offset": 0}


@pytest.mark.points(1)
@pytest.mark.how
def test_split_heads_returns_a_view(impl, ref):
    """split_heads returns a view of x: the same storage, with x.view(...).transpose(1, 2)'s strides (no copy)"""
    cases = [case(x=c.args[0], num_heads=c.args[1]) for c in hidden_cases(3, 40)]
    check_cases(impl, "probes.split_heads_view", cases, ref=ref, oracle=view_oracle)


@pytest.mark.points(1)
def test_merge_heads_random(impl, ref):
    """merge_heads equals x.transpose(1, 2).reshape(b, s, h * d) on 200 random shapes and undoes split_heads; a non-4-d input raises ValueError"""
    cases = [case(split_oracle(*c.args), want=c.args[0]) for c in hidden_cases(4, 200)]  # the round trip
    cases += [case(torch.zeros(2, 3, 12), want=raises(ValueError)), case(torch.zeros(2, 2, 2, 3, 3), want=raises(ValueError))]
    check_cases(impl, "einops.merge_heads", cases, ref=ref)


def mean_cases(seed: int, n: int) -> list:
    rng = random.Random(seed)
    return [case(tensor(rng, rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 6)),
                 rng.choice(["batch", "seq", "hidden"])) for _ in range(n)]


@pytest.mark.points(1)
def test_mean_over_random(impl, ref):
    """mean_over equals x.mean(dim) over the named axis on 200 random tensors; any other name raises ValueError"""
    bad = [case(X, name, want=raises(ValueError)) for name in ("heads", "", "Seq", "batch seq")]
    bad.append(case(torch.zeros(2, 3), "seq", want=raises(ValueError)))
    check_cases(impl, "einops.mean_over", mean_cases(5, 200) + bad, ref=ref, **MEAN32,
                oracle=lambda x, axis: x.mean(dim=("batch", "seq", "hidden").index(axis)))


@pytest.mark.points(1)
def test_attention_scores_flops_random(impl, ref):
    """attention_scores_flops is 2·batch·heads·seq1·seq2·dim on 350 random sizes (0 and past 64 bits included); negative or non-int sizes raise ValueError"""
    rng = random.Random(6)
    sizes = [tuple(rng.choice([0, 1, 2, 7, 64, 1024, 4096]) for _ in range(5)) for _ in range(300)]
    # and sizes past the 64 bits of any tensor's: no FLOP counter has a tensor to count
    sizes += [tuple(rng.choice([0, 1, 64, 2 ** rng.randint(40, 80) + rng.randint(0, 99)]) for _ in range(5))
              for _ in range(50)]
    bad = [case(*s, want=raises(ValueError)) for s in [(1, 2, 3, 4, -5), (-1, 2, 3, 4, 5), (1, 2.0, 3, 4, 5),
                                                       (1, 2, 3, True, 5), (1, 2, 3, 4, None)]]
    check_cases(impl, "einops.attention_scores_flops", [case(*s) for s in sizes] + bad, ref=ref,
                oracle=lambda b, s1, s2, h, d: 2 * b * h * s1 * s2 * d)
