"""The one sanitiser for text a submission (or an upload's name) puts where a TA reads it.

A student controls exception messages, their own source lines in tracebacks, file and folder
names, and (through Gradescope) names in submission_metadata.yml. None of it may move the
cursor, clear or recolour a terminal, write the clipboard (OSC 52), reorder text (bidi
overrides), break a line where a report expects one (U+2028/9, CR), fail to encode (a lone
surrogate) or run as a spreadsheet formula. Every writer (results.json, the score table,
gradebook.csv, batch logs and the later reports) goes through these functions:

    clean(text)     control characters but newline removed, surrogates spelled out
    one_line(text)  clean, and its newlines as " / ": a name or a note never starts a line
    indent(text)    clean, every line prefixed, so none of them starts a line of the report
    csv_cell(x)     one_line, and a leading = + - @ (a formula) quoted with '
    safe_streams()  stdout and stderr never fail to encode (each entry point calls it first)
"""

import re
import sys

# C0 (but \n), DEL, C1; bidi marks, embeddings, overrides and isolates; the Unicode line and
# paragraph separators; the byte-order mark / zero-width no-break space.
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069"
                     "\u2028\u2029\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
FORMULA = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # and full-width


def clean(text) -> str:
    """``text`` (anything: it is str()-ed) with what could act on a terminal or a reader removed:
    tabs become a space, other controls go, a lone surrogate is written out as ``\\udXXX``."""
    text = str(text)
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _UNSAFE.sub(lambda m: " " if m.group() == "\t" else "", text)


def one_line(text) -> str:
    """``clean(text)`` on one line: for a name or a value inside a sentence of the grader's."""
    return " / ".join(line for line in clean(text).split("\n"))


def indent(text, prefix: str = "    ") -> str:
    """``clean(text)`` with every line prefixed: what a submission says, under the grader's lines."""
    return "\n".join(prefix + line for line in clean(text).split("\n"))


def csv_cell(value) -> str:
    """A gradebook cell: one line, and never a formula (OWASP's advice: a leading ' ), also
    behind leading spaces."""
    text = one_line(value)
    return "'" + text if text.lstrip().startswith(FORMULA) else text  # behind any white space, NBSP too


def safe_streams() -> None:
    """What cannot be encoded is written as ``\\x..`` escapes rather than raising: a report that
    was built must also be printed (and the process must not exit 1 after writing it)."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
