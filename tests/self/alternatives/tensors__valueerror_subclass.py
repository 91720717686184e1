"""REJECTED (kept for the report): identical to tensors__chunks_first.py except that bad input
raises `_Bad`, a subclass of ValueError. The grader reports it as SubmissionError because
seam/callee.py sends type(e).__name__ and seam/__init__.py rebuilds only exact built-in names.

tensors — alternative: functional style, chunks computed before matching.

contiguous_strides is a running product (itertools.accumulate) over the reversed shape,
is_contiguous compares against contiguous_strides instead of walking an expected stride,
element_offset is a single sum over wrapped indices, and view_strides first splits the old
layout into its memory-contiguous chunks (a list of (numel, base stride)) and only then
hands out the new dims to those chunks, instead of doing both in one interleaved loop.
"""

import math
from collections.abc import Sequence
from itertools import accumulate

import torch


class _Bad(ValueError):
    pass


def _int_tuple(what: str, seq) -> tuple[int, ...]:
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
        raise _Bad(f"{what}: expected a tuple/list of ints, got {seq!r}")
    if not all(type(v) is int or (isinstance(v, int) and not isinstance(v, bool)) for v in seq):
        raise _Bad(f"{what}: every entry must be an int, got {seq!r}")
    return tuple(int(v) for v in seq)


def _nonneg(what: str, seq) -> tuple[int, ...]:
    values = _int_tuple(what, seq)
    if min(values, default=0) < 0:
        raise _Bad(f"{what}: negative entry in {values}")
    return values


