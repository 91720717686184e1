"""modules (hidden): Linear's forward against x @ w computed here, its initialisation
against the truncated normal's exact moments (sound statistical bounds), Cruncher against the
chained products of its own weights, and the counting functions against real torch modules."""

import math
import random
from functools import reduce

import pytest
import torch

from tests.checks import case, check_cases, expect_equal, fail, raises, within
from seam.probes.modules import TORCH_MODULE_KINDS, build_torch_module
from tests.common.modules import UncutNormal, mistakes


def close(got, expected: torch.Tensor, what: str, rtol: float, atol: float):
    """Same dtype and shape, values within rtol/atol."""
    if not isinstance(got, torch.Tensor):
        fail(what, got, expected)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        fail(what, got, expected, "dtype or shape differs")
    if not within(got, expected, rtol=rtol, atol=atol):
        err = (got.double() - expected.double()).abs().max().item()
        fail(what, got, expected, f"max |error| {err:.3g}; tolerance rtol={rtol:g}, atol={atol:g}")


# Float tolerances for a matrix product: the test computes x @ w in float64 from the same
# float32 inputs. A float32 dot product of d_in <= 96 terms, with |x| <~ 5 and |w| <~ 1, has a
# rounding error below d_in * 2^-24 * sum|x_i w_i| < 96 * 6e-8 * 96 * 5 ~ 3e-3 in the worst case
# and ~1e-6 in practice; atol 1e-4 with rtol 1e-4 lets any summation order pass while a wrong
# product (transposed weight, a bias, a missing layer) is off by O(1).
F32 = dict(rtol=1e-4, atol=1e-4)
# float64 inputs: the same product summed in another order differs by ~1e-15 relative; 1e-10
# leaves 1e5 for any correct order.
F64 = dict(rtol=1e-10, atol=1e-10)
# On a GPU the point is the device, not the digits: cuBLAS may sum in another order or in TF32
# (10 mantissa bits: ~1e-3 relative), so a loose 1e-2 still rejects a wrong product.
CUDA_MATMUL = dict(rtol=1e-2, atol=1e-2)



