"""dtypes — alternative: float64 scaling with floor-based ties-to-even, blocks in a loop.

round_to scales each |value| by its quantum with torch.ldexp, rounds with floor(y + 0.5)
and then moves exact ties that landed on an odd integer back down (ties to even by hand,
no torch.round), and applies the sign at the end with torch.copysign. float64 inputs are
rounded to float32 by the same routine (format FP32) before the target format. The limits
use closed forms with math.ldexp, and NVFP4 quantizes block by block in a Python loop.
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


def _fields(fmt) -> tuple[int, int, int]:
    """(exponent_bits, mantissa_bits, bias) of a valid format, else ValueError."""
    ok = isinstance(fmt, FloatFormat)
    if ok:
        E, M = fmt.exponent_bits, fmt.mantissa_bits
        ok = (isinstance(E, int) and not isinstance(E, bool) and E >= 2
              and isinstance(M, int) and not isinstance(M, bool) and M >= 1
              and isinstance(fmt.has_inf, bool) and isinstance(fmt.has_nan, bool)
              and (fmt.has_nan or not fmt.has_inf))
    if not ok:
        raise ValueError(f"not a valid FloatFormat: {fmt!r}")
    return E, M, 2 ** (E - 1) - 1


def bits(fmt: FloatFormat) -> int:
    E, M, _ = _fields(fmt)
    return E + M + 1


def max_value(fmt: FloatFormat) -> float:
    E, M, bias = _fields(fmt)
    emax = (2**E - 1 - bias) - (1 if fmt.has_inf else 0)
    # the largest mantissa field: all ones, minus one where that code is the NaN
    top_mantissa = 2**M - 1 - (1 if (fmt.has_nan and not fmt.has_inf) else 0)
    return math.ldexp(1.0 + math.ldexp(top_mantissa, -M), emax)


def eps(fmt: FloatFormat) -> float:
    _, M, _ = _fields(fmt)
    return math.ldexp(1.0, -M)


def smallest_normal(fmt: FloatFormat) -> float:
    _, _, bias = _fields(fmt)
    return math.ldexp(1.0, 1 - bias)


def smallest_subnormal(fmt: FloatFormat) -> float:
    return smallest_normal(fmt) * eps(fmt)  # one mantissa step in the lowest binade


def _round_abs(a: torch.Tensor, fmt: FloatFormat) -> torch.Tensor:
    """Round finite non-negative float64 values to fmt (ties to even), with overflow."""
    _, M, bias = _fields(fmt)
    emin = 1 - bias
    _, e = torch.frexp(a)  # a = f * 2**e, f in [0.5, 1); e = 0 for a = 0
    quantum_exp = torch.clamp(e.to(torch.int64) - 1, min=emin) - M
    y = torch.ldexp(a, (-quantum_exp).to(torch.float64))  # exact: scaling by a power of two
    n = torch.floor(y + 0.5)  # y < 2**(M+2), so y + 0.5 is exact
    tie_to_odd = (n - y == 0.5) & (torch.fmod(n, 2) == 1)
    n = n - tie_to_odd.to(n.dtype)
    r = torch.ldexp(n, quantum_exp.to(torch.float64))
    top = max_value(fmt)
    return torch.where(r > top, torch.tensor(math.inf if fmt.has_inf else top, dtype=r.dtype), r)


def _nan_pattern(src_bits: torch.Tensor, fmt: FloatFormat) -> torch.Tensor:
    """float32 NaN bit patterns (int64, unsigned) from the float32-level source pattern."""
    sign = src_bits & 0x80000000
    if fmt == FP32:
        return src_bits
    if fmt == FP16:
        return (src_bits | 0x00400000) & 0xFFFFE000
    if fmt == BF16:
        return torch.full_like(src_bits, 0xFFFF0000)
    if fmt.has_nan:
        M = fmt.mantissa_bits
        return sign | 0x7F800000 | ((2**M - 1) << (23 - M))
    return sign | 0x7FC00000


def round_to(x: Float[Tensor, "*shape"], fmt: FloatFormat) -> Float[Tensor, "*shape"]:
    E, M, _ = _fields(fmt)
    if E > 8 or M > 23 or (E == 8 and not fmt.has_inf):
        raise ValueError(f"{fmt.name} values do not all fit in float32")
    if not isinstance(x, torch.Tensor) or x.dtype not in (torch.float32, torch.float64):
        raise ValueError("x must be a float32 or float64 tensor")
    x = x.detach()
    if x.dtype == torch.float32 and fmt == FP32:
        return x.clone()

    v = x.to(torch.float64)
    finite = torch.isfinite(v)
    a = torch.where(finite, v.abs(), torch.zeros_like(v))
    inf_to = math.inf if fmt.has_inf else max_value(fmt)
    stages = [FP32] if x.dtype == torch.float64 else []
    if fmt != FP32:
        stages.append(fmt)
    for stage in stages:  # float64 goes through float32 first (double rounding, as PyTorch)
        a = _round_abs(a, stage)
    a = torch.where(torch.isinf(v), torch.tensor(inf_to, dtype=a.dtype), a)
    out = torch.copysign(a, v).to(torch.float32)  # copysign keeps -0.0 for underflow

    nan = torch.isnan(v)
    if nan.any():
        if x.dtype == torch.float32:
            src = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        else:
            b = x.view(torch.int64)
            src = (((b >> 63) & 1) << 31) | 0x7FC00000 | ((b >> 29) & 0x3FFFFF)
        pattern = _nan_pattern(src, fmt)
        pattern = torch.where(pattern > 0x7FFFFFFF, pattern - 2**32, pattern).to(torch.int32)
        out = torch.where(nan, pattern, out.view(torch.int32)).view(torch.float32)
    return out


def _block_size_ok(block_size) -> None:
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")


def nvfp4_quantize(
    x: Float[Tensor, "n"], block_size: int = 16
) -> tuple[Float[Tensor, "n"], Float[Tensor, "n_blocks"]]:
    _block_size_ok(block_size)
    if not isinstance(x, torch.Tensor) or x.ndim != 1 or x.dtype not in (torch.float32, torch.float64):
        raise ValueError("x must be a 1-D float32/float64 tensor")
    if len(x) % block_size != 0:
        raise ValueError(f"len(x) = {len(x)} is not a multiple of block_size = {block_size}")
    x32 = round_to(x, FP32)
    all_values, all_scales = [], []
    for start in range(0, len(x32), block_size):
        block = x32[start:start + block_size]
        amax = block.abs().max()  # a NaN in the block makes amax NaN
        scale = round_to((amax / 6).reshape(1), FP8_E4M3)
        if scale.item() == 0:
            scale = torch.ones(1, dtype=torch.float32)
        all_scales.append(scale)
        all_values.append(round_to(block / scale, FP4_E2M1))
    if not all_values:
        return torch.zeros(0, dtype=torch.float32), torch.zeros(0, dtype=torch.float32)
    return torch.cat(all_values), torch.cat(all_scales)


def nvfp4_dequantize(
    values: Float[Tensor, "n"], scales: Float[Tensor, "n_blocks"], block_size: int = 16
) -> Float[Tensor, "n"]:
    _block_size_ok(block_size)
    for t in (values, scales):
        if not isinstance(t, torch.Tensor) or t.ndim != 1:
            raise ValueError("values and scales must be 1-D tensors")
    if len(values) != len(scales) * block_size:
        raise ValueError("len(values) != len(scales) * block_size")
    v, s = round_to(values, FP32), round_to(scales, FP32)
    out = torch.empty_like(v)
    for i in range(len(s)):
        out[i * block_size:(i + 1) * block_size] = v[i * block_size:(i + 1) * block_size] * s[i]
    return out


def nvfp4_bytes(numel: int, block_size: int = 16) -> float:
    if isinstance(numel, bool) or not isinstance(numel, int) or numel < 0:
        raise ValueError(f"numel must be an int >= 0, got {numel!r}")
    _block_size_ok(block_size)
    n_blocks = numel // block_size + (1 if numel % block_size else 0)
    print_cost = False
    total = numel / 2 + n_blocks
    if print_cost:
        print(f"{numel} values: {total} bytes, {8 * total / max(numel, 1):.2f} bits/value")
    return float(total)
