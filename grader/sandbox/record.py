"""The grader's side of the worker's record of what ran (seam/audit.py): datagrams read off the
socket the worker cannot close, turned into notes for review in the grader's own words.

A datagram is ``code\\0line\\0file\\0detail``. Only the code picks the words (seam/audit.py
``CODES``); the line is a number, the file a module of the upload, the detail at most a dotted
name. Whatever else arrives was not written by the hook (the student's code may write on the
socket): it is a note of its own, never text shown. The student's code can add records against
itself, never take one away.
"""

import socket

from seam import review
from seam.audit import CODES

SEEN = "at run time, recorded"
MAX_DATAGRAMS = 512    # kept per worker; the hook sends at most 256 distinct ones itself
DATAGRAM_BYTES = 4096  # longer is not the hook's: cut, and then not parsed


def drain(sock: socket.socket, into: list[bytes]) -> bool:
    """Read every datagram waiting on ``sock`` (non-blocking) into ``into`` (at most
    ``MAX_DATAGRAMS``; the rest are read and dropped). False once the worker's end is closed."""
    while True:
        try:
            data = sock.recv(DATAGRAM_BYTES)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            return False
        if len(into) < MAX_DATAGRAMS:
            into.append(data)


def _dotted(text: str) -> str:
    return text if len(text) <= 80 and text.replace(".", "_").isidentifier() else ""


def parse(data: bytes) -> tuple[str, int, str, str] | None:
    """(code, line, file, detail) of a datagram the hook could have written, or None."""
    parts = data.split(b"\x00")
    if len(parts) != 4:
        return None
    try:
        code, line, file, detail = (p.decode("utf-8") for p in parts)
        line = int(line)
    except (UnicodeDecodeError, ValueError):
        return None
    if code in ("flood", "failed"):
        return code, 0, "", ""
    if code not in CODES or not 0 <= line <= 10**7 or (detail and not _dotted(detail)):
        return None
    return code, line, file, detail


def charges(datagrams: list[bytes]) -> list[str]:
    """The functions the watch charged (a forbidden call seen to run for them), as recorded."""
    return [parsed[3] for parsed in map(parse, datagrams) if parsed is not None and parsed[0] == "charge"]


def notes(datagrams: list[bytes], problem: str | None) -> list[dict]:
    """The notes of a request's datagrams. A position outside the upload's problem modules (none
    on the stack: a thread's, a helper's) goes to ``problem``, the module of the request they
    arrived during."""
    out = []
    fallback = f"{problem}.py" if problem else ""
    for data in datagrams:
        parsed = parse(data)
        if parsed is None:
            kind, construct, file, line = ("the grader", "the record of what ran holds a message the grader's "
                                           "hook did not write", fallback, 0)
        elif parsed[0] == "flood":
            kind, construct, file, line = ("the grader", "more distinct events than the record keeps: the "
                                           "rest were not recorded", fallback, 0)
        elif parsed[0] == "failed":
            kind, construct, file, line = ("the grader", "an event the record could not follow (the hook met "
                                           "an error: a recursion or memory limit reached on purpose?)", fallback, 0)
        elif parsed[0] == "charge":
            continue  # a charge, not a note: ``charges``
        else:
            code, line, file, detail = parsed
            kind, construct = CODES[code]
            if detail:
                construct = f"{construct}: {detail}"
            if review.problem_of(file) is None:
                file, line = fallback, 0
        if review.problem_of(file) is None:
            continue  # no problem to put it on (a record between requests that named none)
        out.append(review.note(file, line, kind, construct, seen=SEEN))
    return out
