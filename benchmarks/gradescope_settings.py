"""The figures for the README's "Gradescope settings" block: memory, time, the total to enter.

    python benchmarks/gradescope_settings.py [--hang] [--only PROBLEM,...] [--submissions NAME ...]

Grades submissions as Gradescope's run_autograder does (`grade SUBMISSION --gpu skip`): the
reference (every test runs to the end) and the untouched stubs (every test fails at once);
with ``--hang`` also one whose every call hangs (each test runs to its time limit until a
problem's timeout budget is spent: the slowest a submission can make a grade; ~20 minutes).
For each it prints the
wall time and the peak memory of the whole process tree: the cgroup's own high-water mark
where this machine lets root make a cgroup (v1 memory.max_usage_in_bytes, page cache
included, as a container's limit counts it), and the sum of the processes' proportional set
sizes sampled every 0.2 s. Then the total to enter on Gradescope (the rubric's points less the
GPU tests, which Gradescope does not run) and the bound the limits put on the time.
``--only`` and ``--submissions`` grade less: the figures are then not the README's (the suite's
smoke run, tests/self/system/test_benchmarks.py, grades the stubs on one problem).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.sandbox.limits import Limits  # noqa: E402
from grader.paths import REFERENCE, STUBS, problem_file  # noqa: E402
from seam.problems import PROBLEMS  # noqa: E402

CGROUP = Path("/sys/fs/cgroup/memory")
SUBMISSIONS = ("reference", "stubs", "hangs everywhere")  # the last with --hang only
HANG = "import time\n\ndef __getattr__(name):\n    def hang(*args, **kwargs):\n        time.sleep(3600)\n    return hang\n"


def _pss(pid: int) -> int:
    """Bytes: the proportional set size of ``pid`` and every process below it."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) << 10
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return total


def _group() -> Path | None:
    if os.geteuid() != 0 or not (CGROUP / "cgroup.procs").exists():
        return None
    group = CGROUP / f"gradescope-settings-{os.getpid()}"
    try:
        group.mkdir()
        return group
    except OSError:
        return None


def measure(submission: Path, out: Path, only: list[str]) -> tuple[float, float, float | None, str]:
    """(seconds, peak PSS GiB, cgroup peak GiB or None, the score line) of one grade."""
    group = _group()
    command = [sys.executable, "-m", "grader", "grade", str(submission), "--out", str(out), "--quiet",
               "--gpu", "skip", *only]
    start = time.perf_counter()
    # the child joins the group before it execs, so every process it starts is counted
    pre = (lambda: (group / "cgroup.procs").write_text(str(os.getpid()))) if group else None
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pre)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _pss(proc.pid))
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    err = proc.stderr.read()
    cgroup_peak = None
    if group:
        cgroup_peak = int((group / "memory.max_usage_in_bytes").read_text()) / (1 << 30)
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    if proc.returncode:
        return seconds, peak / (1 << 30), cgroup_peak, f"exit {proc.returncode}: {err.strip()[-300:]}"
    import json
    return seconds, peak / (1 << 30), cgroup_peak, json.loads(out.read_text())["output"].splitlines()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hang", action="store_true", help="also the submission that hangs (~20 minutes)")
    parser.add_argument("--only", metavar="PROBLEM[,PROBLEM...]", help="grade only these problems")
    parser.add_argument("--submissions", nargs="+", choices=SUBMISSIONS[:2], default=list(SUBMISSIONS[:2]),
                        help="which of the reference and the stubs to grade (default both)")
    args = parser.parse_args()
    wanted = args.submissions + ([SUBMISSIONS[2]] if args.hang else [])
    only = ["--only", args.only] if args.only else []
    from grader.rubric import collect  # (it imports the tests, and torch: not for --help)
    facts = collect()
    total = sum(f.points for f in facts)
    gpu = sum(f.points for f in facts if f.gpu)
    with tempfile.TemporaryDirectory(prefix="gradescope-settings-") as tmp:
        hang = Path(tmp) / "hang"
        hang.mkdir()
        for p in PROBLEMS:
            problem_file(p, "module", hang).write_text(HANG)
        rows = [(name, *measure(path, Path(tmp) / f"{name}.json", only))
                for name, path in zip(SUBMISSIONS, (REFERENCE, STUBS, hang)) if name in wanted]
    print(f"{'submission':<18} {'seconds':>8} {'peak PSS GiB':>13} {'cgroup peak GiB':>16}  score")
    for name, seconds, pss, cg, score in rows:
        print(f"{name:<18} {seconds:>8.1f} {pss:>13.2f} {(f'{cg:.2f}' if cg is not None else 'n/a'):>16}  {score}")
    limits = Limits()
    bound = limits.startup + limits.timeouts_per_submission * limits.time_per_test
    print(f"\ntotal to enter on Gradescope: {total - gpu:g} (the rubric's {total:g} less {gpu:g} GPU points)")
    print(f"time bound from the limits: {bound / 60:.0f} min (startup {limits.startup:g} s + "
          f"{limits.timeouts_per_submission} timeouts x {limits.time_per_test:g} s)")
    print(f"a worker may hold {limits.memory_bytes / (1 << 30):g} GiB beyond torch's own before it is killed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
