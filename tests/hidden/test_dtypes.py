"""dtypes (hidden): format limits against torch.finfo, round_to against PyTorch's own casts
bit for bit, NVFP4 against the reference and against a scale rule computed here with PyTorch.

The oracle for round_to is ``x.to(dtype).float()`` on the CPU, computed here on large tensors
(never fewer than 64 elements). PyTorch's NaN *bit patterns* for float16 and bfloat16 depend on
the tensor's size, the vector path and the CPU, so for FP16/BF16 a NaN must be a NaN and every
other element must match bit for bit; for FP8 and FP32 every bit is compared (their NaN patterns
are stable). Signed zeros always count. The reference is checked against the same oracle: if
PyTorch ever changed its casts, the test itself would say so.
"""

import dataclasses
import math
import random

import pytest
import torch

from tests.checks import Case, call_text, case, check_cases, fail, raises
from tests.common.dtypes import (BF16, FP4_E2M1, FP6_E2M3, FP6_E3M2, FP8_E4M3, FP8_E5M2, FP16, FP32, NVFP4_GRID,
                                 f32, fmt)

TORCH_DTYPE = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
               "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
TORCH_FORMATS = (FP32, FP16, BF16, FP8_E4M3, FP8_E5M2)
# Formats without a torch dtype: only the reference can judge them.
OTHER_FORMATS = (FP6_E2M3, FP6_E3M2, fmt("e4m3_ieee", 4, 3, True, True), fmt("e5m2_fn", 5, 2, False, True),
                 fmt("e3m4", 3, 4, True, True), fmt("e6m9", 6, 9, False, True), fmt("e8m1", 8, 1, True, True))
# Formats beside the torch ones that PyTorch has no dtype for (one flag or one bit away): in the
# tests against PyTorch's casts, so that their points rest on the rounding, which no cast can do.
NEIGHBOURS = {"fp16_bf16": (fmt("fp16_fn", 5, 10, False, True), fmt("e5m9", 5, 9, True, True),
                            fmt("e8m6", 8, 6, True, True), fmt("e7m7", 7, 7, True, True)),
              "fp8": (fmt("e4m2_fn", 4, 2, False, True), fmt("e5m3", 5, 3, True, True),
                      fmt("e4m4_fn", 4, 4, False, True), fmt("e5m1", 5, 1, True, True))}
# Formats that make no sense under any convention: no exponent bits, negative sizes.
NONSENSE_FORMATS = (fmt("e0m3", 0, 3, False, False), fmt("e4m-1", 4, -1, False, True), fmt("e-2m5", -2, 5, True, True))
LIMITS = ("bits", "max_value", "eps", "smallest_normal", "smallest_subnormal")
E2M1_LIMITS = {"bits": 4, "max_value": 6.0, "eps": 0.5, "smallest_normal": 1.0, "smallest_subnormal": 0.5}
BAD = raises("ValueError")


# ----------------------------------------------------------------------------- inputs


def f32_bits(bits) -> torch.Tensor:
    """float32 tensor from unsigned 32-bit patterns (int64 tensor or list)."""
    b = torch.as_tensor(bits, dtype=torch.int64)
    return torch.where(b >= 2**31, b - 2**32, b).to(torch.int32).view(torch.float32)


def all_patterns(dtype: torch.dtype) -> torch.Tensor:
    """Every bit pattern of a 16- or 8-bit torch dtype, as float32 (exact)."""
    if torch.finfo(dtype).bits == 16:
        return torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(dtype).float()
    return torch.arange(256, dtype=torch.int16).to(torch.uint8).view(dtype).float()


def grid(f) -> torch.Tensor:
    """The non-negative finite values of a format, sorted, as float64."""
    if f.name == "fp4_e2m1":
        return torch.tensor([v for v in NVFP4_GRID if v >= 0], dtype=torch.float64)
    v = all_patterns(TORCH_DTYPE[f.name]).double()
    return torch.unique(v[torch.isfinite(v) & (v >= 0)])


