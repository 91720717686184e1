"""The rubric's history: which graded tests changed between two tests hashes, how and why
(tests/rubric_history.json; `python -m grader history`). facts.py reads the tests statically,
diff.py compares two readings, record.py keeps the record, backfill.py fills it from git,
explain.py answers for a grade."""
