"""The worker protocol's unit, one module for both ends: an 8-byte big-endian length, then that
many bytes of JSON (codec.py). The worker reads and writes blocking; the grader passes ``wait``,
called before each read or write, which blocks until the fd is ready or raises (its deadline)."""

import os
import struct

HEADER = struct.Struct(">Q")
# What moves the bytes, taken when the seam is imported (before any student module, in the
# worker): rebinding os.read / os.write afterwards changes no frame.
_read, _write, _view = os.read, os.write, memoryview
MAX_FRAME = 64 << 20  # the largest request the worker accepts (the grader's own: trusted)
# The largest reply the grader accepts from a worker: a full grade of the reference sends at most
# 4.3 MB (its requests at most 2.2 MB); four times that.
MAX_REPLY = 16 << 20


class FrameTooLarge(ValueError):
    """The other side announced a frame larger than MAX_FRAME: it broke the protocol."""


def _ready() -> None:
    pass


def read_exact(fd: int, n: int, wait=_ready) -> bytes:
    """n bytes from fd; EOFError if it closes first."""
    chunks = []
    while n:
        wait()
        chunk = _read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, wait=_ready, limit: int = MAX_FRAME) -> bytes:
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size, wait))
    if size > limit:
        raise FrameTooLarge(f"a message of {size} bytes (the limit is {limit})")
    return read_exact(fd, size, wait)


def write_frame(fd: int, payload: bytes, wait=_ready) -> None:
    """The whole frame; a non-blocking fd that is full waits (``wait``) and goes on."""
    view = _view(HEADER.pack(len(payload)) + payload)
    while view:
        wait()
        try:
            view = view[_write(fd, view):]
        except BlockingIOError:
            continue