def limits_of(f) -> tuple[float, float, float]:
    """(max, smallest normal, smallest subnormal), from the format's own grid."""
    g = grid(f)
    return float(g[-1]), float(2.0 ** (2 - 2 ** (f.exponent_bits - 1))), float(g[1])


def ties(f, gen: torch.Generator, n_random: int) -> torch.Tensor:
    """Exact midpoints between neighbouring values (and the midpoint above max), with the float32
    numbers right next to them: the first and last 64 of the grid, plus n_random others."""
    g = grid(f)
    g = torch.cat([g, (2 * g[-1] - g[-2])[None]])  # one step above max: its midpoint is the overflow edge
    mids = (g[1:] + g[:-1]) / 2
    pick = torch.cat([torch.arange(min(64, len(mids))), torch.arange(max(0, len(mids) - 64), len(mids)),
                      torch.randint(0, len(mids), (n_random,), generator=gen)])
    m64 = mids[pick]
    m = m64.float()
    assert torch.equal(m.double(), m64), "midpoints must be exact in float32"
    near = torch.cat([m, torch.nextafter(m, torch.full_like(m, math.inf)), torch.nextafter(m, torch.zeros_like(m))])
    return torch.cat([near, -near])


def near_edges(f, gen: torch.Generator, n: int) -> torch.Tensor:
    """Random float32 values around max, the smallest normal and the subnormals, both signs."""
    mx, tiny, sub = limits_of(f)
    parts = []
    for edge in (mx, tiny, sub):
        u = torch.rand(n, generator=gen, dtype=torch.float64)
        parts.append(edge * torch.exp2(u * 4 - 2))  # edge / 4 .. edge * 4, log-uniform
    parts.append(torch.rand(n, generator=gen, dtype=torch.float64) * tiny)  # all of the subnormal range
    x = torch.cat(parts).float()
    sign = torch.where(torch.rand(x.shape, generator=gen) < 0.5, -1.0, 1.0)
    return x * sign


def random_bits(gen: torch.Generator, n: int) -> torch.Tensor:
    """Random float32 bit patterns: every exponent, NaN payloads, both signs."""
    return f32_bits(torch.randint(0, 2**32, (n,), generator=gen, dtype=torch.int64))


SPECIALS = f32_bits([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
                     0x7FBFFFFF, 0xFFA5A5A5, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
                     0xFF7FFFFF, 0x3F800000, 0xBF800000])


def pool32(f, seed: int) -> torch.Tensor:
    """float32 inputs for rounding into f: all fp16, bf16 and fp8 patterns, random bits, values near
    f's edges, f's ties and their neighbours, specials."""
    gen = torch.Generator().manual_seed(seed)
    return torch.cat([all_patterns(torch.float16), all_patterns(torch.bfloat16),
                      all_patterns(torch.float8_e4m3fn), all_patterns(torch.float8_e5m2),
                      random_bits(gen, 8192), near_edges(f, gen, 2048), ties(f, gen, 4096), SPECIALS])


def pool64(f, seed: int) -> torch.Tensor:
    """float64 inputs: the float32 pool widened, f's ties nudged by 2**-35 (float32 rounds them back
    onto the tie: PyTorch's double rounding), values around float32's own limits, random float64
    values over f's range, float64 NaNs with payloads."""
    gen = torch.Generator().manual_seed(seed)
    t = ties(f, gen, 2048).double()
    nudged = torch.cat([t * (1 + 2.0**-35), t * (1 - 2.0**-35)])
    mx, tiny, sub = limits_of(f)
    u = torch.rand(8192, generator=gen, dtype=torch.float64)
    spread = torch.exp2(math.log2(sub) - 2 + u * (math.log2(mx) - math.log2(sub) + 4))
    spread = spread * torch.where(torch.rand(8192, generator=gen) < 0.5, -1.0, 1.0).double()
    f32_edges = torch.tensor([3.4028235677973366e38, 3.4028235677973366e38 * (1 + 2.0**-25), 3.5e38, 1e300,
                              -1e300, 2.0**-149, 2.0**-150, 2.0**-150 * (1 + 2.0**-40), 1e-300, -1e-300, 1e-46],
                             dtype=torch.float64)
    nan64 = (torch.randint(1, 2**52, (64,), generator=gen, dtype=torch.int64) | (0x7FF << 52))
    nan64 = torch.cat([nan64, nan64 | (1 << 63)]).view(torch.float64)
    return torch.cat([pool32(f, seed + 1).double(), nudged, spread, f32_edges, nan64])


