"""tensors' planted shortcuts: torch asked for strides and views, directly (``SHORTCUTS``'s
first four), and the hybrids an attacker who reads the tests would write (``MEASURED``).

A hybrid splits off what torch cannot hold (a size or stride past 64 bits), does that part by
hand with the least arithmetic that still answers the tests' cases, and asks torch for the rest,
on the meta device (no storage: it builds every layout a real tensor does, and more). Each is
what the behaviour record (tests/self/behaviour.py) measures beside the library-only shortcut:
what it keeps with the watch blinded is what the tests' layouts fail to defend. The peels:

- the leading dim peeled (the rest asked of torch), the trailing dim peeled, or every dim that
  holds a value past 64 bits peeled, the storage offset always added by hand;
- a stand-in layout (transpose, select, narrow): torch moves dims of size 1 whose strides name
  their places, and the real sizes and strides follow those names. Torch holds any number of
  dims, so no layout defends these functions' dim arithmetic; the offset's one multiply-add is
  the caller's.

A peel that peels until torch accepts, whatever the values, carries the whole computation by
hand for the layouts where torch accepts nothing but one dim: it is the honest code with torch
beside it, and earns what that code earns. These peel a fixed part.
"""

from tests.self.shortcuts import Shortcut

SHORTCUTS = [
    Shortcut("tensors", "view_strides", "a real strided tensor asked for its view", '''
_checked_view_strides = view_strides


def view_strides(shape, strides, new_shape):
    _checked_view_strides(shape, strides, new_shape)  # the errors, as before
    x = torch.empty_strided(tuple(shape), tuple(strides))
    try:
        return tuple(x.view(tuple(new_shape)).stride())
    except RuntimeError:
        return None
'''),
    Shortcut("tensors", "contiguous_strides", "torch.empty(shape).stride() through getattr", '''
_checked_contiguous_strides = contiguous_strides


def contiguous_strides(shape):
    _checked_contiguous_strides(shape)
    return tuple(getattr(torch.empty(tuple(shape)), "stri" + "de")())
'''),
    Shortcut("tensors", "is_contiguous", "as_strided asked in a thread", '''
_checked_is_contiguous = is_contiguous


def is_contiguous(shape, strides):
    _checked_is_contiguous(shape, strides)
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(
        torch.empty(0).as_strided(tuple(shape), tuple(strides)).is_contiguous()))
    t.start()
    t.join()
    return bool(out[0])
'''),
    Shortcut("tensors", "transpose", "a real tensor transposed under DisableTorchFunction", '''
_checked_transpose = transpose


def transpose(shape, strides, dim0, dim1):
    _checked_transpose(shape, strides, dim0, dim1)
    with torch._C.DisableTorchFunction():
        x = torch.empty_strided(tuple(shape), tuple(strides)).transpose(dim0, dim1)
        return tuple(x.shape), tuple(x.stride())
'''),
]

# What every hybrid shares: torch's int64 bound, a layout on the meta device, and the views
# (view_strides and reshape_copies peel alike).
_ASK = '''
_BIG = 2 ** 63  # torch's sizes, strides and offsets are int64


def _past(*values):
    return any(v >= _BIG for v in values)


def _meta(shape, strides, offset=0):
    return torch.empty(0, device="meta").as_strided(tuple(shape), tuple(strides), offset)


def _view(shape, strides, new_shape):
    x = _meta(shape, strides)  # a layout torch will not build raises
    try:
        return tuple(x.view(tuple(new_shape)).stride())
    except RuntimeError:
        return None  # "view size is not compatible with input tensor's size and stride"


def _whole_or(peel, shape, strides, new_shape):
    # torch's view of the whole layout where it builds it; else the peel
    try:
        _meta(shape, strides)
    except (RuntimeError, TypeError, ValueError):  # past int64, or a numel that overflows
        return peel(shape, strides, new_shape)
    return _view(shape, strides, new_shape)


def _view_leading(shape, strides, new_shape):
    # a leading dim the view keeps, first, keeps its stride: torch views the rest
    if shape and new_shape and new_shape[0] == shape[0]:
        rest = _view(shape[1:], strides[1:], new_shape[1:])
        return None if rest is None else (strides[0], *rest)
    return _view(shape, strides, new_shape)


def _view_trailing(shape, strides, new_shape):
    if shape and new_shape and new_shape[-1] == shape[-1]:
        rest = _view(shape[:-1], strides[:-1], new_shape[:-1])
        return None if rest is None else (*rest, strides[-1])
    return _view(shape, strides, new_shape)


def _view_peeled(shape, strides, new_shape):
    # each dim past 64 bits stays a dim of its own, found by its size in the new shape, with its
    # stride; torch views the rest
    peeled, taken = {}, set()
    for d, (size, stride) in enumerate(zip(shape, strides)):
        if _past(size, stride):
            j = next((j for j, v in enumerate(new_shape) if v == size and j not in taken), None)
            if j is None:
                return _view(shape, strides, new_shape)
            peeled[d] = j
            taken.add(j)
    kept = [d for d in range(len(shape)) if d not in peeled]
    rest = _view([shape[d] for d in kept], [strides[d] for d in kept],
                 [v for j, v in enumerate(new_shape) if j not in taken])
    if rest is None:
        return None
    by_place, rest = {j: strides[d] for d, j in peeled.items()}, iter(rest)
    return tuple(by_place[j] if j in by_place else next(rest) for j in range(len(new_shape)))
'''