def matmul64(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b in float64, as a broadcast product and sum (no BLAS: the oracle is independent of it)."""
    return (a.double()[..., :, None] * b.double()).sum(-2)


def forward_cases(seed: int, n: int):
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    for i in range(n):
        d_in, d_out, dtype = rng.randint(1, 96), rng.randint(1, 40), torch.float64 if i % 5 == 0 else torch.float32
        w = torch.randn(d_in, d_out, generator=gen, dtype=torch.float64).to(dtype)
        leads = [(), (rng.randint(1, 6),), (rng.randint(1, 3), rng.randint(1, 4)), (2, 1, rng.randint(1, 3)), (0,)]
        xs = [torch.randn(*lead, d_in, generator=gen, dtype=torch.float64).to(dtype) for lead in leads]
        yield case(weight=w, xs=xs, what=f"Linear({d_in}, {d_out}, dtype={dtype})", want={
            "xs": xs, "ys": [matmul64(x, w).to(dtype) for x in xs],
            # gradient flows into the weight: d(sum(x @ w))/dw = (sum of x rows) outer ones
            "grad": xs[0].double().reshape(-1, d_in).sum(0)[:, None].expand(d_in, d_out).to(dtype)})


@pytest.mark.points(2)
def test_linear_forward_random(impl):
    """Linear.forward equals x @ weight (computed here) for random weights, dtypes and leading dims"""
    def compare(got: dict, due: dict, what: str):
        if "grad" not in due:  # a named mistake's answer: the weight's shape alone (the probe stops there)
            return expect_equal(got["weight_shape"], due["weight_shape"], f"{what}.weight.shape")
        expect_equal(got["weight_shape"], tuple(due["grad"].shape), f"{what}.weight.shape")
        tol = F32 if due["grad"].dtype == torch.float32 else F64
        for x, y, expected in zip(due["xs"], got["ys"], due["ys"]):
            close(y, expected, f"{what} forward on x of shape {tuple(x.shape)} (expected x @ weight)", **tol)
        close(got["grad"], due["grad"], f"{what}: weight.grad after forward(x).sum().backward()", **tol)
    check_cases(impl, "probes.linear_forward", forward_cases(71, 20), compare=compare,
                mistakes=mistakes("linear_forward"))


@pytest.mark.points(1)
def test_linear_structure(impl):
    """Linear holds exactly one nn.Parameter `weight` of shape (input_dim, output_dim): no bias, no buffers"""
    def compare(got: dict, params: list, what: str):
        expect_equal(got["params"], params, f"{what}.named_parameters(): (name, shape, dtype, device, requires_grad)")
        expect_equal(got["weight_is_parameter"], True, f"isinstance({what}.weight, nn.Parameter)")
        expect_equal(got["buffers"], [], f"{what}.named_buffers()")
    check_cases(impl, "probes.linear_structure", [
        case(input_dim=d_in, output_dim=d_out, want=[("weight", (d_in, d_out), torch.float32, "cpu", True)],
             what=f"Linear({d_in}, {d_out})") for d_in, d_out in [(5, 7), (1, 1), (64, 3), (3, 64)]],
        compare=compare, mistakes=mistakes("linear_structure"))


def _no_torch_linear(got: dict, count: int, what: str):
    expect_equal(got["nn_linear_submodules"], count, f"torch.nn.Linear submodules inside {what}")
    expect_equal(got["linear_calls"], count, f"calls of torch.nn.functional.linear during {what}.forward")


# The probes count calls of the linear kernel through a TorchFunctionMode: F.linear, an alias of it
# bound at import time, torch._C._nn.linear and torch.ops.aten.linear all dispatch through it; an
# nn.Linear submodule is caught by isinstance over .modules(). One test a class: an honest Linear
# keeps its point while Cruncher is unwritten.
@pytest.mark.points(0.5)
@pytest.mark.how
def test_linear_does_not_use_torch_linear(impl):
    """neither torch.nn.Linear nor torch.nn.functional.linear (under any name) is used by Linear"""
    check_cases(impl, "probes.linear_forward", [case(weight=torch.randn(6, 4), want=0, what="Linear(6, 4)",
                                                     xs=[torch.randn(3, 6), torch.randn(2, 2, 6)])],
                compare=_no_torch_linear)


@pytest.mark.points(0.5)
@pytest.mark.how
def test_cruncher_does_not_use_torch_linear(impl):
    """neither torch.nn.Linear nor torch.nn.functional.linear (under any name) is used by Cruncher"""
    check_cases(impl, "probes.cruncher_run", [case(dim=6, num_layers=2, seed=0, xs=[torch.randn(3, 6)], want=0,
                                                   what="Cruncher(6, 2)")], compare=_no_torch_linear)


# ---- initialisation statistics ----------------------------------------------------------------
#
# The spec: "a normal with std 1/sqrt(input_dim) truncated at ±3 std". We read sigma =
# 1/sqrt(input_dim) as the std of the underlying normal (as torch.nn.init.trunc_normal_(w, std=sigma,
# a=-3 sigma, b=3 sigma) does, and the reference is checked to be bit-identical to that call below).
# For Z ~ N(0, 1) conditioned on |Z| <= c = 3 (phi, Phi the standard normal pdf and cdf, K = 2 Phi(c) - 1):
#   E[Z] = 0,  E[Z^2] = 1 - 2 c phi(c) / K = 0.973337,  E[Z^4] = 3 - 2 (c^3 + 3c) phi(c) / K = 2.680043,
# so the weights' std is 0.98658 sigma (not sigma), Var[Z^2] = 1.732658, and |Z| <= 3 always.
# Bounds (Bernstein's inequality; n independent X_i with |X_i - E X| <= b and variance v):
#   P(|mean(X) - E X| >= t) <= 2 exp(-n t^2 / (2 (v + b t / 3)))
# solved for t at false-alarm delta = 1e-7 per check (6 checks per test: <= 6e-7 < 1e-6 in all):
#   t = (b L / 3 + sqrt((b L / 3)^2 + 2 n L v)) / n,  L = ln(2 / delta).
# With n = 2^20 samples: mean of Z: v <= 1, b = 3 -> t = 0.0056; mean of Z^2: v = 1.7327, b = 9 -> t = 0.0075.
# What the bounds reject: std 1/input_dim (off by a factor sqrt(input_dim)), std 1/sqrt(output_dim)
# (the shapes below are far from square), no truncation (E[Z^2] = 1, off by 0.0267 > 0.0075, and
# values beyond 3 sigma: P(|Z| > 3) = 0.27% of 2^20 ~ 2800 of them), clamping instead of truncating
# (E[Z^2] = 0.99501, off by 0.0217), a normal rescaled to std exactly sigma (E[Z^2] = 1).
# The max check allows float32 rounding of the cut-off 3 sigma (relative 1e-6).

C = 3.0
_PHI = math.exp(-C * C / 2) / math.sqrt(2 * math.pi)
_K = math.erf(C / math.sqrt(2))
TRUNC_M2 = 1 - 2 * C * _PHI / _K
TRUNC_M4 = 3 - 2 * (C**3 + 3 * C) * _PHI / _K
DELTA = 1e-7


def bernstein_halfwidth(n: int, var: float, b: float, delta: float = DELTA) -> float:
    L = math.log(2 / delta)
    return (b * L / 3 + math.sqrt((b * L / 3) ** 2 + 2 * n * L * var)) / n


@pytest.mark.points(2)
def test_linear_init_statistics(impl, ref):
    """Linear's weights are N(0, 1/input_dim) truncated at ±3 std: mean, variance and range over 2^20 draws"""
    # The reference is exactly torch's trunc_normal_ with sigma = 1/sqrt(d_in), a/b = ∓3 sigma.
    def trunc_normal(input_dim: int, output_dim: int, seed: int) -> torch.Tensor:
        torch.manual_seed(seed)
        sigma = 1 / math.sqrt(input_dim)
        return torch.nn.init.trunc_normal_(torch.empty(input_dim, output_dim), std=sigma, a=-3 * sigma, b=3 * sigma)
    check_cases(ref, "probes.linear_weight", [case(input_dim=d_in, output_dim=d_out, seed=seed) for d_in, d_out, seed
                                              in [(7, 5, 3), (256, 9, 4)]], ref=ref, oracle=trunc_normal)
    def within_bounds(s: dict, shape: tuple | UncutNormal, what: str):
        if isinstance(shape, UncutNormal):  # a named mistake's answer: statistics of the notes' ±3 absolute cut
            return shape.check(s, what)
        d_in, n = shape[0], shape[0] * shape[1]
        expect_equal(s["n"], n, f"{what}.numel()")
        expect_equal(s["dtype"], torch.float32, f"{what}.dtype")
        sigma = 1 / math.sqrt(d_in)
        mean = s["sum"] / n / sigma
        t1 = bernstein_halfwidth(n, 1.0, 3.0)
        if not abs(mean) <= t1:
            fail(f"{what}: mean / sigma (sigma = 1/sqrt({d_in}))", round(mean, 5), 0.0,
                 f"allowed |mean / sigma| <= {t1:.4f} (false-alarm rate < 1e-7)")
        m2 = s["sum_sq"] / n / sigma**2
        t2 = bernstein_halfwidth(n, TRUNC_M4 - TRUNC_M2**2, C * C)
        if not abs(m2 - TRUNC_M2) <= t2:
            fail(f"{what}: mean(w^2) / sigma^2 (sigma = 1/sqrt({d_in}))", round(m2, 5), round(TRUNC_M2, 5),
                 f"a N(0, sigma^2) truncated at ±3 sigma has E[w^2] = {TRUNC_M2:.5f} sigma^2 (std 0.98658 sigma); "
                 f"allowed ±{t2:.4f} (false-alarm rate < 1e-7)")
        if not s["max_abs"] <= 3 * sigma * (1 + 1e-6):
            fail(f"{what}: max |w| / sigma", s["max_abs"] / sigma, 3.0, "no value may lie beyond 3 sigma")
    check_cases(impl, "probes.linear_init_stats", [
        case(input_dim=d_in, output_dim=d_out, seed=seed, want=(d_in, d_out), what=f"Linear({d_in}, {d_out}).weight")
        for d_in, d_out, seed in [(1024, 1024, 11), (4096, 256, 12), (64, 16384, 13)]], compare=within_bounds,
        mistakes=mistakes("linear_init_stats"))


@pytest.mark.points(1)
def test_linear_dtype_argument(impl):
    """Linear(..., dtype=...) creates the weight in that dtype and forward keeps it; device='cpu' is accepted"""
    check_cases(impl, "probes.linear_structure", [
        case(input_dim=6, output_dim=3, dtype=dtype, device="cpu", want=[("weight", (6, 3), dtype, "cpu", True)],
             what=f"Linear(6, 3, dtype={dtype}, device='cpu').named_parameters()")
        for dtype in (torch.float64, torch.bfloat16, torch.float16, torch.float32)],
        compare=lambda got, params, what: expect_equal(got["params"], params, what),
        mistakes=mistakes("linear_structure"))
    w, x = torch.randn(6, 3, dtype=torch.float64), torch.randn(4, 6, dtype=torch.float64)
    check_cases(impl, "probes.linear_forward", [case(weight=w, xs=[x], want=matmul64(x, w),
                                                     what="Linear(6, 3, dtype=torch.float64) forward")],
                compare=lambda got, y, what: close(got["ys"][0], y, what, **F64))


# ---- Cruncher -----------------------------------------------------------------------------------

def cruncher_cases(seed: int):
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    for dim, layers in [(1, 0), (3, 1), (16, 3), (64, 2), (7, 5), (5, 0), (32, 4)]:
        xs = [torch.randn(*lead, dim, generator=gen) for lead in [(), (rng.randint(1, 5),), (2, rng.randint(1, 4))]]
        yield case(dim=dim, num_layers=layers, seed=rng.randint(0, 10**6), xs=xs, what=f"Cruncher({dim}, {layers})",
                   want={"names": [f"layers.{i}.weight" for i in range(layers)] + ["final.weight"],
                         "shapes": [(dim, dim)] * layers + [(dim, 1)], "xs": xs})  # outputs: from its own weights


@pytest.mark.points(2)
def test_cruncher_random(impl):
    """Cruncher(dim, num_layers): layers.i.weight (dim, dim) then final.weight (dim, 1); output = chained x @ W, shape x.shape[:-1]"""
    def compare(run: dict, due: dict, what: str):
        expect_equal(run["names"], due["names"], f"{what}.named_parameters() names")
        expect_equal([tuple(w.shape) for w in run["weights"]], due["shapes"], f"{what} parameter shapes")
        for x, y in zip(due["xs"], run["outs"]):
            close(y, reduce(matmul64, run["weights"], x.double()).squeeze(-1).float(),
                  f"{what}(x) for x of shape {tuple(x.shape)} (expected x @ W_0 @ ... @ W_final, squeezed)", **F32)
    check_cases(impl, "probes.cruncher_run", cruncher_cases(72), compare=compare)


# ---- counting ----------------------------------------------------------------------------------

@pytest.mark.points(2)
def test_count_parameters_and_bytes(impl):
    """count_parameters and parameter_bytes equal the real sums on torch modules (tied, buffers, dtypes) and your own"""
    check_cases(impl, "probes.count_torch_module", [
        case(kind=kind, want=(sum(p.numel() for p in m.parameters()),
                              sum(p.numel() * p.element_size() for p in m.parameters())),
             what=f"(count_parameters, parameter_bytes) of torch module {kind!r}: {m!r}"[:400])
        for kind, m in [(k, build_torch_module(k)) for k in TORCH_MODULE_KINDS]])
    rng = random.Random(73)
    dims = [(rng.randint(1, 300), rng.randint(1, 300), rng.randint(1, 100), rng.randint(0, 6)) for _ in range(6)]
    check_cases(impl, "probes.count_own_module", [
        case(cls=cls, args=args, want=(n, 4 * n), what=f"(count_parameters, parameter_bytes) of {cls}{args}")
        for d_in, d_out, dim, layers in dims
        for cls, args, n in [("Linear", (d_in, d_out), d_in * d_out),
                             ("Cruncher", (dim, layers), layers * dim * dim + dim)]])


@pytest.mark.points(1)
def test_bad_input(impl):
    """non-positive dims, negative num_layers and a wrong input width raise ValueError; valid neighbours work"""
    bad = raises("ValueError")
    cases = [  # ((class, constructor args[, input shape]), its parameter count, its output's shape, or bad)
        (("Linear", (0, 3)), bad), (("Linear", (3, 0)), bad), (("Linear", (-2, 3)), bad), (("Linear", (1, 1)), 1),
        (("Linear", (2, 9)), 18), (("Cruncher", (0, 1)), bad), (("Cruncher", (-3, 1)), bad),
        (("Cruncher", (3, -1)), bad), (("Cruncher", (3, 0)), 3), (("Cruncher", (1, 1)), 2),
        (("Linear", (5, 2), (3, 4)), bad), (("Linear", (5, 2), (5, 3)), bad), (("Linear", (5, 2), (3, 5)), (3, 2)),
        (("Linear", (5, 2), (0, 5)), (0, 2)), (("Cruncher", (5, 2), (2, 6)), bad), (("Cruncher", (5, 2), (2, 5)), (2,)),
        (("Cruncher", (5, 0), (4, 3, 5)), (4, 3))]
    check_cases(impl, "probes.construct", [
        case(cls=cls, args=dims, x_shape=x[0] if x else None, want=want,
             what=f"{cls}{dims}" + (f" applied to torch.zeros{x[0]}" if x else "")) for (cls, dims, *x), want in cases])


@pytest.mark.gpu
@pytest.mark.points(1)
@pytest.mark.time_limit(60)
def test_linear_on_cuda(impl):
    """Linear(..., device='cuda') keeps its weight on the GPU and computes x @ weight there"""
    def compare(got: dict, devices: list, _what: str):
        expect_equal(got["devices"], devices, "devices of (float32 weight, bfloat16 weight, output)")
        expect_equal(got["bf16_dtype"], torch.bfloat16, "Linear(8, 4, device='cuda', dtype=torch.bfloat16).weight.dtype")
        close(got["y"], matmul64(got["x"], got["w"]).float(), "Linear(8, 4, device='cuda') forward", **CUDA_MATMUL)
    check_cases(impl, "probes.linear_on_device", [case(device="cuda", want=["cuda", "cuda", "cuda"],
                                                       what="Linear(8, 4, device='cuda')")], compare=compare)