def finfo_limits(f) -> dict:
    """torch.finfo's bits, max, eps and smallest normal; the smallest subnormal is the bit pattern 0...01."""
    fi = torch.finfo(TORCH_DTYPE[f.name])
    one = torch.tensor(1, dtype=torch.int32 if fi.bits == 32 else torch.int16 if fi.bits == 16 else torch.uint8)
    return {"bits": fi.bits, "max_value": fi.max, "eps": fi.eps, "smallest_normal": fi.smallest_normal,
            "smallest_subnormal": one.view(TORCH_DTYPE[f.name]).item()}


def other_format_inputs(ref, seed: int, formats=OTHER_FORMATS) -> list:
    """round_to cases for formats without a torch dtype: log-uniform values over each format's range."""
    gen, cases = torch.Generator().manual_seed(seed), []
    for f in formats:
        mx = ref.dtypes.max_value(f)
        sub = ref.dtypes.smallest_subnormal(f)
        u = torch.rand(4096, generator=gen, dtype=torch.float64)
        x = torch.exp2(math.log2(sub) - 2 + u * (math.log2(mx) - math.log2(sub) + 3))
        x = (x * torch.where(torch.rand(4096, generator=gen) < 0.5, -1.0, 1.0).double()).float()
        cases.append(case(torch.cat([x, SPECIALS]), f))
    return cases


def ordinary_inputs(seed: int) -> list:
    """round_to_watched cases of ordinary values (normal range, no ties, no overflow), float32 and float64,
    so that only the casts decide the test; named as the student's round_to."""
    gen, cases = torch.Generator().manual_seed(seed), []
    for f in (FP16, BF16, FP8_E4M3, FP8_E5M2, FP4_E2M1):
        mx, tiny, _ = limits_of(f)
        u = torch.rand(1024, generator=gen, dtype=torch.float64)
        x = torch.exp2(math.log2(tiny) + 1 + u * (math.log2(mx) - math.log2(tiny) - 2)).float()
        x = x * torch.where(torch.rand(x.shape, generator=gen) < 0.5, -1.0, 1.0)
        cases += [case(x=xx, fmt=f, what=call_text("dtypes.round_to", (xx, f))) for xx in (x, x.double())]
    return cases


