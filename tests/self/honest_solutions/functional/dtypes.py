"""dtypes — floating-point formats: their limits, rounding into them, and NVFP4 blocks.

Honest solution, functional style: the limits are exact integer/ldexp formulas; rounding is done
on float64 copies with frexp, a power-of-two quantum built from its bits, and round-half-even.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

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

_FLOATS = (torch.float32, torch.float64)


# ----------------------------------------------------------------------------- helpers


def _check(fmt: FloatFormat) -> FloatFormat:
    if not isinstance(fmt, FloatFormat):
        raise ValueError(f"not a FloatFormat: {fmt!r}")
    is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    if not (is_int(fmt.exponent_bits) and fmt.exponent_bits >= 1):
        raise ValueError(f"{fmt.name}: exponent_bits must be an int >= 1, got {fmt.exponent_bits!r}")
    if not (is_int(fmt.mantissa_bits) and fmt.mantissa_bits >= 0):
        raise ValueError(f"{fmt.name}: mantissa_bits must be an int >= 0, got {fmt.mantissa_bits!r}")
    if not (isinstance(fmt.has_inf, bool) and isinstance(fmt.has_nan, bool)):
        raise ValueError(f"{fmt.name}: has_inf and has_nan must be bools")
    return fmt


def _bias(fmt: FloatFormat) -> int:
    return 2 ** (fmt.exponent_bits - 1) - 1


def _emax(fmt: FloatFormat) -> int:
    top = 2 ** fmt.exponent_bits - 1 - _bias(fmt)
    return top - 1 if fmt.has_inf else top


def _max_exact(fmt: FloatFormat) -> Fraction:
    """The largest finite value as an exact fraction: (2**(M+1) - 1 or - 2) * 2**(emax - M)."""
    m = fmt.mantissa_bits
    top_mantissa = 2 ** (m + 1) - (2 if (not fmt.has_inf and fmt.has_nan) else 1)
    return Fraction(top_mantissa) * Fraction(2) ** (_emax(fmt) - m)


def _pow2(exponents: Tensor) -> Tensor:
    """2.0 ** e, exactly, as float64 built from the bits (e an int64 tensor in [-1022, 1023])."""
    return ((exponents + 1023) << 52).view(torch.float64)


def _as_float32_bits(patterns: Tensor) -> Tensor:
    """int64 tensor of unsigned 32-bit patterns -> float32 tensor with those bits."""
    signed = torch.where(patterns >= 2**31, patterns - 2**32, patterns)
    return signed.to(torch.int32).view(torch.float32)


def _nan_bits(x32: Tensor, fmt: FloatFormat) -> Tensor:
    """float32 NaNs with the bit patterns PyTorch's CPU cast gives (same shape as x32)."""
    raw = x32.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = raw & 0x80000000
    e, m = fmt.exponent_bits, fmt.mantissa_bits
    if (e, m) == (5, 10) and fmt.has_inf:  # fp16: the payload, quieted and cut to 10 bits
        bits = (raw | 0x00400000) & 0xFFFFE000
    elif (e, m) == (8, 7) and fmt.has_inf:  # bf16: one canonical pattern
        bits = torch.full_like(raw, 0xFFFF0000)
    elif fmt.has_nan and m > 0:  # the format's all-ones NaN, widened to float32
        bits = sign | 0x7F800000 | (((1 << m) - 1) << (23 - m))
    else:  # no NaN code at all: the default quiet NaN
        bits = sign | 0x7FC00000
    return _as_float32_bits(bits)


def _tensor_f32(x: Tensor, what: str = "x") -> Tensor:
    if not isinstance(x, Tensor) or x.dtype not in _FLOATS:
        raise ValueError(f"{what} must be a float32 or float64 tensor, got {getattr(x, 'dtype', type(x))}")
    return x.float()  # float64 -> float32 is PyTorch's own round to nearest even


# ----------------------------------------------------------------------------- the API


def bits(fmt: FloatFormat) -> int:
    _check(fmt)
    return 1 + fmt.exponent_bits + fmt.mantissa_bits


