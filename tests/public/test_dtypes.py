"""dtypes (public). Expected values: the notes (000, 001, 004), and snapshots of the reference.

Formats cross the seam by value, as ``Struct("FloatFormat", {...})`` with the fields of the
constants in dtypes.py; tensors cross bit for bit.
"""

import math

import pytest
import torch

from seam import Struct
from tests.checks import EXACT, call_text, expect_equal, fail
from tests.common.dtypes import (BF16, FORMATS, FP4_E2M1, FP6_E2M3, FP6_E3M2, FP8_E4M3, FP8_E5M2, FP16, FP32,
                                 NVFP4_GRID, f32)
from tests.snapshot import check_snapshot


def showcase(f: Struct, nan: bool) -> torch.Tensor:
    """Zeros, ones, ties, values near the format's max / min normal / subnormals, inf (and NaN)."""
    m = f.mantissa_bits
    bias = 2 ** (f.exponent_bits - 1) - 1
    tiny, sub = 2.0 ** (1 - bias), 2.0 ** (1 - bias - m)
    vals = [0.0, -0.0, 1.0, -1.0, 1.001, 1 + 2.0 ** -(m + 1), 1 + 3 * 2.0 ** -(m + 1), -(1 + 2.0 ** -(m + 1)),
            1.5, 2.6, 2.5, 3.14159, 0.1, 1e-8, 70000.0, 500.0, 7.0, -1000.0,
            tiny, tiny * 0.75, sub, sub * 0.5, sub * 1.5, sub * 2.5, -sub * 0.5, sub * 0.49,
            math.inf, -math.inf]
    x = f32(vals)
    if nan:
        x = torch.cat([x, torch.tensor([0x7FC00000, 0x7F800001, -0x00400000, 0x7FA12345],
                                       dtype=torch.int32).view(torch.float32)])
    return x


_g = torch.Generator().manual_seed(20)
_RANDN = torch.randn(64, generator=_g) * 3
_BLOCKS = torch.cat([torch.arange(16.0) - 8, torch.zeros(16), torch.randn(16, generator=_g) * 1e-4,
                     torch.randn(16, generator=_g) * 5000])

SNAPSHOT_INPUTS = {
    **{f"dtypes.{name}": [(f,) for f in FORMATS + (FP6_E2M3, FP6_E3M2)]
       for name in ("bits", "max_value", "eps", "smallest_normal", "smallest_subnormal")},
    "dtypes.round_to": [
        (showcase(FP16, nan=False), FP16), (showcase(BF16, nan=False), BF16),
        (showcase(FP8_E4M3, nan=True), FP8_E4M3), (showcase(FP8_E5M2, nan=True), FP8_E5M2),
        (showcase(FP4_E2M1, nan=False), FP4_E2M1), (showcase(FP32, nan=True), FP32),
        (showcase(FP16, nan=False).double() * (1 + 2.0 ** -30), FP16),
        (_RANDN.reshape(4, 4, 4), BF16), (_RANDN[:6].reshape(2, 3), FP8_E4M3), (torch.tensor(2.5), FP4_E2M1),
        (torch.zeros(0), FP16), (_RANDN, FP6_E2M3),
    ],
    "dtypes.nvfp4_quantize": [(f32([0, 1, 2, 3] * 4),), (_BLOCKS,), (_RANDN,), (_RANDN, 8), (_RANDN, 32),
                              (_RANDN.double(), 16), (_RANDN[:15],), (torch.zeros(0),)],
    "dtypes.nvfp4_dequantize": [(f32([0, 2, 4, 6] * 4), f32([0.5])), (f32([1, -6, 0.5, 3] * 8), f32([0.25, 448.0])),
                                (f32([1, -6, 0.5, 3] * 4), f32([3.0, 0.125]), 8), (f32([1.0] * 15), f32([1.0]))],
    "dtypes.nvfp4_bytes": [(16,), (4096 * 4096,), (0,), (1,), (17,), (1000, 32), (100, 7), (-1,), (16, 0)],
}
# The tolerance each target's snapshot is compared at (CONDITIONED where not named).
SNAPSHOT_TOLERANCE = {
    "dtypes.bits": EXACT,
    "dtypes.max_value": EXACT,
    "dtypes.eps": EXACT,
    "dtypes.smallest_normal": EXACT,
    "dtypes.smallest_subnormal": EXACT,
    "dtypes.round_to": EXACT,
    "dtypes.nvfp4_quantize": EXACT,
    "dtypes.nvfp4_dequantize": EXACT,
    "dtypes.nvfp4_bytes": EXACT,
}