def nvfp4_inputs(seed: int) -> list[tuple]:
    """(x, block_size) cases: normal data at many scales, outliers, all-zero blocks, blocks too small
    for an E4M3 scale, blocks past 448 * 6, exact grid values, float64 input."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for _ in range(48):
        bs = rng.choice([16, 16, 16, 32, 8, 1, 3])
        n_blocks = rng.randint(1, 24)
        x = torch.randn(n_blocks * bs, generator=gen) * 10.0 ** rng.uniform(-6, 4)
        blocks = x.view(n_blocks, bs)
        for b in range(n_blocks):
            kind = rng.random()
            if kind < 0.1:
                blocks[b] = 0.0
            elif kind < 0.2:
                blocks[b] *= 1e-5
            elif kind < 0.3:
                blocks[b] *= 1e5
            elif kind < 0.4:
                blocks[b, rng.randrange(bs)] *= 100  # an outlier
            elif kind < 0.5:
                blocks[b] = torch.tensor([rng.choice(NVFP4_GRID) * 2.0 ** rng.randint(-8, 8) for _ in range(bs)])
            elif kind < 0.55:
                blocks[b, rng.randrange(bs)] = -0.0
        x = x.double() * (1 + 2.0**-30) if rng.random() < 0.2 else x
        cases.append((x, bs) if bs != 16 or rng.random() < 0.5 else (x,))
    return cases


def dequantize_inputs(seed: int) -> list:
    """(values, scales[, block_size]) cases: values on the grid, scales at many magnitudes, float64 too."""
    rng, gen, cases = random.Random(seed), torch.Generator().manual_seed(seed), []
    for _ in range(40):
        bs = rng.choice([16, 32, 8, 1, 5])
        n_blocks = rng.randint(0, 20)
        values = torch.tensor(NVFP4_GRID)[torch.randint(0, 15, (n_blocks * bs,), generator=gen)]
        scales = torch.randn(n_blocks, generator=gen).abs() * 10.0 ** rng.uniform(-3, 2)
        if rng.random() < 0.3:
            values, scales = values.double(), scales.double()
        cases.append((values, scales, bs) if bs != 16 or rng.random() < 0.5 else (values, scales))
    return cases, rng


# ----------------------------------------------------------------------------- comparisons


def _hex(t: torch.Tensor) -> str:
    if t.dtype == torch.float64:
        return f"0x{int(t.view(torch.int64)) & (2**64 - 1):016x}"
    if t.dtype == torch.float32:
        return f"0x{int(t.view(torch.int32)) & (2**32 - 1):08x}"
    return str(t.dtype)


def compare_cast(got, want: torch.Tensor, x: torch.Tensor, what: str, nan_bits: bool, source: str) -> None:
    """got must be a float32 tensor shaped like x, NaN exactly where want is NaN, and equal to want
    bit for bit elsewhere (everywhere, NaN payloads included, when nan_bits)."""
    if type(got) is not torch.Tensor or got.dtype != torch.float32 or got.shape != x.shape:
        fail(what, got, f"a float32 tensor of shape {tuple(x.shape)}")
    gb, wb = got.reshape(-1).view(torch.int32), want.reshape(-1).view(torch.int32)
    g_nan, w_nan = torch.isnan(got.reshape(-1)), torch.isnan(want.reshape(-1))
    bad = (gb != wb) if nan_bits else ((g_nan != w_nan) | (~w_nan & (gb != wb)))
    if bool(bad.any()):
        idx = bad.nonzero().flatten()
        xs = x.reshape(-1)
        rows = [f"x = {xs[i].item()!r} ({_hex(xs[i])}): expected {want.reshape(-1)[i].item()!r} "
                f"({_hex(want.reshape(-1)[i])}), got {got.reshape(-1)[i].item()!r} ({_hex(gb[i].view(torch.float32))})"
                for i in idx[:6].tolist()]
        rule = "all bits compared" if nan_bits else "bits compared where the answer is not NaN"
        pytest.fail(f"{what}\n  {len(idx)} of {xs.numel()} elements differ from {source} ({rule}), e.g.\n    "
                    + "\n    ".join(rows), pytrace=False)


@dataclasses.dataclass(frozen=True)
class Form:
    """What is due where only the answer's form is judged (its values are judged by other tests): a
    float32 tensor of ``shape``; with ``blocks``, a tuple (values, scales) of shapes ``shape``, (blocks,)."""
    shape: tuple
    blocks: int | None = None
    why: str = ""

    def __repr__(self) -> str:
        text = (f"a float32 tensor of shape {self.shape}" if self.blocks is None else
                f"a tuple (values, scales) of float32 tensors of shapes {self.shape} and ({self.blocks},)")
        return text + (f" ({self.why})" if self.why else "")


def has_form(got, form: Form, what: str):
    """compare for Form dues; returns got."""
    def f32_of(t, shape):
        return type(t) is torch.Tensor and t.dtype == torch.float32 and tuple(t.shape) == shape
    ok = (f32_of(got, form.shape) if form.blocks is None else type(got) is tuple and len(got) == 2
          and f32_of(got[0], form.shape) and f32_of(got[1], (form.blocks,)))
    if not ok:
        fail(what, got, form)
    return got


def check_each(impl, target: str, cases, compare, **kwargs) -> None:
    """check_cases one case at a time, for comparisons that show the case's input beside each differing
    element: ``compare(got, due, what, case)`` (check_cases gives its own compare no case)."""
    for c in cases:
        c = c if isinstance(c, Case) else Case(tuple(c))
        check_cases(impl, target, [c], compare=lambda got, due, what: compare(got, due, what, c), **kwargs)


def casts_equal(nan_bits: bool, source: str):
    """compare for check_each: compare_cast with x = the case's first argument."""
    return lambda got, due, what, c: compare_cast(got, due, c.args[0], what, nan_bits, source)


