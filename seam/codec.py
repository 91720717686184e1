"""Plain data across the seam: JSON with tagged tensors, never pickle.

Everything a test sends to an implementation, and everything it sends back, is encoded here.
The trusted side only ever *decodes*, and decoding can only build these types:
None, bool, int, float, str, list, tuple, dict (str keys), torch.Tensor, numpy.ndarray,
torch.dtype and Struct. An object with a forged ``__eq__`` or ``__float__`` cannot survive the
trip: the receiver gets a fresh built-in value or a decode error.

Tags:  {"$t": [...]}                  tuple
       {"$tensor": dtype, "shape": [...], "b64": raw little-endian bytes}
       {"$ndarray": dtype, "shape": [...], "b64": ...}
       {"$dtype": "bfloat16"}          a torch.dtype
       {"$struct": "TransformerConfig", "fields": {...}}   a given frozen dataclass, by value
"""

import base64
import dataclasses
import json
import math
import re
from typing import Any, Callable

import numpy as np
import torch

from .problems import STRUCT_MODULES

# torch dtypes that may cross, by name. Bit-exact: bytes are copied, never re-parsed.
TORCH_DTYPES = {
    name: getattr(torch, name)
    for name in ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                 "int64", "int32", "int16", "int8", "uint8", "bool")
}
NUMPY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8",
                "uint16", "uint32", "bool")


MAX_DEPTH = 64
_SCALARS = frozenset((bool, int, float, str))  # exact types only: a subclass takes the long way
# A reply's size once parsed is bounded before it is parsed (``precount``): json.loads cannot be
# interrupted, and a frame of "[[],[],...]" is millions of objects. The largest reply in a full
# grade of the reference has ~31,000 nodes (4.3 MB); the cap leaves eight times that.
MAX_NODES = 250_000
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string (unrolled: linear, fast)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")


class DecodeError(ValueError):
    """The other side sent something that is not plain data."""


@dataclasses.dataclass(frozen=True)
class Struct:
    """A given dataclass by value: its class name and fields (plain data).

    Fields read as attributes (``cfg.d_model``, ``fmt.name``), like the real dataclass."""

    cls: str
    fields: dict

    def __getattr__(self, key):  # cfg.d_model reads like the real dataclass
        try:
            return self.__dict__["fields"][key]
        except KeyError:
            raise AttributeError(key) from None

    def __hash__(self):
        return hash((self.cls, tuple(sorted(self.fields.items()))))


class Unsupported(TypeError):
    """An implementation returned a value of a type that cannot cross the seam."""


