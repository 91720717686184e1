"""tensors (public). Expected values: the notes, and snapshots of the reference."""

import pytest
import torch

from tests.checks import case, check_cases, expect_equal, expect_raises
from tests.common.tensors import M, TM, TMS, XM, XMS, mistakes
from tests.snapshot import check_snapshot

# (3, 4) contiguous x and its transpose t = x.T: the notes' running example (notes 001, 004).
X, XS = (3, 4), (4, 1)
T, TS = (4, 3), (1, 4)
# The same x with 2**64 columns, and its transpose: sizes and strides are Python ints of any size
# (the handout), past the 64 bits of any tensor's, so only the arithmetic answers them.
W = 2**64
XW, XWS = (3, W), (W, 1)
TW, TWS = (W, 3), (1, W)
# XM, XMS and TM, TMS (tests/common/tensors.py): x again with two dims of M = 2**40 between its
# rows and columns, and it with its first and last dims swapped: each size fits in 64 bits, no two
# of the middle ones together.

SNAPSHOT_INPUTS = {
    "tensors.contiguous_strides": [((3, 4),), ((2, 3, 4),), ((5,),), ((),), ((2, 0, 3),), ((1, 1, 7),), (XW,),
                                   ((2, W, 0, 3),), (XM,), (TM,), ((3, M, M, M, 4),)],
    "tensors.element_offset": [(X, XS, (1, 2)), (T, TS, (2, 1)), (X, XS, (-1, -1)), (X, XS, (3, 0)),
                               ((2, 3), (1, 2), (1, 1), 5), (X, XS, (0,)), (XW, XWS, (2, -1)),
                               (TW, TWS, (W - 1, 1), W), (XM, XMS, (2, -1, 7, 3), W + 1), (TM, TMS, (0, M - 1, 1, 2))],
    "tensors.is_contiguous": [(X, XS), (T, TS), ((3,), (4,)), ((1, 4), (99, 1)), ((0, 3), (7, 7)),
                              ((2, 1, 3), (3, 5, 1)), (XW, XWS), (TW, TWS), (XM, XMS), (TM, TMS),
                              ((3, M, M - 1, 4), XMS)],
    "tensors.transpose": [(X, XS, 0, 1), ((2, 3, 4), (12, 4, 1), 0, -1), (X, XS, 1, 1), (X, XS, 0, 2),
                          (XW, XWS, 0, 1), (XM, XMS, 1, -2)],
    "tensors.select": [(X, XS, 0, 0, 1), (X, XS, 0, 1, 1), (T, TS, 0, 0, 0), (X, XS, 0, 0, -1),
                       (X, XS, 0, 0, 3), (TW, TWS, 0, 0, -1), (XW, XWS, W, 1, W - 1), (XM, XMS, 0, 1, M - 1),
                       (TM, TMS, 7, -1, 2)],
    "tensors.narrow": [(X, XS, 0, 1, 1, 2), (X, XS, 0, 0, 1, 2), (X, XS, 2, 0, -2, 2), (X, XS, 0, 0, 2, 2),
                       (XW, XWS, 0, 1, 1, W - 2), (TW, TWS, 5, 0, -3, 2), (XM, XMS, 0, 2, 1, M - 2),
                       (TM, TMS, W, 0, -3, 2)],
    "tensors.view_strides": [(X, XS, (4, 3)), (X, XS, (-1,)), (T, TS, (-1,)), (T, TS, (3, 4)),
                             (T, TS, (2, 2, 3)), ((3,), (4,), (3, 1)), (X, XS, (5, -1)), (X, XS, (-1, -1)),
                             (XW, XWS, (-1,)), (TW, TWS, (-1,)), (TW, TWS, (2, W // 2, 3)), (XM, XMS, (3, M * M, 4)),
                             (XM, XMS, (-1,)), (TM, TMS, (-1,)), (TM, TMS, (2, 2, M, M, 3))],
    "tensors.reshape_copies": [(T, TS, (-1,)), (X, XS, (4, 3)), (T, TS, (2, 2, 3)), (X, XS, (7,)),
                               (TW, TWS, (-1,)), (XW, XWS, (W, 3)), (TM, TMS, (-1,)), (XM, XMS, (3, -1))],
    "tensors.nbytes": [((3, 4), torch.float32), ((12288, 49152), torch.float32), ((8,), torch.bfloat16),
                       ((2, 0), torch.float64)],
}


@pytest.mark.points(1)
def test_notes_element_offset(impl):
    """element [1, 2] of a contiguous (3, 4) tensor is at storage offset 6 (notes 001)"""
    check_cases(impl, "tensors.contiguous_strides", [case((3, 4), want=(4, 1), what="contiguous_strides((3, 4))")],
                mistakes=mistakes("contiguous_strides"))
    expect_equal(impl.tensors.element_offset(X, XS, (1, 2)), 6, "element_offset((3, 4), (4, 1), (1, 2))")
    # the same rule with 2**64 columns: strides (2**64, 1), element [1, 2] at 1·2**64 + 2·1
    check_cases(impl, "tensors.contiguous_strides", [case(XW, want=XWS, what="contiguous_strides((3, 2**64))")],
                mistakes=mistakes("contiguous_strides"))
    expect_equal(impl.tensors.element_offset(XW, XWS, (1, 2)), W + 2,
                 "element_offset((3, 2**64), (2**64, 1), (1, 2))")
    # and with two dims of 2**40 between the rows and columns: strides (4·2**80, 4·2**40, 4, 1)
    check_cases(impl, "tensors.contiguous_strides",
                [case(XM, want=XMS, what="contiguous_strides((3, 2**40, 2**40, 4))")],
                mistakes=mistakes("contiguous_strides"))
    expect_equal(impl.tensors.element_offset(XM, XMS, (1, 2, 3, 2)), 4 * M * M + 8 * M + 14,
                 "element_offset((3, 2**40, 2**40, 4), (2**82, 2**42, 4, 1), (1, 2, 3, 2))")


@pytest.mark.points(2)
def test_notes_view_reshape_quiz(impl):
    """the notes' quiz: t = x.T; only t.reshape(-1) allocates new memory (notes 004)"""
    # t[0] and x[:, 1] are views: select never copies.
    expect_equal(impl.tensors.select(T, TS, 0, 0, 0), ((3,), (4,), 0), "t[0]: select((4, 3), (1, 4), 0, 0, 0)")
    expect_equal(impl.tensors.select(X, XS, 0, 1, 1), ((3,), (4,), 1), "x[:, 1]: select((3, 4), (4, 1), 0, 1, 1)")
    expect_equal(impl.tensors.is_contiguous(T, TS), False, "t.is_contiguous()")
    expect_equal(impl.tensors.view_strides(T, TS, (-1,)), None, "t.view(-1) is impossible")
    expect_equal(impl.tensors.reshape_copies(T, TS, (-1,)), True, "t.reshape(-1) copies")
    expect_equal(impl.tensors.reshape_copies(X, XS, (4, 3)), False, "x.view(4, 3) shares storage")
    # the quiz again with 2**64 columns in place of 4: the answers come from the same rules
    expect_equal(impl.tensors.select(TW, TWS, 0, 0, 0), ((3,), (W,), 0),
                 "t[0]: select((2**64, 3), (1, 2**64), 0, 0, 0)")
    expect_equal(impl.tensors.select(XW, XWS, 0, 1, 1), ((3,), (W,), 1),
                 "x[:, 1]: select((3, 2**64), (2**64, 1), 0, 1, 1)")
    expect_equal(impl.tensors.is_contiguous(TW, TWS), False, "t.is_contiguous() for t of shape (2**64, 3)")
    expect_equal(impl.tensors.view_strides(TW, TWS, (-1,)), None, "t.view(-1) is impossible for t of shape (2**64, 3)")
    expect_equal(impl.tensors.reshape_copies(TW, TWS, (-1,)), True, "t.reshape(-1) copies for t of shape (2**64, 3)")
    expect_equal(impl.tensors.reshape_copies(XW, XWS, (W, 3)), False, "x.view(2**64, 3) shares storage")
    # and with two dims of 2**40 between the rows and columns, t = x.transpose(0, -1)
    expect_equal(impl.tensors.select(TM, TMS, 0, 0, 0), ((M, M, 3), (4 * M, 4, 4 * M * M), 0),
                 "t[0]: select((4, 2**40, 2**40, 3), (1, 2**42, 4, 2**82), 0, 0, 0)")
    expect_equal(impl.tensors.select(XM, XMS, 0, -1, 1), ((3, M, M), (4 * M * M, 4 * M, 4), 1),
                 "x[..., 1]: select((3, 2**40, 2**40, 4), (2**82, 2**42, 4, 1), 0, -1, 1)")
    expect_equal(impl.tensors.is_contiguous(XM, XMS), True, "x.is_contiguous() for x of shape (3, 2**40, 2**40, 4)")
    expect_equal(impl.tensors.is_contiguous(TM, TMS), False, "t.is_contiguous() for t of shape (4, 2**40, 2**40, 3)")
    expect_equal(impl.tensors.view_strides(TM, TMS, (-1,)), None,
                 "t.view(-1) is impossible for t of shape (4, 2**40, 2**40, 3)")
    expect_equal(impl.tensors.reshape_copies(TM, TMS, (-1,)), True,
                 "t.reshape(-1) copies for t of shape (4, 2**40, 2**40, 3)")
    expect_equal(impl.tensors.reshape_copies(XM, XMS, (3, M * M, 4)), False, "x.view(3, 2**80, 4) shares storage")


@pytest.mark.points(1)
def test_contiguous_strides_and_offsets(impl):
    """contiguous_strides and element_offset match the snapshots"""
    check_snapshot(impl, "tensors.contiguous_strides")
    check_snapshot(impl, "tensors.element_offset")


@pytest.mark.points(1)
def test_is_contiguous(impl):
    """is_contiguous matches the snapshots (size-1 dims don't matter, empty is contiguous)"""
    check_snapshot(impl, "tensors.is_contiguous")


@pytest.mark.points(1)
def test_transpose_select_narrow(impl):
    """transpose, select and narrow match the snapshots"""
    for name in ("transpose", "select", "narrow"):
        check_snapshot(impl, f"tensors.{name}")


@pytest.mark.points(2)
def test_view_and_reshape(impl):
    """view_strides and reshape_copies match the snapshots"""
    check_snapshot(impl, "tensors.view_strides")
    check_snapshot(impl, "tensors.reshape_copies")


@pytest.mark.points(1)
def test_nbytes(impl):
    """nbytes matches the snapshots; a non-dtype is a ValueError"""
    check_snapshot(impl, "tensors.nbytes")
    expect_raises(ValueError, lambda: impl.tensors.nbytes((2, 2), "float32"), "nbytes((2, 2), 'float32')")
