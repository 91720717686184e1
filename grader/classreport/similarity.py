"""Pairs of submissions whose code is suspiciously alike, per problem module: evidence for a
person, never a grade.

Each module is fingerprinted as copydetect does (tokens.py: every name a letter, so renaming
changes nothing; comments and spacing dropped, so reformatting changes nothing; k-grams of ``K``
characters winnowed, so a match ``K + WINDOW - 1`` long is always seen), with a hash of our own:
the same pairs on every run, whatever PYTHONHASHSEED says.

Against what is known (the reference): a module's share is the share of its tokens, the stub's
given code left out, covered by fingerprints the other holds too (copydetect's token coverage).

Between two uploads (and an upload and an ``--archive`` file) what matters is what is rare. The
stub's and the reference's fingerprints weigh nothing (two who copied the reference are each
found against it), and neither does the class's common form: a fingerprint held by
``cut = max(2 × RING, COMMON × n)`` of the module's ``n`` uploads or more. One held by ``RING`` or
fewer (a pair, a small copy ring) weighs 1, and in between the weight falls linearly with the
holders' count, ``(cut - holders) / (cut - RING)``. A module's share is the weight it shares with
the other, over the tokens each fingerprint stands for (up to the next one, at most ``K``), of
all its tokens (the stub's left out): a renamed copy of a solution of its own shares nearly all
of it; two students who wrote the standard AdamW apart share its common phrasings, which weigh
nothing, and not what each wrote their own way. A pair is flagged when both shares are at least
``THRESHOLD``, ranked by the lower: the rarer what two share, the higher.

The pairs come from an inverted index, fingerprint -> uploads, of the rare fingerprints only:
pairs that share none are never looked at (all pairs of 1,000 students would be half a million
per module). See tests/self/unit/test_classreport.py and test_similarity.py.
"""

import os
from pathlib import Path

import numpy as np

from . import tokens
from .tokens import K, Print

# what the known texts are called in a pair: a "/" no student's key (a folder's name) can hold
REFERENCE_NAME, ARCHIVE_NAME = "/reference", "/archive/"
THRESHOLD = 0.5      # both modules at least this share covered by the match: flagged
RING = 4             # a fingerprint held by this many uploads or fewer weighs in full (a copy ring)
COMMON = 0.05        # one held by this share of the uploads of a module, and by 2 × RING or more, weighs
                     # nothing: the class's common form
MIN_TOKENS = 60      # a module with less than this (tokens, weighed) says too little to compare
SPANS = 10           # a module's best pairs given their matching spans (the page shows the ten best)
# A module longer than this (characters) is not fingerprinted: it is "too large to compare". The
# reference's longest module is 16 KB and an honest one with prints and helpers a few times that;
# the class report reads no more of a module than this either.
LARGEST = 64 * 1024


def fingerprint(text: str) -> Print:
    return tokens.fingerprint(text)


def _fingerprint_chunk(texts: list[str]) -> list[Print]:
    return [fingerprint(t) for t in texts]


# Fingerprints made, by text: a text is tokenised once, however many hand it in (a module left as
# the stub gave it, a copy of the reference) and however many reports are built in one process.
MEMO = 256
_MADE: dict[str, Print] = {}


