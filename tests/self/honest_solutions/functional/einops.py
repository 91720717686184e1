"""einops — named axes: attention scores with einsum, heads split and merged with rearrange, a
mean with reduce.

Honest solution, functional style: the patterns as module constants, one shape guard.
"""

from einops import einsum, rearrange, reduce
from jaxtyping import Float
from torch import Tensor

AXES = ("batch", "seq", "hidden")

_SCORES = "batch seq1 head dim, batch seq2 head dim -> batch head seq1 seq2"
_SPLIT = "batch seq (heads dim) -> batch heads seq dim"
_MERGE = "batch heads seq dim -> batch seq (heads dim)"


def _require_dims(x: object, ndim: int, name: str) -> Tensor:
    if not isinstance(x, Tensor) or x.dim() != ndim:
        raise ValueError(f"{name} must be a {ndim}-d tensor, got {getattr(x, 'shape', type(x))}")
    return x


def attention_scores(
    query: Float[Tensor, "batch seq1 head dim"], key: Float[Tensor, "batch seq2 head dim"]
) -> Float[Tensor, "batch head seq1 seq2"]:
    q, k = _require_dims(query, 4, "query"), _require_dims(key, 4, "key")
    mismatched = [axis for axis, i in (("batch", 0), ("head", 2), ("dim", 3)) if q.shape[i] != k.shape[i]]
    if mismatched:
        raise ValueError(f"query {tuple(q.shape)} and key {tuple(k.shape)} differ in {', '.join(mismatched)}")
    return einsum(q, k, _SCORES)


def split_heads(x: Float[Tensor, "batch seq hidden"], num_heads: int) -> Float[Tensor, "batch heads seq dim"]:
    _require_dims(x, 3, "x")
    if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    if x.shape[-1] % num_heads:
        raise ValueError(f"hidden {x.shape[-1]} is not divisible by num_heads {num_heads}")
    return rearrange(x, _SPLIT, heads=num_heads)


def merge_heads(x: Float[Tensor, "batch heads seq dim"]) -> Float[Tensor, "batch seq hidden"]:
    return rearrange(_require_dims(x, 4, "x"), _MERGE)


def mean_over(x: Float[Tensor, "batch seq hidden"], axis: str) -> Tensor:
    if axis not in AXES:
        raise ValueError(f"axis must be one of {AXES}, got {axis!r}")
    _require_dims(x, 3, "x")
    kept = " ".join(a for a in AXES if a != axis)
    return reduce(x, f"{' '.join(AXES)} -> {kept}", "mean")


def attention_scores_flops(batch: int, seq1: int, seq2: int, heads: int, dim: int) -> int:
    sizes = (batch, seq1, seq2, heads, dim)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes):
        raise ValueError(f"sizes must be non-negative ints, got {sizes!r}")
    return 2 * batch * heads * seq1 * seq2 * dim
