"""tests/rubric_history.json keeps up with the tests: the checkout's tests hash has an entry, and
the last entry's reading is what the extractor reads from the checkout now."""

from grader.history.facts import extract
from grader.history.record import RECORD, load
from grader.paths import ROOT
from grader import provenance

COMMAND = 'python -m grader history --record --why "<why the tests changed, one line>"'


def test_the_current_tests_hash_is_recorded():
    recorded = [e["tests"] for e in load()["entries"]]
    assert provenance.tests_hash() in recorded, (
        f"the tests hash is now {provenance.tests_hash()}, which {RECORD.relative_to(ROOT)} does not record: "
        f"a TA could not say why grades moved. Run {COMMAND} and commit the record")


def test_the_latest_reading_is_the_checkouts():
    record = load()
    if record["latest"]["tests"] != provenance.tests_hash():
        return  # (the test above says what to run)
    now = extract(ROOT)
    stale = sorted(t for t in set(now["tests"]) | set(record["latest"]["facts"]["tests"])
                   if now["tests"].get(t) != record["latest"]["facts"]["tests"].get(t))
    assert not stale and now["defs"] == record["latest"]["facts"]["defs"], (
        f"the record's reading of the tests differs from the checkout's ({stale[:3]}): the extractor "
        f"changed; rebuild the record with `python -m grader history --backfill` on a copy without it")


def test_the_latest_files_are_read_as_the_hash_reads_them():
    """A latest reading of bytes (how records were read before) lists every file whose comment or
    words changed since under the next hash's why; the record's own is of syntax."""
    from grader.history.backfill import READING
    assert load()["latest"].get("reading", "bytes") == READING
