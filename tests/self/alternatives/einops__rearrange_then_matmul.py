"""einops, alternative: heads are moved with rearrange first and the scores come from a batched
`@` on the rearranged tensors (rather than one einsum); split_heads names the per-head size
(`dim=`) rather than the head count; mean_over looks its output pattern up in a table of short
axis letters; the FLOP count multiplies in a loop. Validation unpacks shapes instead of
comparing slices."""

from einops import einsum, rearrange, reduce  # noqa: F401  (einsum kept for the stub's import line)
from jaxtyping import Float
from torch import Tensor

AXES = ("batch", "seq", "hidden")

# output pattern of the mean for each axis that is averaged away (b = batch, s = seq, h = hidden)
_MEAN_PATTERNS = {"batch": "b s h -> s h", "seq": "b s h -> b h", "hidden": "b s h -> b s"}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def attention_scores(
    query: Float[Tensor, "batch seq1 head dim"], key: Float[Tensor, "batch seq2 head dim"]
) -> Float[Tensor, "batch head seq1 seq2"]:
    """Attention scores Q·Kᵀ per batch and head, no 1/√dim scaling: (batch, head, seq1, seq2)."""
    if query.ndim != 4:
        raise ValueError(f"query must be 4-d, got {tuple(query.shape)}")
    if key.ndim != 4:
        raise ValueError(f"key must be 4-d, got {tuple(key.shape)}")
    qb, _, qh, qd = query.shape
    kb, _, kh, kd = key.shape
    if (qb, qh, qd) != (kb, kh, kd):
        raise ValueError(f"batch/head/dim differ: query {tuple(query.shape)}, key {tuple(key.shape)}")
    q = rearrange(query, "b i h d -> b h i d")
    k_t = rearrange(key, "b j h d -> b h d j")
    return q @ k_t  # (b, h, i, d) @ (b, h, d, j) -> (b, h, i, j)


def split_heads(x: Float[Tensor, "batch seq hidden"], num_heads: int) -> Float[Tensor, "batch heads seq dim"]:
    """(batch, seq, heads·dim) -> (batch, heads, seq, dim), a view of x."""
    if not _is_int(num_heads) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    if x.ndim != 3:
        raise ValueError(f"x must be 3-d, got {tuple(x.shape)}")
    head_dim, rest = divmod(x.shape[-1], num_heads)
    if rest != 0:
        raise ValueError(f"hidden={x.shape[-1]} does not split into {num_heads} heads")
    return rearrange(x, "b s (h d) -> b h s d", d=head_dim)


def merge_heads(x: Float[Tensor, "batch heads seq dim"]) -> Float[Tensor, "batch seq hidden"]:
    """(batch, heads, seq, dim) -> (batch, seq, heads·dim), the inverse of split_heads."""
    if x.ndim != 4:
        raise ValueError(f"x must be 4-d, got {tuple(x.shape)}")
    return rearrange(x, "b h s d -> b s (h d)")


def mean_over(x: Float[Tensor, "batch seq hidden"], axis: str) -> Tensor:
    """Mean over the named axis with einops' reduce; the other two axes stay in order."""
    pattern = _MEAN_PATTERNS.get(axis) if isinstance(axis, str) else None
    if pattern is None:
        raise ValueError(f"unknown axis {axis!r}; expected one of {AXES}")
    if x.ndim != 3:
        raise ValueError(f"x must be 3-d, got {tuple(x.shape)}")
    return reduce(x, pattern, "mean")


def attention_scores_flops(batch: int, seq1: int, seq2: int, heads: int, dim: int) -> int:
    """2·batch·heads·seq1·seq2·dim as an int."""
    total = 2
    for size in (batch, seq1, seq2, heads, dim):
        if not _is_int(size):
            raise ValueError(f"sizes must be ints, got {size!r}")
        if size < 0:
            raise ValueError(f"sizes must be non-negative, got {size}")
        total *= size
    return total
