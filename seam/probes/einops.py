"""Probes for einops: whether split_heads returns a view of its input. Across the seam a tensor
arrives by value, so "no copy" can only be seen here, beside the submission: same storage as the
input, and the layout a view has. No expected answers live here."""

import torch

from . import probe


@probe("einops", calls="split_heads", how="split_heads returns a view of its input (shared storage)")
def split_heads_view(c, x: torch.Tensor, num_heads: int) -> dict:
    """split_heads(x, num_heads) on a fresh copy of x: the result, whether it shares x's storage,
    and its strides and storage offset (a view's are x's, permuted)."""
    x = x.clone()
    out = c.module("einops").split_heads(x, num_heads)
    if not isinstance(out, torch.Tensor):
        return {"out": out, "shares_storage": False, "stride": None, "storage_offset": None}
    return {"out": out, "shares_storage": out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            "stride": tuple(out.stride()), "storage_offset": out.storage_offset()}
