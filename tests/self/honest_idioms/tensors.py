"""Idioms in tensors.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "a checking decorator with functools.wraps, a typing.NamedTuple result and functools.reduce",
        "students check what their functions return with a decorator of their own, name the pair "
        "(shape, strides) with a NamedTuple and multiply sizes with reduce",
        (("from collections.abc import Sequence\n", '''from collections.abc import Sequence
import functools
import operator
from typing import NamedTuple


class Layout(NamedTuple):
    shape: tuple[int, ...]
    strides: tuple[int, ...]


def _returns_layout(fn):
    """Check that fn returns a (shape, strides) pair of equal lengths, as a Layout."""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        shape, strides = fn(*args, **kwargs)
        assert len(shape) == len(strides), (shape, strides)
        return Layout(tuple(shape), tuple(strides))
    return checked
'''),
         ("def _numel(shape: tuple[int, ...]) -> int:\n    n = 1\n    for s in shape:\n        n *= s\n    return n\n",
          "def _numel(shape: tuple[int, ...]) -> int:\n    return functools.reduce(operator.mul, shape, 1)\n"),
         ("def transpose(\n", "@_returns_layout\ndef transpose(\n"))),
    Idiom(
        "module metadata: __all__, __author__ and __email__",
        "students sign their file and say what it exports, as their other Python projects do",
        (("from collections.abc import Sequence\n", '''from collections.abc import Sequence

__author__ = "Ada Student"
__email__ = "ada@stanford.edu"
__all__ = ["contiguous_strides", "element_offset", "is_contiguous", "transpose", "select",
           "narrow", "view_strides", "reshape_copies", "nbytes"]
'''),)),
    Idiom(
        'an if __name__ == "__main__": demo that prints the notes\' examples',
        "students check their answers by running the file as a script",
        (("    return _numel(shape) * dtype.itemsize\n", '''    return _numel(shape) * dtype.itemsize


if __name__ == "__main__":
    print("contiguous (3, 4):", contiguous_strides((3, 4)))
    print("x.T of (3, 4):", transpose((3, 4), (4, 1), 0, 1))
    print("offset of [1, 2]:", element_offset((3, 4), (4, 1), (1, 2)))
    print("view (2, 6):", view_strides((3, 4), (4, 1), (2, 6)))
'''),)),
]
