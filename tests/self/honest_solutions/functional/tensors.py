"""tensors — storage, strides and views, computed on (shape, strides) alone.

Honest solution, functional style: small private helpers, comprehensions, functools.reduce.
"""

import numbers
import operator
from collections.abc import Sequence
from functools import reduce
from itertools import accumulate

import torch


# ----------------------------------------------------------------------------- helpers


def _is_int(v: object) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _ints(values: Sequence[int], what: str, allow_negative: bool = False) -> tuple[int, ...]:
    """A tuple of Python ints, or ValueError (non-int entries, negatives unless allowed)."""
    try:
        items = tuple(values)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of ints, got {values!r}") from None
    if not all(_is_int(v) for v in items):
        raise ValueError(f"{what} must hold ints only, got {items!r}")
    items = tuple(int(v) for v in items)
    if not allow_negative and any(v < 0 for v in items):
        raise ValueError(f"{what} must be non-negative, got {items!r}")
    return items


def _layout(shape: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sh, st = _ints(shape, "shape"), _ints(strides, "strides")
    if len(sh) != len(st):
        raise ValueError(f"shape {sh} and strides {st} have different lengths")
    return sh, st


def _offset(storage_offset: int) -> int:
    if not _is_int(storage_offset) or storage_offset < 0:
        raise ValueError(f"storage_offset must be a non-negative int, got {storage_offset!r}")
    return int(storage_offset)


def _numel(shape: Sequence[int]) -> int:
    return reduce(operator.mul, shape, 1)


def _wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's maybe_wrap_dim: a 0-d tensor accepts dims -1 and 0."""
    if not _is_int(dim):
        raise ValueError(f"dim must be an int, got {dim!r}")
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise ValueError(f"dim {dim} out of range for a tensor of {ndim} dims")
    return int(dim) % span


def _infer_shape(new_shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """PyTorch's infer_size: at most one -1, filled in from numel."""
    sizes = _ints(new_shape, "new_shape", allow_negative=True)
    holes = [i for i, s in enumerate(sizes) if s == -1]
    if len(holes) > 1:
        raise ValueError(f"only one dimension can be inferred, got {sizes}")
    if any(s < -1 for s in sizes):
        raise ValueError(f"invalid shape dimension in {sizes}")
    known = _numel(s for s in sizes if s != -1)
    if not holes:
        if known != numel:
            raise ValueError(f"shape {sizes} is invalid for input of size {numel}")
        return sizes
    if known == 0:
        raise ValueError(f"cannot infer the -1 of {sizes}: the other sizes multiply to 0 (any value would do)")
    if numel % known:
        raise ValueError(f"shape {sizes} is invalid for input of size {numel}")
    return tuple(numel // known if s == -1 else s for s in sizes)


# ----------------------------------------------------------------------------- the API


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    sizes = _ints(shape, "shape")
    # running products from the right, a size-0 dim counting as 1
    suffix = list(accumulate(reversed(sizes[1:]), lambda acc, s: acc * max(s, 1), initial=1))
    return tuple(reversed(suffix)) if sizes else ()


def element_offset(
    shape: Sequence[int], strides: Sequence[int], index: Sequence[int], storage_offset: int = 0
) -> int:
    sh, st = _layout(shape, strides)
    base = _offset(storage_offset)
    idx = _ints(index, "index", allow_negative=True)
    if len(idx) != len(sh):
        raise ValueError(f"index {idx} has {len(idx)} entries for a tensor of {len(sh)} dims")
    wrapped = tuple(i + s if i < 0 else i for i, s in zip(idx, sh))
    bad = [(d, i) for d, (i, s) in enumerate(zip(wrapped, sh)) if not 0 <= i < s]
    if bad:
        d, _ = bad[0]
        raise IndexError(f"index {idx[d]} is out of bounds for dim {d} of size {sh[d]}")
    return base + sum(i * s for i, s in zip(wrapped, st))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    sh, st = _layout(shape, strides)
    if _numel(sh) == 0:
        return True
    expected = 1
    for size, stride in zip(reversed(sh), reversed(st)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sh, st = _layout(shape, strides)
    a, b = _wrap_dim(dim0, len(sh)), _wrap_dim(dim1, len(sh))
    if not sh:
        return (), ()

    def swapped(values: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(values[b] if i == a else values[a] if i == b else v for i, v in enumerate(values))

    return swapped(sh), swapped(st)


def select(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, index: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    sh, st = _layout(shape, strides)
    base = _offset(storage_offset)
    if not sh:
        raise ValueError("select() cannot be applied to a 0-dim tensor")
    d = _wrap_dim(dim, len(sh))
    if not _is_int(index):
        raise ValueError(f"index must be an int, got {index!r}")
    if not -sh[d] <= index < sh[d]:
        raise IndexError(f"select(): index {index} out of range for dim {d} of size {sh[d]}")
    i = index + sh[d] if index < 0 else index
    drop = lambda values: values[:d] + values[d + 1:]  # noqa: E731
    return drop(sh), drop(st), base + i * st[d]


def narrow(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, start: int, length: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    sh, st = _layout(shape, strides)
    base = _offset(storage_offset)
    if not sh:
        raise ValueError("narrow() cannot be applied to a 0-dim tensor")
    if not _is_int(length) or length < 0:
        raise ValueError(f"narrow(): length must be a non-negative int, got {length!r}")
    d = _wrap_dim(dim, len(sh))
    if not _is_int(start):
        raise ValueError(f"start must be an int, got {start!r}")
    size = sh[d]
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start {start} out of range for dim {d} of size {size}")
    s = start + size if start < 0 else start
    if s + length > size:
        raise IndexError(f"narrow(): start ({s}) + length ({length}) exceeds dimension size ({size})")
    new_shape = tuple(length if i == d else v for i, v in enumerate(sh))
    return new_shape, st, base + s * st[d]


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    sh, st = _layout(shape, strides)
    numel = _numel(sh)
    target = _infer_shape(new_shape, numel)
    if not sh:
        return tuple(1 for _ in target)
    if numel == 0:
        return st if target == sh else contiguous_strides(target)

    out = [0] * len(target)
    view_d = len(target) - 1
    base = st[-1]
    chunk_numel, view_numel = 1, 1
    for d in range(len(sh) - 1, -1, -1):
        chunk_numel *= sh[d]
        closes = d == 0 or (sh[d - 1] != 1 and st[d - 1] != chunk_numel * base)
        if not closes:
            continue
        while view_d >= 0 and (view_numel < chunk_numel or target[view_d] == 1):
            out[view_d] = view_numel * base
            view_numel *= target[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            base, chunk_numel, view_numel = st[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    return view_strides(shape, strides, new_shape) is None


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, got {dtype!r}")
    return _numel(_ints(shape, "shape")) * dtype.itemsize

