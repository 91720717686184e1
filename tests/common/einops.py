"""What the public and hidden tests of problem einops share."""

import torch

# Attention scores are float32 dot products of length dim, summed in another order than PyTorch's
# matmul: for dim <= 64 and unit-normal inputs the difference stays far below 1e-4 (a few ulps of
# values of size ~sqrt(dim)), while a wrong pairing of axes is off by O(1).
SCORES = dict(rtol=1e-4, atol=1e-4)
# A mean of at most 5 float32 terms: any order of the sum is within a few ulps (1.2e-7 each) of
# PyTorch's; atol covers means near 0. Averaging the wrong axis, or summing, is off by O(1).
MEAN32 = dict(rtol=1e-6, atol=1e-7)


def seeded(*shape: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
