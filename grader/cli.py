"""`python -m grader ...`: every option of the grader is registered here, and only here."""

import argparse
from pathlib import Path

from . import paths  # noqa: F401  (puts the checkout on sys.path for `tests.seam`)


def _grade(args) -> int:
    from .grade import grade
    only = args.only.split(",") if args.only else None
    return grade(Path(args.submission), Path(args.out), gpu=args.gpu, time_limit=args.time_limit,
                 quiet=args.quiet, problems=only)


def _batch(args) -> int:
    from .batch import batch
    only = args.only.split(",") if args.only else None
    return batch(Path(args.submissions), Path(args.out), jobs=args.jobs, shard=args.shard,
                 shard_count=args.shard_count, gpu=args.gpu, time_limit=args.time_limit,
                 problems=only, regrade=args.regrade)


def _merge(args) -> int:
    from .merge import merge
    return merge([Path(d) for d in args.inputs], Path(args.out))


def _snapshots(args) -> int:
    from .snapshots import check, write
    if args.check:
        stale = check()
        for line in stale:
            print(line)
        return 1 if stale else 0
    for path in write():
        print(f"wrote {path}")
    return 0


def _rubric(args) -> int:
    from .rubric import HANDOUT, collect, render, write_handout
    table = render(collect())
    if args.write:
        write_handout(table)
        print(f"wrote the points table into {HANDOUT}")
    else:
        print(table)
    return 0


def _release(args) -> int:
    from .release import release_student
    print(f"wrote the student bundle to {release_student(Path(args.student))}")
    return 0


GRADE_EXIT = """exit status:
  0  a report was written, whatever the score (also for an empty, unusable or ambiguous upload:
     the report says why at the top)
  2  the TA's mistake, no report: SUBMISSION does not exist, a bad option, --gpu require
     without CUDA, or the test run itself failed"""

BATCH_EXIT = """exit status:
  0  every student in the slice has a results.json (whatever the scores) and gradebook.csv
     was written
  1  the batch ran to the end but some students' grading crashed (status "crashed" in the
     gradebook; a rerun retries them)
  2  the TA's mistake, nothing graded: SUBMISSIONS missing or unreadable metadata, a bad
     --shard, a bad option, --gpu require without CUDA
  130/143  interrupted (Ctrl-C / SIGTERM); what was written is kept, a rerun goes on"""

MERGE_EXIT = """exit status:
  0  merged; OUT_DIR holds one results.json per student and gradebook.csv
  2  bad or conflicting inputs (the one-line message says which): a student in two shards of
     one pass, passes over different students, the same test in two passes"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _grading_options(p: argparse.ArgumentParser) -> None:
    """What one grading run needs: shared by grade and batch."""
    p.add_argument("--gpu", choices=("auto", "require", "skip", "only"), default="auto",
                   help="GPU tests: run if CUDA is here (auto), fail without CUDA (require), leave out "
                        "(skip), or run only them (only: the GPU pass after a CPU pass)")
    p.add_argument("--time-limit", type=float, default=30.0,
                   help="wall-clock seconds per test (a test's time_limit marker overrides it)")
    p.add_argument("--only", metavar="PROBLEM[,PROBLEM...]",
                   help="grade only these problems (e.g. a regrade of one problem)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission and write results.json",
                       epilog=GRADE_EXIT, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("submission", help="folder laid out like student_stubs/, a folder holding one, or a .zip")
    g.add_argument("--out", default="results.json", help="where to write results.json")
    _grading_options(g)
    g.add_argument("--quiet", action="store_true", help="print only the score table")
    g.set_defaults(run=_grade)

    b = sub.add_parser("batch", help="grade a class: one results.json per student and a gradebook.csv",
                       epilog=BATCH_EXIT, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("submissions", help="a folder of per-student folders or zips, or Gradescope's "
                                       "'Download Submissions' export (submission_metadata.yml)")
    b.add_argument("--out", required=True, metavar="OUT_DIR",
                   help="OUT_DIR/<student>/results.json (+ the raw pytest record) and OUT_DIR/gradebook.csv")
    b.add_argument("--jobs", type=_positive_int, default=1, metavar="N",
                   help="grader processes side by side (each pays the torch import once); default 1")
    b.add_argument("--shard", metavar="I/N", help="grade only the I-th (0-based) of N disjoint, stable "
                   "slices of the class; default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or "
                   "JOB_COMPLETION_INDEX when set")
    b.add_argument("--shard-count", type=_positive_int, metavar="N",
                   help="N when the index comes from the environment (a Kubernetes indexed Job)")
    _grading_options(b)
    b.add_argument("--regrade", action="store_true",
                   help="grade every student again (default: skip those already graded in OUT_DIR)")
    b.set_defaults(run=_batch)

    m = sub.add_parser("merge", help="join batch outputs: shards of one pass, or a CPU and a GPU pass",
                       epilog=MERGE_EXIT, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("inputs", nargs="+", metavar="OUT_DIR", help="batch output folders")
    m.add_argument("--out", required=True, metavar="OUT_DIR", help="where the joined results go")
    m.set_defaults(run=_merge)

    s = sub.add_parser("snapshots", help="regenerate the public tests' snapshots from the reference")
    s.add_argument("--check", action="store_true", help="only report stale snapshots (exit 1 if any)")
    s.set_defaults(run=_snapshots)

    r = sub.add_parser("rubric", help="print the points per problem (the handout's table must match)")
    r.add_argument("--write", action="store_true", help="write the table into assignment/README.md")
    r.set_defaults(run=_rubric)
    rel = sub.add_parser("release", help="write the student handout bundle (no reference, no hidden tests)")
    rel.add_argument("--student", required=True, metavar="DIR", help="an empty or new folder")
    rel.set_defaults(run=_release)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)
