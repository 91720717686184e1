"""The project's suite timed at several revisions, back to back on this machine.

    python benchmarks/suite_time.py OLD_REV HEAD [--coverage] [--cpu] [--fast | --fast-only]
                                    [--out DIR] [--no-install] [--select PATH ...]

Each revision is cloned into a fresh folder (no state from this checkout), installed the way
`.ci/run` installs it, and its suite run with its own command (the pytest line of its .ci/run).
Printed per revision: the wall time, the summary line, the collected test ids (written to
DIR/<rev>.ids, so a move can be mapped and checked) and with --coverage the line coverage of
`grader/` and `seam/` in the pytest processes (sandboxed workers are not measured: the same
for every revision). --fast also times the fast loop (`-m "not e2e"`) where it exists;
--fast-only times the fast loop alone (about a minute a revision, where the whole suite takes
twenty), so several revisions fit one sitting, with its CPU seconds (user and system time of
every process of it that was waited for, start-up and collection included). --cpu also measures the CPU seconds the suite
spent, in its processes and every process they started (benchmarks/cpu_plugin.py: a cgroup per
pytest process), and names its dearest test files: wall time moves with what else the machine
runs, CPU time with what the tests do.
The editable install is pointed back at this checkout at the end, and the clones removed.
``--no-install`` runs each clone with what is installed (its own code first, through its
pyproject's pythonpath) and leaves the install alone; ``--select`` runs only those tests, in one
process (the suite's smoke run, tests/self/system/test_benchmarks.py: HEAD, one small test file).
"""

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "benchmarks"))
from cpu_plugin import summary as cpu_summary  # noqa: E402
MORE = ["--durations=30", "--junitxml=junit.xml"]   # per-test times, beside the revision's own command
FAST = ["python", "-m", "pytest", "-q", "-n", "2", "-m", "not e2e"]
COVER = ["--cov=grader", "--cov=seam", "--cov-report=json:coverage.json"]


def sh(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)


def install(repo: Path) -> None:
    subprocess.run(["sh", "deploy/chromium/install.sh"], cwd=repo, capture_output=True)
    done = sh([sys.executable, "-m", "pip", "install", "-q", "-e", ".[dev]"], repo)
    if done.returncode:
        raise SystemExit(f"install failed in {repo}:\n{done.stderr[-2000:]}")


def suite_command(repo: Path) -> list[str]:
    """The revision's own test command: the pytest part of its .ci/run's last command line."""
    line = next(l for l in reversed((repo / ".ci/run").read_text().splitlines()) if "-m pytest" in l)
    return shlex.split(line.split("&&")[-1])


def summary(out: str) -> str:
    lines = [l for l in out.splitlines() if re.search(r"\d+ (passed|failed)", l)]
    return lines[-1].strip("= ") if lines else "(no summary)"


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(cmd: list[str], repo: Path, log: Path, env: dict | None = None) -> tuple[float, str, float]:
    """(wall seconds, pytest's summary line, CPU seconds: user and system time of the command and
    of every process of it that was waited for, start-up and collection included)."""
    start, cpu = time.monotonic(), children_cpu()
    done = sh(cmd, repo, env)
    wall = time.monotonic() - start
    log.write_text(done.stdout + done.stderr)
    return wall, summary(done.stdout), children_cpu() - cpu


def collected(repo: Path, select: list[str]) -> list[str]:
    done = sh(["python", "-m", "pytest", "-q", "--collect-only", "-p", "no:randomly", *select], repo)
    return sorted(l for l in done.stdout.splitlines() if "::" in l)


def coverage_of(repo: Path) -> dict[str, float]:
    data = json.loads((repo / "coverage.json").read_text())
    out = {}
    for top in ("grader", "seam"):
        files = [f for name, f in data["files"].items() if name.startswith(top + "/")]
        hit = sum(f["summary"]["covered_lines"] for f in files)
        lines = sum(f["summary"]["num_statements"] for f in files)
        out[top] = round(100 * hit / max(lines, 1), 2)
    return out


