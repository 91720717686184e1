"""einops — named axes: attention scores with einsum, heads split and merged with rearrange, a
mean with reduce.

Handout: assignment/problems/einops.md. Notes (assignment/notes/): 001 ("einops" and
"jaxtyping": `query @ key.transpose(-2, -1)` and `x.view(b, s, h, -1)` rewritten with named
axes, `einsum(query, key, 'batch seq1 head dim, batch seq2 head dim -> batch head seq1 seq2')`,
`rearrange(x, 'batch seq (heads dim) -> batch heads seq dim', heads=8)` and back).

Use the einops library (`from einops import einsum, rearrange, reduce`): the point of the
problem is that the pattern string says what the axes are. Tensors keep their dtype.
"""

from einops import einsum, rearrange, reduce
from jaxtyping import Float
from torch import Tensor

AXES = ("batch", "seq", "hidden")


def attention_scores(
    query: Float[Tensor, "batch seq1 head dim"], key: Float[Tensor, "batch seq2 head dim"]
) -> Float[Tensor, "batch head seq1 seq2"]:
    """Attention scores Q·Kᵀ per batch and head, with no 1/√dim scaling (notes 001's einsum):

        scores[b, h, i, j] = sum over d of query[b, i, h, d] * key[b, j, h, d]

    The same as `query.transpose(1, 2) @ key.permute(0, 2, 3, 1)`, without saying which axis is
    which by number. Raises ValueError unless both are 4-d with equal batch, head and dim sizes.

    Example: query (2, 5, 4, 8) and key (2, 7, 4, 8) give scores of shape (2, 4, 5, 7).
    """
    raise NotImplementedError


def split_heads(x: Float[Tensor, "batch seq hidden"], num_heads: int) -> Float[Tensor, "batch heads seq dim"]:
    """Split the hidden axis into heads × dim and move heads in front of seq:
    `rearrange(x, 'batch seq (heads dim) -> batch heads seq dim', heads=num_heads)`.

    Returns a view of `x` (no copy: the same storage, strides permuted), as `x.view(b, s, h,
    -1).transpose(1, 2)` would. Raises ValueError if `x` is not 3-d, if `num_heads` is not a
    positive int, or if hidden is not divisible by `num_heads`.

    Example: x of shape (2, 3, 12) with num_heads=4 gives shape (2, 4, 3, 3).
    """
    raise NotImplementedError


def merge_heads(x: Float[Tensor, "batch heads seq dim"]) -> Float[Tensor, "batch seq hidden"]:
    """The inverse of split_heads: `rearrange(x, 'batch heads seq dim -> batch seq (heads dim)')`,
    so `merge_heads(split_heads(x, h))` equals `x`. Raises ValueError if `x` is not 4-d.

    Example: shape (2, 4, 3, 3) gives shape (2, 3, 12).
    """
    raise NotImplementedError


def mean_over(x: Float[Tensor, "batch seq hidden"], axis: str) -> Tensor:
    """The mean over one named axis, "batch", "seq" or "hidden", with einops' `reduce(...,
    'mean')`; the other two axes stay, in order. Raises ValueError for another axis name or if
    `x` is not 3-d.

    Example: x of shape (2, 3, 4): mean_over(x, "seq") has shape (2, 4), equal to x.mean(dim=1).
    """
    raise NotImplementedError


def attention_scores_flops(batch: int, seq1: int, seq2: int, heads: int, dim: int) -> int:
    """FLOPs of attention_scores, as an int: 2·batch·heads·seq1·seq2·dim (each score is a
    length-dim dot product; the count problem flops uses for QKᵀ). Sizes may be 0; a negative
    size raises ValueError.

    Example: attention_scores_flops(1, 1024, 1024, 25, 64) == 3_355_443_200.
    """
    raise NotImplementedError
