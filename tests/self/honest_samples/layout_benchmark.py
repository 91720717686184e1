"""Strides by hand and a small timing loop: itertools, operator, collections, enum, gc.collect()."""

import gc
import itertools
import operator
import statistics
import time
from collections import defaultdict, namedtuple
from enum import Enum
from functools import reduce

import torch

Layout = namedtuple("Layout", "shape strides")


class Order(Enum):
    ROW = "C"
    COLUMN = "F"


def contiguous_strides(shape, order=Order.ROW):
    dims = list(shape) if order is Order.ROW else list(reversed(shape))
    strides = list(itertools.accumulate(reversed(dims[1:]), operator.mul, initial=1))[::-1]
    return tuple(strides) if order is Order.ROW else tuple(reversed(strides))


def numel(shape):
    return reduce(operator.mul, shape, 1)


def time_it(fn, warmup=2, trials=5):
    for _ in range(warmup):
        fn()
    gc.collect()  # the one gc call a graded module may make
    times = []
    for _ in range(trials):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.mean(times)


def by_size(layouts):
    groups = defaultdict(list)
    for layout in layouts:
        groups[numel(layout.shape)].append(layout)
    return dict(sorted(groups.items(), key=operator.itemgetter(0)))


if __name__ == "__main__":
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides((2, 3, 4), Order.COLUMN) == (1, 2, 6)
    assert torch.empty(2, 3, 4).stride() == contiguous_strides((2, 3, 4))
    layouts = [Layout(s, contiguous_strides(s)) for s in [(2, 3), (6,), (4, 4)]]
    assert list(by_size(layouts)) == [6, 16] and sorted(layouts, key=operator.attrgetter("shape"))[0].shape == (2, 3)
    a = torch.randn(64, 64)
    print("ok", f"{time_it(lambda: a @ a) * 1e6:.1f} us", type(a).__name__)
