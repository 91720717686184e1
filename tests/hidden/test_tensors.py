"""Problem 1 · tensors (hidden): thousands of seeded random layouts, against PyTorch and the reference.

Layouts are made by real PyTorch ops on a storage (permute, step slicing, narrow, select,
unsqueeze), so they are exactly the layouts students meet: non-contiguous, transposed, sliced
with steps, with size-0 and size-1 dims and storage offsets. PyTorch is the oracle, the reference
a second opinion (it must agree with PyTorch too, or the test itself is wrong).
"""

import random

import pytest
import torch

from tests.seam.checks import call_text, expect_result, show

N = 3000  # random layouts per property


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


def torch_view(x: torch.Tensor, new_shape):
    """PyTorch's answer: the view's strides, None if strides forbid it, 'bad' for bad shapes."""
    try:
        return tuple(x.view(new_shape).stride())
    except RuntimeError as e:
        return None if "view size is not compatible" in str(e) else "bad"


def compare_all(impl, ref, target: str, calls: list[tuple], oracle: list) -> None:
    """Submission and reference on every call; both must equal the oracle (an exception type
    name where PyTorch refuses the input)."""
    got, want = impl.map(target, calls), ref.map(target, calls)
    for args, g, w, o in zip(calls, got, want, oracle):
        w_val = type(w).__name__ if isinstance(w, Exception) else w
        assert w_val == o, f"reference disagrees with PyTorch on {call_text(target, args)}: {w_val} vs {o}"
        expect_result(g, o, call_text(target, args))


@pytest.fixture(scope="module")
def layouts():
    rng = random.Random(1234)
    return [random_layout(rng) for _ in range(N)]


@pytest.mark.points(2)
def test_contiguous_strides_random(impl, ref):
    """contiguous_strides equals torch.empty(shape).stride() on random shapes incl. 0 and 1 sizes"""
    rng = random.Random(1)
    shapes = [tuple(rng.choice([0, 1, 2, 3, 7]) for _ in range(rng.randint(0, 5))) for _ in range(500)]
    compare_all(impl, ref, "tensors.contiguous_strides", [(s,) for s in shapes],
                [tuple(torch.empty(s).stride()) for s in shapes])


@pytest.mark.points(2)
def test_is_contiguous_random(impl, ref, layouts):
    """is_contiguous equals Tensor.is_contiguous() on 3000 random layouts"""
    compare_all(impl, ref, "tensors.is_contiguous", [layout(x)[:2] for x in layouts],
                [x.is_contiguous() for x in layouts])


@pytest.mark.points(2)
def test_element_offset_random(impl, ref, layouts):
    """element_offset equals PyTorch's storage position of random elements (negative indices too)"""
    rng = random.Random(2)
    calls, oracle = [], []
    for x in layouts:
        if x.numel() == 0 or x.dim() == 0:
            continue
        idx = tuple(rng.randrange(-s, s) for s in x.shape)
        calls.append((*layout(x)[:2], idx, x.storage_offset()))
        oracle.append(x[idx].storage_offset())
    compare_all(impl, ref, "tensors.element_offset", calls, oracle)


@pytest.mark.points(2)
def test_transpose_select_narrow_random(impl, ref, layouts):
    """transpose, select and narrow equal Tensor.transpose/select/narrow on random layouts"""
    rng = random.Random(3)
    t_calls, t_oracle, s_calls, s_oracle, n_calls, n_oracle = [], [], [], [], [], []
    for x in layouts:
        if x.dim() == 0:
            continue
        shape, strides, off = layout(x)
        d0, d1 = rng.randrange(-x.dim(), x.dim()), rng.randrange(-x.dim(), x.dim())
        t_calls.append((shape, strides, d0, d1))
        t_oracle.append(layout(x.transpose(d0, d1))[:2])
        d = rng.randrange(-x.dim(), x.dim())
        if x.shape[d] > 0:
            i = rng.randrange(-x.shape[d], x.shape[d])
            s_calls.append((shape, strides, off, d, i))
            s_oracle.append(layout(x.select(d, i)))
            start = rng.randrange(-x.shape[d], x.shape[d] + 1)
            length = rng.randint(0, x.shape[d] - (start % x.shape[d] if start < 0 else start))
            n_calls.append((shape, strides, off, d, start, length))
            n_oracle.append(layout(x.narrow(d, start, length)))
        else:  # nothing to select in an empty dim: PyTorch raises IndexError
            s_calls.append((shape, strides, off, d, 0))
            s_oracle.append("IndexError")
    compare_all(impl, ref, "tensors.transpose", t_calls, t_oracle)
    compare_all(impl, ref, "tensors.select", s_calls, s_oracle)
    compare_all(impl, ref, "tensors.narrow", n_calls, n_oracle)


