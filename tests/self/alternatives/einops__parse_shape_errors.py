"""einops, alternative: shapes are read with einops.parse_shape and einops' own errors are turned
into ValueError (instead of checking ndim by hand); the scores are an einsum over head-first
tensors ('b h i d, b h j d -> b h i j') after a rearrange; mean_over moves the averaged axis last
with rearrange and reduces '... r -> ...'; the FLOP count uses math.prod. Prints nothing, but has
small helpers."""

import math

from einops import EinopsError, einsum, parse_shape, rearrange, reduce
from jaxtyping import Float
from torch import Tensor

AXES = ("batch", "seq", "hidden")


def _shape(x: Tensor, pattern: str, what: str) -> dict:
    """parse_shape, with einops' complaint about the number of axes turned into a ValueError."""
    try:
        return parse_shape(x, pattern)
    except (EinopsError, RuntimeError, ValueError) as err:
        raise ValueError(f"{what} of shape {tuple(x.shape)} does not match '{pattern}': {err}") from None


def attention_scores(
    query: Float[Tensor, "batch seq1 head dim"], key: Float[Tensor, "batch seq2 head dim"]
) -> Float[Tensor, "batch head seq1 seq2"]:
    """Q·Kᵀ per batch and head, no scaling: (batch, head, seq1, seq2)."""
    q = _shape(query, "b i h d", "query")
    k = _shape(key, "b j h d", "key")
    for axis in ("b", "h", "d"):
        if q[axis] != k[axis]:
            raise ValueError(f"query and key disagree on axis {axis}: {q[axis]} vs {k[axis]}")
    q_heads_first = rearrange(query, "b i h d -> b h i d")
    k_heads_first = rearrange(key, "b j h d -> b h j d")
    return einsum(q_heads_first, k_heads_first, "b h i d, b h j d -> b h i j")


def split_heads(x: Float[Tensor, "batch seq hidden"], num_heads: int) -> Float[Tensor, "batch heads seq dim"]:
    """(batch, seq, heads·dim) -> (batch, heads, seq, dim), a view of x."""
    if type(num_heads) is not int or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    hidden = _shape(x, "batch seq hidden", "x")["hidden"]
    if hidden % num_heads != 0:
        raise ValueError(f"hidden={hidden} is not a multiple of num_heads={num_heads}")
    return rearrange(x, "batch seq (heads dim) -> batch heads seq dim", heads=num_heads)


def merge_heads(x: Float[Tensor, "batch heads seq dim"]) -> Float[Tensor, "batch seq hidden"]:
    """Inverse of split_heads: (batch, heads, seq, dim) -> (batch, seq, heads·dim)."""
    _shape(x, "batch heads seq dim", "x")
    return rearrange(x, "batch heads seq dim -> batch seq (heads dim)")


def mean_over(x: Float[Tensor, "batch seq hidden"], axis: str) -> Tensor:
    """Mean over one named axis; the two others keep their order."""
    if axis not in AXES:  # a non-str (or an unhashable) never equals one of the names
        raise ValueError(f"axis must be 'batch', 'seq' or 'hidden', got {axis!r}")
    _shape(x, "batch seq hidden", "x")
    kept = [a for a in AXES if a != axis]
    moved = rearrange(x, f"batch seq hidden -> {' '.join(kept)} {axis}")  # averaged axis last
    return reduce(moved, "... r -> ...", "mean")


def attention_scores_flops(batch: int, seq1: int, seq2: int, heads: int, dim: int) -> int:
    """2·batch·heads·seq1·seq2·dim, an int."""
    sizes = {"batch": batch, "seq1": seq1, "seq2": seq2, "heads": heads, "dim": dim}
    bad = {n: v for n, v in sizes.items() if type(v) is not int or v < 0}
    if bad:
        raise ValueError(f"sizes must be non-negative ints, got {bad}")
    return 2 * math.prod(sizes.values())
