"""`python -m grader ...`: every option of the grader is registered here, and only here."""

import argparse
import os
import sys
from pathlib import Path

from .options import (GPU_MODES, ISOLATIONS, OptionError, Options, gpu_mode, isolation_mode, positive_seconds,
                      problem_list)
from .sandbox.limits import Limits
from .text import safe_streams


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (exit 2): a TA's typo, not a wall of usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _arg(check):
    """An Options check (grader/options.py) as an argparse type: its reason follows "argument --x: "."""
    def parse(text: str):
        try:
            return check(text)
        except OptionError as e:
            raise argparse.ArgumentTypeError(e.reason) from None
    parse.__name__ = check.__name__
    return parse


def _options(args) -> Options:
    return Options(gpu=args.gpu, problems=args.only, time_limit=args.time_limit, isolation=args.isolation)


DEFAULT_OUT = "results.json"  # grade's report without --out: in the current folder, said in its last line


def _examples(*lines: str) -> str:
    return "example:\n" + "\n".join(f"  {line}" for line in lines)


def _missing(path: str, what: str) -> int | None:
    """2 and one line when ``path`` does not exist: said before torch's import (seconds)."""
    if Path(path).exists():
        return None
    print(f"error: {path}: no such {what}; nothing graded", file=sys.stderr)
    return 2


def _grade(args) -> int:
    missing = _missing(args.submission, "file or folder")
    if missing:
        return missing
    from .grade import grade
    out = Path(args.out) if args.out else Path(DEFAULT_OUT)
    return grade(Path(args.submission), out, _options(args), quiet=args.quiet,
                 said_where=args.out is None)


def _batch(args) -> int:
    missing = _missing(args.submissions, "folder or Gradescope export (.zip)")
    if missing:
        return missing
    from .batch.scheduler import batch
    return batch(Path(args.submissions), Path(args.out), _options(args), jobs=args.jobs, shard=args.shard,
                 shard_count=args.shard_count, regrade=args.regrade, repeat=args.repeat)


def _merge(args) -> int:
    from .batch.merge import merge
    return merge([Path(d) for d in args.inputs], Path(args.out))


def _report(args) -> int:
    from .classreport import write
    from .batch.output import student_dirs
    if not student_dirs(Path(args.out_dir)):
        print(f"error: {args.out_dir}: no batch output (students/<key>/student.json) there", file=sys.stderr)
        return 2
    if args.archive is not None and not Path(args.archive).is_dir():
        print(f"error: --archive {args.archive}: no such folder", file=sys.stderr)
        return 2
    for line in write(Path(args.out_dir), Path(args.archive) if args.archive else None,
                      with_similarity=not args.no_similarity):
        print(line)
    return 0


def _export(args) -> int:
    from .batch.export import export
    return export(Path(args.out_dir), args.format, Path(args.out), args.title)


def _snapshots(args) -> int:
    from .snapshots import check, write
    if args.check:
        stale = check()
        for line in stale:
            print(line)
        if not stale:
            print("snapshots are up to date with reference/")
        return 1 if stale else 0
    for path in write():
        print(f"wrote {path}")
    return 0


def _rubric(args) -> int:
    from .rubric import collect, render, write_handout
    facts = collect()
    if args.write:
        for path in write_handout(facts):
            print(f"wrote {path}")
    else:
        print(render(facts))
    return 0


def _release(args) -> int:
    if args.gradescope:
        from .gradescope import release_gradescope
        try:
            print(f"wrote the Gradescope autograder to {release_gradescope(Path(args.gradescope))}")
        except (ValueError, FileExistsError) as e:
            print(f"python -m grader release: error: {e}", file=sys.stderr)
            return 2
        return 0
    from .release import ReleaseError, release_student
    try:
        print(f"wrote the student bundle to {release_student(Path(args.student))}")
    except ReleaseError as e:
        print(f"python -m grader release: error: {e}", file=sys.stderr)
        return 2
    return 0


