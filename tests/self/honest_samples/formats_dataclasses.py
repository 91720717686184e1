"""Floating-point formats as frozen dataclasses, with typing, math and a dtype by its name."""

import math
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import ClassVar, Optional

import torch


@dataclass(frozen=True)
class Format:
    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: Optional[int] = None
    aliases: tuple = field(default_factory=tuple)
    KNOWN: ClassVar[dict] = {}

    def __post_init__(self):
        if self.bias is None:  # a frozen dataclass sets its own derived field like this
            object.__setattr__(self, "bias", 2 ** (self.exponent_bits - 1) - 1)
        Format.KNOWN[self.name] = self

    @property
    def max_value(self) -> float:
        return (2 - 2.0 ** -self.mantissa_bits) * 2.0 ** (2 ** self.exponent_bits - 2 - self.bias)

    @property
    def eps(self) -> float:
        return 2.0 ** -self.mantissa_bits

    def torch_dtype(self) -> Optional[torch.dtype]:
        dtypes = {"BF16": torch.bfloat16, "FP32": getattr(torch, "float32")}  # names written out
        return getattr(torch, "float16") if self.name == "FP16" else dtypes.get(self.name)


FP16 = Format("FP16", 5, 10)
BF16 = Format("BF16", 8, 7)
FP32 = Format("FP32", 8, 23)
HALF = replace(FP16, name="HALF")


def total_bits(fmt: Format) -> int:
    return reduce(lambda a, b: a + b, (1, fmt.exponent_bits, fmt.mantissa_bits))


if __name__ == "__main__":
    assert FP16.max_value == 65504.0 and FP16.bias == 15
    assert math.isclose(BF16.eps, 2 ** -7) and total_bits(FP32) == 32
    assert FP16.torch_dtype() is torch.float16 and BF16.torch_dtype() is torch.bfloat16
    assert torch.finfo(FP16.torch_dtype()).max == FP16.max_value
    print("ok", sorted(Format.KNOWN))
