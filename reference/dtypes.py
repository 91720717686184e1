"""dtypes — floating-point formats: their limits, rounding into them, and NVFP4 blocks.

Handout: assignment/problems/dtypes.md. Notes (assignment/notes/): 000 (FP16 vs BF16, 1e-8
underflows in fp16), 001 (bf16 range, FP8 E4M3/E5M2 ~±448, the NVFP4 value grid and why its
cost is not 0.5 byte/value), 004 (torch.finfo table, 70000 -> inf / 70144, 1 + 0.001 == 1 in bf16).

A format has 1 sign bit, E exponent bits and M mantissa bits; bias = 2**(E-1) - 1.
A normal number is (-1)**s * 1.m * 2**(e - bias) with 1 <= e; e == 0 gives the subnormals
(-1)**s * 0.m * 2**(1 - bias), which share the spacing of the smallest binade. The top
exponent code (all ones) depends on the flags:
  has_inf (IEEE style: fp32, fp16, bf16, E5M2): all-ones exponent = inf (m == 0) or NaN;
      the largest exponent of a number is 2**E - 2 - bias; max = (2 - 2**-M) * 2**emax.
  no inf, has_nan ("fn" style: E4M3): the all-ones exponent holds numbers too, except the
      all-ones mantissa, which is NaN; emax = 2**E - 1 - bias; max = (2 - 2**(1-M)) * 2**emax.
  no inf, no NaN (E2M1): every code is a number; emax = 2**E - 1 - bias;
      max = (2 - 2**-M) * 2**emax.

A format that makes no sense raises ValueError in every function that takes one. The tests
use: something that is not a FloatFormat (the string "fp16"), exponent_bits or mantissa_bits
that is not an int (None), exponent_bits <= 0 (0, -2), mantissa_bits < 0 (-1), and has_inf
or has_nan that is not a bool (None). No test uses exponent_bits == 1, mantissa_bits == 0 or
has_inf without has_nan: either answer is accepted (the reference raises ValueError).
"""

from dataclasses import dataclass

import torch
from jaxtyping import Float
from torch import Tensor


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: 1 sign bit + exponent_bits + mantissa_bits."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    has_inf: bool
    has_nan: bool


FP32 = FloatFormat("fp32", 8, 23, has_inf=True, has_nan=True)
FP16 = FloatFormat("fp16", 5, 10, has_inf=True, has_nan=True)
BF16 = FloatFormat("bf16", 8, 7, has_inf=True, has_nan=True)
FP8_E4M3 = FloatFormat("fp8_e4m3", 4, 3, has_inf=False, has_nan=True)  # "fn": NaN only at S.1111.111, max 448
FP8_E5M2 = FloatFormat("fp8_e5m2", 5, 2, has_inf=True, has_nan=True)
FP4_E2M1 = FloatFormat("fp4_e2m1", 2, 1, has_inf=False, has_nan=False)  # no inf/NaN, max 6

# The torch dtype of each format, where torch has one (useful to check your answers).
TORCH_DTYPES: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp8_e4m3": torch.float8_e4m3fn,
    "fp8_e5m2": torch.float8_e5m2,
}


# ----------------------------------------------------------------------------- helpers


def _check_format(fmt: FloatFormat) -> None:
    if not isinstance(fmt, FloatFormat):
        raise ValueError(f"fmt must be a FloatFormat, got {fmt!r}")
    e, m = fmt.exponent_bits, fmt.mantissa_bits
    if isinstance(e, bool) or not isinstance(e, int) or e < 2:
        raise ValueError(f"{fmt.name}: exponent_bits must be an int >= 2, got {e!r}")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"{fmt.name}: mantissa_bits must be an int >= 1, got {m!r}")
    if not isinstance(fmt.has_inf, bool) or not isinstance(fmt.has_nan, bool):
        raise ValueError(f"{fmt.name}: has_inf and has_nan must be bools")
    if fmt.has_inf and not fmt.has_nan:
        raise ValueError(f"{fmt.name}: a format with inf must also have NaN (IEEE style)")


def _bias(fmt: FloatFormat) -> int:
    return 2 ** (fmt.exponent_bits - 1) - 1


def _pow2(k: Tensor) -> Tensor:
    # Exact 2**k as float64, built from the bits: exponent field k + 1023, mantissa 0.
    # (k stays within the float64 normal range here.)
    return ((k.to(torch.int64) + 1023) << 52).view(torch.float64)


