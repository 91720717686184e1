"""Pairs of submissions whose code is suspiciously alike, per problem module: evidence for a
person, never a grade.

copydetect (a maintained library made for this) fingerprints each module: pygments tokens with
every name replaced by a letter (renaming changes nothing), comments and spacing dropped
(reformatting changes nothing), k-grams of ``K`` characters hashed and winnowed (a match that
long is always seen). Its ``compare_files`` scores a pair by the share of each file's tokens that
lie in spans found in the other.

Comparing every pair costs about 0.6 ms, so 1,000 students x 12 modules would take an hour;
an inverted index of the fingerprints gives the candidate pairs first: those sharing at least
``PREFILTER`` of the smaller one's fingerprints (after the reference's are left out) (a pair that copydetect scores above the
threshold shares about that share of them, or more). Fingerprints found in more than
``COMMON`` of the class are idioms, not evidence, and are left out of the index.

What is not the student's is left out of every comparison: the stub's given code (signatures,
docstrings) and, between two students, the reference's code too. Two students who both copied the
reference are each found against the reference (and the archive's files: earlier terms, known
public solutions), not against each other: a pair's shares are of each whole file, counting only
what they share beyond the reference. A pair is flagged when both sides are at least
``THRESHOLD`` covered by the match (a copy with a few lines added or changed stays above it;
two solutions written apart share short idioms only): see tests/self/unit/test_classreport.py.
"""

import copy
import dataclasses
import io
import os
from collections import Counter
from pathlib import Path

from copydetect import CodeFingerprint, compare_files
from copydetect.utils import get_token_coverage

# what the known texts are called in a pair: a "/" no student's key (a folder's name) can hold
REFERENCE_NAME, ARCHIVE_NAME = "/reference", "/archive/"
MIN_CLASS = 20       # below this many, no fingerprint is an idiom (a copy ring would be most of the class)
K, WINDOW = 25, 4    # copydetect's noise threshold (k) and winnowing window (its guarantee k + w - 1)
THRESHOLD = 0.5      # both files at least this covered by the match: flagged
PREFILTER = 0.25     # candidate pairs share at least this share of the smaller file's fingerprints
COMMON = 0.5         # a fingerprint in more than this share of the class is an idiom
MIN_TOKENS = 60      # a module this short (after filtering) says too little to compare
# A module longer than this (characters) is not fingerprinted: it is "too large to compare". The
# reference's longest module is 16 KB and an honest one with prints and helpers a few times that;
# tokenising costs ~7 s per MB, so one student's twelve padded 1 MB modules would cost a class's
# report a minute and a half. The class report reads no more of a module than this either.
LARGEST = 64 * 1024


@dataclasses.dataclass
class Code:
    who: str             # a student's key, or REFERENCE_NAME / ARCHIVE_NAME + a path
    problem: str
    text: str
    print_: CodeFingerprint | None = None
    coverage: float = 0.0  # its tokens before the reference was left out: what a share is of
    hashes: int = 0        # and its fingerprints then: what the pre-filter's share is of


def fingerprint(text: str, boilerplate=None) -> CodeFingerprint:
    return CodeFingerprint("module.py", K, WINDOW, boilerplate=boilerplate, fp=io.StringIO(text))


def _fingerprint_chunk(args) -> list[CodeFingerprint]:
    texts, boilerplate = args
    return [fingerprint(t, boilerplate) for t in texts]


# Fingerprints made, by (text, boilerplate): a text is tokenised once, however many hand it in (a
# module left as the stub gave it, a copy of the reference) and however many reports are built in
# one process (the stub's and the reference's, in every report). A fingerprint depends on nothing
# else (K and WINDOW are constants) and nothing changes one once made (``without`` copies).
MEMO = 256
_MADE: dict[tuple[str, frozenset | None], CodeFingerprint] = {}


def fingerprints(texts: list[str], boilerplate, jobs: int = 1) -> list[CodeFingerprint]:
    """Each text's fingerprint, each distinct text's made once (pygments' tokenising is most of
    the cost: ``jobs`` processes for many)."""
    key = frozenset(boilerplate) if boilerplate is not None else None
    todo = [t for t in dict.fromkeys(texts) if (t, key) not in _MADE]
    if jobs <= 1 or len(todo) < 64:
        made = _fingerprint_chunk((todo, boilerplate))
    else:
        from concurrent.futures import ProcessPoolExecutor
        size = -(-len(todo) // (jobs * 4))
        chunks = [(todo[i:i + size], boilerplate) for i in range(0, len(todo), size)]
        with ProcessPoolExecutor(jobs) as pool:
            made = [fp for part in pool.map(_fingerprint_chunk, chunks) for fp in part]
    new = dict(zip(todo, made))
    out = [new[t] if t in new else _MADE[t, key] for t in texts]
    _MADE.update(((t, key), fp) for t, fp in new.items())
    while len(_MADE) > MEMO:  # the oldest go first
        del _MADE[next(iter(_MADE))]
    return out


def without(fp: CodeFingerprint, drop: set) -> CodeFingerprint:
    """The fingerprint less the hashes in ``drop`` (as if they were boilerplate), not re-tokenised."""
    new = copy.copy(fp)
    new.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in drop}
    new.hashes = set(new.hash_idx)
    new.token_coverage = get_token_coverage(new.hash_idx, fp.k, len(fp.filtered_code))
    return new