def torch_cast(x: torch.Tensor, fmt) -> torch.Tensor:
    """The oracle of round_to: PyTorch's own cast, on the CPU."""
    assert x.numel() >= 64, "compute the oracle on large tensors (PyTorch's vector path)"
    return x.to(TORCH_DTYPE[fmt.name]).float()


def check_against_torch(impl, ref, f, inputs: list[torch.Tensor]) -> None:
    """round_to(x, f) for each x: the reference and the submission against PyTorch's cast."""
    nan_bits = f.name not in ("fp16", "bf16")
    check_each(impl, "dtypes.round_to", [case(x, f) for x in inputs],
               casts_equal(nan_bits, f"x.to({TORCH_DTYPE[f.name]}).float()"), ref=ref, oracle=torch_cast)


def uncast_and_equal(got, due, what: str, c) -> None:
    """compare for round_to_watched: no PyTorch cast happened, and the result is due bit for bit."""
    result, used_cast, casts = got
    if used_cast is not False:
        fail(what, f"PyTorch casts: {', '.join(map(str, casts))}", "no cast to a narrow dtype",
             "implement the rounding with integer/float arithmetic (bits, or frexp + round)")
    compare_cast(result, due if isinstance(due, torch.Tensor) else due[0], c.kwargs["x"], what, nan_bits=True,
                 source="the right answer (no NaN here)")


def on_grid_and_equal(got, due, what: str, c) -> None:
    """compare for round_to into E2M1: the reference's answer stays on the grid; got equals it."""
    finite = ~torch.isnan(due)
    assert bool(torch.isin(due[finite], torch.tensor(NVFP4_GRID, dtype=torch.float32)).all()), "reference left the grid"
    compare_cast(got, due, c.args[0], what, nan_bits=False, source="the reference")