def _history(args) -> int:
    from .history.record import HistoryError, backfill, record_current
    if args.record or args.backfill:
        try:
            if args.backfill:
                print(f"added {backfill(say=lambda line: print(line, file=sys.stderr))} entries")
            if args.record:
                print(record_current(args.why))
        except HistoryError as e:
            print(f"python -m grader history: error: {e}", file=sys.stderr)
            return 2
        return 0
    if args.path is None:
        print("python -m grader history: error: give PATH (a results.json, batch output, gradebook.csv or "
              "tests hash), --record or --backfill", file=sys.stderr)
        return 2
    if args.after or (Path(args.path) / "previous.json").is_file():
        from .history.explain import record_or_none
        from .history.student import compare
        try:
            lines = compare(args.path, args.after, record_or_none())
        except HistoryError as e:
            print(f"python -m grader history: error: {e}", file=sys.stderr)
            return 2
        print("\n".join(lines))
        return 0
    from .history.explain import run
    status, lines = run(args.path, args.until)
    for line in lines:
        print(line, file=sys.stderr if status else sys.stdout)
    return status


def _new_problem(args) -> int:
    from .scaffold import ScaffoldError, new_problem
    try:
        done = new_problem(args.name, args.title)
    except ScaffoldError as e:
        print(f"python -m grader new-problem: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {len(done.written)} files:")
    for path in done.written:
        print(f"  {path}")
    print("now write, by hand:")
    for line in done.todo:
        print(f"  - {line}")
    return 0


GRADE_EXIT = """exit status:
  0  a report was written, whatever the score (also for an empty, unusable or ambiguous upload:
     the report says why at the top)
  2  the TA's mistake, no report: SUBMISSION does not exist, a bad option or --out (a
     folder, under a file, not writable), --gpu require or --gpu only without CUDA, or the
     test run itself failed"""

BATCH_EXIT = """exit status:
  0  every student in the slice has a results.json (whatever the scores) and gradebook.csv
     was written
  1  the batch ran to the end but some students' grading crashed (status "crashed" in the
     gradebook; a rerun retries them)
  2  the TA's mistake, nothing graded and OUT_DIR untouched: SUBMISSIONS missing or
     unreadable metadata, a bad --shard, a bad option, --gpu require or --gpu only without
     CUDA, an --out that is a file, not writable, another pass's or shard's output, or a
     non-empty folder that is no batch output
  130/143  interrupted (Ctrl-C, SIGINT to its process group / SIGTERM, to the batch or a grader
     process): what finished is kept, the students being graded are "interrupted" (never
     "crashed"), a rerun goes on

A rerun skips an upload only when its content, the grader's version and the tests' hash are
all unchanged, and says how many it regrades and why (interrupted, crashed, changed upload,
other grader or tests), naming them. Where only the tests' points changed, it rescores those
students from their results.json instead of grading them again (seconds, no grader started)."""