@pytest.mark.points(1)
def test_notes_finfo_table(impl):
    """bits, max and eps of fp32/fp16/bf16 as torch.finfo prints them in notes 004; fp16 max 65504"""
    # notes 004: "torch.float32 bytes=4 max=3.40e+38 eps=1.2e-07" and so on (bytes = bits // 8)
    table = {FP32: (4, "3.40e+38", "1.2e-07"), FP16: (2, "6.55e+04", "9.8e-04"), BF16: (2, "3.39e+38", "7.8e-03")}
    for f, (nbytes, max_text, eps_text) in table.items():
        b, mx, ep = impl.dtypes.bits(f), impl.dtypes.max_value(f), impl.dtypes.eps(f)
        expect_equal(b, nbytes * 8, f"bits({f.name})")
        expect_equal(type(mx), float, f"type of max_value({f.name})")
        expect_equal(type(ep), float, f"type of eps({f.name})")
        expect_equal(f"{mx:.2e}", max_text, f"f'{{max_value({f.name}):.2e}}' (notes 004)")
        expect_equal(f"{ep:.1e}", eps_text, f"f'{{eps({f.name}):.1e}}' (notes 004)")
    # notes 004: fp16 "最大只能表示 65504"; notes 001: E4M3 reaches about ±448; the NVFP4 grid ends at 6
    expect_equal(impl.dtypes.max_value(FP16), 65504.0, "max_value(FP16) (notes 004)")
    expect_equal(impl.dtypes.max_value(FP8_E4M3), 448.0, "max_value(FP8_E4M3) (notes 001)")
    expect_equal(impl.dtypes.max_value(FP4_E2M1), 6.0, "max_value(FP4_E2M1) (notes 001)")
    expect_equal(impl.dtypes.bits(FP4_E2M1), 4, "bits(FP4_E2M1) (notes 001: 4 bits per value)")
    # notes 001: 1 and 1.5 are neighbours on the NVFP4 grid, so E2M1's eps is 0.5 (no torch.finfo for it)
    expect_equal(impl.dtypes.eps(FP4_E2M1), 0.5, "eps(FP4_E2M1) (notes 001: the grid's 1 and 1.5)")


def _round_one(impl, value: float, f: Struct) -> float:
    x = f32([value])
    got = impl.dtypes.round_to(x, f)
    what = call_text("dtypes.round_to", (x, f))
    if type(got) is not torch.Tensor or got.dtype != torch.float32 or tuple(got.shape) != (1,):
        fail(what, got, "a float32 tensor of shape (1,)")
    return got


@pytest.mark.points(2)
def test_notes_round_to(impl):
    """fp16 turns 1e-8 into 0 and 70000 into inf; bf16 keeps 1e-8, gives 70144 and 1 + 0.001 == 1; E2M1 saturates at 6"""
    cases = [  # (value, format, expected float32, where in the notes)
        (1e-8, FP16, 0.0, "notes 000/001: 1e-8 underflows to 0 in fp16"),
        (70000.0, FP16, math.inf, "notes 004: 70000 -> inf in fp16"),
        (70000.0, BF16, 70144.0, "notes 004: 70000 -> 70144 in bf16"),
        (1e-8, BF16, 1.0011717677116394e-08, "notes 001: bf16 keeps 1e-8 (nearest bf16 value)"),
        (1.001, BF16, 1.0, "notes 004: 1 + 0.001 is still 1 in bf16"),
        (-1e-8, FP16, -0.0, "underflow keeps the sign: -0.0"),
        (-70000.0, FP16, -math.inf, "overflow keeps the sign: -inf"),
        # the same values in E2M1, which PyTorch has no dtype for: the grid of notes 001 ends at ±6
        (70000.0, FP4_E2M1, 6.0, "notes 001: the NVFP4 grid ends at 6; E2M1 saturates"),
        (-70000.0, FP4_E2M1, -6.0, "saturation keeps the sign: -6"),
        (1e-8, FP4_E2M1, 0.0, "notes 001: 0 is the grid value nearest to 1e-8"),
        (1.001, FP4_E2M1, 1.0, "notes 001: 1 is the grid value nearest to 1.001"),
    ]
    for value, f, want, where in cases:
        got = _round_one(impl, value, f)
        expect_equal(got, f32([want]), call_text("dtypes.round_to", (f32([value]), f)), note=where)


@pytest.mark.points(1)
def test_notes_nvfp4(impl):
    """E2M1 takes exactly the 15 NVFP4 values of notes 001; nvfp4_bytes(16) is 9.0, not 0.5 byte/value"""
    x = torch.linspace(-8, 8, 3201)
    got = impl.dtypes.round_to(x, FP4_E2M1)
    what = call_text("dtypes.round_to", (x, FP4_E2M1))
    if type(got) is not torch.Tensor or got.dtype != torch.float32 or got.shape != x.shape:
        fail(what, got, "a float32 tensor of shape (3201,)")
    expect_equal(sorted(set(got.tolist())), [float(v) for v in NVFP4_GRID], f"the values taken by {what}",
                 note="notes 001: values = [-6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6]")
    # notes 001: the real cost is not 0.5 byte/value: every block of 16 stores an E4M3 scale too
    expect_equal(impl.dtypes.nvfp4_bytes(16), 9.0, "nvfp4_bytes(16) (notes 001)")
    expect_equal(impl.dtypes.nvfp4_bytes(4096 * 4096), 9437184.0, "nvfp4_bytes(4096 * 4096)")


@pytest.mark.points(1)
def test_format_limits_snapshot(impl):
    """bits, max_value, eps, smallest_normal and smallest_subnormal match the snapshots exactly"""
    for name in ("bits", "max_value", "eps", "smallest_normal", "smallest_subnormal"):
        check_snapshot(impl, f"dtypes.{name}")


@pytest.mark.points(1)
def test_round_to_snapshot(impl):
    """round_to matches the snapshots bit for bit (signed zeros, inf, ties to even, saturation)"""
    check_snapshot(impl, "dtypes.round_to")


@pytest.mark.points(1)
def test_nvfp4_snapshot(impl):
    """nvfp4_quantize, nvfp4_dequantize and nvfp4_bytes match the snapshots (bad sizes raise ValueError)"""
    for name in ("nvfp4_quantize", "nvfp4_dequantize", "nvfp4_bytes"):
        check_snapshot(impl, f"dtypes.{name}")