def _type_name(obj) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def to_plain(obj: Any, depth: int = 0) -> Any:
    """Python value -> JSON-able structure. Raises Unsupported for anything else."""
    if depth > MAX_DEPTH:
        raise Unsupported("value nested too deeply")
    t = type(obj)
    if obj is None or t in _SCALARS:
        return obj
    if isinstance(obj, np.generic):  # numpy scalars become plain Python numbers
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
    # A subclass of a built-in type (torch.Size and namedtuples are tuples, Counter is a dict, an
    # IntEnum is an int) counts as that type: its value is read with the built-in type's own
    # methods, so an overridden __eq__, __iter__ or __float__ is never called and never crosses.
    if isinstance(obj, int):  # (bool cannot be subclassed: an exact bool returned above)
        return int.__int__(obj)
    if isinstance(obj, float):
        return float.__float__(obj)
    if isinstance(obj, str):
        return str.__str__(obj)
    # A scalar item is itself (the first test above), without a call: shapes, strides and lists of
    # numbers are most of what crosses, a million items in a grade. At the depth bound every item
    # takes the call, which refuses it, as any value that deep is refused.
    short = depth < MAX_DEPTH
    if isinstance(obj, tuple):
        return {"$t": [v if short and (v is None or type(v) in _SCALARS) else to_plain(v, depth + 1)
                       for v in tuple.__iter__(obj)]}
    if isinstance(obj, list):
        return [v if short and (v is None or type(v) in _SCALARS) else to_plain(v, depth + 1)
                for v in list.__iter__(obj)]
    if isinstance(obj, dict):
        out = {}
        for k, v in dict.items(obj):
            if type(k) is not str:
                if not isinstance(k, str):
                    raise Unsupported(f"dict keys must be str, got {_type_name(k)}")
                k = str.__str__(k)
            out[k] = to_plain(v, depth + 1)
        return out
    if isinstance(obj, torch.dtype):
        name = str(obj).removeprefix("torch.")
        if name not in TORCH_DTYPES:
            raise Unsupported(f"dtype {obj} cannot cross the seam")
        return {"$dtype": name}
    if isinstance(obj, torch.Tensor):
        x = obj.detach().to("cpu").contiguous()
        name = str(x.dtype).removeprefix("torch.")
        if name not in TORCH_DTYPES:
            raise Unsupported(f"tensor dtype {x.dtype} cannot cross the seam")
        raw = x.reshape(-1).view(torch.uint8).numpy().tobytes() if x.numel() else b""
        return {"$tensor": name, "shape": list(x.shape), "b64": base64.b64encode(raw).decode()}
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        if a.dtype.name not in NUMPY_DTYPES:
            raise Unsupported(f"array dtype {a.dtype} cannot cross the seam")
        return {"$ndarray": a.dtype.name, "shape": list(a.shape),
                "b64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode()}
    if isinstance(obj, Struct):
        return {"$struct": obj.cls, "fields": to_plain(obj.fields, depth + 1)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and t.__name__ in STRUCT_MODULES:
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        return {"$struct": t.__name__, "fields": to_plain(fields, depth + 1)}
    raise Unsupported(f"a value of type {_type_name(obj)} cannot cross the seam "
                      "(return plain int/float/bool/str, tuples, lists, dicts or tensors)")


def _b64(node) -> bytes:
    data = node.get("b64")
    if type(data) is not str:
        raise DecodeError("tensor payload must be a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except ValueError as e:
        raise DecodeError(f"bad base64 payload: {e}") from None


def _shape(node) -> tuple[int, ...]:
    shape = node.get("shape")
    if type(shape) is not list or not all(type(s) is int and 0 <= s < 2**40 for s in shape):
        raise DecodeError("tensor shape must be a list of non-negative ints")
    if len(shape) > 32:
        raise DecodeError("tensor has too many dims")
    return tuple(shape)


def from_plain(node: Any, resolve_struct: Callable[[str, dict], Any] | None = None,
               depth: int = 0) -> Any:
    """JSON structure -> value built only from trusted types.

    ``resolve_struct(name, fields)`` rebuilds a given dataclass on the callee's side; without it
    (the trusted side) structs come back as ``Struct``.
    """
    if depth > MAX_DEPTH:
        raise DecodeError("value nested too deeply")
    t = type(node)
    if node is None or t in _SCALARS:
        return node
    short = depth < MAX_DEPTH  # a scalar item without a call, as in to_plain; at the bound, refused
    if t is list:
        return [v if short and (v is None or type(v) in _SCALARS) else from_plain(v, resolve_struct, depth + 1)
                for v in node]
    if t is not dict:
        raise DecodeError(f"unexpected JSON value of type {t.__name__}")
    if "$t" in node:
        items = node["$t"]
        if type(items) is not list:
            raise DecodeError("tuple payload must be a list")
        return tuple([v if short and (v is None or type(v) in _SCALARS) else from_plain(v, resolve_struct, depth + 1)
                      for v in items])
    if "$dtype" in node:
        name = node["$dtype"]
        if name not in TORCH_DTYPES:
            raise DecodeError(f"unknown dtype {name!r}")
        return TORCH_DTYPES[name]
    if "$tensor" in node:
        name = node["$tensor"]
        if name not in TORCH_DTYPES:
            raise DecodeError(f"unknown tensor dtype {name!r}")
        dtype, shape = TORCH_DTYPES[name], _shape(node)
        raw = _b64(node)
        numel = math.prod(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if len(raw) != numel * itemsize:
            raise DecodeError(f"tensor payload has {len(raw)} bytes, shape {shape} needs {numel * itemsize}")
        if numel == 0:
            return torch.empty(shape, dtype=dtype)
        flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype)
        return flat.reshape(shape).clone()
    if "$ndarray" in node:
        name = node["$ndarray"]
        if name not in NUMPY_DTYPES:
            raise DecodeError(f"unknown array dtype {name!r}")
        shape, raw = _shape(node), _b64(node)
        dt = np.dtype(name).newbyteorder("<")
        if len(raw) != math.prod(shape) * dt.itemsize:
            raise DecodeError("array payload size does not match its shape")
        return np.frombuffer(raw, dtype=dt).astype(np.dtype(name)).reshape(shape)
    if "$struct" in node:
        name, fields = node["$struct"], node.get("fields")
        if name not in STRUCT_MODULES or type(fields) is not dict:
            raise DecodeError(f"unknown struct {name!r}")
        fields = {k: from_plain(v, resolve_struct, depth + 1) for k, v in fields.items()}
        return resolve_struct(name, fields) if resolve_struct else Struct(name, fields)
    out = {}
    for k, v in node.items():
        if type(k) is not str or k.startswith("$"):
            raise DecodeError(f"unexpected key {k!r}")
        out[k] = from_plain(v, resolve_struct, depth + 1)
    return out


# The encoder, taken when the seam is imported (before any student module, in the worker): a
# submission that rebinds json.dumps, json.encoder's functions or JSONEncoder's methods changes no
# byte of a reply. The same bytes as json.dumps(obj, allow_nan=True, separators=(",", ":")).
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode_string = json.encoder.encode_basestring_ascii
_json_dumps = json.dumps


def _not_serializable(obj):
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps(obj: Any, _make=_make_encoder, _string=_encode_string, _join="".join) -> bytes:
    """Encode a value (already plain, or convertible) to UTF-8 JSON bytes."""
    if _make is None:  # a Python without the C accelerator
        return _json_dumps(obj, allow_nan=True, separators=(",", ":")).encode()
    return _join(_make({}, _not_serializable, _string, None, ":", ",", False, False, True)(obj, 0)).encode()


def precount(data: bytes, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> int:
    """The number of values (nodes) ``data`` would parse into, counted without parsing it (C-speed
    passes over the bytes: strings dropped, then the structural bytes counted); DecodeError when
    there are more than ``max_nodes`` or they nest deeper than ``max_depth``."""
    structure = _STRING.sub(b'""', data).translate(None, _NOT_STRUCTURE)
    opened = structure.count(b"[") + structure.count(b"{")
    nodes = opened + structure.count(b",") + 1
    if nodes > max_nodes:
        raise DecodeError(f"a message of about {nodes} values (the limit is {max_nodes})")
    if opened:
        steps = np.frombuffer(structure, dtype=np.uint8)
        depth = np.cumsum(np.isin(steps, (91, 123)).astype(np.int32) - np.isin(steps, (93, 125)))
        if int(depth.max()) > max_depth:
            raise DecodeError(f"a message nested {int(depth.max())} deep (the limit is {max_depth})")
    return nodes


def loads(data: bytes, bounded: bool = False) -> Any:
    """Parse JSON bytes; anything malformed is a DecodeError. ``bounded`` (the trusted side reading
    a worker's reply): ``precount`` first, so no reply costs more than MAX_NODES values to parse."""
    if bounded:
        precount(data)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:
        raise DecodeError(f"malformed message: {str(e)[:200]}") from None
