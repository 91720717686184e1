"""tensors (hidden): thousands of seeded random layouts, against PyTorch and the reference.

Layouts are made by real PyTorch ops on a storage (permute, step slicing, narrow, select,
unsqueeze), so they are exactly the layouts students meet: non-contiguous, transposed, sliced
with steps, with size-0 and size-1 dims and storage offsets. PyTorch is the oracle, the reference
a second opinion (it must agree with PyTorch too, or the test itself is wrong). Beside them,
layouts PyTorch cannot build (``huge``, ``woven``): the reference's answers, on Python ints.
"""

import math
import random

import pytest
import torch

from tests.checks import case, check_cases, raises
from tests.common.tensors import M, TM, TMS, XM, XMS, mistakes

N = 3000  # random layouts per property
BAD, OUT = raises("ValueError"), raises("IndexError")


def random_layout(rng: random.Random) -> torch.Tensor:
    """A view with a random shape/stride/offset over a small storage."""
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 3, 4])
    shape = [rng.choice([0, 1, 1, 2, 2, 3, 4, 5]) if rng.random() < 0.15 else rng.randint(1, 5)
             for _ in range(ndim)]
    x = torch.empty(shape)
    for _ in range(rng.randint(0, 3)):
        if x.dim() == 0:
            break
        op = rng.choice(["permute", "step", "narrow", "select", "unsqueeze", "transpose"])
        d = rng.randrange(x.dim())
        if op == "permute":
            x = x.permute(*rng.sample(range(x.dim()), x.dim()))
        elif op == "transpose":
            x = x.transpose(d, rng.randrange(x.dim()))
        elif op == "step" and x.shape[d] > 1:
            x = x[(slice(None),) * d + (slice(None, None, rng.randint(2, 3)),)]
        elif op == "narrow" and x.shape[d] > 0:
            start = rng.randrange(x.shape[d])
            x = x.narrow(d, start, rng.randint(0, x.shape[d] - start))
        elif op == "select" and x.shape[d] > 0 and x.dim() > 1:
            x = x.select(d, rng.randrange(x.shape[d]))
        elif op == "unsqueeze":
            x = x.unsqueeze(rng.randint(0, x.dim()))
    return x


def layout(x: torch.Tensor):
    return tuple(x.shape), tuple(x.stride()), x.storage_offset()


def random_new_shape(rng: random.Random, numel: int) -> tuple[int, ...]:
    """A shape with the same numel (factors, 1s, sometimes one -1), or sometimes a wrong one."""
    if rng.random() < 0.08:
        return (numel + rng.randint(1, 3),)  # bad input: cannot hold the same elements
    if numel == 0:
        dims = [rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 3))]
        if 0 not in dims:
            dims[rng.randrange(len(dims))] = 0
    else:
        dims, left = [], numel
        for p in (2, 3, 5):
            while left % p == 0:
                left //= p
                if dims and rng.random() < 0.5:
                    dims[rng.randrange(len(dims))] *= p
                else:
                    dims.append(p)
        rng.shuffle(dims)
        for _ in range(rng.randint(0, 2)):
            dims.insert(rng.randint(0, len(dims)), 1)
        dims = dims or [1]
    if rng.random() < 0.35:
        dims[rng.randrange(len(dims))] = -1
    return tuple(dims)


def torch_view(shape, strides, new_shape):
    """PyTorch's answer: Tensor.view's strides, None if the strides forbid it; a bad shape is a ValueError."""
    try:
        return tuple(torch.empty_strided(shape, strides).view(new_shape).stride())
    except RuntimeError as e:
        if "view size is not compatible" in str(e):
            return None
        raise ValueError(e) from None


def torch_reshape_copies(shape, strides, new_shape) -> bool:
    """PyTorch's answer: whether Tensor.reshape copies; a bad shape is a ValueError."""
    base = torch.empty_strided(shape, strides)
    try:
        r = base.reshape(new_shape)
    except RuntimeError as e:
        raise ValueError(e) from None
    if base.numel():  # a copy lives in a new storage
        return r.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    return torch_view(shape, strides, new_shape) is None  # nothing to compare storages by: PyTorch copies iff view refuses


