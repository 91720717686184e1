"""The one way the grader writes a file: whole or not at all.

Every file the grader leaves for someone to read (results.json, student.json, batch.json, the
gradebook, report.txt, the kept code, the class report, the Gradescope zip) goes through
``write_atomically``: an interrupted run, a full disk or a failed serialisation leaves the old
file as it was (or none), never half a file, and no temporary file beside it.
"""

import contextlib
import os
import tempfile
from pathlib import Path

# mkstemp makes its file 0600 (the grader's own uid alone): a TA outside the container (or the
# course's other accounts on a cluster) must read what the grader wrote, so every file is made
# world-readable. Nothing it writes is secret from them; the students never see these folders.
MODE = 0o644


def write_atomically(path: Path, data: bytes | str, mode: int = MODE) -> Path:
    """Write ``data`` (str: as UTF-8) to ``path`` via a temporary file in the same folder (so the
    rename stays on one file system), flushed to disk, given ``mode``, then renamed over
    ``path``: a reader sees the old file or the new one, whole. On any failure (even
    KeyboardInterrupt) the temporary file is removed and ``path`` is left untouched. The folder
    is made when missing. Returns ``path``."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError(f"write_atomically({path}): data must be bytes or str, not {type(data).__name__}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path
