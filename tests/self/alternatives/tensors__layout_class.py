"""tensors — alternative: a small Layout class, wrapping by Python's own indexing.

All validation happens once, in Layout.make(); every view operation is a method returning a
new Layout. Negative dims and indices are wrapped by indexing a range() (range(n)[i] wraps
exactly like PyTorch and raises IndexError when out of range; for dims that IndexError is
turned into a ValueError). view_strides is a two-pointer loop over old and new dims that
runs the computeStride chunk rule with explicit state variables, and prints a trace when
DEBUG is set.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import torch

DEBUG = False


def _check_int(name, v):
    if type(v) is bool or not isinstance(v, int):
        raise ValueError(f"{name}: expected int, got {type(v).__name__} {v!r}")
    return int(v)


def _check_ints(name, seq):
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
        raise ValueError(f"{name}: expected a sequence of ints, got {seq!r}")
    return tuple(_check_int(name, v) for v in seq)


def _product(values) -> int:
    p = 1
    for v in values:
        p *= v
    return p


@dataclass(frozen=True)
class Layout:
    shape: tuple
    strides: tuple
    offset: int = 0

    @staticmethod
    def make(shape, strides, offset=0) -> "Layout":
        shape = _check_ints("shape", shape)
        strides = _check_ints("strides", strides)
        offset = _check_int("storage_offset", offset)
        if len(shape) != len(strides):
            raise ValueError("shape and strides differ in length")
        for s in shape:
            if s < 0:
                raise ValueError(f"negative size in {shape}")
        for s in strides:
            if s < 0:
                raise ValueError(f"negative stride in {strides}")
        if offset < 0:
            raise ValueError("negative storage offset")
        return Layout(shape, strides, offset)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def wrap_dim(self, dim) -> int:
        dim = _check_int("dim", dim)
        try:
            return range(max(self.ndim, 1))[dim]
        except IndexError:
            raise ValueError(f"dim {dim} out of range for a {self.ndim}-d tensor") from None

    def select(self, dim, index) -> "Layout":
        if self.ndim == 0:
            raise ValueError("select() on a 0-d tensor")
        d = self.wrap_dim(dim)
        i = range(self.shape[d])[_check_int("index", index)]  # IndexError if out of range
        return Layout(
            tuple(s for k, s in enumerate(self.shape) if k != d),
            tuple(s for k, s in enumerate(self.strides) if k != d),
            self.offset + i * self.strides[d],
        )

    def narrow(self, dim, start, length) -> "Layout":
        if self.ndim == 0:
            raise ValueError("narrow() on a 0-d tensor")
        if _check_int("length", length) < 0:
            raise ValueError("narrow() length must be non-negative")
        d = self.wrap_dim(dim)
        size = self.shape[d]
        # start may equal size (an empty slice at the end), so index a range one longer
        start = _check_int("start", start)
        start = range(size + 1)[start] if start >= 0 else range(size)[start]
        if start + length > size:
            raise IndexError(f"narrow(): start {start} + length {length} > size {size}")
        shape = list(self.shape)
        shape[d] = length
        return Layout(tuple(shape), self.strides, self.offset + start * self.strides[d])

    def transposed(self, dim0, dim1) -> "Layout":
        a, b = self.wrap_dim(dim0), self.wrap_dim(dim1)
        if self.ndim == 0:
            return self
        shape, strides = list(self.shape), list(self.strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return Layout(tuple(shape), tuple(strides), self.offset)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides, size-0 dims counted as 1 for the dims to their left."""
    shape = Layout.make(shape, [0] * len(_check_ints("shape", shape))).shape
    out = []
    step = 1
    for size in shape[::-1]:
        out.insert(0, step)
        step *= size if size > 1 else 1
    return tuple(out)


