"""dtypes — alternative: integer bit manipulation on float32 patterns.

Instead of frexp + torch.round on float64 values, round_to works on the float32 bit pattern:
it splits it into sign / exponent / significand as int64, computes per element how many low
significand bits the target format cannot keep, and drops them with an explicit
round-half-to-even on the integer remainder. A float64 input is first cast with x.float()
(a float32 cast, not a narrow one: it is PyTorch's own float64 -> float32 rounding, NaN
payloads included). The limits are read off the largest / smallest bit codes of the format,
decoded with exact fractions.
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

import math
from fractions import Fraction


# ----------------------------------------------------------------------------- helpers


def _validate(fmt) -> None:
    if not isinstance(fmt, FloatFormat):
        raise ValueError(f"expected a FloatFormat, got {type(fmt).__name__}")
    E, M = fmt.exponent_bits, fmt.mantissa_bits
    if type(E) is not int or E < 2:
        raise ValueError(f"{fmt.name}: need at least 2 exponent bits (got {E!r})")
    if type(M) is not int or M < 1:
        raise ValueError(f"{fmt.name}: need at least 1 mantissa bit (got {M!r})")
    if type(fmt.has_inf) is not bool or type(fmt.has_nan) is not bool:
        raise ValueError(f"{fmt.name}: has_inf/has_nan must be bool")
    if fmt.has_inf and not fmt.has_nan:
        raise ValueError(f"{fmt.name}: IEEE-style inf without NaN is not a valid format")


def _decode(fmt: FloatFormat, exp_code: int, mant_code: int) -> Fraction:
    """Exact positive value of the code (exponent field, mantissa field) in fmt."""
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    M = fmt.mantissa_bits
    if exp_code == 0:  # subnormal: 0.m * 2**(1 - bias)
        return Fraction(mant_code, 1 << M) * Fraction(2) ** (1 - bias)
    return Fraction((1 << M) + mant_code, 1 << M) * Fraction(2) ** (exp_code - bias)


def _largest_codes(fmt: FloatFormat) -> tuple[int, int]:
    top_exp = (1 << fmt.exponent_bits) - 1
    all_ones = (1 << fmt.mantissa_bits) - 1
    if fmt.has_inf:
        return top_exp - 1, all_ones  # the top exponent is inf/NaN
    if fmt.has_nan:
        return top_exp, all_ones - 1  # S.1..1.1..1 is NaN
    return top_exp, all_ones  # every code is a number


# ----------------------------------------------------------------------------- the API


def bits(fmt: FloatFormat) -> int:
    """1 sign bit + exponent bits + mantissa bits."""
    _validate(fmt)
    return sum((1, fmt.exponent_bits, fmt.mantissa_bits))


def max_value(fmt: FloatFormat) -> float:
    """The largest finite value: the decoded largest non-special code."""
    _validate(fmt)
    return float(_decode(fmt, *_largest_codes(fmt)))


def eps(fmt: FloatFormat) -> float:
    """Gap between 1.0 (exponent code = bias, mantissa 0) and the next code."""
    _validate(fmt)
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    return float(_decode(fmt, bias, 1) - _decode(fmt, bias, 0))


def smallest_normal(fmt: FloatFormat) -> float:
    """Exponent code 1, mantissa 0."""
    _validate(fmt)
    return float(_decode(fmt, 1, 0))


def smallest_subnormal(fmt: FloatFormat) -> float:
    """Exponent code 0, mantissa 1."""
    _validate(fmt)
    return float(_decode(fmt, 0, 1))


def _signed_i32(u: torch.Tensor) -> torch.Tensor:
    # unsigned 32-bit pattern held in int64 -> int32 with the same bits
    return (u - ((u >> 31) << 32)).to(torch.int32)


def round_to(x: Float[Tensor, "*shape"], fmt: FloatFormat) -> Float[Tensor, "*shape"]:
    """x rounded into fmt (nearest, ties to even), returned as float32; see the stub's rules."""
    _validate(fmt)
    E, M = fmt.exponent_bits, fmt.mantissa_bits
    if E > 8 or M > 23 or (E == 8 and not fmt.has_inf):
        raise ValueError(f"{fmt.name} cannot be represented in float32")
    if not isinstance(x, torch.Tensor) or x.dtype not in (torch.float32, torch.float64):
        raise ValueError("round_to needs a float32 or float64 tensor")

    x32 = x.detach().float() if x.dtype == torch.float64 else x.detach()
    if fmt.exponent_bits == 8 and fmt.mantissa_bits == 23:
        return x32.clone()  # float32 itself: nothing to drop

    u = x32.reshape(-1).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = u >> 31
    mag = u & 0x7FFFFFFF
    exp_field = mag >> 23
    frac = mag & 0x7FFFFF
    is_nan = mag > 0x7F800000
    is_inf = mag == 0x7F800000

    # significand (integer) and the exponent of its last bit, as float32 stores them
    sig = torch.where(exp_field > 0, frac | (1 << 23), frac)
    e = torch.clamp(exp_field, min=1) - 127  # unbiased exponent; subnormals use -126
    lsb_exp = e - 23

    # the target format's last-bit exponent at this magnitude (its subnormals stop at emin)
    emin = 1 - ((1 << (E - 1)) - 1)
    target_lsb = torch.clamp(e, min=emin) - M
    drop = torch.clamp(target_lsb - lsb_exp, min=0, max=26)

    kept = sig >> drop
    remainder = sig - (kept << drop)
    half = torch.where(drop > 0, 1 << torch.clamp(drop - 1, min=0), torch.full_like(drop, 1 << 40))
    round_up = (remainder > half) | ((remainder == half) & (kept & 1 == 1))
    kept = kept + round_up.to(torch.int64)

    # value = kept * 2**(lsb_exp + drop), exact in float64
    value = torch.ldexp(kept.to(torch.float64), (lsb_exp + drop).to(torch.float64))
    top = max_value(fmt)
    too_big = (value > top) | is_inf
    overflow_to = math.inf if fmt.has_inf else top
    value = torch.where(too_big, torch.full_like(value, overflow_to), value)
    value = torch.where(sign == 1, -value, value)
    out = value.to(torch.float32)

    if bool(is_nan.any()):
        if fmt == FP16:
            nan_bits = (u | 0x00400000) & 0xFFFFE000
        elif fmt == BF16:
            nan_bits = torch.full_like(u, 0xFFFF0000)
        elif fmt.has_nan:
            nan_bits = (sign << 31) | 0x7F800000 | (((1 << M) - 1) << (23 - M))
        else:
            nan_bits = (sign << 31) | 0x7FC00000
        out_bits = torch.where(is_nan, _signed_i32(nan_bits), out.view(torch.int32))
        out = out_bits.view(torch.float32)
    return out.reshape(x.shape)