MERGE_EXIT = """exit status:
  0  merged; OUT_DIR holds one results.json per student and gradebook.csv
  2  bad or conflicting inputs (the one-line message says which): a student in two shards of
     one pass, a shard missing or given twice, passes over different students, the same test
     in two passes, a pass that ran no test, inputs graded by different graders or tests or
     from different downloads of the class"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _grading_options(p: argparse.ArgumentParser) -> None:
    """What one grading run needs (grader/options.py's Options): shared by grade and batch."""
    p.add_argument("--gpu", type=_arg(gpu_mode), metavar="{" + ",".join(GPU_MODES) + "}", default="auto",
                   help="GPU tests: run if CUDA is here (auto), fail without CUDA (require), leave out "
                        "(skip), or run only them (only: the GPU pass after a CPU pass)")
    p.add_argument("--time-limit", type=_arg(positive_seconds), default=Limits.time_per_test,
                   help="wall-clock seconds per test (a test's time_limit marker overrides it)")
    p.add_argument("--only", metavar="PROBLEM[,PROBLEM...]", type=_arg(problem_list),
                   help="grade only these problems (e.g. a regrade of one problem)")
    p.add_argument("--isolation", type=_arg(isolation_mode), metavar="{" + ",".join(ISOLATIONS) + "}",
                   default="auto",
                   help="how the submission's worker is confined (default: the strongest mode that "
                        "works here; the report's 'sandbox:' line says which): bwrap, namespaces "
                        "(unshare + pivot_root), landlock, uid (no namespaces: an unprivileged uid), "
                        "process (rlimits only); a mode that cannot work here is an error")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m grader", description=__doc__, epilog=_examples(
        "python -m grader grade path/to/submission.zip --out results.json",
        "python -m grader release --student /tmp/hw2-handout",
        "python -m grader <command> --help     (each command's options and an example)"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    from .provenance import stamp
    grader = stamp()
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {grader['version']} (tests {grader['tests']})")
    sub = parser.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter

    g = sub.add_parser("grade", help="grade one submission and write results.json", formatter_class=raw,
                       epilog=_examples("python -m grader grade reference          (the reference: full marks)",
                                        "python -m grader grade alice.zip --out alice/results.json",
                                        "python -m grader grade alice/ --only optim,training --time-limit 60")
                       + "\n\n" + GRADE_EXIT)
    g.add_argument("submission", help="folder laid out like student_stubs/, a folder holding one, or a .zip")
    g.add_argument("--out", help=f"where to write results.json (default: {DEFAULT_OUT} in the current "
                                 f"folder; the last line says where it went)")
    _grading_options(g)
    g.add_argument("--quiet", action="store_true", help="print only the score table")
    g.set_defaults(run=_grade)

    b = sub.add_parser("batch", help="grade a class: one results.json per student and a gradebook.csv",
                       formatter_class=raw, epilog=_examples(
                           "python -m grader batch submissions/ --out graded/ --jobs 2",
                           "python -m grader batch export/ --out graded-cpu/ --gpu skip --shard 0/4")
                       + "\n\n" + BATCH_EXIT)
    b.add_argument("submissions", help="a folder of per-student folders or zips, or Gradescope's "
                                       "'Download Submissions' export (submission_metadata.yml): "
                                       "its folder or the .zip as downloaded")
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
    b.add_argument("--repeat", type=_positive_int, default=1, metavar="K",
                   help="grade each upload of this run K times in all (OUT_DIR/repeats/): the class report "
                        "lists tests whose outcome differs between runs (flaky); use it on a sample")
    b.set_defaults(run=_batch)

    m = sub.add_parser("merge", help="join batch outputs: shards of one pass, or a CPU and a GPU pass",
                       formatter_class=raw, epilog=_examples(
                           "python -m grader merge graded-0/ graded-1/ --out graded/   (shards)",
                           "python -m grader merge graded-cpu/ graded-gpu/ --out graded/   (two passes)")
                       + "\n\n" + MERGE_EXIT)
    m.add_argument("inputs", nargs="+", metavar="OUT_DIR", help="batch output folders")
    m.add_argument("--out", required=True, metavar="OUT_DIR", help="where the joined results go")
    m.set_defaults(run=_merge)

    rep = sub.add_parser("report", help="the class report: scores, tests to doubt, mistakes, similar code",
                         formatter_class=raw, epilog=_examples(
                             "python -m grader report graded/     (writes graded/report.html and report.json)",
                             "python -m grader report graded/ --archive past-terms/"))
    rep.add_argument("out_dir", metavar="OUT_DIR", help="a batch (or merge) output")
    rep.add_argument("--archive", metavar="DIR", help="earlier terms' or known public solutions: every "
                     "<problem>.py below DIR is compared with the class too")
    rep.add_argument("--no-similarity", action="store_true", help="leave the similarity pass out")
    rep.set_defaults(run=_report)

    from .batch.export import FORMATS
    e = sub.add_parser("export", help="a batch's scores as a CSV Gradescope or Canvas imports",
                       formatter_class=raw, epilog=_examples(
                           "python -m grader export graded/ --format gradescope --out gpu-points.csv",
                           "python -m grader export graded/ --format canvas --out canvas.csv --title 'HW2 (4242)'"))
    e.add_argument("out_dir", metavar="OUT_DIR", help="a batch (or merge) output")
    e.add_argument("--format", required=True, choices=FORMATS,
                   help="gradescope: Name,SID,Email,<title>; canvas: Student,ID,SIS User ID,SIS Login ID,"
                        "Section,<title> and a Points Possible row")
    e.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV to write")
    e.add_argument("--title", default="Total Score",
                   help="the score column's header: the assignment's name as the gradebook knows it "
                        "(Canvas: 'Title (id)', as its own export spells it); default 'Total Score'")
    e.set_defaults(run=_export)

    s = sub.add_parser("snapshots", help="regenerate the public tests' snapshots from the reference",
                       formatter_class=raw, epilog=_examples(
                           "python -m grader snapshots --check    (after changing reference/ or a public test)",
                           "python -m grader snapshots            (rewrite tests/public/snapshots/*.json)"))
    s.add_argument("--check", action="store_true", help="only report stale snapshots (exit 1 if any)")
    s.set_defaults(run=_snapshots)

    r = sub.add_parser("rubric", help="print the points per problem (the handout's table must match)",
                       formatter_class=raw, epilog=_examples(
                           "python -m grader rubric            (print the table)",
                           "python -m grader rubric --write    (after changing a points marker)"))
    r.add_argument("--write", action="store_true", help="write the table into assignment/README.md")
    r.set_defaults(run=_rubric)
    rel = sub.add_parser("release", help="write the student handout bundle (no reference, no hidden tests)"
                         " or the Gradescope autograder zip", formatter_class=raw, epilog=_examples(
                             "python -m grader release --student /tmp/hw2-handout",
                             "cd /tmp/hw2-handout && python -m pytest      (what a student sees first)",
                             "python -m grader release --gradescope autograder.zip   (upload to Gradescope)"))
    what = rel.add_mutually_exclusive_group(required=True)
    what.add_argument("--student", metavar="DIR", help="an empty or new folder")
    what.add_argument("--gradescope", metavar="FILE.zip",
                      help="Gradescope's autograder zip (setup.sh and run_autograder at its root)")
    rel.set_defaults(run=_release)

    hist = sub.add_parser("history", help="which graded tests changed since a grade's tests hash, how and why",
                          formatter_class=raw, epilog=_examples(
                              "python -m grader history graded/alice/results.json",
                              "python -m grader history 2ccdae044e7a87a7      (a bare tests hash)",
                              "python -m grader history last-term/alice/results.json graded/alice/results.json   "
                              "(why her score moved: each test that moved and its cause)",
                              "python -m grader history graded/students/alice   (a regrade: previous.json vs results.json)",
                              "python -m grader history --record --why \"closure test: stronger decay\"   "
                              "(after changing the tests)"))
    hist.add_argument("path", nargs="?", metavar="PATH", help="a results.json or previous.json, a batch "
                      "output folder or its batch.json, a gradebook.csv, or a tests hash")
    hist.add_argument("after", nargs="?", metavar="AFTER", help="with PATH a results.json or batch output "
                      "graded before: why each score moved, test by test (the test, its points or the upload)")
    hist.add_argument("--until", metavar="HASH", help="the changes up to this tests hash (default: the latest "
                      "recorded), e.g. to compare two terms' grades")
    hist.add_argument("--record", action="store_true", help="add this checkout's tests hash to "
                      "tests/rubric_history.json (with --why), if it is not there")
    hist.add_argument("--why", metavar="TEXT", help="with --record: why the tests changed, one line")
    hist.add_argument("--backfill", action="store_true", help="add an entry for every commit of this "
                      "branch whose tests hash is not recorded (git; entries already there are kept)")
    hist.set_defaults(run=_history)

    new = sub.add_parser("new-problem", help="add a problem: register it and write a skeleton of each of its files",
                         formatter_class=raw, epilog=_examples(
                             "python -m grader new-problem attention --title 'attention FLOPs and memory'",
                             "then write the content of each file it lists, and run what it prints last"))
    new.add_argument("name", help="the problem's module name: a lower-case Python identifier")
    new.add_argument("--title", help="its handout title (default: the name, with spaces for _)")
    new.set_defaults(run=_new_problem)
    return parser


def main(argv=None) -> int:
    safe_streams()
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # `... | head`: the reader has what it wanted; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