def transpose_select_narrow_cases(rng: random.Random, layouts):
    """(transpose, select, narrow) cases with PyTorch's answers, from one pass over the layouts."""
    t, s, n = [], [], []
    for x in layouts:
        if x.dim() == 0:
            continue
        shape, strides, off = layout(x)
        d0, d1 = rng.randrange(-x.dim(), x.dim()), rng.randrange(-x.dim(), x.dim())
        t.append(case(shape, strides, d0, d1, want=layout(x.transpose(d0, d1))[:2]))
        d = rng.randrange(-x.dim(), x.dim())
        if x.shape[d] > 0:
            i = rng.randrange(-x.shape[d], x.shape[d])
            s.append(case(shape, strides, off, d, i, want=layout(x.select(d, i))))
            start = rng.randrange(-x.shape[d], x.shape[d] + 1)
            length = rng.randint(0, x.shape[d] - (start % x.shape[d] if start < 0 else start))
            n.append(case(shape, strides, off, d, start, length, want=layout(x.narrow(d, start, length))))
        else:  # nothing to select in an empty dim: PyTorch raises IndexError
            s.append(case(shape, strides, off, d, 0, want=OUT))
    return t, s, n


def element_offset_cases(rng: random.Random, layouts):
    """A random element (negative indices too) of each non-empty layout, at PyTorch's storage position."""
    picks = [(x, tuple(rng.randrange(-s, s) for s in x.shape)) for x in layouts if x.numel() and x.dim()]
    return [case(*layout(x)[:2], idx, x.storage_offset(), want=x[idx].storage_offset()) for x, idx in picks]


DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn,
          torch.float8_e5m2, torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool]

