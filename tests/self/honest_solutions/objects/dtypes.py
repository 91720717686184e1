"""dtypes — floating-point formats: their limits, rounding into them, and NVFP4 blocks.

Honest solution, object style: a `FormatGeometry` (slots dataclass) derived from a FloatFormat
knows its bias, exponent range and NaN style (an enum); rounding works on the integer bits of
float32: the significand is shifted right with round-half-even done by hand.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from enum import Enum
from functools import wraps
from typing import Callable, NamedTuple, Protocol

import torch
from jaxtyping import Float
from torch import Tensor

logger = logging.getLogger(__name__)


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

NVFP4_BLOCK = 16  # the block size of NVIDIA's format


class TopCode(Enum):
    """What the all-ones exponent code holds."""

    IEEE = "inf and NaN"             # fp32, fp16, bf16, E5M2
    FINITE_NAN = "numbers, one NaN"  # the "fn" formats: E4M3
    NUMBERS = "numbers only"         # E2M1


class Quantized(NamedTuple):
    values: Tensor
    scales: Tensor


class Rounder(Protocol):
    def __call__(self, x: Tensor, fmt: FloatFormat) -> Tensor: ...


@dataclass(frozen=True, slots=True)
class FormatGeometry:
    exponent_bits: int
    mantissa_bits: int
    top: TopCode
    name: str = "?"

    @classmethod
    def of(cls, fmt: FloatFormat) -> FormatGeometry:
        if not isinstance(fmt, FloatFormat):
            raise ValueError(f"expected a FloatFormat, got {fmt!r}")
        e, m = fmt.exponent_bits, fmt.mantissa_bits
        if not isinstance(e, int) or isinstance(e, bool) or e < 1:
            raise ValueError(f"{fmt.name}: a format needs at least one exponent bit, got {e!r}")
        if not isinstance(m, int) or isinstance(m, bool) or m < 0:
            raise ValueError(f"{fmt.name}: mantissa_bits must be a non-negative int, got {m!r}")
        if not isinstance(fmt.has_inf, bool) or not isinstance(fmt.has_nan, bool):
            raise ValueError(f"{fmt.name}: has_inf and has_nan are bools")
        top = TopCode.IEEE if fmt.has_inf else TopCode.FINITE_NAN if fmt.has_nan else TopCode.NUMBERS
        return cls(e, m, top, fmt.name)

    def __repr__(self) -> str:
        return f"<{self.name}: E{self.exponent_bits}M{self.mantissa_bits}, top code = {self.top.value}>"

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        top = 2 ** self.exponent_bits - 1 - self.bias
        return top - 1 if self.top is TopCode.IEEE else top

    @property
    def max_significand(self) -> int:
        """The largest significand (an integer of M + 1 bits) at emax."""
        full = 2 ** (self.mantissa_bits + 1) - 1
        return full - 1 if self.top is TopCode.FINITE_NAN else full

    @property
    def max_value(self) -> float:
        return math.ldexp(self.max_significand, self.emax - self.mantissa_bits)

    @property
    def fits_float32(self) -> bool:
        return self.exponent_bits < 8 or (self.exponent_bits == 8 and self.top is TopCode.IEEE) \
            if self.mantissa_bits <= 23 else False

    @property
    def is_float32(self) -> bool:
        return (self.exponent_bits, self.mantissa_bits, self.top) == (8, 23, TopCode.IEEE)

    def nan_pattern(self, raw: Tensor) -> Tensor:
        """The float32 bit pattern (int64, unsigned) PyTorch's CPU cast gives a NaN input."""
        sign = raw & 0x80000000
        if (self.exponent_bits, self.mantissa_bits, self.top) == (5, 10, TopCode.IEEE):
            return (raw | 0x00400000) & 0xFFFFE000
        if (self.exponent_bits, self.mantissa_bits, self.top) == (8, 7, TopCode.IEEE):
            return torch.full_like(raw, 0xFFFF0000)
        if self.top is not TopCode.NUMBERS and self.mantissa_bits > 0:
            return sign | 0x7F800000 | (((1 << self.mantissa_bits) - 1) << (23 - self.mantissa_bits))
        return sign | 0x7FC00000


def takes_format(fn: Callable) -> Callable:
    """Validate the `fmt` argument into a FormatGeometry before the function runs."""

    @wraps(fn)
    def wrapper(fmt: FloatFormat) -> float | int:
        geometry = FormatGeometry.of(fmt)
        logger.debug("%s(%r)", fn.__name__, geometry)
        return fn(geometry)

    return wrapper


def _float_tensor(x: object, what: str) -> Tensor:
    if not isinstance(x, Tensor) or x.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{what} must be a float32 or float64 tensor, got {getattr(x, 'dtype', type(x).__name__)}")
    return x.float()