def measure(rev: str, repo: Path, out: Path, cover: bool, fast: bool, installs: bool, select: list[str],
            whole: bool = True, cpu: bool = False) -> dict:
    subprocess.run(["git", "clone", "-q", "--no-local", str(HERE), str(repo)], check=True)
    subprocess.run(["git", "checkout", "-q", rev], cwd=repo, check=True)
    if installs:
        install(repo)
    ids = collected(repo, select)
    # a selection: those tests in this process (-n 0: the last -n counts), not the suite's workers
    select = [*select, "-n", "0"] if select else []
    (out / f"{rev}.ids").write_text("\n".join(ids) + "\n")
    row = {"rev": rev, "tests": len(ids)}
    row["command"] = " ".join(suite_command(repo))
    env = plugin = None
    if cpu:  # the plugin from this checkout, whatever the revision
        folder = out / f"{rev}.cpu"
        shutil.rmtree(folder, ignore_errors=True)
        env = {**os.environ, "SUITE_CPU_DIR": str(folder),
               "PYTHONPATH": os.pathsep.join([str(HERE / "benchmarks"), os.environ.get("PYTHONPATH", "")])}
        plugin = ["-p", "cpu_plugin"]
    if whole:
        row["wall_s"], row["summary"], _ = timed(suite_command(repo) + MORE + (COVER if cover else []) + (plugin or [])
                                              + select, repo, out / f"{rev}.log", env)
    if whole and cpu:
        row["cpu"] = cpu_summary(folder)
    if whole and cover:
        row["coverage"] = coverage_of(repo)
    if fast and "e2e:" in (repo / "pyproject.toml").read_text():  # a revision with the fast loop
        row["fast_s"], row["fast_summary"], row["fast_cpu_s"] = timed(FAST + select, repo, out / f"{rev}.fast.log")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--fast", action="store_true", help="also time the fast loop")
    parser.add_argument("--fast-only", action="store_true", help="time the fast loop alone, not the whole suite")
    parser.add_argument("--cpu", action="store_true",
                        help="also the CPU seconds the suite spent, all its processes counted, and its dearest files")
    parser.add_argument("--out", type=Path, default=Path("suite-times"))
    parser.add_argument("--no-install", action="store_true", help="run each clone with what is installed")
    parser.add_argument("--select", nargs="+", default=[], metavar="PATH", help="only these tests, in one process")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows, clones = [], []
    try:
        for rev in args.revs:
            clones.append(Path(tempfile.mkdtemp(prefix=f"suite-{rev[:10]}-")))
            rows.append(measure(rev, clones[-1], args.out, args.coverage, args.fast or args.fast_only,
                                not args.no_install, args.select, whole=not args.fast_only, cpu=args.cpu))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if not args.no_install:
            install(HERE)
        for clone in clones:  # after the install left them
            shutil.rmtree(clone, ignore_errors=True)
    (args.out / "times.json").write_text(json.dumps(rows, indent=1) + "\n")
    key = "fast_s" if args.fast_only else "wall_s"
    base = rows[0].get(key)
    for row in rows:
        if key not in row:  # (a revision before the fast loop)
            print(f"{row['rev']:>12}  no fast loop")
            continue
        print(f"{row['rev']:>12}  {row[key]:7.1f} s  " + (f"{row[key] / base:5.2f}x  " if base else "") +
              f"{row['tests']} tests  " + (f"fast: {row['fast_summary']}  CPU {row['fast_cpu_s']:.1f} s" if args.fast_only else
                                           row["summary"] + (f"  fast {row['fast_s']:.1f} s" if "fast_s" in row else "")
                                           + (f"  CPU {row['cpu']['cpu_s']:.1f} s" if "cpu_s" in row.get("cpu", {}) else "")))
        if "cpu" in row:
            said = row["cpu"].get("unmeasured") or ", ".join(f"{k} {v:g} s" for k, v in row["cpu"]["dearest_files"].items())
            print(f"{'':>12}  CPU, dearest files: {said}")


if __name__ == "__main__":
    main()