def quantized_equal(got, due, what: str, c) -> None:
    """compare for nvfp4_quantize against the reference: values and scales bit for bit."""
    x, bs = c.args[0], c.args[1] if len(c.args) > 1 else 16
    values, scales = has_form(got, Form((x.numel(),), x.numel() // bs), what)
    amax = x.float().reshape(-1, bs).abs().amax(dim=1)  # shown as "x" when a scale differs
    compare_cast(scales, due[1], amax, f"scales of {what} (x = the block's amax)", nan_bits=False, source="the reference")
    compare_cast(values, due[0], x, f"values of {what}", nan_bits=False, source="the reference")


def e4m3_scales(x: torch.Tensor, block_size: int = 16) -> torch.Tensor:
    """The NVFP4 scale rule: float32 amax / 6, rounded by PyTorch's E4M3 cast (padded to >= 64
    elements); a zero block's scale is 1."""
    amax = x.float().reshape(-1, block_size).abs().amax(dim=1)
    want = torch.cat([amax / 6, torch.zeros(64)]).to(torch.float8_e4m3fn).float()[:len(amax)]
    return torch.where(want == 0, 1.0, want)


def scale_rule_and_round_trip(got, due, what: str, c) -> None:
    """compare for nvfp4_quantize against the scale rule: scales bit for bit, values on the grid,
    |x - value * scale| bounded."""
    bs = c.args[1] if len(c.args) > 1 else 16
    x = c.args[0].float().reshape(-1, bs)
    values, scales = has_form(got, Form((x.numel(),), x.shape[0]), what)
    compare_cast(scales, due, x.abs().amax(dim=1), f"scales of {what}", nan_bits=True,
                 source="round_to(amax / 6, E4M3) by PyTorch, 0 -> 1")
    grid_values = torch.tensor(NVFP4_GRID, dtype=torch.float32)
    v = values.reshape(-1, bs)
    if not bool(torch.isin(v, grid_values).all()):
        fail(f"values of {what}", v[~torch.isin(v, grid_values)], f"values on the grid {NVFP4_GRID}")
    # |x - value * scale| <= (the E2M1 half-gap at |x| / scale, or the excess over 6) * scale
    t = (x / scales[:, None]).abs()
    half_gap = torch.where(t < 2, 0.25, torch.where(t < 4, 0.5, 1.0))
    bound = torch.where(t > 6, t - 6, half_gap) * scales[:, None]
    err = (x.double() - (v * scales[:, None]).double()).abs()
    over = err > bound.double() * (1 + 1e-6) + 1e-6 * x.double().abs()  # float32 division error
    if bool(over.any()):
        i = over.nonzero()[0].tolist()
        fail(f"round trip of {what}, element {i[0] * bs + i[1]}", float(v[i[0], i[1]] * scales[i[0]]),
             float(x[i[0], i[1]]), f"error {float(err[i[0], i[1]]):.3g} > bound {float(bound[i[0], i[1]]):.3g}")


# ----------------------------------------------------------------------------- format limits


@pytest.mark.points(1)
def test_limits_equal_torch_finfo(impl, ref):
    """bits, max, eps, smallest normal and subnormal equal torch.finfo for the five torch formats (E2M1: the reference)"""
    for name in LIMITS:
        check_cases(impl, f"dtypes.{name}", [case(f, want=finfo_limits(f)[name]) for f in TORCH_FORMATS]
                    + [case(FP4_E2M1, want=E2M1_LIMITS[name])], ref=ref,
                    note="oracle: torch.finfo (smallest_subnormal: the pattern 0...01); E2M1: its known limits")


# The formats PyTorch has no dtype for weigh most: no cast or torch.finfo can answer them, so
# their points are earned by the work alone (docs/honest-work.md, the trust table's behaviour column).
@pytest.mark.points(3)
def test_other_formats(impl, ref):
    """limits and round_to of formats with no constant (FP6 E2M3/E3M2, IEEE E4M3, ...) equal the reference"""
    for name in LIMITS:
        check_cases(impl, f"dtypes.{name}", [case(f) for f in OTHER_FORMATS], ref=ref)
    check_each(impl, "dtypes.round_to", other_format_inputs(ref, 5), casts_equal(False, "the reference"), ref=ref)


# ----------------------------------------------------------------------------- round_to vs PyTorch


@pytest.mark.points(1)
def test_round_to_fp16_bf16_equals_torch(impl, ref):
    """round_to into FP16 and BF16 equals x.to(dtype).float() bit for bit: all 65,536 fp16/bf16 patterns, ties, edges, float64; their neighbours without a torch dtype equal the reference"""
    for i, f in enumerate((FP16, BF16)):
        check_against_torch(impl, ref, f, [pool32(f, 100 + 10 * i), pool64(f, 200 + 10 * i)])
    check_each(impl, "dtypes.round_to", other_format_inputs(ref, 210, NEIGHBOURS["fp16_bf16"]),
               casts_equal(False, "the reference"), ref=ref)


@pytest.mark.points(1)
def test_round_to_fp8_equals_torch(impl, ref):
    """round_to into FP8 E4M3 (saturating at ±448) and E5M2 equals PyTorch's cast in every bit, NaNs included; their neighbours without a torch dtype equal the reference"""
    for i, f in enumerate((FP8_E4M3, FP8_E5M2)):
        check_against_torch(impl, ref, f, [pool32(f, 300 + 10 * i), pool64(f, 400 + 10 * i)])
    check_each(impl, "dtypes.round_to", other_format_inputs(ref, 410, NEIGHBOURS["fp8"]),
               casts_equal(False, "the reference"), ref=ref)


@pytest.mark.points(1)
def test_round_to_e2m1(impl, ref):
    """round_to into FP4_E2M1 equals the reference: the 15-value NVFP4 grid, ties to even, saturation at ±6"""
    check_each(impl, "dtypes.round_to", [case(pool32(FP4_E2M1, 500), FP4_E2M1), case(pool64(FP4_E2M1, 600), FP4_E2M1)],
               on_grid_and_equal, ref=ref)
    # E2M1 has no NaN code: the docstring's pattern is s | 0x7FC00000 (sign kept, payload dropped), every bit counts
    nans = f32_bits([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA5A5A5, 0x7FBFFFFF, 0xFF800001, 0x3F800000, 0xBF800000])
    check_each(impl, "dtypes.round_to", [case(nans, FP4_E2M1), case(nans.double(), FP4_E2M1)],
               casts_equal(True, "the reference"), ref=ref)


@pytest.mark.points(1)
def test_round_to_fp32_shapes_and_bad_input(impl, ref):
    """round_to: FP32 keeps float32 bits and rounds float64 like x.float(); any shape; bad dtypes or formats raise ValueError"""
    gen = torch.Generator().manual_seed(700)
    x32 = torch.cat([random_bits(gen, 4096), SPECIALS])
    x64 = pool64(FP16, 710)
    check_against_torch(impl, ref, FP32, [x32, x64])
    # shapes: 0-d, empty, 3-d; the result is float32 of the input's shape (values are judged above)
    base = random_bits(gen, 4096)
    base = base[torch.isfinite(base)][:60]
    shaped = [base[0].reshape(()), base[:0], base.reshape(3, 4, 5), base.double().reshape(5, 12), base[:0].reshape(0, 3)]
    check_cases(impl, "dtypes.round_to", [case(x, f, want=Form(tuple(x.shape))) for f in (FP16, BF16, FP8_E4M3, FP8_E5M2,
                FP4_E2M1) for x in shaped], compare=has_form)
    # bad input, next to valid neighbours
    ok, valid = torch.linspace(-3, 3, 64), Form((64,), why="a valid input")
    check_cases(impl, "dtypes.round_to", [
        case(ok.to(torch.int32), FP16, want=BAD), case(ok.half(), FP16, want=BAD), case(ok.bfloat16(), BF16, want=BAD),
        case(ok.to(torch.int64), FP16, want=BAD), case(ok, fmt("fp64", 11, 52, True, True), want=BAD),
        case(ok, fmt("e8m7_fn", 8, 7, False, True), want=BAD), case(ok, fmt("e5m24", 5, 24, True, True), want=BAD),
        case(ok, fmt("e0m3", 0, 3, False, False), want=BAD), case(ok, fmt("e4m-1", 4, -1, False, True), want=BAD),
        case(ok, fmt("e9m3", 9, 3, True, True), want=BAD), case(ok, fmt("e?m3", None, 3, False, True), want=BAD),
        case(ok, fmt("e8m23", 8, 23, True, True), want=valid), case(ok.double(), FP16, want=valid),
        case(ok, FP6_E3M2, want=valid)], compare=has_form)
    for name in LIMITS:  # valid neighbours PyTorch has no dtype for: the reference's answers
        check_cases(impl, f"dtypes.{name}", [case(f, want=BAD) for f in NONSENSE_FORMATS]
                    + [case(FP6_E3M2), case(fmt("e3m1", 3, 1, True, True))], ref=ref)
    # bits' docstring: "A fmt that is not a valid FloatFormat raises ValueError": a name, a flag that is no bool
    check_cases(impl, "dtypes.bits", [case("fp16", want=BAD), case(fmt("e5m2?", 5, 2, None, True), want=BAD),
                                      case(FP8_E5M2, want=8)])


@pytest.mark.points(1)
@pytest.mark.how
def test_round_to_does_not_call_torch_cast(impl, ref):
    """round_to rounds by itself: no PyTorch cast to float16/bfloat16/float8 happens while it runs"""
    cases = ordinary_inputs(800)
    check_each(impl, "probes.round_to_watched", [c for c in cases if c.kwargs["fmt"].name in TORCH_DTYPE],
               uncast_and_equal, oracle=torch_cast)
    check_each(impl, "probes.round_to_watched", [c for c in cases if c.kwargs["fmt"].name not in TORCH_DTYPE],
               uncast_and_equal, ref=ref)


# ----------------------------------------------------------------------------- NVFP4


@pytest.mark.points(2)
def test_nvfp4_quantize_random(impl, ref):
    """nvfp4_quantize equals the reference bit for bit (values and scales) on 48 random inputs at many scales"""
    x = torch.randn(64, generator=torch.Generator().manual_seed(901))
    x[20] = math.nan  # a NaN makes its block's scale and values NaN
    check_each(impl, "dtypes.nvfp4_quantize", nvfp4_inputs(900) + [(x,)], quantized_equal, ref=ref)


@pytest.mark.points(1)
def test_nvfp4_scale_rule_and_round_trip(impl):
    """NVFP4 scales are amax / 6 cast to E4M3 by PyTorch (zero block -> 1); values on the grid; round-trip error bounded"""
    check_each(impl, "dtypes.nvfp4_quantize", nvfp4_inputs(1000), scale_rule_and_round_trip, oracle=e4m3_scales)


@pytest.mark.points(1)
def test_nvfp4_dequantize_and_bytes(impl, ref):
    """nvfp4_dequantize equals the reference bit for bit; nvfp4_bytes = 0.5 * n + ceil(n / block_size) (a float)"""
    cases, rng = dequantize_inputs(1100)
    check_each(impl, "dtypes.nvfp4_dequantize", cases, casts_equal(True, "the reference"), ref=ref)
    sizes = [(rng.choice([0, 1, 15, 16, 17, 4096, rng.randint(0, 10**9)]), rng.choice([16, 32, 1, 7, 1000]))
             for _ in range(200)]
    check_cases(impl, "dtypes.nvfp4_bytes", [case(n, bs, want=0.5 * n + -(-n // bs)) for n, bs in sizes]
                + [case(48, want=27.0, what="dtypes.nvfp4_bytes(48) (default block_size 16)")])


@pytest.mark.points(1)
def test_nvfp4_bad_input(impl, ref):
    """NVFP4: n not divisible by the block size, 2-D input, block_size < 1, bad lengths raise ValueError; valid neighbours work"""
    x = torch.randn(48, generator=torch.Generator().manual_seed(1200))
    v, s, ok = f32([1.0] * 32), f32([0.5, 2.0]), "a valid input"
    check_cases(impl, "dtypes.nvfp4_quantize", [
        case(x[:47], want=BAD), case(x[:17], want=BAD), case(x, 32, want=BAD), case(x.reshape(3, 16), want=BAD),
        case(x, 0, want=BAD), case(x, -16, want=BAD), case(x.to(torch.int32), want=BAD),
        case(x, want=Form((48,), 3, ok)), case(x[:45], 15, want=Form((45,), 3, ok)), case(x, 1, want=Form((48,), 48, ok)),
        case(x[:32], 32, want=Form((32,), 1, ok)), case(x[:0], want=Form((0,), 0, ok))], ref=ref, compare=has_form)
    check_cases(impl, "dtypes.nvfp4_dequantize", [
        case(v[:31], s, want=BAD), case(v, s[:1], want=BAD), case(v, s, 8, want=BAD), case(v.reshape(2, 16), s, want=BAD),
        case(v, s, 0, want=BAD), case(v, s, want=Form((32,), None, ok)), case(v[:16], s[:1], want=Form((16,), None, ok)),
        case(v[:0], s[:0], 0, want=BAD), case(v[:0], s[:0], -2, want=BAD),  # lengths agree (0 == 0 * bs): bs decides
        case(v, s[:1], 32, want=Form((32,), None, ok))], ref=ref, compare=has_form)
    check_cases(impl, "dtypes.nvfp4_bytes", [case(-1, want=BAD), case(16, 0, want=BAD), case(16, -4, want=BAD),
                                             case(0), case(16, 1), case(5, 16)], ref=ref)