def _round_values(v: Tensor, fmt: FloatFormat) -> Tensor:
    # v: float64, any shape. Round every value to the nearest number of `fmt` (ties to even),
    # then handle overflow. NaN positions come out as garbage-free NaN and are fixed later.
    m = fmt.mantissa_bits
    emin = 1 - _bias(fmt)
    # Leading bit of |v| is 2**(e-1) (frexp: |v| = f * 2**e, 0.5 <= f < 1). Below the smallest
    # normal the spacing stops shrinking: subnormals use the exponent emin.
    # (inf and NaN get a dummy exponent: frexp's exponent is unspecified for them.)
    _, e = torch.frexp(torch.where(torch.isfinite(v), v.abs(), 1.0))
    exp = torch.clamp(e.to(torch.int64) - 1, min=emin)
    quantum = _pow2(exp - m)  # distance between neighbouring numbers of fmt around v
    # v / quantum and the product are exact (powers of two); torch.round is round-half-to-even.
    r = torch.round(v / quantum) * quantum
    max_v = max_value(fmt)
    limit = torch.inf if fmt.has_inf else max_v  # IEEE formats overflow to inf, the others saturate
    return torch.where(r.abs() > max_v, torch.copysign(torch.tensor(limit, dtype=v.dtype), v), r)


def _to_i32(bits: Tensor) -> Tensor:
    # int64 holding an unsigned 32-bit pattern -> the same pattern as int32.
    return torch.where(bits >= 2**31, bits - 2**32, bits).to(torch.int32)


# ----------------------------------------------------------------------------- the API


def bits(fmt: FloatFormat) -> int:
    """Total bits of one value: 1 (sign) + exponent_bits + mantissa_bits.

    Oracle: torch.finfo(dtype).bits. Example: bits(BF16) == 16, bits(FP4_E2M1) == 4.
    A fmt that is not a valid FloatFormat raises ValueError.
    """
    _check_format(fmt)
    return 1 + fmt.exponent_bits + fmt.mantissa_bits


def max_value(fmt: FloatFormat) -> float:
    """Largest finite value, as a float (formula per has_inf/has_nan in the module docstring).

    Oracle: torch.finfo(dtype).max. Examples (notes 001/004): FP16 65504.0, BF16 about 3.39e38,
    FP8_E4M3 448.0, FP8_E5M2 57344.0, FP4_E2M1 6.0.
    """
    _check_format(fmt)
    bias = _bias(fmt)
    m = fmt.mantissa_bits
    if fmt.has_inf:
        emax = 2**fmt.exponent_bits - 2 - bias
        return float((2.0 - 2.0**-m) * 2.0**emax)
    emax = 2**fmt.exponent_bits - 1 - bias
    if fmt.has_nan:  # the all-ones code is NaN, so the top mantissa is one step lower
        return float((2.0 - 2.0 ** (1 - m)) * 2.0**emax)
    return float((2.0 - 2.0**-m) * 2.0**emax)


def eps(fmt: FloatFormat) -> float:
    """Machine epsilon: the gap between 1.0 and the next value, 2**-mantissa_bits (float).

    Oracle: torch.finfo(dtype).eps. Examples (notes 004): FP16 0.0009765625 (9.8e-04),
    BF16 0.0078125 (7.8e-03), which is why 1 + 0.001 rounds back to 1 in bf16.
    """
    _check_format(fmt)
    return float(2.0**-fmt.mantissa_bits)


def smallest_normal(fmt: FloatFormat) -> float:
    """Smallest positive normal value, 2**(1 - bias) (float).

    Oracle: torch.finfo(dtype).smallest_normal (= .tiny). Examples: FP16 6.103515625e-05,
    FP8_E4M3 0.015625, FP4_E2M1 1.0.
    """
    _check_format(fmt)
    return float(2.0 ** (1 - _bias(fmt)))


def smallest_subnormal(fmt: FloatFormat) -> float:
    """Smallest positive (subnormal) value, 2**(1 - bias - mantissa_bits) (float).

    Examples: FP32 2**-149 (about 1.4e-45), FP16 2**-24 (about 6e-08, so fp16 turns 1e-8 into
    0), FP8_E4M3 2**-9, FP4_E2M1 0.5.
    """
    _check_format(fmt)
    return float(2.0 ** (1 - _bias(fmt) - fmt.mantissa_bits))


