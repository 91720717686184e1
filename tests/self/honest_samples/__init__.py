"""Honest code the way students write it, for the notes for review (seam/review.py): not solutions of
the problems, but the idioms their solutions use (torch's ``_foreach_*``, einsum and einops,
dataclasses, local imports, functools, numpy, a ``__main__`` self-check, their own small classes
with properties and stores, optimizer state, ``setattr(self, ...)``). Each module gets no note
(tests/self/unit/test_review.py), and runs as a script."""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def all_samples() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_"))