def _block_size(block_size: object) -> int:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    if block_size != NVFP4_BLOCK:
        warnings.warn(f"NVFP4 uses blocks of {NVFP4_BLOCK}; using {block_size}", stacklevel=3)
    return block_size


# ----------------------------------------------------------------------------- the API


@takes_format
def bits(fmt: FloatFormat) -> int:
    return 1 + fmt.exponent_bits + fmt.mantissa_bits


@takes_format
def max_value(fmt: FloatFormat) -> float:
    return fmt.max_value


@takes_format
def eps(fmt: FloatFormat) -> float:
    return 2.0 ** -fmt.mantissa_bits


@takes_format
def smallest_normal(fmt: FloatFormat) -> float:
    return 2.0 ** fmt.emin


@takes_format
def smallest_subnormal(fmt: FloatFormat) -> float:
    return 2.0 ** (fmt.emin - fmt.mantissa_bits)


def round_to(x: Float[Tensor, "*shape"], fmt: FloatFormat) -> Float[Tensor, "*shape"]:
    g = FormatGeometry.of(fmt)
    if not g.fits_float32:
        raise ValueError(f"{g!r} cannot be returned as float32")
    x32 = _float_tensor(x, "x")
    logger.debug("round_to %s values into %r", x32.numel(), g)
    if g.is_float32:
        return x32.clone()

    raw = x32.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    magnitude_bits = raw & 0x7FFFFFFF
    biased = magnitude_bits >> 23
    fraction = magnitude_bits & 0x7FFFFF
    normal = biased > 0
    significand = torch.where(normal, fraction | 0x800000, fraction)      # value = sig * 2**(e - 23)
    exponent = torch.where(normal, biased - 127, torch.full_like(biased, -126))

    # the quantum of the target binade (subnormals share the lowest one): drop `shift` low bits
    quantum_exp = torch.clamp(exponent, min=g.emin) - g.mantissa_bits
    shift = torch.clamp(quantum_exp - (exponent - 23), max=40)
    kept = significand >> shift
    dropped = significand - (kept << shift)
    half = torch.where(shift > 0, torch.ones_like(shift) << (shift - 1).clamp(min=0), torch.zeros_like(shift))
    round_up = (shift > 0) & ((dropped > half) | ((dropped == half) & ((kept & 1) == 1)))
    kept = kept + round_up.to(torch.int64)

    value = torch.ldexp(kept.to(torch.float64), quantum_exp.to(torch.float64))
    overflow = value > g.max_value
    huge = math.inf if g.top is TopCode.IEEE else g.max_value
    value = torch.where(overflow, torch.full_like(value, huge), value)

    infinite = biased == 255
    is_nan = infinite & (fraction != 0)
    value = torch.where(infinite & ~is_nan, torch.full_like(value, huge), value)
    result = torch.where(raw >= 0x80000000, -value, value).float()        # keeps -0.0

    if bool(is_nan.any()):
        pattern = g.nan_pattern(raw)
        pattern = torch.where(pattern >= 2**31, pattern - 2**32, pattern).to(torch.int32).view(torch.float32)
        result = torch.where(is_nan, pattern, result)
    return result


def nvfp4_quantize(
    x: Float[Tensor, "n"], block_size: int = 16
) -> tuple[Float[Tensor, "n"], Float[Tensor, "n_blocks"]]:
    size = _block_size(block_size)
    x32 = _float_tensor(x, "x")
    if x32.dim() != 1:
        raise ValueError(f"x must be 1-D, got shape {tuple(x32.shape)}")
    if x32.numel() % size:
        raise ValueError(f"n = {x32.numel()} is not divisible by block_size = {size}")
    blocks = x32.view(-1, size)
    amax = blocks.abs().amax(dim=1)
    scales = round_to(amax / 6, FP8_E4M3)
    scales = torch.where(scales == 0, torch.ones_like(scales), scales)
    values = round_to(blocks / scales.unsqueeze(1), FP4_E2M1)
    logger.debug("nvfp4: %d blocks of %d", scales.numel(), size)
    return Quantized(values.flatten(), scales)


def nvfp4_dequantize(
    values: Float[Tensor, "n"], scales: Float[Tensor, "n_blocks"], block_size: int = 16
) -> Float[Tensor, "n"]:
    size = _block_size(block_size)
    v, s = _float_tensor(values, "values"), _float_tensor(scales, "scales")
    if v.dim() != 1 or s.dim() != 1:
        raise ValueError("values and scales must be 1-D tensors")
    if v.numel() != s.numel() * size:
        raise ValueError(f"{v.numel()} values, {s.numel()} scales and block_size {size} do not agree")
    return v * s.repeat_interleave(size)


def nvfp4_bytes(numel: int, block_size: int = 16) -> float:
    if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
        raise ValueError(f"numel must be a non-negative int, got {numel!r}")
    size = _block_size(block_size)
    blocks = (numel + size - 1) // size
    return 0.5 * numel + blocks