def _check_block_size(block_size) -> int:
    if type(block_size) is not int or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    return block_size


def nvfp4_quantize(
    x: Float[Tensor, "n"], block_size: int = 16
) -> tuple[Float[Tensor, "n"], Float[Tensor, "n_blocks"]]:
    """Per-block E4M3 scale (amax / 6) and E2M1 values; see the stub's rules."""
    block_size = _check_block_size(block_size)
    if not isinstance(x, torch.Tensor) or x.dim() != 1:
        raise ValueError("x must be a 1-D tensor")
    if x.dtype not in (torch.float32, torch.float64):
        raise ValueError("x must be float32 or float64")
    n = x.shape[0]
    if n % block_size:
        raise ValueError(f"{n} values do not split into blocks of {block_size}")
    x32 = x.detach().float()
    blocks = x32.view(n // block_size, block_size)
    amax = torch.amax(torch.abs(blocks), dim=1, keepdim=True)  # NaN propagates
    scales = round_to(amax / 6, FP8_E4M3)
    scales = scales.masked_fill(scales == 0, 1.0)
    values = round_to(blocks / scales, FP4_E2M1)
    return values.flatten(), scales.flatten()


def nvfp4_dequantize(
    values: Float[Tensor, "n"], scales: Float[Tensor, "n_blocks"], block_size: int = 16
) -> Float[Tensor, "n"]:
    """values[i] * scales[i // block_size], float32."""
    block_size = _check_block_size(block_size)
    if not (isinstance(values, torch.Tensor) and isinstance(scales, torch.Tensor)):
        raise ValueError("values and scales must be tensors")
    if values.dim() != 1 or scales.dim() != 1:
        raise ValueError("values and scales must be 1-D")
    if values.shape[0] != scales.shape[0] * block_size:
        raise ValueError("len(values) must equal len(scales) * block_size")
    per_value_scale = torch.repeat_interleave(round_to(scales, FP32), block_size)
    return round_to(values, FP32) * per_value_scale


def nvfp4_bytes(numel: int, block_size: int = 16) -> float:
    """numel / 2 bytes of 4-bit codes plus one E4M3 scale byte per (started) block."""
    if type(numel) is not int or numel < 0:
        raise ValueError(f"numel must be an int >= 0, got {numel!r}")
    block_size = _check_block_size(block_size)
    blocks = (numel + block_size - 1) // block_size
    return float(Fraction(numel, 2) + blocks)
