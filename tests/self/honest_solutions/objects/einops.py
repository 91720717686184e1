"""einops — named axes: attention scores with einsum, heads split and merged with rearrange, a
mean with reduce.

Honest solution, object style: an `Axis` enum, a decorator that checks tensor ranks, and a
NamedTuple of the pattern strings.
"""

from __future__ import annotations

import logging
import warnings
from enum import Enum
from functools import wraps
from typing import Callable, NamedTuple

from einops import einsum, rearrange, reduce
from jaxtyping import Float
from torch import Tensor

logger = logging.getLogger(__name__)

AXES = ("batch", "seq", "hidden")


class Axis(str, Enum):
    BATCH = "batch"
    SEQ = "seq"
    HIDDEN = "hidden"


class Patterns(NamedTuple):
    scores: str = "batch seq1 head dim, batch seq2 head dim -> batch head seq1 seq2"
    split: str = "batch seq (heads dim) -> batch heads seq dim"
    merge: str = "batch heads seq dim -> batch seq (heads dim)"


PATTERNS = Patterns()


def ranks(*wanted: int) -> Callable[[Callable], Callable]:
    """ValueError unless the first len(wanted) positional arguments are tensors of those ranks."""

    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        def wrapper(*args, **kwargs):
            for position, (value, ndim) in enumerate(zip(args, wanted)):
                if not isinstance(value, Tensor) or value.dim() != ndim:
                    shape = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                    raise ValueError(f"{fn.__name__}: argument {position} must be {ndim}-d, got {shape}")
            return fn(*args, **kwargs)

        return wrapper

    return decorate


@ranks(4, 4)
def attention_scores(
    query: Float[Tensor, "batch seq1 head dim"], key: Float[Tensor, "batch seq2 head dim"]
) -> Float[Tensor, "batch head seq1 seq2"]:
    (b1, _, h1, d1), (b2, _, h2, d2) = query.shape, key.shape
    if (b1, h1, d1) != (b2, h2, d2):
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} differ in batch, head or dim")
    return einsum(query, key, PATTERNS.scores)


@ranks(3)
def split_heads(x: Float[Tensor, "batch seq hidden"], num_heads: int) -> Float[Tensor, "batch heads seq dim"]:
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    hidden = x.shape[-1]
    if hidden % num_heads:
        raise ValueError(f"hidden size {hidden} does not split into {num_heads} heads")
    if not x.is_contiguous():
        warnings.warn("x is not contiguous: the split heads may not be a view of it", stacklevel=2)
    logger.debug("split %s into %d heads", tuple(x.shape), num_heads)
    return rearrange(x, PATTERNS.split, heads=num_heads)


@ranks(4)
def merge_heads(x: Float[Tensor, "batch heads seq dim"]) -> Float[Tensor, "batch seq hidden"]:
    return rearrange(x, PATTERNS.merge)


def mean_over(x: Float[Tensor, "batch seq hidden"], axis: str) -> Tensor:
    try:
        gone = Axis(axis)
    except ValueError:
        raise ValueError(f"axis must be one of {AXES}, got {axis!r}") from None
    return _mean(x, gone)


@ranks(3)
def _mean(x: Tensor, gone: Axis) -> Tensor:
    kept = " ".join(a.value for a in Axis if a is not gone)
    return reduce(x, f"batch seq hidden -> {kept}", "mean")


def attention_scores_flops(batch: int, seq1: int, seq2: int, heads: int, dim: int) -> int:
    sizes = dict(batch=batch, seq1=seq1, seq2=seq2, heads=heads, dim=dim)
    for name, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"{name} must be a non-negative int, got {size!r}")
    per_score = 2 * dim
    return per_score * batch * heads * seq1 * seq2
