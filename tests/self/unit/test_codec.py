"""The seam's codec: plain data round-trips bit for bit; anything else is refused."""

import collections
import math

import numpy as np
import pytest
import torch

from seam import codec
from seam.codec import Struct


def roundtrip(value):
    return codec.from_plain(codec.loads(codec.dumps(codec.to_plain(value))))


@pytest.mark.parametrize("value", [None, True, 0, -7, 2**100, 1.5, -0.0, "ü", (1, (2, 3)), [1, [2]],
                                   {"a": (1,), "b": [None]}, (), torch.bfloat16])
def test_plain_values_roundtrip(value):
    got = roundtrip(value)
    assert got == value and type(got) is type(value)


def test_special_floats():
    assert math.isnan(roundtrip(float("nan")))
    assert roundtrip(float("inf")) == float("inf")
    assert math.copysign(1, roundtrip(-0.0)) == -1


@pytest.mark.parametrize("dtype", list(codec.TORCH_DTYPES.values()))
def test_tensors_roundtrip_bit_for_bit(dtype):
    x = torch.randn(3, 0 if dtype == torch.bool else 5).to(dtype)
    y = torch.arange(-8, 8).reshape(4, 4).t().to(dtype)  # non-contiguous input
    for t in (x, y, torch.tensor(3).to(dtype)):
        got = roundtrip(t)
        assert type(got) is torch.Tensor and got.dtype == t.dtype and got.shape == t.shape
        assert torch.equal(got.reshape(-1).view(torch.uint8), t.contiguous().reshape(-1).view(torch.uint8))


def test_nan_payload_and_ndarray():
    bits = torch.tensor([0x7FC00001, -0x00400000, -0x80000000], dtype=torch.int32).view(torch.float32)
    assert torch.equal(roundtrip(bits).view(torch.int32), bits.view(torch.int32))
    a = np.arange(12, dtype=np.uint16).reshape(3, 4)
    got = roundtrip(a)
    assert type(got) is np.ndarray and got.dtype == np.uint16 and (got == a).all()


def test_numpy_scalars_become_python_numbers():
    assert type(roundtrip(np.int64(3))) is int and type(roundtrip(np.float32(0.5))) is float


def test_structs_cross_by_value():
    s = Struct("TransformerConfig", {"d_model": 4})
    assert roundtrip(s) == s and roundtrip(s).d_model == 4
    rebuilt = codec.from_plain(codec.to_plain(s), lambda name, fields: (name, fields))
    assert rebuilt == ("TransformerConfig", {"d_model": 4})


class Liar:
    def __eq__(self, other):
        return True


class SneakyInt(int):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize("value", [Liar(), {1: 2}, object(), lambda: 0, {"x": Liar()},
                                   torch.nn.Linear(2, 2)])
def test_forged_objects_are_refused(value):
    with pytest.raises(codec.Unsupported):
        codec.to_plain(value)


class LyingTuple(tuple):
    def __iter__(self):
        return iter((99,))

    def __eq__(self, other):
        return True


class LyingFloat(float):
    def __float__(self):
        return 1.0


@pytest.mark.parametrize("value, plain", [
    (SneakyInt(3), 3), (LyingFloat(2.5), 2.5), (LyingTuple((1, 2)), (1, 2)),
    (torch.Size([2, 3]), (2, 3)), (collections.namedtuple("P", "n d")(5, 7), (5, 7)),
    (collections.Counter(params=4, total=4), {"params": 4, "total": 4}),
    (collections.OrderedDict(a=[1, 2]), {"a": [1, 2]}), (np.int64(7), 7), (np.float32(0.5), 0.5),
    (np.bool_(True), True)])
def test_subclasses_of_builtins_become_the_builtin_type(value, plain):
    """The handout's type rule: a subclass of the promised built-in type counts as that type.
    Its value is read with the built-in's own methods (a lying __iter__/__float__/__eq__ is not
    called), and what crosses is a fresh built-in value of exactly that type."""
    got = codec.from_plain(codec.loads(codec.dumps(codec.to_plain(value))))
    assert got == plain and type(got) is type(plain)
    if isinstance(got, (tuple, dict)):
        assert all(type(v) is type(w) for v, w in zip(got, plain))


class LyingStr(str):
    def __str__(self):
        return "forged"

    def __eq__(self, other):
        return True


@pytest.mark.parametrize("container", [tuple, list])
def test_a_subclass_inside_a_container_takes_the_long_way(container):
    """A container's items of exact built-in types cross without a call (the fast path); an item
    of a subclass never does: it becomes its built-in value, its own methods never called."""
    value = container([SneakyInt(3), LyingFloat(2.5), LyingStr("real"), True, None, 4, 0.5, "s"])
    got = codec.from_plain(codec.loads(codec.dumps(codec.to_plain(value))))
    assert type(got) is container and list(map(type, got)) == [int, float, str, bool, type(None), int, float, str]
    assert list(got) == [3, 2.5, "real", True, None, 4, 0.5, "s"] and got[2] != "forged"


def _nested(levels: int, container=list):
    value = 1
    for _ in range(levels):
        value = container([value])
    return value


@pytest.mark.parametrize("container", [tuple, list])
def test_the_depth_bound_holds_for_a_scalar_item(container):
    """A scalar MAX_DEPTH containers deep crosses; one more is refused, on either side, scalar
    items or not (the fast path takes no item past the bound)."""
    deepest = _nested(codec.MAX_DEPTH, container)
    assert codec.from_plain(codec.loads(codec.dumps(codec.to_plain(deepest)))) == deepest
    with pytest.raises(codec.Unsupported, match="nested too deeply"):
        codec.to_plain(_nested(codec.MAX_DEPTH + 1, container))
    plain = codec.to_plain(deepest)
    too_deep = [plain] if container is list else {"$t": [plain]}
    with pytest.raises(codec.DecodeError, match="nested too deeply"):
        codec.from_plain(too_deep)


@pytest.mark.parametrize("payload", [
    b"not json", b'{"$tensor": "float32", "shape": [2], "b64": "AAAA"}',
    b'{"$tensor": "object", "shape": [1], "b64": ""}', b'{"$dtype": "evil"}',
    b'{"$struct": "os.system", "fields": {}}', b'{"$tensor": "float32", "shape": [-1], "b64": ""}',
    b'{"$t": 5}', b'{"$unknown": 1}', b"[" * 100_000 + b"]" * 100_000])
def test_malformed_messages_are_decode_errors(payload):
    with pytest.raises(codec.DecodeError):
        codec.from_plain(codec.loads(payload))
