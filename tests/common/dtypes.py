"""dtypes: the formats as they cross the seam, and the NVFP4 grid of the notes."""

import torch

from seam import Struct


def fmt(name: str, exponent_bits: int, mantissa_bits: int, has_inf: bool, has_nan: bool) -> Struct:
    return Struct("FloatFormat", dict(name=name, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits,
                                      has_inf=has_inf, has_nan=has_nan))


FP32 = fmt("fp32", 8, 23, True, True)
FP16 = fmt("fp16", 5, 10, True, True)
BF16 = fmt("bf16", 8, 7, True, True)
FP8_E4M3 = fmt("fp8_e4m3", 4, 3, False, True)
FP8_E5M2 = fmt("fp8_e5m2", 5, 2, True, True)
FP4_E2M1 = fmt("fp4_e2m1", 2, 1, False, False)
FORMATS = (FP32, FP16, BF16, FP8_E4M3, FP8_E5M2, FP4_E2M1)
# Formats with no constant in dtypes.py (the OCP MX FP6 types): the formulas must not be hard-coded.
FP6_E2M3 = fmt("fp6_e2m3", 2, 3, False, False)
FP6_E3M2 = fmt("fp6_e3m2", 3, 2, False, False)

# The NVFP4 value grid of notes 001.
NVFP4_GRID = [-6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6]


def f32(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)