def round_to(x: Float[Tensor, "*shape"], fmt: FloatFormat) -> Float[Tensor, "*shape"]:
    """The value each element of x takes when stored in `fmt`, returned as a new float32 tensor
    of the same shape. Equals x.to(TORCH_DTYPES[fmt.name]).float() on the CPU bit for bit for
    FP16, BF16, FP8_E4M3, FP8_E5M2 (and x.float() for FP32). Do NOT call the torch cast to a
    narrow dtype; use integer/float arithmetic (bit manipulation, or frexp + round).

    Rules:
    - x must be a float32 or float64 tensor, anything else raises ValueError; fmt must fit in
      float32 (exponent_bits <= 8, mantissa_bits <= 23, and has_inf if exponent_bits == 8).
    - float64 input is first rounded to float32 (round to nearest, ties to even, overflow to
      inf), then to fmt, exactly as PyTorch does (double rounding included).
    - Round to the nearest representable value, ties to even, subnormals included (their
      spacing is smallest_subnormal). Signs are kept, so values that underflow become ±0.0.
    - Beyond max_value(fmt): formats with inf give ±inf (IEEE: |x| >= max + half a step
      overflows); formats without inf saturate to ±max_value, ±inf inputs included
      (FP8_E4M3 -> ±448, FP4_E2M1 -> ±6), as PyTorch's CPU cast does for E4M3.
    - NaN stays NaN (also for FP4_E2M1, which has no NaN code). Bit pattern (float32, s = the
      input's sign), matching PyTorch's vectorised CPU cast: FP32 keeps the payload (a float64
      NaN is quieted, its top 22 payload bits kept); FP16: the float32 payload quieted
      (| 0x00400000) and cut to 10 bits (& 0xFFFFE000); BF16: always 0xFFFF0000; FP8_E4M3:
      s | 0x7FF00000; FP8_E5M2: s | 0x7FE00000; FP4_E2M1: s | 0x7FC00000. Any other format
      (no torch dtype: FP6, ...): with has_nan, s | 0x7F800000 | the top M mantissa bits set
      (as FP8); without, s | 0x7FC00000 (as FP4_E2M1). Graded: every bit for FP32, FP8_E4M3,
      FP8_E5M2 and FP4_E2M1; for FP16, BF16 (PyTorch's own bits vary with the machine) and
      the formats without a torch dtype, only that a NaN stays a NaN.

    Examples (notes 000/004): fp16: 1e-8 -> 0.0, 70000 -> inf; bf16: 70000 -> 70144.0,
    1e-8 -> 1.00117e-08 (kept), 1.001 -> 1.0; E4M3: 500 -> 448.0; E2M1: 2.6 -> 3.0, 2.5 -> 2.0.
    """
    _check_format(fmt)
    if fmt.exponent_bits > 8 or fmt.mantissa_bits > 23 or (fmt.exponent_bits == 8 and not fmt.has_inf):
        raise ValueError(f"{fmt.name} does not fit in float32, its values cannot be returned as float32")
    if not isinstance(x, torch.Tensor) or x.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"x must be a float32 or float64 tensor, got {getattr(x, 'dtype', type(x))}")
    x = x.detach()  # we only read values and bits

    if x.dtype == torch.float32:
        if fmt == FP32:
            return x.clone()  # identity, NaN payloads included
        v = x.double()  # exact widening
        # float32 bit patterns as non-negative int64, for the NaN payloads below
        src_bits = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    else:
        # PyTorch casts float64 -> fmt through float32: round to float32 first.
        v = _round_values(x, FP32)
        b = x.view(torch.int64)
        # float64 -> float32 NaN: sign kept, quiet bit set, top 22 payload bits kept
        src_bits = (((b >> 63) & 1) << 31) | 0x7FC00000 | ((b >> 29) & 0x3FFFFF)

    r = v if fmt == FP32 else _round_values(v, fmt)
    out = r.to(torch.float32)  # exact: every value of r is representable in float32

    nan = torch.isnan(x)
    if bool(nan.any()):
        sign = src_bits & 0x80000000
        m = fmt.mantissa_bits
        if fmt == FP32:
            nan_bits = src_bits
        elif fmt == FP16:
            nan_bits = (src_bits | 0x00400000) & 0xFFFFE000
        elif fmt == BF16:
            nan_bits = torch.full_like(src_bits, 0xFFFF0000)
        elif fmt.has_nan:  # fp8 style: the all-ones exponent and mantissa, sign kept
            nan_bits = sign | 0x7F800000 | (((1 << m) - 1) << (23 - m))
        else:  # no NaN code in the format: keep a canonical quiet NaN
            nan_bits = sign | 0x7FC00000
        out_bits = out.view(torch.int32)
        out_bits[nan] = _to_i32(nan_bits)[nan]
    return out


