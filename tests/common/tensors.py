"""tensors: the named mistakes (tests.checks.Mistake) its public and hidden tests recognise, and
the layout past 64 bits both hold.

Each answer is what a submission with exactly that misconception gives, computed here with
PyTorch itself (the handout's rules are public, so the public tests may use these too)."""

import torch

from tests.checks import Mistake

# The notes' (3, 4) tensor x with two dims of 2**40 between its rows and columns, and t, x with its
# first and last dims swapped. Every size fits in 64 bits, but the two middle dims' elements do not,
# nor x's outer stride: PyTorch builds neither, and no part of either that a wrapper could split
# off by hand (a leading or trailing dim, the dims past 64 bits) leaves one it builds.
M = 2**40
XM, XMS = (3, M, M, 4), (4 * M * M, 4 * M, 4, 1)
TM, TMS = (4, M, M, 3), (1, 4 * M, 4, 4 * M * M)


def _strides_in_bytes(itemsize: int):
    """contiguous_strides counted in bytes of a dtype of ``itemsize`` bytes: every stride × itemsize."""
    return lambda shape: tuple(itemsize * s for s in torch.empty(shape).stride())


def _view_if_contiguous(shape, strides, new_shape):
    """view_strides judged by contiguity alone: a contiguous tensor gets the new shape's row-major
    strides, any other is refused (None), however its strides are laid out."""
    if not torch.empty_strided(shape, strides).is_contiguous():
        return None
    return tuple(torch.empty(torch.empty(shape).view(new_shape).shape).stride())  # -1 inferred by PyTorch


ELEMENTS_NOT_BYTES = "Strides are in elements, not bytes."
WHY_BYTES = ("A PyTorch stride counts elements to skip (Tensor.stride()), whatever the dtype; NumPy's "
             ".strides and C pointer arithmetic count bytes, which is element size × this stride.")
VIEWABLE = "a non-contiguous tensor can often still be viewed"
WHY_VIEW = ("A view keeps the tensor's own strides where it can: it needs only that each group of merged "
            "dims is laid out evenly in memory (PyTorch's computeStride), not that the whole tensor is "
            "contiguous; a transposed dim can still be split.")

MISTAKES = {
    "contiguous_strides": [
        # float32 is torch's default dtype (torch.empty(shape)); float64 is NumPy's (np.empty(shape).strides)
        Mistake("strides in bytes (stride × 4, float32's element size)", _strides_in_bytes(4), WHY_BYTES,
                "tensors", ELEMENTS_NOT_BYTES),
        Mistake("strides in bytes (stride × 8, float64's element size, as NumPy's .strides)",
                _strides_in_bytes(8), WHY_BYTES, "tensors", ELEMENTS_NOT_BYTES),
    ],
    "view_strides": [
        Mistake("view judged by contiguity alone (contiguous: row-major strides, else None)", _view_if_contiguous,
                WHY_VIEW, "tensors", VIEWABLE),
    ],
    "reshape_copies": [
        Mistake("view judged by contiguity alone (reshape copies exactly when the tensor is not contiguous)",
                lambda shape, strides, new_shape: not torch.empty_strided(shape, strides).is_contiguous(),
                WHY_VIEW, "tensors", VIEWABLE),
    ],
}


def mistakes(function: str) -> list[Mistake]:
    """The named mistakes that show in ``function``'s answers (``tensors.<function>``)."""
    return MISTAKES.get(function.removeprefix("tensors."), [])
