"""Attention scores three ways (einsum, einops, @), with a partial and a cache of masks."""

from functools import lru_cache, partial

import einops
import torch
from einops import rearrange, reduce


def scores_einsum(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bhqd,bhkd->bhqk", q, k) / q.shape[-1] ** 0.5


def scores_einops(q, k):
    return einops.einsum(q, k, "b h q d, b h k d -> b h q k") / q.shape[-1] ** 0.5


def split_heads(x, n_heads):
    return rearrange(x, "b s (h d) -> b h s d", h=n_heads)


def merge_heads(x):
    return rearrange(x, "b h s d -> b s (h d)")


mean_over_heads = partial(reduce, pattern="b h q k -> b q k", reduction="mean")


@lru_cache(maxsize=16)
def causal_mask(n: int) -> torch.Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


def masked_scores(q, k):
    s = scores_einsum(q, k)
    return s.masked_fill(~causal_mask(q.shape[-2]), float("-inf"))


if __name__ == "__main__":
    x = torch.randn(2, 5, 12)
    q = k = split_heads(x, 4)
    assert torch.allclose(scores_einsum(q, k), scores_einops(q, k), atol=1e-6)
    assert torch.allclose(scores_einsum(q, k), q @ k.transpose(-1, -2) / 3 ** 0.5, atol=1e-6)
    assert torch.equal(merge_heads(q), x)
    print("ok", tuple(mean_over_heads(masked_scores(q, k)).shape), causal_mask.cache_info().hits)
