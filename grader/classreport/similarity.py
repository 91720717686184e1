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
fewer (a pair, a small copy ring) weighs 1, and in between the weight falls with the holders'
count, ``log(cut / holders) / log(cut / RING)``. A module's share is the weight it shares with
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


def _pair(problem: str, a: str, b: str, sa: float, sb: float) -> dict:
    return {"problem": problem, "a": a, "b": b, "score": round(float(min(sa, sb)), 3),
            "a_share": round(float(sa), 3), "b_share": round(float(sb), 3)}


def against_known(problem: str, theirs: dict[str, Print], known: tuple[str, Print], stub: np.ndarray):
    """Each upload against one known text, the stub's fingerprints left out: (flagged pairs,
    {pair index: (the upload's shared mask, the known's)})."""
    name, kp = known
    kkeep = ~np.isin(kp.hashes, stub)
    khashes, kpos = kp.hashes[kkeep], kp.positions[kkeep]
    kcover = _cover(kpos)
    pairs, masks = [], {}
    for who, fp in theirs.items():
        keep = ~np.isin(fp.hashes, stub)
        mine, cover = fp.hashes[keep], _cover(fp.positions[keep])
        if cover < MIN_TOKENS or not kcover:
            continue
        shared = np.isin(mine, khashes)
        if not shared.any():
            continue
        back = np.isin(khashes, mine)
        sa, sb = _cover(fp.positions[keep][shared]) / cover, _cover(kpos[back]) / kcover
        if min(sa, sb) >= THRESHOLD:
            full, kfull = np.zeros(len(keep), bool), np.zeros(len(kkeep), bool)
            full[np.nonzero(keep)[0][shared]], kfull[np.nonzero(kkeep)[0][back]] = True, True
            masks[len(pairs)] = (full, kfull)
            pairs.append(_pair(problem, who, name, sa, sb))
    return pairs, masks


def weights(students: list[Print], others: list[Print], left_out: np.ndarray) -> list[np.ndarray]:
    """Each fingerprint's weight in ``students`` then ``others`` (the archive): its rarity among
    the students' uploads; 0 for the class's common form and for ``left_out``."""
    held, count = np.unique(np.concatenate([np.unique(fp.hashes) for fp in students] + [np.zeros(0, np.int64)]),
                            return_counts=True)
    cut = max(2 * RING, COMMON * len(students))
    out = []
    for fp in students + others:
        at = np.minimum(np.searchsorted(held, fp.hashes), max(len(held) - 1, 0))
        holders = np.where(held[at] == fp.hashes, count[at], 1) if len(held) else np.ones(len(fp.hashes), np.int64)
        w = np.clip(np.log(cut / np.maximum(holders, RING)) / np.log(cut / RING), 0.0, 1.0)
        w[np.isin(fp.hashes, left_out)] = 0.0
        out.append(w)
    return out


def _segments(fp: Print) -> np.ndarray:
    """The tokens each fingerprint stands for: up to the next one, at most K."""
    if not len(fp.positions):
        return np.zeros(0, np.int64)
    return np.minimum(np.diff(fp.positions.astype(np.int64), append=int(fp.positions[-1]) + K), K)


def between(rows: list[Print], w: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every two rows that share a fingerprint of weight: (row a, row b, a's shared weight, b's),
    a < b; a row's weight is over the tokens each fingerprint stands for."""
    H, R, V = [], [], []
    for r, (fp, wr) in enumerate(zip(rows, w)):
        if not len(fp.hashes):
            continue
        keep = wr > 0
        H.append(fp.hashes[keep]), R.append(np.full(int(keep.sum()), r, np.int64)), V.append((wr * _segments(fp))[keep])
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
    stub_hashes = np.unique(fingerprints([stub])[0].hashes) if stub else np.zeros(0, np.int64)
    theirs = {k: made[k] for k in students}
    pairs, masks = [], []  # masks: each pair's (a's shared fingerprints, b's)
    compared = 0
    if reference:
        compared += len(theirs)
        found, shared = against_known(problem, theirs, (REFERENCE_NAME, made[REFERENCE_NAME]), stub_hashes)
        pairs += found
        masks += [shared[i] for i in range(len(found))]
    # between uploads (and the archive): the stub, the reference and the class's common form left out
    left_out = np.union1d(stub_hashes, made[REFERENCE_NAME].hashes) if reference else stub_hashes
    names = list(theirs) + list(archive)
    rows = [made[k] for k in names]
    w = weights(rows[:len(theirs)], rows[len(theirs):], left_out)
    # a module's whole: its tokens, the stub's left out (what a share is of)
    whole = np.array([float(_segments(fp)[~np.isin(fp.hashes, stub_hashes)].sum()) for fp in rows])
    w = [wr if m >= MIN_TOKENS else np.zeros_like(wr) for wr, m in zip(w, whole)]
    ra, rb, va, vb = between(rows, w)
    compared += len(ra)
    for a, b, x, y in zip(ra.tolist(), rb.tolist(), va.tolist(), vb.tolist()):
        if a >= len(theirs):  # two archive files
            continue
        sa, sb = x / whole[a], y / whole[b]
        if min(sa, sb) >= THRESHOLD:
            pairs.append(_pair(problem, names[a], names[b], sa, sb))
            ha, hb = rows[a].hashes[w[a] > 0], rows[b].hashes[w[b] > 0]
            masks.append(((w[a] > 0) & np.isin(rows[a].hashes, hb), (w[b] > 0) & np.isin(rows[b].hashes, ha)))
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
