"""`--shard I/N`: which slice of a class one batch grades.

A student's slice is a hash of their upload's key, not their position in a sorted list: a
late submission added to the class does not move anyone else to another slice, so shards
graded before and after it still fit together. Slices are disjoint and cover the class by
construction (each key lands in exactly one).

Without ``--shard`` the slice comes from the scheduler: a Slurm job array
(``SLURM_ARRAY_TASK_ID`` minus ``SLURM_ARRAY_TASK_MIN``, of ``SLURM_ARRAY_TASK_COUNT``) or a
Kubernetes indexed Job (``JOB_COMPLETION_INDEX``, of ``--shard-count``).
"""

import hashlib
import os


class ShardError(ValueError):
    """A bad --shard / --shard-count / environment value (exit 2, one line)."""


def shard_of(key: str, count: int) -> int:
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ShardError(f"{what} must be a whole number, got {text!r}") from None


def resolve(spec: str | None, count: int | None, env=os.environ) -> tuple[int, int] | None:
    """(index, count) from ``--shard I/N``, ``--shard-count`` and the environment; None: the
    whole class. Raises ShardError."""
    if spec is not None:
        index_text, sep, count_text = spec.partition("/")
        if not sep:
            raise ShardError(f"--shard {spec!r}: expected I/N, e.g. --shard 0/4")
        index, n = _int(index_text, "--shard's I"), _int(count_text, "--shard's N")
        if count is not None and count != n:
            raise ShardError(f"--shard {spec} and --shard-count {count} disagree")
        source = f"--shard {spec}"
    elif env.get("SLURM_ARRAY_TASK_ID", "").strip():
        index = _int(env["SLURM_ARRAY_TASK_ID"], "SLURM_ARRAY_TASK_ID") \
            - _int(env.get("SLURM_ARRAY_TASK_MIN", "0") or "0", "SLURM_ARRAY_TASK_MIN")
        n = count if count is not None else _int(env.get("SLURM_ARRAY_TASK_COUNT", ""),
                                                 "SLURM_ARRAY_TASK_COUNT (or give --shard-count)")
        source = f"SLURM_ARRAY_TASK_ID={env['SLURM_ARRAY_TASK_ID']}"
    elif env.get("JOB_COMPLETION_INDEX", "").strip():
        index = _int(env["JOB_COMPLETION_INDEX"], "JOB_COMPLETION_INDEX")
        if count is None:
            raise ShardError("JOB_COMPLETION_INDEX is set but not the number of shards: give "
                             "--shard-count N (the Job's completions)")
        n = count
        source = f"JOB_COMPLETION_INDEX={env['JOB_COMPLETION_INDEX']}"
    elif count is not None:
        raise ShardError("--shard-count without a shard index (give --shard I/N, or run in a "
                         "Slurm array or an indexed Job)")
    else:
        return None
    if n < 1:
        raise ShardError(f"{source}: the number of shards must be >= 1, got {n}")
    if not 0 <= index < n:
        raise ShardError(f"{source}: shard index {index} is not in 0..{n - 1}")
    return index, n


def select(keys, shard: tuple[int, int] | None) -> list:
    """The keys in this slice (all of them when ``shard`` is None), order kept."""
    if shard is None:
        return list(keys)
    index, n = shard
    return [k for k in keys if shard_of(k, n) == index]