def _scalar(what: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad(f"{what} must be an int, got {v!r}")
    return int(v)


def _shape_strides(shape, strides):
    shape = _nonneg("shape", shape)
    strides = _nonneg("strides", strides)
    if len(shape) != len(strides):
        raise _Bad(f"{len(shape)} sizes but {len(strides)} strides")
    return shape, strides


def _storage_offset(v) -> int:
    v = _scalar("storage_offset", v)
    if v < 0:
        raise _Bad(f"storage_offset must be >= 0, got {v}")
    return v


def _dim(dim, ndim: int) -> int:
    dim = _scalar("dim", dim)
    width = ndim if ndim > 0 else 1  # a 0-d tensor takes dims 0 and -1
    if dim < -width or dim >= width:
        raise _Bad(f"dim {dim} is out of range for {ndim} dims")
    return dim % width


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides; a size-0 dim counts as 1 for the dims to its left."""
    shape = _nonneg("shape", shape)
    if not shape:
        return ()
    # strides from the right: 1, s[-1], s[-1]*s[-2], ... with sizes clamped to >= 1
    right_to_left = list(accumulate((max(s, 1) for s in reversed(shape[1:])), lambda a, b: a * b, initial=1))
    return tuple(reversed(right_to_left))


def element_offset(
    shape: Sequence[int], strides: Sequence[int], index: Sequence[int], storage_offset: int = 0
) -> int:
    """storage_offset + sum(index[d] * strides[d]), negative indices wrapped."""
    shape, strides = _shape_strides(shape, strides)
    index = _int_tuple("index", index)
    base = _storage_offset(storage_offset)
    if len(index) != len(shape):
        raise _Bad(f"need {len(shape)} indices, got {len(index)}")
    bad = [(d, i, n) for d, (i, n) in enumerate(zip(index, shape)) if not -n <= i < n]
    if bad:
        d, i, n = bad[0]
        raise IndexError(f"index {i} out of range for dim {d} (size {n})")
    return base + sum((i % n) * st for i, n, st in zip(index, shape, strides))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Contiguous iff empty, or every dim of size != 1 has its row-major stride."""
    shape, strides = _shape_strides(shape, strides)
    if 0 in shape:
        return True
    wanted = contiguous_strides(shape)
    return all(st == w for n, st, w in zip(shape, strides, wanted) if n != 1)


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of x.transpose(dim0, dim1)."""
    shape, strides = _shape_strides(shape, strides)
    a, b = _dim(dim0, len(shape)), _dim(dim1, len(shape))
    if not shape:
        return (), ()
    order = list(range(len(shape)))
    order[a], order[b] = order[b], order[a]
    return tuple(shape[p] for p in order), tuple(strides[p] for p in order)


def select(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, index: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of x.select(dim, index)."""
    shape, strides = _shape_strides(shape, strides)
    offset = _storage_offset(storage_offset)
    if len(shape) == 0:
        raise _Bad("cannot select on a 0-d tensor")
    d = _dim(dim, len(shape))
    i = _scalar("index", index)
    if not -shape[d] <= i < shape[d]:
        raise IndexError(f"select index {i} out of range for size {shape[d]}")
    keep = [k for k in range(len(shape)) if k != d]
    return (
        tuple(shape[k] for k in keep),
        tuple(strides[k] for k in keep),
        offset + (i % shape[d]) * strides[d],
    )


def narrow(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, start: int, length: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of x.narrow(dim, start, length)."""
    shape, strides = _shape_strides(shape, strides)
    offset = _storage_offset(storage_offset)
    if not shape:
        raise _Bad("cannot narrow a 0-d tensor")
    length = _scalar("length", length)
    if length < 0:
        raise _Bad(f"narrow length must be >= 0, got {length}")
    d = _dim(dim, len(shape))
    start = _scalar("start", start)
    n = shape[d]
    if start < -n or start > n:
        raise IndexError(f"narrow start {start} outside [{-n}, {n}]")
    start = start + n if start < 0 else start
    if start + length > n:
        raise IndexError(f"narrow: {start} + {length} > {n}")
    return shape[:d] + (length,) + shape[d + 1:], strides, offset + start * strides[d]


def _resolve_new_shape(new_shape, numel: int) -> tuple[int, ...]:
    sizes = list(_int_tuple("new_shape", new_shape))
    if sizes.count(-1) > 1:
        raise _Bad(f"at most one -1 allowed in {tuple(sizes)}")
    if any(s < -1 for s in sizes):
        raise _Bad(f"negative size in {tuple(sizes)}")
    known = math.prod(s for s in sizes if s != -1)
    if -1 not in sizes:
        if known != numel:
            raise _Bad(f"shape {tuple(sizes)} does not hold {numel} elements")
        return tuple(sizes)
    if known == 0:
        raise _Bad(f"the -1 in {tuple(sizes)} is ambiguous: the other sizes multiply to 0")
    if numel % known:
        raise _Bad(f"shape {tuple(sizes)} does not hold {numel} elements")
    sizes[sizes.index(-1)] = numel // known
    return tuple(sizes)


def _memory_chunks(shape, strides) -> list[tuple[int, int]]:
    """Split the old dims (right to left) into chunks that are contiguous with each other.
    Returns [(chunk numel, stride of the chunk's innermost dim)], innermost chunk first."""
    chunks = []
    numel, base = shape[-1], strides[-1]
    for d in range(len(shape) - 2, -1, -1):
        if shape[d] == 1 or strides[d] == numel * base:
            numel *= shape[d]
        else:
            chunks.append((numel, base))
            numel, base = shape[d], strides[d]
    chunks.append((numel, base))
    return chunks


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides of x.view(new_shape), or None where the strides make the view impossible."""
    shape, strides = _shape_strides(shape, strides)
    numel = math.prod(shape)
    target = _resolve_new_shape(new_shape, numel)
    if not shape:
        return tuple(1 for _ in target)
    if numel == 0:
        return strides if target == shape else contiguous_strides(target)

    result = [None] * len(target)
    pos = len(target) - 1  # next new dim to hand out, from the right
    for chunk_numel, base in _memory_chunks(shape, strides):
        taken = 1
        while pos >= 0 and (taken < chunk_numel or target[pos] == 1):
            result[pos] = taken * base
            taken *= target[pos]
            pos -= 1
        if taken != chunk_numel:
            return None
    if pos >= 0:
        return None
    return tuple(result)


def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    """True iff x.reshape(new_shape) has to copy (no view is possible)."""
    return view_strides(shape, strides, new_shape) is None


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    """numel(shape) * dtype.itemsize."""
    sizes = _nonneg("shape", shape)
    if not isinstance(dtype, torch.dtype):
        raise _Bad(f"not a torch.dtype: {dtype!r}")
    return math.prod(sizes) * dtype.itemsize