@pytest.mark.points(4)
def test_view_strides_random(impl, ref, layouts):
    """view_strides equals Tensor.view's strides (or None where PyTorch refuses) on 3000 layouts"""
    rng = random.Random(4)
    calls, oracle = [], []
    for x in layouts:
        new_shape = random_new_shape(rng, x.numel())
        o = torch_view(x, new_shape)
        calls.append((*layout(x)[:2], new_shape))
        oracle.append("ValueError" if o == "bad" else o)
    compare_all(impl, ref, "tensors.view_strides", calls, oracle)


@pytest.mark.points(2)
def test_reshape_copies_random(impl, ref, layouts):
    """reshape_copies is True exactly when Tensor.reshape returns a copy (3000 layouts)"""
    rng = random.Random(5)
    calls, oracle = [], []
    for x in layouts:
        new_shape = random_new_shape(rng, x.numel())
        base = torch.empty_strided(x.shape, x.stride())
        try:
            r = base.reshape(new_shape)
            if base.numel():  # a copy lives in a new storage
                o = r.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
            else:  # nothing to compare storages by: PyTorch copies iff view refuses
                o = torch_view(base, new_shape) is None
        except RuntimeError:
            o = "ValueError"
        calls.append((*layout(x)[:2], new_shape))
        oracle.append(o)
    compare_all(impl, ref, "tensors.reshape_copies", calls, oracle)


@pytest.mark.points(1)
def test_nbytes_all_dtypes(impl, ref):
    """nbytes equals torch.empty(shape, dtype).nbytes for every dtype; bad input is a ValueError"""
    rng = random.Random(6)
    dtypes = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn,
              torch.float8_e5m2, torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool]
    calls = [(tuple(rng.randint(0, 6) for _ in range(rng.randint(0, 4))), rng.choice(dtypes))
             for _ in range(300)]
    oracle = [torch.empty(s, dtype=d).nbytes for s, d in calls]
    calls += [((2, -1), torch.float32), ((3,), "float32"), ((3,), 4)]
    oracle += ["ValueError"] * 3
    compare_all(impl, ref, "tensors.nbytes", calls, oracle)


@pytest.mark.points(2)
def test_bad_input(impl, ref):
    """bad shapes, dims and indices raise ValueError / IndexError (and valid ones still work)"""
    cases = [
        ("tensors.contiguous_strides", ((2, -3),), "ValueError"),
        ("tensors.contiguous_strides", ((2, 3),), (3, 1)),
        ("tensors.element_offset", ((3, 4), (4, 1), (3, 0)), "IndexError"),
        ("tensors.element_offset", ((3, 4), (4, 1), (0, -5)), "IndexError"),
        ("tensors.element_offset", ((3, 4), (4, 1), (1, 2, 0)), "ValueError"),
        ("tensors.element_offset", ((3, 4), (4, 1), (-1, -1)), 11),
        ("tensors.transpose", ((3, 4), (4, 1), 0, 2), "ValueError"),
        ("tensors.transpose", ((3, 4), (4, 1), -2, -1), ((4, 3), (1, 4))),
        ("tensors.select", ((3, 4), (4, 1), 0, 1, 4), "IndexError"),
        ("tensors.select", ((3, 4), (4, 1), 0, 5, 0), "ValueError"),
        ("tensors.narrow", ((3, 4), (4, 1), 0, 1, 3, 2), "IndexError"),
        ("tensors.narrow", ((3, 4), (4, 1), 0, 1, 0, -1), "ValueError"),
        ("tensors.view_strides", ((3, 4), (4, 1), (-1, -1)), "ValueError"),
        ("tensors.view_strides", ((3, 4), (4, 1), (5, -1)), "ValueError"),
        ("tensors.view_strides", ((3, 4), (4, 1), (2, -2, 3)), "ValueError"),
        ("tensors.view_strides", ((3, 4), (4, 1), (2, -1, 3)), (6, 3, 1)),
        ("tensors.reshape_copies", ((3, 4), (4, 1), (13,)), "ValueError"),
    ]
    for target, args, want in cases:
        got = impl.map(target, [args])[0]
        r = ref.map(target, [args])[0]
        r_val = type(r).__name__ if isinstance(r, Exception) else r
        assert r_val == want, f"reference: {call_text(target, args)} gave {show(r)}"
        expect_result(got, want, call_text(target, args))
