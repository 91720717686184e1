"""tensors — storage, strides and views, computed on (shape, strides) alone.

Honest solution, object style: a frozen `Layout` dataclass does the walking; the public
functions keep the stub's signatures, check their arguments with a small decorator, and
delegate to it.
"""

from __future__ import annotations

import inspect
import logging
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from typing import NamedTuple, TypeVar

import torch

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable)

# which parameters hold a sequence of ints, and which a single int
_SEQUENCES = {"shape", "strides", "index", "new_shape"}
_SCALARS = {"dim", "dim0", "dim1", "start", "length", "storage_offset"}


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def int_arguments(fn: F) -> F:
    """Check, by parameter name, that ints and sequences of ints are what they should be."""
    signature = inspect.signature(fn)

    @wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            many = name in _SEQUENCES and (name != "index" or fn.__name__ == "element_offset")
            if many:
                if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) \
                        or not all(_is_int(v) for v in value):
                    raise ValueError(f"{fn.__name__}: {name} must be a sequence of ints, got {value!r}")
            elif name in _SCALARS or name == "index":
                if not _is_int(value):
                    raise ValueError(f"{fn.__name__}: {name} must be an int, got {value!r}")
        logger.debug("%s%s", fn.__name__, tuple(bound.arguments.values()))
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class ViewResult(NamedTuple):
    """(shape, strides, storage_offset) of a view: a tuple, as the API promises."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class Layout:
    """How a tensor walks its storage: sizes, strides (in elements) and a storage offset."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    def __post_init__(self) -> None:
        if len(self.shape) != len(self.strides):
            raise ValueError(f"shape {self.shape} and strides {self.strides} differ in length")
        if any(s < 0 for s in self.shape):
            raise ValueError(f"negative size in {self.shape}")
        if any(s < 0 for s in self.strides):
            raise ValueError(f"negative stride in {self.strides}")
        if self.offset < 0:
            raise ValueError(f"negative storage offset {self.offset}")

    @classmethod
    def of(cls, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Layout:
        return cls(tuple(int(s) for s in shape), tuple(int(s) for s in strides), int(offset))

    @classmethod
    def contiguous(cls, shape: Sequence[int]) -> Layout:
        sizes = tuple(int(s) for s in shape)
        if any(s < 0 for s in sizes):
            raise ValueError(f"negative size in {sizes}")
        strides = [1] * len(sizes)
        for d in range(len(sizes) - 2, -1, -1):
            strides[d] = strides[d + 1] * max(sizes[d + 1], 1)
        return cls(sizes, tuple(strides))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"Layout(shape={self.shape}, strides={self.strides}, offset={self.offset})"

    def wrap(self, dim: int) -> int:
        """PyTorch's dim wrapping; a 0-d tensor accepts -1 and 0."""
        span = max(self.ndim, 1)
        if not -span <= dim < span:
            raise ValueError(f"dim {dim} out of range for {self!r}")
        return dim + span if dim < 0 else dim

    @property
    def is_contiguous(self) -> bool:
        if self.numel == 0:
            return True
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1:
                if stride != expected:
                    return False
                expected *= size
        return True

    def at(self, index: Sequence[int]) -> int:
        if len(index) != self.ndim:
            raise ValueError(f"index {tuple(index)} does not match {self!r}")
        position = self.offset
        for d, (i, size, stride) in enumerate(zip(index, self.shape, self.strides)):
            j = i + size if i < 0 else i
            if not 0 <= j < size:
                raise IndexError(f"index {i} is out of bounds for dim {d} with size {size}")
            position += j * stride
        return position

    def transposed(self, dim0: int, dim1: int) -> Layout:
        a, b = self.wrap(dim0), self.wrap(dim1)
        if self.ndim == 0:
            return self
        shape, strides = list(self.shape), list(self.strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return Layout(tuple(shape), tuple(strides), self.offset)

    def selected(self, dim: int, index: int) -> Layout:
        if self.ndim == 0:
            raise ValueError("select() cannot be applied to a 0-dim tensor")
        d = self.wrap(dim)
        size = self.shape[d]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size {size} at dim {d}")
        i = index + size if index < 0 else index
        return Layout(self.shape[:d] + self.shape[d + 1:], self.strides[:d] + self.strides[d + 1:],
                      self.offset + i * self.strides[d])

    def narrowed(self, dim: int, start: int, length: int) -> Layout:
        if self.ndim == 0:
            raise ValueError("narrow() cannot be applied to a 0-dim tensor")
        if length < 0:
            raise ValueError(f"narrow(): length must be non-negative, got {length}")
        d = self.wrap(dim)
        size = self.shape[d]
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        s = start + size if start < 0 else start
        if s + length > size:
            raise IndexError(f"start ({s}) + length ({length}) exceeds dimension size ({size})")
        shape = self.shape[:d] + (length,) + self.shape[d + 1:]
        return Layout(shape, self.strides, self.offset + s * self.strides[d])

    def infer(self, new_shape: Sequence[int]) -> tuple[int, ...]:
        """PyTorch's infer_size for a view of this layout."""
        sizes = tuple(int(s) for s in new_shape)
        if sum(1 for s in sizes if s == -1) > 1:
            raise ValueError("only one dimension can be inferred")
        if any(s < -1 for s in sizes):
            raise ValueError(f"invalid shape dimension in {sizes}")
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        if -1 in sizes:
            if known == 0:
                raise ValueError(f"cannot reshape a tensor of {self.numel} elements into {sizes}: "
                                 "the unspecified dimension size -1 can be any value and is ambiguous")
            if self.numel % known:
                raise ValueError(f"shape {sizes} is invalid for input of size {self.numel}")
            return tuple(self.numel // known if s == -1 else s for s in sizes)
        if known != self.numel:
            raise ValueError(f"shape {sizes} is invalid for input of size {self.numel}")
        return sizes

    def view_strides(self, new_shape: Sequence[int]) -> tuple[int, ...] | None:
        """PyTorch's computeStride: chunks of old dims that are contiguous among themselves."""
        target = self.infer(new_shape)
        if self.ndim == 0:
            return (1,) * len(target)
        if self.numel == 0:
            return self.strides if target == self.shape else Layout.contiguous(target).strides
        out = [0] * len(target)
        view_d = len(target) - 1
        chunk_base = self.strides[-1]
        chunk_numel = view_numel = 1
        for d in reversed(range(self.ndim)):
            chunk_numel *= self.shape[d]
            if d > 0 and (self.shape[d - 1] == 1 or self.strides[d - 1] == chunk_numel * chunk_base):
                continue  # dim d-1 joins this chunk
            while view_d >= 0 and (view_numel < chunk_numel or target[view_d] == 1):
                out[view_d] = view_numel * chunk_base
                view_numel *= target[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                logger.debug("%r cannot be viewed as %s", self, target)
                return None
            if d > 0:
                chunk_base, chunk_numel, view_numel = self.strides[d - 1], 1, 1
        return tuple(out) if view_d == -1 else None


# ----------------------------------------------------------------------------- the API


@int_arguments
def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    return Layout.contiguous(shape).strides


@int_arguments
def element_offset(
    shape: Sequence[int], strides: Sequence[int], index: Sequence[int], storage_offset: int = 0
) -> int:
    return Layout.of(shape, strides, storage_offset).at(index)


@int_arguments
def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    return Layout.of(shape, strides).is_contiguous


@int_arguments
def transpose(
    shape: Sequence[int], strides: Sequence[int], dim0: int, dim1: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    t = Layout.of(shape, strides).transposed(dim0, dim1)
    return t.shape, t.strides


@int_arguments
def select(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, index: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    s = Layout.of(shape, strides, storage_offset).selected(dim, index)
    return ViewResult(s.shape, s.strides, s.offset)


@int_arguments
def narrow(
    shape: Sequence[int], strides: Sequence[int], storage_offset: int, dim: int, start: int, length: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    n = Layout.of(shape, strides, storage_offset).narrowed(dim, start, length)
    return ViewResult(n.shape, n.strides, n.offset)


@int_arguments
def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    return Layout.of(shape, strides).view_strides(new_shape)


@int_arguments
def reshape_copies(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> bool:
    return Layout.of(shape, strides).view_strides(new_shape) is None


@int_arguments
def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, got {dtype!r}")
    return Layout.contiguous(shape).numel * dtype.itemsize
