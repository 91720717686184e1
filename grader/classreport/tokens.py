"""A Python module as the similarity pass sees it (similarity.py): its tokens with every name
replaced by ``V`` and every string by ``S`` (renaming changes nothing), comments and spacing
dropped (reformatting changes nothing), keywords, builtins, numbers and operators kept as
written; and its winnowed fingerprints, hashed with a hash of our own (the same on every run and
machine, whatever PYTHONHASHSEED says).

One regular expression splits the text (a few MB a second; pygments, which copydetect uses,
tokenises about 0.15 MB a second): a text that is no valid Python still splits, every character
in some token.
"""

import builtins
import dataclasses
import keyword
import re
from itertools import compress, repeat
from operator import is_

import numpy as np

K, WINDOW = 25, 4    # a k-gram of K filtered characters; winnowing window W: a match K + W - 1 long is always seen

TOKEN = re.compile(r"""
    (?:[ \t\f\r\n\v]|\\\r?\n|\#[^\n]*)+                                        # spacing, comments: dropped
  | [rRbBuUfF]{0,2}(?:'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)          # strings: S
                     |\"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
                     |'[^'\\\n]*(?:\\.[^'\\\n]*)*'?
                     |"[^"\\\n]*(?:\\.[^"\\\n]*)*"?)
  | [^\W\d]\w*                                                                 # names: V, or kept
  | \d\w*                                                                      # numbers: kept
  | [^\w\s'"\#\\]+                                                             # operators: kept
  | .                                                                          # anything else: kept
""", re.VERBOSE | re.DOTALL)
NAME_START = re.compile(r"[^\W\d]")
KEPT = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {"self", "cls"}


def _filtered(token: str) -> str:
    first = token[0]
    if first in " \t\f\r\n\v#\\":
        return ""
    if "'" in token or '"' in token:
        return "S"
    if NAME_START.match(first):
        return token if token in KEPT else "V"
    return token


_SEEN: dict[str, str] = {}  # token -> its filtered form (names and operators recur)


def split(text: str) -> tuple[list[str], list[str]]:
    """The text's tokens (every character in one) and each one's filtered form."""
    tokens = TOKEN.findall(text)
    seen = _SEEN
    out = list(map(seen.get, tokens))
    for i in compress(range(len(out)), map(is_, out, repeat(None))):  # tokens not seen yet
        f = out[i] = _filtered(tokens[i])
        if len(tokens[i]) <= 40 and len(seen) < 1 << 18:
            seen[tokens[i]] = f
    return tokens, out


def places(text: str) -> tuple[np.ndarray, np.ndarray]:
    """For each character of the filtered code, where its token starts and ends in ``text``."""
    tokens, out = split(text)
    ends = np.cumsum(np.fromiter(map(len, tokens), np.int64, len(tokens)))
    lengths = np.fromiter(map(len, out), np.int64, len(out))
    return np.repeat(ends - np.fromiter(map(len, tokens), np.int64, len(tokens)), lengths), np.repeat(ends, lengths)


# a 64-bit polynomial hash of a k-gram's characters, mixed (splitmix64's finaliser) so that the
# smallest in a window is any k-gram, not the one with the smallest first character
_BASE = np.uint64(0x100000001B3)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def kgram_hashes(filtered: str, k: int = K) -> np.ndarray:
    codes = np.frombuffer(filtered.encode("utf-32-le"), dtype="<u4").astype(np.uint64)
    m = len(codes) - k + 1
    if m <= 0:
        return np.zeros(0, np.int64)
    h = np.zeros(m, np.uint64)
    for j in range(k):  # wraps modulo 2**64 by design
        h = h * _BASE + codes[j:j + m]
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h.view(np.int64)


def winnow(hashes: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """The positions winnowing keeps: in every window of ``window`` hashes, the smallest (the
    rightmost of equals), each position once, in order."""
    if len(hashes) < window:
        return np.arange(len(hashes)) if len(hashes) else np.zeros(0, np.int64)
    views = np.lib.stride_tricks.sliding_window_view(hashes, window)
    right = window - 1 - np.argmin(views[:, ::-1], axis=1)
    return np.unique(right + np.arange(len(views)))


@dataclasses.dataclass(frozen=True)
class Print:
    """A module's fingerprints: ``hashes[i]`` is the k-gram at ``positions[i]`` of the filtered
    code (positions ascending; a hash may recur), ``length`` the filtered code's length."""
    hashes: np.ndarray
    positions: np.ndarray
    length: int


def fingerprint(text: str) -> Print:
    _, out = split(text)
    filtered = "".join(out)
    hashes = kgram_hashes(filtered)
    kept = winnow(hashes)
    return Print(hashes[kept], kept.astype(np.int32), len(filtered))