def max_value(fmt: FloatFormat) -> float:
    return float(_max_exact(_check(fmt)))


def eps(fmt: FloatFormat) -> float:
    return math.ldexp(1.0, -_check(fmt).mantissa_bits)


def smallest_normal(fmt: FloatFormat) -> float:
    return math.ldexp(1.0, 1 - _bias(_check(fmt)))


def smallest_subnormal(fmt: FloatFormat) -> float:
    _check(fmt)
    return math.ldexp(1.0, 1 - _bias(fmt) - fmt.mantissa_bits)


def round_to(x: Float[Tensor, "*shape"], fmt: FloatFormat) -> Float[Tensor, "*shape"]:
    _check(fmt)
    e_bits, m_bits = fmt.exponent_bits, fmt.mantissa_bits
    if e_bits > 8 or m_bits > 23 or (e_bits == 8 and not fmt.has_inf):
        raise ValueError(f"{fmt.name} does not fit in float32")
    x32 = _tensor_f32(x)
    if (e_bits, m_bits, fmt.has_inf) == (8, 23, True):
        return x32.clone()

    v = x32.double()
    mag = v.abs()
    emin = 1 - _bias(fmt)
    _, exp = torch.frexp(torch.where(mag > 0, mag, torch.ones_like(mag)))  # mag = f * 2**exp, f in [0.5, 1)
    binade = torch.clamp(exp.to(torch.int64) - 1, min=emin)  # subnormals share the lowest binade
    finite = torch.isfinite(mag)
    binade = torch.where(finite, binade, torch.full_like(binade, emin))
    quantum = _pow2(binade - m_bits)
    rounded = torch.round(torch.where(finite, mag, torch.zeros_like(mag)) / quantum) * quantum  # ties to even

    top = float(_max_exact(fmt))
    overflow = torch.inf if fmt.has_inf else top
    rounded = torch.where((rounded > top) | torch.isinf(mag), torch.full_like(rounded, overflow), rounded)
    out = torch.copysign(rounded, v).float()
    return torch.where(torch.isnan(x32), _nan_bits(x32, fmt), out)


def nvfp4_quantize(
    x: Float[Tensor, "n"], block_size: int = 16
) -> tuple[Float[Tensor, "n"], Float[Tensor, "n_blocks"]]:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    x32 = _tensor_f32(x)
    if x32.dim() != 1:
        raise ValueError(f"x must be 1-D, got shape {tuple(x32.shape)}")
    if x32.numel() % block_size:
        raise ValueError(f"{x32.numel()} values do not split into blocks of {block_size}")
    blocks = x32.reshape(-1, block_size)
    amax = blocks.abs().amax(dim=1)
    scales = round_to(amax / 6, FP8_E4M3)
    scales = torch.where(scales == 0, torch.ones_like(scales), scales)
    values = round_to(blocks / scales[:, None], FP4_E2M1)
    return values.reshape(-1), scales


def nvfp4_dequantize(
    values: Float[Tensor, "n"], scales: Float[Tensor, "n_blocks"], block_size: int = 16
) -> Float[Tensor, "n"]:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    v, s = _tensor_f32(values, "values"), _tensor_f32(scales, "scales")
    if v.dim() != 1 or s.dim() != 1:
        raise ValueError("values and scales must be 1-D")
    if len(v) != len(s) * block_size:
        raise ValueError(f"{len(v)} values do not match {len(s)} scales of blocks of {block_size}")
    return (v.reshape(-1, block_size) * s[:, None]).reshape(-1)


def nvfp4_bytes(numel: int, block_size: int = 16) -> float:
    is_int = lambda n: isinstance(n, int) and not isinstance(n, bool)  # noqa: E731
    if not is_int(numel) or numel < 0:
        raise ValueError(f"numel must be an int >= 0, got {numel!r}")
    if not is_int(block_size) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    n_blocks = -(-numel // block_size)
    return numel / 2 + n_blocks