# (function, its parameters, how, body): the body answers after the reference's checks of the
# arguments (its value unused), as the library-only shortcut does.
_OFFSET = "shape, strides, index, storage_offset=0"
_SELECT = "shape, strides, storage_offset, dim, index"
_NARROW = "shape, strides, storage_offset, dim, start, length"
_HYBRIDS = [
    ("contiguous_strides", "shape", "the leading dim peeled, torch's strides for the rest", '''
    shape = tuple(shape)
    rest = tuple(torch.empty(shape[1:], device="meta").stride())
    return shape and (rest[0] * max(shape[1], 1) if rest else 1, *rest)
'''),
    ("contiguous_strides", "shape", "the trailing dim peeled, torch's strides for the rest", '''
    shape = tuple(shape)
    head = tuple(torch.empty(shape[:-1], device="meta").stride())
    return shape and (*(s * max(shape[-1], 1) for s in head), 1)
'''),
    ("contiguous_strides", "shape", "the dims past 64 bits peeled, torch's strides for the rest", '''
    shape = tuple(shape)
    held = tuple(1 if _past(s) else s for s in shape)
    strides, right = list(torch.empty(held, device="meta").stride()), 1
    for d in reversed(range(len(shape))):
        strides[d] *= right
        right *= shape[d] if _past(shape[d]) else 1
    return tuple(strides)
'''),
    ("is_contiguous", "shape, strides", "the leading dim peeled, torch judges the rest", '''
    shape, strides = tuple(shape), tuple(strides)
    if not shape:
        return True
    rest = _meta(shape[1:], strides[1:])
    if shape[0] == 0 or rest.numel() == 0:
        return True
    return rest.is_contiguous() and (shape[0] == 1 or strides[0] == rest.numel())
'''),
    ("is_contiguous", "shape, strides", "the trailing dim peeled, torch judges the rest in its units", '''
    shape, strides = tuple(shape), tuple(strides)
    if not shape or 0 in shape:
        return True
    n = shape[-1]
    if n != 1 and strides[-1] != 1:
        return False
    if any(size != 1 and s % n for size, s in zip(shape[:-1], strides[:-1])):
        return False
    units = [s // n if size != 1 else 1 for size, s in zip(shape[:-1], strides[:-1])]
    return _meta(shape[:-1], units).is_contiguous()
'''),
    ("is_contiguous", "shape, strides", "the dims past 64 bits peeled, torch judges the rest in their units", '''
    shape, strides = tuple(shape), tuple(strides)
    if 0 in shape:
        return True
    kept_shape, kept_strides, below, peeled_below = [], [], 1, 1
    for size, s in zip(reversed(shape), reversed(strides)):
        if _past(size, s):
            if size != 1 and s != below:
                return False
            peeled_below *= size
        else:
            if size != 1 and s % peeled_below:
                return False
            kept_shape.insert(0, size)
            kept_strides.insert(0, s // peeled_below if size != 1 else 1)
        below *= size
    return _meta(kept_shape, kept_strides).is_contiguous()
'''),
    ("element_offset", _OFFSET, "the leading dim peeled, torch's offset for the rest", '''
    shape, strides, index = tuple(shape), tuple(strides), tuple(index)
    if not shape:
        return storage_offset
    i = index[0] + shape[0] if index[0] < 0 else index[0]
    return storage_offset + i * strides[0] + _meta(shape[1:], strides[1:])[index[1:]].storage_offset()
'''),
    ("element_offset", _OFFSET, "the trailing dim peeled, torch's offset for the rest", '''
    shape, strides, index = tuple(shape), tuple(strides), tuple(index)
    if not shape:
        return storage_offset
    i = index[-1] + shape[-1] if index[-1] < 0 else index[-1]
    return storage_offset + i * strides[-1] + _meta(shape[:-1], strides[:-1])[index[:-1]].storage_offset()
'''),
    ("element_offset", _OFFSET, "the dims past 64 bits peeled, torch's offset for the rest", '''
    offset, kept = storage_offset, []
    for size, s, i in zip(shape, strides, index):
        if _past(size, s):
            offset += (i + size if i < 0 else i) * s
        else:
            kept.append((size, s, i))
    rest = _meta([k[0] for k in kept], [k[1] for k in kept])
    return offset + rest[tuple(k[2] for k in kept)].storage_offset()
'''),
    ("transpose", "shape, strides, dim0, dim1", "a stand-in layout transposed by torch", '''
    n = len(shape)
    order = _meta((1,) * n, range(n)).transpose(dim0, dim1).stride()
    return tuple(shape[d] for d in order), tuple(strides[d] for d in order)
'''),
    ("select", _SELECT, "a stand-in layout selected by torch", '''
    n = len(shape)
    kept = _meta((1,) * n, range(n)).select(dim, 0).stride()
    d = next(d for d in range(n) if d not in kept)
    i = index + shape[d] if index < 0 else index
    return tuple(shape[k] for k in kept), tuple(strides[k] for k in kept), storage_offset + i * strides[d]
'''),
    ("select", _SELECT, "the dims past 64 bits peeled, torch selects the rest", '''
    shape, strides = tuple(shape), tuple(strides)
    d = dim + len(shape) if dim < 0 else dim
    i = index + shape[d] if index < 0 else index
    if _past(shape[d], strides[d]):
        return shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:], storage_offset + i * strides[d]
    peeled = [k for k in range(len(shape)) if k != d and _past(shape[k], strides[k])]
    kept = [k for k in range(len(shape)) if k not in peeled]
    y = _meta([shape[k] for k in kept], [strides[k] for k in kept]).select(kept.index(d), i)
    rest_shape, rest_strides = iter(y.shape), iter(y.stride())
    out = [k for k in range(len(shape)) if k != d]
    return (tuple(shape[k] if k in peeled else next(rest_shape) for k in out),
            tuple(strides[k] if k in peeled else next(rest_strides) for k in out),
            storage_offset + y.storage_offset())
'''),
    ("narrow", _NARROW, "a stand-in layout narrowed by torch", '''
    n = len(shape)
    d = _meta((1,) * n, range(n)).narrow(dim, 1, 0).shape.index(0)  # start 1, length 0: that dim's size is 0
    begin = start + shape[d] if start < 0 else start
    new_shape = tuple(length if k == d else shape[k] for k in range(n))
    return new_shape, tuple(strides), storage_offset + begin * strides[d]
'''),
    ("narrow", _NARROW, "the dims past 64 bits peeled, torch narrows the rest", '''
    shape, strides = tuple(shape), tuple(strides)
    d = dim + len(shape) if dim < 0 else dim
    begin = start + shape[d] if start < 0 else start
    if _past(shape[d], strides[d]):
        return shape[:d] + (length,) + shape[d + 1:], strides, storage_offset + begin * strides[d]
    kept = [k for k in range(len(shape)) if not _past(shape[k], strides[k])]
    y = _meta([shape[k] for k in kept], [strides[k] for k in kept]).narrow(kept.index(d), begin, length)
    return (tuple(y.shape[kept.index(k)] if k in kept else shape[k] for k in range(len(shape))), strides,
            storage_offset + y.storage_offset())
'''),
    ("view_strides", "shape, strides, new_shape", "the leading dim peeled, torch views the rest", '''
    return _whole_or(_view_leading, tuple(shape), tuple(strides), tuple(new_shape))
'''),
    ("view_strides", "shape, strides, new_shape", "the trailing dim peeled, torch views the rest", '''
    return _whole_or(_view_trailing, tuple(shape), tuple(strides), tuple(new_shape))
'''),
    ("view_strides", "shape, strides, new_shape", "the dims past 64 bits peeled, torch views the rest", '''
    return _whole_or(_view_peeled, tuple(shape), tuple(strides), tuple(new_shape))
'''),
    ("reshape_copies", "shape, strides, new_shape", "the leading dim peeled, torch's view of the rest", '''
    return _whole_or(_view_leading, tuple(shape), tuple(strides), tuple(new_shape)) is None
'''),
    ("reshape_copies", "shape, strides, new_shape", "the trailing dim peeled, torch's view of the rest", '''
    return _whole_or(_view_trailing, tuple(shape), tuple(strides), tuple(new_shape)) is None
'''),
    ("reshape_copies", "shape, strides, new_shape", "the dims past 64 bits peeled, torch's view of the rest", '''
    return _whole_or(_view_peeled, tuple(shape), tuple(strides), tuple(new_shape)) is None
'''),
]


def _hybrid(function: str, params: str, how: str, body: str) -> Shortcut:
    call = ", ".join(p.split("=")[0] for p in params.split(", "))
    return Shortcut("tensors", function, how, _ASK + f"\n_checked_{function} = {function}\n\n\n"
                    f"def {function}({params}):\n    _checked_{function}({call})  # the errors, as before\n"
                    + body.strip("\n") + "\n")


MEASURED = [_hybrid(*h) for h in _HYBRIDS]
# one of each kind graded with the watch on as well (tests/self/grading/test_planted_bugs.py): a
# question asked of a meta tensor is charged like any other
SHORTCUTS += [s for s in MEASURED if (s.function, s.name) in {
    ("contiguous_strides", "the leading dim peeled, torch's strides for the rest"),
    ("view_strides", "the dims past 64 bits peeled, torch views the rest"),
    ("transpose", "a stand-in layout transposed by torch")}]