def fingerprints(texts: list[str], jobs: int = 1) -> list[Print]:
    """Each text's fingerprint, each distinct text's made once (``jobs`` processes for many)."""
    todo = [t for t in dict.fromkeys(texts) if t not in _MADE]
    if jobs <= 1 or sum(map(len, todo)) < 4 << 20:
        made = _fingerprint_chunk(todo)
    else:
        from concurrent.futures import ProcessPoolExecutor
        size = -(-len(todo) // (jobs * 4))
        with ProcessPoolExecutor(jobs) as pool:
            made = [fp for part in pool.map(_fingerprint_chunk, [todo[i:i + size] for i in range(0, len(todo), size)])
                    for fp in part]
    new = dict(zip(todo, made))
    out = [new[t] if t in new else _MADE[t] for t in texts]
    _MADE.update(new if len(new) <= MEMO else dict(list(new.items())[-MEMO:]))
    while len(_MADE) > MEMO:  # the oldest go first
        del _MADE[next(iter(_MADE))]
    return out


def _cover(positions: np.ndarray) -> int:
    """Tokens covered by the k-grams at ``positions`` (ascending)."""
    return int(np.minimum(np.diff(positions), K).sum()) + K if len(positions) else 0


def _spans(text: str, fp: Print, shared: np.ndarray) -> list[list[int]]:
    """The matching spans in ``text`` (character offsets) of the fingerprints where ``shared``."""
    at = fp.positions[shared]
    if not len(at):
        return []
    breaks = np.nonzero(np.diff(at) > K - 1)[0]
    starts = np.concatenate([[at[0]], at[breaks + 1]])
    ends = np.concatenate([at[breaks] + K, [at[-1] + K]])
    first, last = tokens.places(text)
    if len(first) != fp.length:  # a text whose two readings disagree: no spans rather than wrong ones
        return []
    return [[int(first[a]), int(last[min(b, fp.length) - 1])] for a, b in zip(starts, ends)][:50]


def _held(mine: np.ndarray, w: np.ndarray, other: np.ndarray, w_other: np.ndarray, mark: np.ndarray) -> np.ndarray:
    """Which of my fingerprints of weight the other holds with weight (``mark``: a scratch array of
    False, one per number, left as it was found)."""
    theirs = other[w_other > 0]
    mark[theirs] = True
    held = (w > 0) & mark[mine]
    mark[theirs] = False
    return held


def _pair(problem: str, a: str, b: str, sa: float, sb: float) -> dict:
    return {"problem": problem, "a": a, "b": b, "score": round(float(min(sa, sb)), 3),
            "a_share": round(float(sa), 3), "b_share": round(float(sb), 3)}


def numbered(prints: list[Print]) -> tuple[list[np.ndarray], int]:
    """Each print's hashes as small numbers (one hash, one number, in every print), and how many
    numbers: what is shared is then looked up in an array, not searched for."""
    if not prints:
        return [], 0
    distinct, ids = np.unique(np.concatenate([fp.hashes for fp in prints]), return_inverse=True)
    return np.split(ids.reshape(-1), np.cumsum([len(fp.hashes) for fp in prints])[:-1]), len(distinct)


def against_known(problem: str, theirs: list[tuple[str, Print, np.ndarray]], known: tuple[str, Print, np.ndarray],
                  stub: np.ndarray):
    """Each upload (key, print, its numbers) against one known text, the fingerprints where
    ``stub`` (by number) left out: (flagged pairs, [each one's shared masks: the upload's, the known's])."""
    name, kp, kid = known
    kkeep = ~stub[kid]
    kids, kpos = kid[kkeep], kp.positions[kkeep]
    kcover = _cover(kpos)
    in_known, mark = np.zeros(len(stub), bool), np.zeros(len(stub), bool)
    in_known[kids] = True
    pairs, masks = [], []
    for who, fp, ids in theirs:
        keep = ~stub[ids]
        cover = _cover(fp.positions[keep])
        if cover < MIN_TOKENS or not kcover:
            continue
        shared = keep & in_known[ids]
        if not shared.any():
            continue
        mark[ids[shared]] = True
        back = mark[kids]
        mark[ids[shared]] = False
        sa, sb = _cover(fp.positions[shared]) / cover, _cover(kpos[back]) / kcover
        if min(sa, sb) >= THRESHOLD:
            kfull = np.zeros(len(kid), bool)
            kfull[np.nonzero(kkeep)[0][back]] = True
            masks.append((shared, kfull))
            pairs.append(_pair(problem, who, name, sa, sb))
    return pairs, masks


def weights(ids: list[np.ndarray], students: int, left_out: np.ndarray) -> list[np.ndarray]:
    """Each fingerprint's weight, by row (``ids``: each row's numbers; the first ``students`` rows
    are the class's uploads, the rest the archive's): its rarity among the uploads; 0 for the
    class's common form and where ``left_out`` (by number)."""
    held = np.bincount(np.concatenate([np.unique(i) for i in ids[:students]] + [np.zeros(0, np.int64)]),
                       minlength=len(left_out))
    cut = max(2 * RING, COMMON * students)
    table = np.clip((cut - held) / (cut - RING), 0.0, 1.0)
    table[left_out] = 0.0
    return [table[i] for i in ids]


def _segments(fp: Print) -> np.ndarray:
    """The tokens each fingerprint stands for: up to the next one, at most K."""
    if not len(fp.positions):
        return np.zeros(0, np.int64)
    return np.minimum(np.diff(fp.positions.astype(np.int64), append=int(fp.positions[-1]) + K), K)


def between(rows: list[Print], ids: list[np.ndarray], w: list[np.ndarray]):
    """Every two rows that share a fingerprint of weight: (row a, row b, a's shared weight, b's),
    a < b; a row's weight is over the tokens each fingerprint stands for."""
    H, R, V = [], [], []
    for r, (fp, wr) in enumerate(zip(rows, w)):
        if not len(fp.hashes):
            continue
        keep = wr > 0
        H.append(ids[r][keep]), R.append(np.full(int(keep.sum()), r, np.int64)), V.append((wr * _segments(fp))[keep])
    empty = np.zeros(0, np.int64)
    if not H:
        return empty, empty, np.zeros(0), np.zeros(0)
    H, R, V = np.concatenate(H), np.concatenate(R), np.concatenate(V)
    order = np.lexsort((R, H))
    H, R, V = H[order], R[order], V[order]
    if len(H):  # one entry per (fingerprint, row): a phrase written twice in one module counts twice
        first = np.concatenate([[True], (H[1:] != H[:-1]) | (R[1:] != R[:-1])])
        starts = np.nonzero(first)[0]
        H, R, V = H[starts], R[starts], np.add.reduceat(V, starts)
    ra, rb, va, vb = [], [], [], []
    for d in range(1, len(H)):  # the entries d apart that hold one fingerprint: pairs of its holders
        same = np.nonzero(H[:-d] == H[d:])[0]
        if not len(same):
            break
        ra.append(R[same]), rb.append(R[same + d]), va.append(V[same]), vb.append(V[same + d])
    if not ra:
        return empty, empty, np.zeros(0), np.zeros(0)
    ra, rb, va, vb = map(np.concatenate, (ra, rb, va, vb))
    keys, inverse = np.unique(ra * len(rows) + rb, return_inverse=True)
    return keys // len(rows), keys % len(rows), np.bincount(inverse, va), np.bincount(inverse, vb)


def similar(problem: str, students: dict[str, str], stub: str, reference: str | None,
            archive: dict[str, str] | None = None, jobs: int | None = None, spans: int = SPANS,
            made: dict[str, Print] | None = None) -> dict:
    """The flagged pairs of one problem module: ``students`` key -> the module's text; ``stub``
    (the given code, left out); ``reference`` and ``archive`` (name -> text) compared too.
    Returns {"pairs": [...flagged, best first; the first ``spans`` with their matching spans],
    "compared": n, "candidates": n, "too_large": [the keys of the students whose module is longer
    than ``LARGEST``, and of the archive's such files]}. ``made``: fingerprints made already, by text."""
    jobs = jobs or min(4, os.cpu_count() or 1)
    too_large = sorted(k for k, text in students.items() if len(text) > LARGEST)
    too_large += sorted(f"{ARCHIVE_NAME}{k}" for k, text in (archive or {}).items() if len(text) > LARGEST)
    students = {k: text for k, text in sorted(students.items()) if len(text) <= LARGEST}
    archive = {f"{ARCHIVE_NAME}{k}": text for k, text in sorted((archive or {}).items()) if len(text) <= LARGEST}
    texts = dict(students) | archive | ({REFERENCE_NAME: reference} if reference else {})
    given = made or {}
    todo = [t for t in texts.values() if t not in given]
    new = dict(zip(todo, fingerprints(todo, jobs)))
    made = {k: given[t] if t in given else new[t] for k, t in texts.items()}
    names = list(students) + list(archive)
    rows = [made[k] for k in names]
    extra = ([made[REFERENCE_NAME]] if reference else []) + ([fingerprints([stub])[0]] if stub else [])
    ids, count = numbered(rows + extra)
    in_stub, left_out = np.zeros(count, bool), np.zeros(count, bool)
    if stub:
        in_stub[ids[-1]] = True
    left_out |= in_stub
    pairs, masks = [], []  # masks: each pair's (a's shared fingerprints, b's)
    compared = 0
    if reference:
        left_out[ids[len(rows)]] = True
        compared += len(students)
        found, shared = against_known(problem, [(k, made[k], i) for k, i in zip(students, ids)],
                                      (REFERENCE_NAME, made[REFERENCE_NAME], ids[len(rows)]), in_stub)
        pairs += found
        masks += shared
    # between uploads (and the archive): the stub, the reference and the class's common form left out
    ids = ids[:len(rows)]
    w = weights(ids, len(students), left_out)
    # a module's whole: its tokens, the stub's left out (what a share is of)
    whole = np.array([float(_segments(fp)[~in_stub[i]].sum()) for fp, i in zip(rows, ids)])
    w = [wr if m >= MIN_TOKENS else np.zeros_like(wr) for wr, m in zip(w, whole)]
    ra, rb, va, vb = between(rows, ids, w)
    compared += len(ra)
    mark = np.zeros(count, bool)
    for a, b, x, y in zip(ra.tolist(), rb.tolist(), va.tolist(), vb.tolist()):
        if a >= len(students):  # two archive files
            continue
        sa, sb = x / whole[a], y / whole[b]
        if min(sa, sb) >= THRESHOLD:
            pairs.append(_pair(problem, names[a], names[b], sa, sb))
            masks.append((_held(ids[a], w[a], ids[b], w[b], mark), _held(ids[b], w[b], ids[a], w[a], mark)))
    order = sorted(range(len(pairs)), key=lambda i: (-pairs[i]["score"], pairs[i]["a"], pairs[i]["b"]))
    pairs = [pairs[i] for i in order]
    for p, i in zip(pairs[:spans], order):
        p["a_spans"] = _spans(texts[p["a"]], made[p["a"]], masks[i][0])
        p["b_spans"] = _spans(texts[p["b"]], made[p["b"]], masks[i][1])
    return {"pairs": pairs, "compared": compared, "candidates": len(ra), "too_large": too_large}


def read_modules(folder: Path, problem: str) -> str | None:
    path = Path(folder) / f"{problem}.py"
    try:
        return path.read_text(errors="replace") if path.is_file() and path.stat().st_size <= 1 << 20 else None
    except OSError:
        return None