def element_offset(
    shape: Sequence[int], strides: Sequence[int], index: Sequence[int], storage_offset: int = 0
) -> int:
    """storage_offset + sum(index[d] * strides[d]); negative indices wrap."""
    lay = Layout.make(shape, strides, storage_offset)
    index = _check_ints("index", index)
    if len(index) != lay.ndim:
        raise ValueError(f"{len(index)} indices for {lay.ndim} dims")
    pos = lay.offset
    for i, size, stride in zip(index, lay.shape, lay.strides):
        pos += range(size)[i] * stride  # range() wraps negatives and raises IndexError
    return pos


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's is_contiguous: empty is contiguous; size-1 dims are ignored."""
    lay = Layout.make(shape, strides)
    if _product(lay.shape) == 0:
        return True
    dims = [(n, s) for n, s in zip(lay.shape, lay.strides) if n != 1]
    expected = 1
    while dims:
        n, s = dims.pop()
        if s != expected:
            return False
        expected *= n
    return True


def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of x.transpose(dim0, dim1)."""
    t = Layout.make(shape, strides).transposed(dim0, dim1)
    return t.shape, t.strides


def select(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, index: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of x.select(dim, index)."""
    v = Layout.make(shape, strides, storage_offset).select(dim, index)
    return v.shape, v.strides, v.offset


def narrow(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, start: int, length: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(shape, strides, storage_offset) of x.narrow(dim, start, length)."""
    v = Layout.make(shape, strides, storage_offset).narrow(dim, start, length)
    return v.shape, v.strides, v.offset


def _infer(new_shape, numel: int) -> tuple[int, ...]:
    sizes = list(_check_ints("new_shape", new_shape))
    hole = None
    rest = 1
    for k, s in enumerate(sizes):
        if s == -1 and hole is None:
            hole = k
        elif s == -1:
            raise ValueError("only one dimension can be inferred")
        elif s < 0:
            raise ValueError(f"invalid size {s}")
        else:
            rest *= s
    if hole is None:
        if rest != numel:
            raise ValueError(f"shape {tuple(sizes)} is invalid for input of size {numel}")
        return tuple(sizes)
    if rest == 0:
        raise ValueError(f"cannot infer the -1 in {tuple(sizes)}: the other sizes multiply to 0")
    if numel % rest != 0:
        raise ValueError(f"shape {tuple(sizes)} is invalid for input of size {numel}")
    sizes[hole] = numel // rest
    return tuple(sizes)


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides of x.view(new_shape) by PyTorch's computeStride rule, or None."""
    lay = Layout.make(shape, strides)
    numel = _product(lay.shape)
    new = _infer(new_shape, numel)
    if lay.ndim == 0:
        return (1,) * len(new)
    if numel == 0:
        return lay.strides if new == lay.shape else contiguous_strides(new)

    out = [0] * len(new)
    old_i = lay.ndim - 1           # current old dim (walking left)
    new_i = len(new) - 1           # next new dim to assign (walking left)
    base = lay.strides[old_i]      # stride of the current chunk's innermost dim
    chunk = 1                      # numel of the current chunk so far
    while old_i >= 0:
        chunk *= lay.shape[old_i]
        joins = old_i > 0 and (
            lay.shape[old_i - 1] == 1 or lay.strides[old_i - 1] == chunk * base
        )
        if not joins:
            got = 1
            while new_i >= 0 and (got < chunk or new[new_i] == 1):
                out[new_i] = got * base
                got *= new[new_i]
                new_i -= 1
            if DEBUG:
                print(f"chunk ending at old dim {old_i}: numel {chunk}, base {base}, new dims give {got}")
            if got != chunk:
                return None
            if old_i > 0:
                base, chunk = lay.strides[old_i - 1], 1
        old_i -= 1
    return tuple(out) if new_i < 0 else None


def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    """Whether reshape must copy: exactly when no view exists."""
    strides_of_view = view_strides(shape, strides, new_shape)
    return strides_of_view is None


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    """Bytes of a dense tensor of this shape and dtype."""
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")
    sizes = _check_ints("shape", shape)
    if any(s < 0 for s in sizes):
        raise ValueError(f"negative size in {sizes}")
    return _product(sizes) * dtype.itemsize
