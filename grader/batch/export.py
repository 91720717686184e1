"""`python -m grader export OUT_DIR --format gradescope|canvas --out FILE.csv`: a batch's scores
in the CSV shape the course's gradebook imports.

  * gradescope: Gradescope's score upload (an assignment's "Upload scores" / an online
    assignment's CSV): ``Name,SID,Email,<title>``, matched on Email or SID;
  * canvas: Canvas's gradebook import: ``Student,ID,SIS User ID,SIS Login ID,Section,<title>``,
    then a ``Points Possible`` row; Canvas matches a row on ID, SIS User ID or SIS Login ID (we
    fill SIS User ID with the SID and SIS Login ID with the email; ID, Canvas's own number, is
    left empty).

The score is the OUT_DIR's total: a merged CPU + GPU output gives the full grade, a ``--gpu
only`` pass its GPU points alone (a separate Gradescope assignment, docs/grading.md "Bringing the GPU
points back"). A student whose grading crashed or was interrupted gets an empty cell: the import leaves their
score alone rather than writing 0. Rows come from gradebook.table, so they are the gradebook's.
"""

import sys
from pathlib import Path

from .output import BATCH, UNFINISHED, csv_bytes, table
from ..files import write_atomically
from ..paths import out_problem
from ..text import one_line

FORMATS = ("gradescope", "canvas")
HEADERS = {"gradescope": ["Name", "SID", "Email"],
           "canvas": ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]}


def rows(gradebook: tuple, fmt: str, title: str) -> list[list[str]]:
    """The export's rows from the gradebook's ``table``."""
    header, possible, students = gradebook
    total, status = header.index("total"), header.index("status")
    scored = [(r[0], r[1], r[2], r[total] if r[status] not in UNFINISHED else "") for r in students]
    if fmt == "gradescope":
        return [[*HEADERS[fmt], title], *([name, sid, email, score] for sid, name, email, score in scored)]
    return [[*HEADERS[fmt], title], ["Points Possible", "", "", "", "", possible[total]],
            *([name, "", sid, email, "", score] for sid, name, email, score in scored)]


def export(out_dir: Path, fmt: str, dest: Path, title: str) -> int:
    out_dir = Path(out_dir)
    problem = None if (out_dir / BATCH).is_file() else f"{out_dir} is not a batch output (no {BATCH})"
    problem = problem or (f"unknown --format {fmt!r}; known: {', '.join(FORMATS)}" if fmt not in FORMATS else None)
    problem = problem or out_problem(dest, folder=False)
    if problem:
        print(f"error: {one_line(problem)}", file=sys.stderr)
        return 2
    gradebook = table(out_dir)  # (every student's results read once)
    data = rows(gradebook, fmt, title)
    write_atomically(dest, csv_bytes(data))
    print(f"wrote {dest}: {len(data) - (2 if fmt == 'canvas' else 1)} student(s), {fmt} format, "
          f"column {title!r}", file=sys.stderr)
    header, possible, _ = gradebook
    coming = float(possible[header.index("to_come")] or 0)
    if coming:  # a CPU pass alone: its total is not the grade yet
        print(f"note: the scores are a CPU pass's, out of {possible[header.index('total')]}; "
              f"{coming:g} GPU points per student are still to come (grade them with --gpu only, merge "
              f"the passes, export again; docs/grading.md: Bringing the GPU points back)", file=sys.stderr)
    return 0
