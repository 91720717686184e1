"""tensors — storage, strides and views, computed on (shape, strides) alone.

Handout: assignment/problems/tensors.md. Notes (assignment/notes/): 001 (stride, slicing,
view vs. copy, transpose), 004 (storage + strides, the x.T quiz, element [1, 2] at offset 6).

A PyTorch tensor is a flat storage plus (shape, strides, storage_offset): element
(i0, i1, ...) lives at storage_offset + i0*strides[0] + i1*strides[1] + ...
Strides are counted in elements, not bytes. Every function here works on those integers
only (no tensor is created), and each one reproduces what PyTorch itself computes.

Shapes and strides are sequences of Python ints (tuples or lists); results are tuples.
Sizes, strides and storage offsets must be >= 0, otherwise ValueError.
"""

from collections.abc import Sequence

import torch


# ----------------------------------------------------------------------------- the API


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major (C-contiguous) strides, in elements, of a tensor of this shape.

    PyTorch's rule: the last stride is 1 and stride[i] = stride[i+1] * max(shape[i+1], 1),
    so a size-0 dim counts as size 1 for the dims to its left. A 0-d shape () gives ().
    A negative size (or a non-int entry) raises ValueError.
    Oracle: torch.empty(shape).stride().

    Example (notes 004): contiguous_strides((3, 4)) == (4, 1);
    contiguous_strides((2, 0, 3)) == (3, 3, 1).
    """
    raise NotImplementedError


def element_offset(
    shape: Sequence[int], strides: Sequence[int], index: Sequence[int], storage_offset: int = 0
) -> int:
    """Position in storage (in elements) of element `index`:
    storage_offset + sum(index[d] * strides[d]).

    Negative indices wrap as in Python (index[d] + shape[d]). Raises ValueError if
    len(index) != len(shape) (or len(strides) != len(shape), a negative size/stride/offset);
    raises IndexError if an index is still outside [0, shape[d]) after wrapping.

    Example (notes 004): element [1, 2] of a contiguous (3, 4) tensor:
    element_offset((3, 4), (4, 1), (1, 2)) == 1*4 + 2*1 == 6; index (-1, -1) gives 11.
    """
    raise NotImplementedError


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's Tensor.is_contiguous() for this (shape, strides).

    Rule: a tensor with 0 elements is contiguous; otherwise, walking dims from last to first
    and skipping size-1 dims (their stride never matters), each stride must equal the product
    of the sizes to its right (expected stride starts at 1). ValueError on bad shape/strides.
    Oracle: torch.empty_strided(shape, strides).is_contiguous().

    Example (notes 004): x = (3, 4) with strides (4, 1) is contiguous; x.T = (4, 3) with
    strides (1, 4) is not; x[:, 1] = (3,) with strides (4,) is not; (1, 3) with strides (99, 1)
    is (the size-1 dim is ignored).
    """
    raise NotImplementedError


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of x.transpose(dim0, dim1): swap the two sizes and the two strides.

    No data moves; storage_offset is unchanged. Negative dims wrap like PyTorch
    (dim + ndim; a 0-d tensor accepts dims 0 and -1 and is returned unchanged). A dim out of
    range raises ValueError.

    Example (notes 004): transpose((3, 4), (4, 1), 0, 1) == ((4, 3), (1, 4)).
    """
    raise NotImplementedError


def select(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, index: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of the view x.select(dim, index) (= x[..., index, ...]).

    The dim disappears from shape and strides, and the offset moves by index * strides[dim].
    Negative dim/index wrap like PyTorch. Raises ValueError for a 0-d tensor or a dim out of
    range, IndexError for an index outside [-shape[dim], shape[dim]).

    Example (notes 004): x = (3, 4), strides (4, 1). x[1] = select(..., 0, dim=0, index=1) ==
    ((4,), (1,), 4); x[:, 1] = select(..., 0, dim=1, index=1) == ((3,), (4,), 1).
    """
    raise NotImplementedError


def narrow(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, start: int, length: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of the view x.narrow(dim, start, length)
    (= x[..., start:start+length, ...]): shape[dim] becomes length, strides are unchanged,
    the offset moves by start * strides[dim].

    Checks, in PyTorch's order: a 0-d tensor -> ValueError; length < 0 -> ValueError; dim out
    of range -> ValueError (negative dims wrap); start outside [-shape[dim], shape[dim]] ->
    IndexError; a negative start then wraps (start + shape[dim]); start + length > shape[dim]
    -> IndexError. start == shape[dim] with length 0 is allowed.

    Example: x = (3, 4), strides (4, 1); x[:, 1:3] = narrow((3, 4), (4, 1), 0, 1, 1, 2) ==
    ((3, 2), (4, 1), 1).
    """
    raise NotImplementedError


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides of x.view(new_shape), or None where PyTorch's view refuses because of strides.

    1. Infer the size (PyTorch's infer_size): at most one -1, replaced by numel / (product of
       the other sizes). ValueError for: two -1s; any other negative size; a product that
       cannot match numel; a -1 when the other sizes multiply to 0 (then any value would do).
       (A -1 with 0 elements and other sizes > 0 is fine: it becomes 0.)
    2. PyTorch's stride rule (computeStride in ATen/TensorUtils.cpp), not "is it contiguous":
       - 0-d x: every dim of the new shape gets stride 1.
       - numel == 0: the old strides if new_shape == shape, else contiguous_strides(new_shape).
       - otherwise walk the old dims right to left, grouping them into chunks: old dim d-1
         joins the chunk of dim d if shape[d-1] == 1 or strides[d-1] == (product of the
         chunk's sizes so far) * base, where base is the stride of the chunk's innermost
         (rightmost) dim. When a chunk closes (at d == 0 or when dim d-1 does not join), take
         new dims right to left while their product is still below the chunk's numel (plus
         any size-1 new dims that follow), giving each the stride base * (product of the new
         dims already taken in this chunk); their product must equal the chunk's numel.
         All new dims must be used up at the end. If either check fails, return None
         (PyTorch raises "view size is not compatible with input tensor's size and stride").

    Examples (notes 004): x = (3, 4), strides (4, 1): view_strides(x, (4, 3)) == (3, 1);
    t = x.T = (4, 3), strides (1, 4): view_strides(t, (-1,)) is None; view_strides(t, (2, 2, 3))
    == (2, 1, 4) (splitting a dim is always possible).
    """
    raise NotImplementedError


def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    """True iff x.reshape(new_shape) must copy the data, i.e. iff x.view(new_shape) is
    impossible (view_strides(...) is None). Otherwise reshape returns a view sharing storage.
    Same ValueError rules as view_strides for new_shape.

    Example (notes 004 quiz): x (3, 4) contiguous, t = x.T = (4, 3) strides (1, 4):
    t.reshape(-1) copies (True); x.reshape(4, 3) does not (False).
    """
    raise NotImplementedError


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    """Bytes of a dense tensor: numel(shape) * dtype.itemsize (an int).

    dtype must be a torch.dtype (e.g. torch.float32: 4 bytes, torch.bfloat16: 2,
    torch.float8_e4m3fn: 1), anything else raises ValueError; a negative size too.
    Oracle: torch.empty(shape, dtype=dtype).nbytes.

    Example (notes 001): one GPT-3 FFN matrix, nbytes((12288, 49152), torch.float32) ==
    2_415_919_104 bytes (about 2.4 GB).
    """
    raise NotImplementedError
