"""`python -m grader ...`: every option of the grader is registered here, and only here."""

import argparse
import sys
from pathlib import Path

from . import paths  # noqa: F401  (puts the checkout on sys.path for `tests.seam`)
from .isolation import MODES


def _grade(args) -> int:
    from .grade import grade
    only = args.only.split(",") if args.only else None
    return grade(Path(args.submission), Path(args.out), gpu=args.gpu, time_limit=args.time_limit,
                 quiet=args.quiet, problems=only, isolation=args.isolation)


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
    if args.gradescope:
        from .gradescope import release_gradescope
        try:
            print(f"wrote the Gradescope autograder to {release_gradescope(Path(args.gradescope))}")
        except (ValueError, FileExistsError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    from .release import release_student
    print(f"wrote the student bundle to {release_student(Path(args.student))}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission and write results.json")
    g.add_argument("submission", help="folder laid out like student_stubs/, a folder holding one, or a .zip")
    g.add_argument("--out", default="results.json", help="where to write results.json")
    g.add_argument("--gpu", choices=("auto", "require", "skip"), default="auto",
                   help="GPU tests: run if CUDA is here (auto), fail without CUDA (require), leave out (skip)")
    g.add_argument("--time-limit", type=float, default=30.0,
                   help="wall-clock seconds per test (a test's time_limit marker overrides it)")
    g.add_argument("--only", metavar="PROBLEM[,PROBLEM...]",
                   help="grade only these problems (e.g. a regrade of one problem)")
    g.add_argument("--quiet", action="store_true", help="print only the score table")
    g.add_argument("--isolation", choices=("auto", *MODES), default="auto",
                   help="how the submission's worker is confined (default: the strongest mode that "
                        "works here; the report's 'sandbox:' line says which): bwrap, namespaces "
                        "(unshare + pivot_root), uid (no namespaces: an unprivileged uid), process "
                        "(rlimits only); a mode that cannot work here is an error")
    g.set_defaults(run=_grade)

    s = sub.add_parser("snapshots", help="regenerate the public tests' snapshots from the reference")
    s.add_argument("--check", action="store_true", help="only report stale snapshots (exit 1 if any)")
    s.set_defaults(run=_snapshots)

    r = sub.add_parser("rubric", help="print the points per problem (the handout's table must match)")
    r.add_argument("--write", action="store_true", help="write the table into assignment/README.md")
    r.set_defaults(run=_rubric)
    rel = sub.add_parser("release", help="write the student handout bundle (no reference, no hidden tests)"
                         " or the Gradescope autograder zip")
    what = rel.add_mutually_exclusive_group(required=True)
    what.add_argument("--student", metavar="DIR", help="an empty or new folder")
    what.add_argument("--gradescope", metavar="FILE.zip",
                      help="Gradescope's autograder zip (setup.sh and run_autograder at its root)")
    rel.set_defaults(run=_release)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)