BAD_INPUT = {
    "tensors.contiguous_strides": [case((2, -3), want=BAD), case((2, 3.0), want=BAD), case((2, 3), want=(3, 1))],
    "tensors.element_offset": [case((3, 4), (4, 1), (3, 0), want=OUT), case((3, 4), (4, 1), (0, -5), want=OUT),
                               case((3, 4), (4, 1), (1, 2, 0), want=BAD), case((3, 4), (4, 1), (-1, -1), want=11),
                               # strides of the wrong length, a negative stride or offset: bad layouts
                               case((3, 4), (4,), (1, 2), want=BAD), case((3, 4), (4, -1), (1, 2), want=BAD),
                               case((3, 4), (4, 1), (1, 2), -1, want=BAD), case((3, 4), (4, 1), (1, 2), 5, want=11)],
    "tensors.is_contiguous": [case((3, 4), (4,), want=BAD), case((3, 4), (4, -1), want=BAD),
                              case((3, 4), (4, 1), want=True)],
    "tensors.transpose": [case((3, 4), (4, 1), 0, 2, want=BAD), case((3, 4), (4, 1), -2, -1, want=((4, 3), (1, 4)))],
    "tensors.select": [case((3, 4), (4, 1), 0, 1, 4, want=OUT), case((3, 4), (4, 1), 0, 5, 0, want=BAD),
                       case((), (), 0, 0, 0, want=BAD)],  # the docstring: a 0-d tensor is a ValueError
    "tensors.narrow": [case((3, 4), (4, 1), 0, 1, 3, 2, want=OUT), case((3, 4), (4, 1), 0, 1, 0, -1, want=BAD),
                       case((), (), 0, 0, 0, 0, want=BAD),
                       # start below -size is out of range even with length 0 (it would wrap to -1)
                       case((3, 4), (4, 1), 0, 1, -5, 0, want=OUT),
                       case((3, 4), (4, 1), 0, 1, -4, 0, want=((3, 0), (4, 1), 0))],
    "tensors.view_strides": [case((3, 4), (4, 1), (-1, -1), want=BAD), case((3, 4), (4, 1), (5, -1), want=BAD),
                             case((3, 4), (4, 1), (2, -2, 3), want=BAD), case((3, 4), (4, 1), (2, -1, 3), want=(6, 3, 1)),
                             # a -2 whose neighbours alone match numel; a -1 beside a 0 with elements to hold
                             case((3, 4), (4, 1), (12, -2), want=BAD), case((3, 4), (4, 1), (0, -1), want=BAD)],
    "tensors.reshape_copies": [case((3, 4), (4, 1), (13,), want=BAD)],
}
# Bad input and valid neighbours past 64 bits (W elements in a dim, strides of W; XM and TM, whose
# middle dims of 2**40 hold more than 2**63 elements together), which no tensor holds (valid ones:
# the reference's answers), checked beside BAD_INPUT: each function's bad-input points rest on its
# own arithmetic too, and on layouts no wrapper can split into a part PyTorch builds.
W = 2**64
PAST_64_BITS = {
    "tensors.contiguous_strides": [case((W, 3, 2)), case((2, W, 0, 3)), case(XM), case((5, W + 1, M, M, 2))],
    "tensors.element_offset": [case((W, 4), (4, 1), (W - 1, 3)), case((W, 4), (4, 1), (-W, -4), W),
                               case((W, 4), (4, 1), (W, 0), want=OUT), case(XM, XMS, (2, -1, M // 2, 3), W + 5),
                               case(TM, TMS, (3, 0, M, 2), want=OUT)],
    "tensors.is_contiguous": [case((W, 4), (4, 1)), case((4, W), (1, 4)), case(XM, XMS), case(TM, TMS)],
    "tensors.transpose": [case((W, 4), (4, 1), -2, -1), case((2, W), (W, 1), 0, 3, want=BAD),
                          case(XM, XMS, 1, -1)],
    "tensors.select": [case((W, 4), (4, 1), W, 0, -1), case((W, 4), (4, 1), 0, 1, 4, want=OUT),
                       case(XM, XMS, W, 2, -1), case(TM, TMS, 0, 1, M, want=OUT)],
    "tensors.narrow": [case((3, W), (W, 1), 0, 1, W // 2, W // 2), case((3, W), (W, 1), 0, 1, W, 1, want=OUT),
                       case(XM, XMS, 0, 1, 1, M - 1), case(TM, TMS, W, -2, -M, M)],
    "tensors.view_strides": [case((W, 4), (4, 1), (-1,)), case((4, W), (1, 4), (2, 2, W)),
                             case((W, 4), (4, 1), (4 * W + 1,), want=BAD), case(XM, XMS, (3, -1)),
                             case(TM, TMS, (4, M * M, 3)), case(XM, XMS, (3, M, M, 5), want=BAD)],
    "tensors.reshape_copies": [case((4, W), (1, 4), (-1,)), case((W, 4), (4, 1), (2, -1)), case(XM, XMS, (-1, 4)),
                               case(TM, TMS, (2, 2, -1))],
}


def huge(rng: random.Random, x: torch.Tensor):
    """A layout PyTorch cannot build: the view x under a leading dim of 2**61 .. 2**70 elements
    whose stride is past every element of x and past 2**63 (PyTorch's sizes are 64-bit). The
    answers are the same arithmetic on Python ints: the reference's."""
    shape, strides, off = layout(x)
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, strides) if s)
    return (2 ** rng.randint(61, 70), *shape), (2 ** 63 + extent, *strides), off


def huge_cases(rng: random.Random, layouts) -> dict[str, list]:
    """Cases of every layout function on ``huge`` layouts (new shapes keep the leading dim)."""
    out = {f"tensors.{n}": [] for n in ("contiguous_strides", "is_contiguous", "element_offset", "transpose",
                                        "select", "narrow", "view_strides", "reshape_copies")}
    for x in layouts:
        shape, strides, off = huge(rng, x)
        new = (shape[0], *random_new_shape(rng, x.numel()))
        out["tensors.contiguous_strides"].append(case(shape))
        out["tensors.is_contiguous"].append(case(shape, strides))
        index = tuple(rng.randrange(-s, s) for s in shape) if x.numel() else None
        if index is not None:
            out["tensors.element_offset"].append(case(shape, strides, index, off))
        d0, d1 = rng.randrange(-len(shape), len(shape)), rng.randrange(-len(shape), len(shape))
        out["tensors.transpose"].append(case(shape, strides, d0, d1))
        out["tensors.select"].append(case(shape, strides, off, 0, rng.randrange(-shape[0], shape[0])))
        start = rng.randrange(shape[0])
        out["tensors.narrow"].append(case(shape, strides, off, 0, start, rng.randint(0, shape[0] - start)))
        out["tensors.view_strides"].append(case(shape, strides, new))
        out["tensors.reshape_copies"].append(case(shape, strides, new))
    return out


# What PyTorch holds: sizes, strides and offsets are int64, and a tensor has fewer than 2**63
# elements.
INT64 = 2**63


def held(shape, strides) -> bool:
    """Whether PyTorch might build this layout (a real or a meta tensor): every size and stride
    below 2**63 and, short of a size 0 (where its checks depend on the order of the dims), fewer
    than 2**63 elements."""
    if any(v >= INT64 for v in (*shape, *strides)):
        return False
    return 0 in shape or math.prod(shape) < INT64


def unsplittable(shape, strides=None) -> bool:
    """Whether no wrapper can split the layout into a part done by hand and a part PyTorch
    builds: without any one dim (the leading, the trailing, one in the middle), and without every
    dim holding a size or stride past 64 bits, what is left is still no tensor. ``strides`` None:
    a shape alone (contiguous_strides), whose dims past 64 bits are its sizes."""
    strides = (0,) * len(shape) if strides is None else strides
    n = len(shape)
    rests = [[d for d in range(n) if shape[d] < INT64 and strides[d] < INT64]]
    rests += [[k for k in range(n) if k != d] for d in range(n)]
    return not any(held([shape[k] for k in ks], [strides[k] for k in ks]) for ks in rests)


def row_major(shape) -> list[int]:
    """The strides of a fresh tensor of this shape (a woven layout's starting point)."""
    out, right = [], 1
    for size in reversed(shape):
        out.insert(0, right)
        right *= max(size, 1)
    return out


def woven_sizes(rng: random.Random) -> list[int]:
    """Small sizes, two or three of 2**20 .. 2**46 (fit in 64 bits, not together) and sometimes
    one or two past 2**63, in any order."""
    sizes = ([rng.randint(1, 5) for _ in range(rng.randint(0, 3))]
             + [rng.randrange(2**20, 2**46) for _ in range(rng.choice([2, 2, 3]))]
             + [rng.randrange(INT64, 2**70) for _ in range(rng.choice([0, 1, 1, 2]))])
    rng.shuffle(sizes)
    return sizes


def woven_shape(rng: random.Random) -> tuple[int, ...]:
    """A shape of ``woven_sizes`` that no wrapper can split."""
    while not unsplittable(shape := tuple(woven_sizes(rng))):
        pass
    return shape


def woven(rng: random.Random):
    """A layout PyTorch cannot build whose sizes past 64 bits, and whose products past 64 bits,
    sit anywhere, so that no part a wrapper could do by hand leaves a tensor: ``woven_sizes``
    laid out row-major, then permuted, stepped, narrowed, selected and unsqueezed as
    random_layout's tensors are (on Python ints), from an offset past 64 bits now and then;
    drawn again until ``unsplittable``."""
    while True:
        shape = woven_sizes(rng)
        strides, off = row_major(shape), rng.choice([0, rng.randrange(100), rng.randrange(INT64, 2**70)])
        for _ in range(rng.randint(0, 3)):
            op = rng.choice(["permute", "step", "narrow", "select", "unsqueeze", "transpose"])
            d = rng.randrange(len(shape))
            if op == "permute":
                order = rng.sample(range(len(shape)), len(shape))
                shape, strides = [shape[k] for k in order], [strides[k] for k in order]
            elif op == "transpose":
                e = rng.randrange(len(shape))
                shape[d], shape[e], strides[d], strides[e] = shape[e], shape[d], strides[e], strides[d]
            elif op == "step" and shape[d] > 1:
                step = rng.randint(2, 3)
                shape[d], strides[d] = -(-shape[d] // step), strides[d] * step
            elif op == "narrow":
                start = rng.randrange(shape[d])
                off, shape[d] = off + start * strides[d], rng.randint(1, shape[d] - start)
            elif op == "select" and len(shape) > 1:
                off += rng.randrange(shape[d]) * strides[d]
                del shape[d], strides[d]
            elif op == "unsqueeze":
                e = rng.randint(0, len(shape))  # PyTorch's stride for the new dim: that of the dim it goes before
                strides.insert(e, shape[e] * strides[e] if e < len(shape) else 1)
                shape.insert(e, 1)
        if unsplittable(shape, strides):
            return tuple(shape), tuple(strides), off


def regrouped(rng: random.Random, shape) -> tuple[int, ...]:
    """A new shape for a woven layout's view: its sizes cut into factors (up to three of 2, 3, 5,
    7 each, and what is left) and the factors, in order, grouped anew, so that the view merges
    and splits dims across those past 64 bits; now and then a 1, a -1, two groups swapped, or a
    wrong size."""
    factors = []
    for size in shape:
        for _ in range(rng.randint(0, 3)):
            p = rng.choice([p for p in (2, 3, 5, 7) if size % p == 0 and size > p] or [1])
            if p > 1:
                factors.append(p)
                size //= p
        factors.append(size)
    groups = [factors[0]]
    for f in factors[1:]:
        if rng.random() < 0.5:
            groups[-1] *= f
        else:
            groups.append(f)
    if rng.random() < 0.3:
        groups.insert(rng.randint(0, len(groups)), 1)
    if rng.random() < 0.15 and len(groups) > 1:
        i = rng.randrange(len(groups) - 1)
        groups[i], groups[i + 1] = groups[i + 1], groups[i]
    if rng.random() < 0.08:
        groups[rng.randrange(len(groups))] += 1  # bad input: cannot hold the same elements
    elif rng.random() < 0.35:
        groups[rng.randrange(len(groups))] = -1
    return tuple(groups)


def woven_cases(rng: random.Random, n: int) -> dict[str, list]:
    """Cases of every layout function on ``n`` woven layouts (a woven shape for
    contiguous_strides): the reference's answers."""
    out = {f"tensors.{name}": [] for name in ("contiguous_strides", "is_contiguous", "element_offset", "transpose",
                                              "select", "narrow", "view_strides", "reshape_copies")}
    for _ in range(n):
        shape, strides, off = woven(rng)
        nd = len(shape)
        out["tensors.contiguous_strides"].append(case(woven_shape(rng)))
        out["tensors.is_contiguous"].append(case(shape, strides))
        out["tensors.element_offset"].append(case(shape, strides, tuple(rng.randrange(-s, s) for s in shape), off))
        out["tensors.transpose"].append(case(shape, strides, rng.randrange(-nd, nd), rng.randrange(-nd, nd)))
        d = rng.randrange(-nd, nd)
        out["tensors.select"].append(case(shape, strides, off, d, rng.randrange(-shape[d], shape[d])))
        start = rng.randrange(-shape[d], shape[d] + 1)
        length = rng.randint(0, shape[d] - (start % shape[d] if start < 0 else start))
        out["tensors.narrow"].append(case(shape, strides, off, d, start, length))
        out["tensors.view_strides"].append(case(shape, strides, regrouped(rng, shape)))
        out["tensors.reshape_copies"].append(case(shape, strides, regrouped(rng, shape)))
    return out


@pytest.fixture(scope="module")
def layouts():
    rng = random.Random(1234)
    return [random_layout(rng) for _ in range(N)]


@pytest.fixture(scope="module")
def beyond(layouts):
    """``huge_cases`` of 100 layouts other than test_layouts_torch_cannot_build's, and
    ``woven_cases`` of 100 more: every test of a layout function holds some, so its points rest
    on the arithmetic, which no tensor (real or meta) can do in its place, nor a wrapper that
    does part of it by hand and hands PyTorch the rest."""
    huge, woven = huge_cases(random.Random(7), layouts[300:400]), woven_cases(random.Random(8), 100)
    return {name: huge[name] + woven[name] for name in huge}


@pytest.mark.points(2)
def test_contiguous_strides_random(impl, ref, beyond):
    """contiguous_strides equals torch.empty(shape).stride() on random shapes incl. 0 and 1 sizes"""
    rng = random.Random(1)
    shapes = [tuple(rng.choice([0, 1, 2, 3, 7]) for _ in range(rng.randint(0, 5))) for _ in range(500)]
    check_cases(impl, "tensors.contiguous_strides", [case(s) for s in shapes], ref=ref,
                oracle=lambda shape: tuple(torch.empty(shape).stride()), mistakes=mistakes("contiguous_strides"))
    check_cases(impl, "tensors.contiguous_strides", beyond["tensors.contiguous_strides"], ref=ref)


@pytest.mark.points(2)
def test_is_contiguous_random(impl, ref, layouts, beyond):
    """is_contiguous equals Tensor.is_contiguous() on 3000 random layouts"""
    check_cases(impl, "tensors.is_contiguous", [case(*layout(x)[:2], want=x.is_contiguous()) for x in layouts],
                ref=ref)
    check_cases(impl, "tensors.is_contiguous", beyond["tensors.is_contiguous"], ref=ref)


@pytest.mark.points(2)
def test_element_offset_random(impl, ref, layouts, beyond):
    """element_offset equals PyTorch's storage position of random elements (negative indices too)"""
    check_cases(impl, "tensors.element_offset", element_offset_cases(random.Random(2), layouts), ref=ref)
    check_cases(impl, "tensors.element_offset", beyond["tensors.element_offset"], ref=ref)


@pytest.mark.points(2)
def test_transpose_select_narrow_random(impl, ref, layouts, beyond):
    """transpose, select and narrow equal Tensor.transpose/select/narrow on random layouts"""
    for name, cases in zip(("transpose", "select", "narrow"), transpose_select_narrow_cases(random.Random(3), layouts)):
        check_cases(impl, f"tensors.{name}", cases, ref=ref)
        check_cases(impl, f"tensors.{name}", beyond[f"tensors.{name}"], ref=ref)


@pytest.mark.points(2)
def test_view_strides_random(impl, ref, layouts, beyond):
    """view_strides equals Tensor.view's strides (or None where PyTorch refuses) on 3000 layouts"""
    rng = random.Random(4)
    check_cases(impl, "tensors.view_strides", [case(*layout(x)[:2], random_new_shape(rng, x.numel())) for x in layouts],
                ref=ref, oracle=torch_view, mistakes=mistakes("view_strides"))
    check_cases(impl, "tensors.view_strides", beyond["tensors.view_strides"], ref=ref)


@pytest.mark.points(2)
def test_reshape_copies_random(impl, ref, layouts, beyond):
    """reshape_copies is True exactly when Tensor.reshape returns a copy (3000 layouts)"""
    rng = random.Random(5)
    check_cases(impl, "tensors.reshape_copies",
                [case(*layout(x)[:2], random_new_shape(rng, x.numel())) for x in layouts],
                ref=ref, oracle=torch_reshape_copies, mistakes=mistakes("reshape_copies"))
    check_cases(impl, "tensors.reshape_copies", beyond["tensors.reshape_copies"], ref=ref)


@pytest.mark.points(2)
def test_layouts_torch_cannot_build(impl, ref, layouts):
    """every layout function on 450 layouts PyTorch cannot build (sizes, strides or their products past 64 bits, in any dims)"""
    huge, woven = huge_cases(random.Random(6), layouts[:300]), woven_cases(random.Random(9), 150)
    for name, cases in huge.items():
        check_cases(impl, name, cases + woven[name], ref=ref)


@pytest.mark.points(1)
def test_nbytes_all_dtypes(impl, ref):
    """nbytes equals torch.empty(shape, dtype).nbytes for every dtype; bad input is a ValueError"""
    rng = random.Random(6)
    cases = [case(tuple(rng.randint(0, 6) for _ in range(rng.randint(0, 4))), rng.choice(DTYPES)) for _ in range(300)]
    cases += [case((2, -1), torch.float32, want=BAD), case((3,), "float32", want=BAD), case((3,), 4, want=BAD)]
    check_cases(impl, "tensors.nbytes", cases, ref=ref, oracle=lambda shape, dtype: torch.empty(shape, dtype=dtype).nbytes)


@pytest.mark.points(2)
def test_bad_input(impl, ref):
    """bad shapes, dims and indices raise ValueError / IndexError (and valid ones still work)"""
    for target, cases in BAD_INPUT.items():
        check_cases(impl, target, cases + PAST_64_BITS[target], ref=ref, mistakes=mistakes(target))
