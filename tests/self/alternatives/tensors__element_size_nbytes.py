"""tensors — alternative: nbytes reads the element size off an empty tensor of the dtype.

Differences from the reference: `torch.empty(0, dtype=dtype).element_size()` instead of
`dtype.itemsize` (the honest-work rule of tensors leaves nbytes free to ask torch).

The reference's docstring follows.
tensors — storage, strides and views, computed on (shape, strides) alone.

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


# ----------------------------------------------------------------------------- helpers


def _ints(name: str, values: Sequence[int]) -> tuple[int, ...]:
    # A shape/stride/index must be a sequence of real ints (bool is rejected: True is not a size).
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a tuple or list of ints, got {values!r}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name} must contain only ints, got {values!r}")
        out.append(int(v))
    return tuple(out)


def _shape(shape: Sequence[int]) -> tuple[int, ...]:
    shape = _ints("shape", shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"shape has a negative size: {shape}")
    return shape


def _layout(shape: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = _shape(shape)
    strides = _ints("strides", strides)
    if len(strides) != len(shape):
        raise ValueError(f"shape {shape} has {len(shape)} dims but strides {strides} has {len(strides)}")
    if any(s < 0 for s in strides):
        raise ValueError(f"negative strides are not supported (PyTorch neither): {strides}")
    return shape, strides


def _offset(storage_offset: int) -> int:
    if isinstance(storage_offset, bool) or not isinstance(storage_offset, int) or storage_offset < 0:
        raise ValueError(f"storage_offset must be an int >= 0, got {storage_offset!r}")
    return int(storage_offset)


def _int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    return int(value)


def _wrap_dim(dim: int, ndim: int) -> int:
    # PyTorch's maybe_wrap_dim: dims in [-ndim, ndim) wrap; a 0-d tensor behaves as 1-d here.
    dim = _int("dim", dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise ValueError(f"dim {dim} out of range for a {ndim}-d tensor (expected [{-n}, {n - 1}])")
    return dim + n if dim < 0 else dim


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _infer_size(new_shape: Sequence[int], numel: int) -> tuple[int, ...]:
    # Port of at::infer_size: at most one -1, inferred as numel / (product of the others).
    new_shape = list(_ints("new_shape", new_shape))
    infer_dim = None
    newsize = 1
    for d, s in enumerate(new_shape):
        if s == -1:
            if infer_dim is not None:
                raise ValueError(f"only one dimension can be inferred: {tuple(new_shape)}")
            infer_dim = d
        elif s >= 0:
            newsize *= s
        else:
            raise ValueError(f"invalid shape dimension {s} in {tuple(new_shape)}")
    if numel == newsize or (infer_dim is not None and newsize > 0 and numel % newsize == 0):
        if infer_dim is not None:
            if newsize == 0:
                # 0 elements and another 0 in new_shape: any size fits the -1, so it is ambiguous.
                raise ValueError(
                    f"cannot reshape a tensor of 0 elements into shape {tuple(new_shape)}: "
                    "the -1 could be any value"
                )
            new_shape[infer_dim] = numel // newsize
        return tuple(new_shape)
    raise ValueError(f"shape {tuple(new_shape)} is invalid for input of size {numel}")


def _compute_stride(
    oldshape: tuple[int, ...], oldstride: tuple[int, ...], newshape: tuple[int, ...]
) -> tuple[int, ...] | None:
    # Port of at::detail::computeStride (aten/src/ATen/TensorUtils.cpp).
    if len(oldshape) == 0:
        # A 0-d tensor has one element: any shape of numel 1 views it with strides 1.
        return (1,) * len(newshape)

    numel = _numel(oldshape)
    if numel == 0:
        # Strides are arbitrary without elements: keep them if the shape is unchanged, else
        # use the strides a fresh (resized) tensor of the new shape would get.
        if oldshape == newshape:
            return oldstride
        return contiguous_strides(newshape)

    # Split oldshape into chunks of dims that are contiguous with each other
    # (oldstride[d] == oldshape[d+1] * oldstride[d+1], size-1 dims ignored); newshape must split
    # into chunks with the same numels, and each new chunk gets row-major strides based on the
    # stride of the innermost old dim of its chunk.
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        chunk_ends = tensor_d == 0 or (
            oldshape[tensor_d - 1] != 1 and oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride
        )
        if chunk_ends:
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


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
    shape = _shape(shape)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return tuple(strides)


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
    shape, strides = _layout(shape, strides)
    index = _ints("index", index)
    storage_offset = _offset(storage_offset)
    if len(index) != len(shape):
        raise ValueError(f"index {index} has {len(index)} entries for a {len(shape)}-d tensor")
    offset = storage_offset
    for d, (i, size, stride) in enumerate(zip(index, shape, strides)):
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of range for dim {d} of size {size}")
        if i < 0:
            i += size
        offset += i * stride
    return offset


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
    shape, strides = _layout(shape, strides)
    if _numel(shape) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of x.transpose(dim0, dim1): swap the two sizes and the two strides.

    No data moves; storage_offset is unchanged. Negative dims wrap like PyTorch
    (dim + ndim; a 0-d tensor accepts dims 0 and -1 and is returned unchanged). A dim out of
    range raises ValueError.

    Example (notes 004): transpose((3, 4), (4, 1), 0, 1) == ((4, 3), (1, 4)).
    """
    shape, strides = _layout(shape, strides)
    d0 = _wrap_dim(dim0, len(shape))
    d1 = _wrap_dim(dim1, len(shape))
    if len(shape) == 0:
        return (), ()
    new_shape, new_strides = list(shape), list(strides)
    new_shape[d0], new_shape[d1] = new_shape[d1], new_shape[d0]
    new_strides[d0], new_strides[d1] = new_strides[d1], new_strides[d0]
    return tuple(new_shape), tuple(new_strides)


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
    shape, strides = _layout(shape, strides)
    storage_offset = _offset(storage_offset)
    if len(shape) == 0:
        raise ValueError("select() cannot be applied to a 0-d tensor")
    d = _wrap_dim(dim, len(shape))
    index = _int("index", index)
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for dim {d} of size {size}")
    if index < 0:
        index += size
    return (
        shape[:d] + shape[d + 1 :],
        strides[:d] + strides[d + 1 :],
        storage_offset + index * strides[d],
    )


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
    shape, strides = _layout(shape, strides)
    storage_offset = _offset(storage_offset)
    if len(shape) == 0:
        raise ValueError("narrow() cannot be applied to a 0-d tensor")
    length = _int("length", length)
    if length < 0:
        raise ValueError(f"narrow(): length must be non-negative, got {length}")
    d = _wrap_dim(dim, len(shape))
    start = _int("start", start)
    size = shape[d]
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start {start} out of range [{-size}, {size}] for dim {d}")
    if start < 0:
        start += size
    if start + length > size:
        raise IndexError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size})")
    new_shape = list(shape)
    new_shape[d] = length
    return tuple(new_shape), strides, storage_offset + start * strides[d]


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
    shape, strides = _layout(shape, strides)
    new_shape = _infer_size(new_shape, _numel(shape))
    return _compute_stride(shape, strides, new_shape)


def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    """True iff x.reshape(new_shape) must copy the data, i.e. iff x.view(new_shape) is
    impossible (view_strides(...) is None). Otherwise reshape returns a view sharing storage.
    Same ValueError rules as view_strides for new_shape.

    Example (notes 004 quiz): x (3, 4) contiguous, t = x.T = (4, 3) strides (1, 4):
    t.reshape(-1) copies (True); x.reshape(4, 3) does not (False).
    """
    return view_strides(shape, strides, new_shape) is None


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    """Bytes of a dense tensor: numel(shape) * dtype.itemsize (an int).

    dtype must be a torch.dtype (e.g. torch.float32: 4 bytes, torch.bfloat16: 2,
    torch.float8_e4m3fn: 1), anything else raises ValueError; a negative size too.
    Oracle: torch.empty(shape, dtype=dtype).nbytes.

    Example (notes 001): one GPT-3 FFN matrix, nbytes((12288, 49152), torch.float32) ==
    2_415_919_104 bytes (about 2.4 GB).
    """
    shape = _shape(shape)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, got {dtype!r}")
    # the element size asked of a real (empty) tensor: allowed, nbytes is not a layout question
    return _numel(shape) * torch.empty(0, dtype=dtype).element_size()
