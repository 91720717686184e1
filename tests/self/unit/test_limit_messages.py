"""Every limit of the sandbox has one home (grader/sandbox/limits.py ``Limits``) and one message
that names it and its value, the one a student reads when a call meets it. No sandbox here: the
worker's own rlimit code runs in a plain subprocess."""

import dataclasses
import errno
import json
import os
import re
import subprocess
import sys

import pytest

from grader.paths import ROOT
from grader.sandbox.limits import GIB, MIB, Limits, explain, message

FIELDS = [f.name for f in dataclasses.fields(Limits)]


def shown(limit: str, value) -> list[str]:
    """How a value may read in a message: bytes in MiB or GiB, the rest as a number."""
    if limit.endswith("_bytes"):
        return [f"{value / MIB:g} MiB", f"{value / GIB:g} GiB"]
    return [f"{value:g}"]


@pytest.mark.parametrize("limit", FIELDS)
def test_every_limit_has_a_message_naming_it_and_its_value(limit):
    """A new field of Limits without its line in limits.SAID fails here (KeyError)."""
    default = getattr(Limits(), limit)
    other = (default or 1 << 30) * 3  # not a default of any field: the message must follow the value
    for limits in (Limits(), Limits(**{limit: other})):
        text = message(limit, limits)
        value = getattr(limits, limit)
        assert text.endswith(f"(Limits.{limit})"), text
        assert any(s in text for s in shown(limit, value)), (text, shown(limit, value))
    assert message(limit, Limits()) != message(limit, Limits(**{limit: other}))


def test_no_memory_limit_says_so():
    text = message("memory_bytes", Limits(memory_bytes=None))
    assert "no memory limit" in text and "(Limits.memory_bytes)" in text


# What a student's call meets in the worker, made for real: the worker's own set_limits (from the
# dict zygote.py sends, every field of Limits) in a fresh interpreter, then too many files and too
# large a file (Python ignores SIGXFSZ: an EFBIG the student's code sees), each failure as the
# worker's callee words it.
MEETS = '''
import dataclasses, json, os, sys
sys.path.insert(0, "grader/sandbox")
import limits, worker
told = limits.Limits(**json.loads(sys.argv[1]))
worker.set_limits(dataclasses.asdict(told))
class Seam:  # the seam's Callee as far as the worker's subclass uses it (the real one imports torch)
    def _raised(self, e):
        return {"raised": {"type": type(e).__name__, "message": str(e)}}
callee = worker.limited(Seam, told)()
out = {}
try:
    kept = [open(os.devnull) for _ in range(told.open_files + 1)]
except OSError as e:
    out["files"] = [e.errno, callee._raised(e)["raised"]["message"]]
try:
    with open(sys.argv[2], "wb") as f:
        f.write(b"x" * (told.file_bytes + 1))
        f.flush()
except OSError as e:
    out["size"] = [e.errno, callee._raised(e)["raised"]["message"]]
print(json.dumps(out))
'''


def test_the_worker_sets_each_rlimit_from_limits_and_the_error_names_it(tmp_path):
    """Not a constant in worker.py (such as 256): the values sent. (Imported as the worker imports
    them, from their folder: limits.py needs nothing of the grader's.)"""
    told = Limits(open_files=37, file_bytes=3 * MIB, processes=None)
    sent = json.dumps(dataclasses.asdict(told))
    run = subprocess.run([sys.executable, "-I", "-c", MEETS, sent, str(tmp_path / "big")], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    assert got["files"] == [errno.EMFILE, f"[Errno {errno.EMFILE}] {os.strerror(errno.EMFILE)}: '{os.devnull}'; "
                                          f"too many open files: {message('open_files', told)}"]
    assert got["size"] == [errno.EFBIG, f"[Errno {errno.EFBIG}] {os.strerror(errno.EFBIG)}; "
                                        f"file too large: {message('file_bytes', told)}"]
    assert "37 open files" in got["files"][1] and "3 MiB" in got["size"][1]


def test_explain_names_the_limit_a_failure_met():
    limits = Limits()
    assert explain(OSError(errno.ENOSPC, "No space left on device"), limits).endswith(message("disk_bytes", limits))
    assert explain(BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"), limits) \
        .startswith("if it was starting a process or thread: ")
    assert explain(RuntimeError("can't start new thread"), limits).endswith(message("processes", limits))
    assert explain("SIGXCPU", limits).endswith(message("cpu_seconds", limits))
    assert explain("SIGKILL", limits).endswith(message("memory_bytes", limits))
    # no limit: another error, a signal of the student's, a limit the worker was not given
    assert explain(OSError(errno.ENOENT, "gone"), limits) == ""
    assert explain(ValueError("can't start new thread"), limits) == ""
    assert explain("SIGTERM", limits) == ""
    assert explain(BlockingIOError(errno.EAGAIN, "x"), Limits(processes=None)) == ""


def test_the_readmes_limit_messages_are_the_ones_students_read():
    """A message quoted in the README or docs/ (one naming ``(Limits.x)``) is message(x) for the defaults."""
    readme = " ".join(" ".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]).split())
    quoted = set(re.findall(r"\(Limits\.(\w+)\)", readme))
    assert quoted, "the docs quote no limit's message"
    for limit in sorted(quoted):
        assert message(limit, Limits()) in readme, (limit, message(limit, Limits()))


def test_every_limit_is_read_where_the_sandbox_enforces_it():
    """A new field with its message but no code that applies it would pass the tests above: each
    field must be read (``.field`` or ``["field"]``) by a module of grader/sandbox/ other than
    limits.py (the worker's rlimits, the zygote's cgroup and scratch, the sandbox's deadlines)."""
    folder = ROOT / "grader" / "sandbox"
    code = {p.name: p.read_text() for p in folder.glob("*.py") if p.name != "limits.py"}
    unread = [f.name for f in dataclasses.fields(Limits)
              if not any(re.search(rf"""\.{f.name}\b|\[["']{f.name}["']\]""", text) for text in code.values())]
    assert not unread, f"limits no code in grader/sandbox/ applies: {unread}"