def _spans(slices, text: str) -> list[list[int]]:
    starts, ends = slices
    return [[int(a), int(b)] for a, b in zip(starts, ends)][:50]


def compare(a: Code, b: Code) -> dict | None:
    overlap, (sa, sb), (slices_a, slices_b) = compare_files(a.print_, b.print_)
    if not overlap:
        return None
    # a share of the whole file (two who both copied the reference share only what is left)
    sa *= a.print_.token_coverage / (a.coverage or a.print_.token_coverage)
    sb *= b.print_.token_coverage / (b.coverage or b.print_.token_coverage)
    return {"problem": a.problem, "a": a.who, "b": b.who, "score": round(float(min(sa, sb)), 3),
            "a_share": round(float(sa), 3), "b_share": round(float(sb), 3),
            "a_spans": _spans(slices_a, a.text), "b_spans": _spans(slices_b, b.text)}


def candidates(codes: list[Code]) -> list[tuple[int, int]]:
    """Index pairs that share at least PREFILTER of the smaller one's fingerprints."""
    holders: dict[int, list[int]] = {}
    for i, c in enumerate(codes):
        for h in c.print_.hashes:
            holders.setdefault(h, []).append(i)
    common = max(2, int(COMMON * len(codes))) if len(codes) >= MIN_CLASS else len(codes)
    shared: Counter = Counter()
    for members in holders.values():
        if len(members) > common:
            continue
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                shared[members[x], members[y]] += 1
    out = []
    for (i, j), n in shared.items():
        smaller = min(codes[i].hashes or len(codes[i].print_.hashes), codes[j].hashes or len(codes[j].print_.hashes))
        if smaller and n >= PREFILTER * smaller:
            out.append((i, j))
    return out


def similar(problem: str, students: dict[str, str], stub: str, reference: str | None,
            archive: dict[str, str] | None = None, jobs: int | None = None) -> dict:
    """The flagged pairs of one problem module: ``students`` key -> the module's text; ``stub``
    (the given code, excluded); ``reference`` and ``archive`` (name -> text) compared too.
    Returns {"pairs": [...flagged, best first], "compared": n, "candidates": n, "too_large": [the
    keys of the students whose module is longer than ``LARGEST``, and of the archive's such files]}."""
    jobs = jobs or min(4, os.cpu_count() or 1)
    too_large = sorted(k for k, text in students.items() if len(text) > LARGEST)
    too_large += sorted(f"{ARCHIVE_NAME}{k}" for k, text in (archive or {}).items() if len(text) > LARGEST)
    students = {k: text for k, text in students.items() if len(text) <= LARGEST}
    archive = {k: text for k, text in (archive or {}).items() if len(text) <= LARGEST}
    stub_hashes = list(fingerprints([stub], None)[0].hashes) if stub else None
    known = ({REFERENCE_NAME: reference} if reference else {}) | {f"{ARCHIVE_NAME}{k}": v
                                                                    for k, v in (archive or {}).items()}
    keys = sorted(students)
    prints = fingerprints([students[k] for k in keys] + list(known.values()), stub_hashes, jobs)
    theirs = [Code(k, problem, students[k], fp) for k, fp in zip(keys, prints)]
    known_codes = [Code(who, problem, text, fp) for (who, text), fp in zip(known.items(), prints[len(keys):])]
    theirs = [c for c in theirs if c.print_.token_coverage >= MIN_TOKENS]
    pairs, compared = [], 0
    for c in theirs:  # against what is known: the stub left out
        for k in known_codes:
            compared += 1
            found = compare(c, k)
            if found and found["score"] >= THRESHOLD:
                pairs.append(found)
    # against each other: the reference left out too (two who copied it were each found above)
    if reference:
        drop = set(known_codes[0].print_.hashes)
        theirs = [Code(c.who, problem, c.text, without(c.print_, drop), c.print_.token_coverage,
                       len(c.print_.hashes)) for c in theirs]
        theirs = [c for c in theirs if c.print_.token_coverage >= MIN_TOKENS]
    pool = candidates(theirs)
    for i, j in pool:
        compared += 1
        found = compare(theirs[i], theirs[j])
        if found and found["score"] >= THRESHOLD:
            pairs.append(found)
    pairs.sort(key=lambda p: (-p["score"], p["a"], p["b"]))
    return {"pairs": pairs, "compared": compared, "candidates": len(pool), "too_large": too_large}


def read_modules(folder: Path, problem: str) -> str | None:
    path = Path(folder) / f"{problem}.py"
    try:
        return path.read_text(errors="replace") if path.is_file() and path.stat().st_size <= 1 << 20 else None
    except OSError:
        return None