def nvfp4_quantize(
    x: Float[Tensor, "n"], block_size: int = 16
) -> tuple[Float[Tensor, "n"], Float[Tensor, "n_blocks"]]:
    """NVFP4-style block quantization of a 1-D tensor. Returns (values, scales), both float32:
    values of shape (n,) on the FP4_E2M1 grid {0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6}, and one
    scale per block, shape (n // block_size,).

    x (float32 or float64, 1-D) is first rounded to float32; all arithmetic is float32.
    For each block of block_size consecutive elements:
        amax  = max |x| over the block
        scale = round_to(amax / 6, FP8_E4M3)        (the scale is stored in E4M3)
        if scale == 0: scale = 1.0                   (all-zero block, or amax/6 <= 2**-10)
        values = round_to(x_block / scale, FP4_E2M1) (E2M1 saturates at ±6)
    A NaN in a block makes that block's scale and values NaN.
    ValueError if block_size < 1, n % block_size != 0, x is not 1-D or not float32/float64.

    Example: x = [0, 1, 2, 3] * 4 (16 values): amax 3, scale = round_to(0.5, E4M3) = 0.5,
    values = [0, 2, 4, 6] * 4, scales = [0.5]; dequantized exactly.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    if not isinstance(x, torch.Tensor) or x.ndim != 1:
        raise ValueError(f"x must be a 1-D tensor, got shape {tuple(getattr(x, 'shape', ()))}")
    if x.numel() % block_size != 0:
        raise ValueError(f"n = {x.numel()} is not divisible by block_size = {block_size}")
    xf = round_to(x, FP32)  # float32 (raises ValueError for other dtypes)
    blocks = xf.reshape(-1, block_size)  # (n_blocks, block_size)
    amax = blocks.abs().amax(dim=1)  # (n_blocks,)
    scales = round_to(amax / 6, FP8_E4M3)
    scales = torch.where(scales == 0, torch.ones_like(scales), scales)
    values = round_to(blocks / scales[:, None], FP4_E2M1)  # (n_blocks, block_size)
    return values.reshape(-1), scales


def nvfp4_dequantize(
    values: Float[Tensor, "n"], scales: Float[Tensor, "n_blocks"], block_size: int = 16
) -> Float[Tensor, "n"]:
    """Undo nvfp4_quantize: element i is values[i] * scales[i // block_size], float32, shape (n,).

    values and scales are 1-D float32 (or float64, first rounded to float32).
    ValueError if block_size < 1 or len(values) != len(scales) * block_size.

    Example: nvfp4_dequantize(*nvfp4_quantize(x)) == x for x = [0, 1, 2, 3] * 4.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    for name, t in (("values", values), ("scales", scales)):
        if not isinstance(t, torch.Tensor) or t.ndim != 1:
            raise ValueError(f"{name} must be a 1-D tensor")
    if values.numel() != scales.numel() * block_size:
        raise ValueError(
            f"len(values) = {values.numel()} != len(scales) * block_size = {scales.numel()} * {block_size}"
        )
    v = round_to(values, FP32).reshape(-1, block_size)  # (n_blocks, block_size)
    s = round_to(scales, FP32)[:, None]  # (n_blocks, 1)
    return (v * s).reshape(-1)


def nvfp4_bytes(numel: int, block_size: int = 16) -> float:
    """Storage of numel values in NVFP4, in bytes (float): half a byte per 4-bit value plus one
    byte (an E4M3 scale) per block, with ceil(numel / block_size) blocks:
        0.5 * numel + ceil(numel / block_size)
    ValueError if numel < 0 or block_size < 1.

    Example (notes 001: the cost is not 0.5 byte/value): nvfp4_bytes(16) == 9.0, i.e. 4.5 bits
    per value; a 4096 x 4096 matrix takes 8_388_608 + 1_048_576 = 9_437_184.0 bytes.
    """
    if isinstance(numel, bool) or not isinstance(numel, int) or numel < 0:
        raise ValueError(f"numel must be an int >= 0, got {numel!r}")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    n_blocks = -(-numel // block_size)
    return float(0.5 * numel + n_blocks)
