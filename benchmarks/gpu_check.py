"""One check of the kit on a CUDA machine, done in under 8 minutes, everything it prints also
written to a folder.

    python benchmarks/gpu_check.py [--out DIR] [--budget SECONDS] [--jobs N]
    python benchmarks/gpu_check.py --dry-run-cpu [--grade-limit N]   # the same code paths, tiny, on the CPU

Steps (summary in DIR/summary.json, the full log in DIR/gpu_check.log, each grade's results.json
and output under DIR/grades/):
  1. environment: python, torch, CUDA, driver, GPU name, its dense peaks from the reference table;
  2. the reference's matmul_mfu for bf16 at m=k=n in 1024..16384 and fp32 at 4096/8192, each
     cross-checked against the same products timed with CUDA events (both printed, 3 rounds,
     medians);
  3. bytes per parameter after creation / backward / step: the reference's memory_by_stage
     ledger and torch.cuda.memory_allocated above a baseline (expected 4, 8, 16 in fp32);
  4. the sandboxed `python -m grader grade reference --gpu require` (full marks expected), then
     the same with `--isolation uid` (the no-namespace mode; a grader without that option says
     so and the step is noted, not failed);
  5. a two-student `python -m grader batch --gpu require --jobs 1` over the problems with GPU
     tests, in the strongest isolation mode whose zygotes the job's template forks (not bwrap's):
     each student's zygote is a fork of one torch-ready template and its worker initialises CUDA
     itself; both students graded, full marks, every GPU test run, each results.json valid;
  6. every planted optim/benchmarking bug (tests/self/bugs) and the GPU-only mistakes below,
     graded with `--gpu require --only <problem>`, with the GPU test(s) that catch each.
The dry run grades with `--gpu skip` where a GPU run says `--gpu require`, and one problem.
Without CUDA it prints one line, "needs CUDA", and exits 3 (unless --dry-run-cpu).
Exit status: 0 when every expectation held, 1 otherwise (details in summary.json "problems").
"""

from __future__ import annotations  # (torch.device in signatures: torch is imported by main)

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

torch = nn = None  # imported by main, after the arguments: `--help` answers without torch

from grader.paths import REFERENCE  # noqa: E402
from tests.self.bugs import Bug, all_bugs  # noqa: E402

NEEDS_CUDA_EXIT = 3
BF16_SIZES, FP32_SIZES = (1024, 2048, 4096, 8192, 16384), (4096, 8192)
DRY_BF16_SIZES, DRY_FP32_SIZES = (64, 128), (64,)
CPU_STAND_IN_PEAK = 1e12  # the CPU has no peak in the table; the dry run divides by this
ROUNDS = 3

# Mistakes made only in GPU code paths, as edits of the reference: the GPU tests must catch them
# (reading memory_reserved is invisible on the CPU; the missing synchronize is also caught on
# the CPU by the fake-CUDA timing test, and on a GPU must cost MFU points too).
GPU_ONLY_BUGS = [
    Bug("benchmarking", "no synchronize before the first clock read",
        "    if on_cuda:\n        torch.cuda.synchronize(device)  # the warm-up must be finished before t0\n",
        ""),
    Bug("optim", "memory_reserved read as allocated",
        'record["allocated"] = int(torch.cuda.memory_allocated(device))',
        'record["allocated"] = int(torch.cuda.memory_reserved(device))'),
]
BUG_PROBLEMS = ("optim", "benchmarking")
MFU_PROBLEMS = ("benchmarking",)  # graded one at a time: concurrent grades would skew the timings


class Log:
    """Print, and keep the same lines in DIR/gpu_check.log."""

    def __init__(self, path: Path):
        self.file = path.open("w")

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()


# ------------------------------------------------------------------------------ 1. environment


def driver_version() -> str:
    if shutil.which("nvidia-smi") is None:
        return "unknown (no nvidia-smi)"
    proc = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip().splitlines()[0] if proc.returncode == 0 and proc.stdout.strip() else "unknown"


def environment(cuda: bool, ref_bench) -> dict:
    env = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cuda_available": cuda, "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
           "float32_matmul_precision": torch.get_float32_matmul_precision()}
    if cuda:
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=torch.cuda.get_device_name(0), driver=driver_version(),
                   capability=f"{props.major}.{props.minor}", sms=props.multi_processor_count,
                   memory_gib=round(props.total_memory / 2**30, 1))
        try:
            env["peak_bf16"] = ref_bench.peak_flops(env["gpu"], torch.bfloat16)
            env["peak_fp32"] = ref_bench.peak_flops(env["gpu"], torch.float32)
        except ValueError as e:
            env["peak_error"] = str(e)
    else:
        env.update(gpu=None, driver=None, peak_bf16=CPU_STAND_IN_PEAK, peak_fp32=CPU_STAND_IN_PEAK,
                   note="CPU dry run: stand-in peak 1e12 FLOP/s")
    return env


# ------------------------------------------------------------------------------ 2. MFU


def events_seconds(n: int, dtype, device: torch.device, warmup: int = 3, trials: int = 10) -> float:
    """Mean seconds per n³ product, timed by the device itself (CUDA events; on the CPU dry run,
    perf_counter around the same loop)."""
    a = torch.randn(n, n, dtype=dtype, device=device)
    b = torch.randn(n, n, dtype=dtype, device=device)
    for _ in range(warmup):
        a @ b
    if device.type != "cuda":
        t0 = time.perf_counter()
        for _ in range(trials):
            a @ b
        return (time.perf_counter() - t0) / trials
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(device)
    start.record()
    for _ in range(trials):
        a @ b
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / trials


def reference_mfu(ref_bench, n: int, dtype, device: torch.device, peak: float) -> float:
    if device.type == "cuda":
        return ref_bench.matmul_mfu(n, n, n, dtype, device)
    return ref_bench.mfu(2 * n**3, ref_bench.time_matmul(n, n, n, dtype, device), peak)


def mfu_section(log: Log, ref_bench, device, env, bf16_sizes, fp32_sizes) -> list[dict]:
    log(f"\n== 2. reference matmul_mfu vs CUDA-event timing ({ROUNDS} rounds, medians)")
    log(f"{'dtype':>9} {'m=k=n':>6} {'mfu (reference)':>16} {'mfu (events)':>13} {'events/ref':>10} "
        f"{'TFLOP/s (ref)':>13}")
    rows = []
    for dtype, sizes, peak in ((torch.bfloat16, bf16_sizes, env.get("peak_bf16")),
                               (torch.float32, fp32_sizes, env.get("peak_fp32"))):
        if peak is None:
            log(f"{str(dtype):>9}: no peak for this GPU in the reference table; skipped")
            continue
        for n in sizes:
            reference_mfu(ref_bench, n, dtype, device, peak)          # discarded: first call
            mine, events = [], []
            for _ in range(ROUNDS):
                mine.append(reference_mfu(ref_bench, n, dtype, device, peak))
                events.append(2 * n**3 / events_seconds(n, dtype, device) / peak)
            row = {"dtype": str(dtype).removeprefix("torch."), "n": n, "mfu_reference": mine,
                   "mfu_events": events, "median_reference": statistics.median(mine),
                   "median_events": statistics.median(events)}
            row["events_over_reference"] = row["median_events"] / row["median_reference"]
            rows.append(row)
            log(f"{row['dtype']:>9} {n:>6} {row['median_reference']:>16.4f} {row['median_events']:>13.4f} "
                f"{row['events_over_reference']:>10.3f} {row['median_reference'] * peak / 1e12:>13.1f}")
    return rows


# ------------------------------------------------------------------------------ 3. memory


def memory_section(log: Log, ref_optim, device, dim: int, layers: int = 3, batch: int = 8) -> dict:
    log(f"\n== 3. bytes per parameter: {layers} x Linear({dim}, {dim}, bias=False), fp32, reference AdamW")
    cuda = device.type == "cuda"
    torch.manual_seed(0)
    x, y = torch.randn(batch, dim, device=device), torch.randn(batch, dim, device=device)
    base = 0
    if cuda:  # a throw-away forward/backward creates cuBLAS's workspace before the baseline
        warm = nn.Sequential(*[nn.Linear(dim, dim, bias=False) for _ in range(layers)]).to(device)
        warm(x).sum().backward()
        del warm
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
    model = nn.Sequential(*[nn.Linear(dim, dim, bias=False) for _ in range(layers)]).to(device)
    opt = ref_optim.AdamW(model.parameters(), lr=1e-3)
    stages = ref_optim.memory_by_stage(model, opt, x, y)
    n_params = sum(p.numel() for p in model.parameters())
    out = {"n_params": n_params, "base_allocated": base, "stages": {}}
    log(f"{'stage':>15} {'ledger B/param':>15} {'allocated B/param':>18} {'reserved MiB':>13}")
    for stage, rec in stages.items():
        row = {"ledger": rec["total"] / n_params,
               "allocated": (rec["allocated"] - base) / n_params if "allocated" in rec else None}
        out["stages"][stage] = row
        shown = f"{row['allocated']:.4f}" if row["allocated"] is not None else "n/a (CPU)"
        reserved = f"{torch.cuda.memory_reserved(device) / 2**20:.0f}" if cuda else "n/a"
        log(f"{stage:>15} {row['ledger']:>15.4f} {shown:>18} {reserved:>13}")
    return out


# ------------------------------------------------------------------------------ 4./5. grading


def grade(log: Log, out_dir: Path, slug: str, submission: Path, args: list[str], timeout: float) -> dict:
    """One `python -m grader grade`; its results.json, stdout and stderr kept under out_dir."""
    where = out_dir / "grades" / slug
    where.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "grader", "grade", str(submission), "--out", str(where / "results.json"),
           "--quiet", *args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=max(timeout, 1))
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = "timeout", _text(e.stdout), f"timed out after {timeout:.0f} s"
    (where / "stdout.txt").write_text(stdout)
    (where / "stderr.txt").write_text(stderr)
    row = {"slug": slug, "command": " ".join(cmd[1:]), "rc": rc, "seconds": round(time.monotonic() - start, 1)}
    results_file = where / "results.json"
    if rc == 0 and results_file.is_file():
        results = json.loads(results_file.read_text())
        row["score"] = results["score"]
        row["max"] = sum(t["max_score"] for t in results["tests"])
        row["failed"] = [t["name"] for t in results["tests"] if t["status"] != "passed"]
        row["summary"] = results["output"].splitlines()
    else:
        row["stderr_tail"] = stderr.strip().splitlines()[-3:]
    return row


def _text(data) -> str:
    # TimeoutExpired carries bytes even under text=True
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def gpu_test_names() -> set[str]:
    """"problem: title" of every GPU-marked graded test, as results.json names them."""
    from grader.rubric import collect
    return {f"{f.problem}: {f.title}" for f in collect() if f.gpu}


def describe_grade(log: Log, label: str, row: dict) -> None:
    if "score" in row:
        sandbox = next((s for s in row["summary"] if s.startswith("sandbox: ")), "sandbox: ?")
        log(f"{label}: {row['score']:g}/{row['max']:g} in {row['seconds']} s; {sandbox}")
        for line in row["summary"]:
            if line.startswith(("GPU: ", "not counted: ")) or "not run" in line:
                log(f"    {line}")
    else:
        log(f"{label}: exit {row['rc']} in {row['seconds']} s: {' | '.join(row.get('stderr_tail', []))}")


def template_mode() -> str | None:
    """The strongest isolation mode here whose batch zygotes are forks of the job's template
    (Isolation.spawns: bwrap's are not, it must exec), or None if there is none."""
    from grader.sandbox.isolation import MODES, Isolation, IsolationUnavailable
    for mode in MODES:
        try:
            if Isolation.detect(mode, batch=True).spawns:
                return mode
        except IsolationUnavailable:
            continue
    return None


BATCH_STUDENTS = ("alice", "bob")


def batch_section(log: Log, out_dir: Path, gpu_args: list[str], problems: list[str], gpu_names: set[str],
                  cuda: bool, timeout: float) -> dict:
    """Two copies of the reference graded by one `python -m grader batch` job (``--jobs 1``: both
    students' zygotes are forks of its one template) in ``template_mode()``; what each student's
    results say, and what went wrong in ``row["problems"]``."""
    from jsonschema import ValidationError
    from grader.batch.output import RESULTS, STUDENT, student_folder
    from grader.report import not_run, validate
    mode = template_mode()
    row: dict = {"mode": mode, "problems": [], "only": problems}
    log(f"isolation: {mode or 'none that forks from a template'}")
    if mode is None:
        row["problems"].append("batch: no isolation mode here forks its zygotes from a template")
        return row
    klass, out = out_dir / "batch" / "class", out_dir / "batch" / "out"
    shutil.rmtree(out_dir / "batch", ignore_errors=True)
    for key in BATCH_STUDENTS:
        shutil.copytree(REFERENCE, klass / key, ignore=shutil.ignore_patterns("__pycache__"))
    cmd = [sys.executable, "-m", "grader", "batch", str(klass), "--out", str(out), "--jobs", "1",
           "--isolation", mode, *gpu_args, "--only", ",".join(problems)]
    row["command"] = " ".join(cmd[1:])
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=max(timeout, 1))
        row["rc"], stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        row["rc"], stderr = "timeout", f"timed out after {timeout:.0f} s"
    row["seconds"] = round(time.monotonic() - start, 1)
    (out_dir / "batch" / "stderr.txt").write_text(stderr)
    if row["rc"] != 0:
        row["problems"].append(f"batch: exit {row['rc']}: {' | '.join(stderr.strip().splitlines()[-3:])}")
    row["students"] = {}
    for key in BATCH_STUDENTS:
        folder = student_folder(out, key)
        try:
            status = json.loads((folder / STUDENT).read_text())["status"]
            results = json.loads((folder / RESULTS).read_text())
            validate(results)
        except (OSError, ValueError, KeyError, ValidationError) as e:
            row["problems"].append(f"batch: {key} has no valid results ({type(e).__name__}: {str(e)[:200]})")
            continue
        tests = results["tests"]
        gpu_run = [t for t in tests if t["name"] in gpu_names and not not_run(t)]
        sandbox = next((n for n in results["output"].splitlines() if n.startswith("sandbox: ")), "")
        got = {"status": status, "score": results["score"], "max": sum(t["max_score"] for t in tests),
               "tests": len(tests), "gpu_tests_run": len(gpu_run),
               "gpu_tests_passed": sum(t["status"] == "passed" for t in gpu_run),
               "seconds": results.get("execution_time"), "sandbox": sandbox}
        row["students"][key] = got
        log(f"{key}: {status}, {got['score']:g}/{got['max']:g}, {got['tests']} tests, "
            f"{got['gpu_tests_run']} GPU tests run ({got['gpu_tests_passed']} passed), "
            f"graded in {got['seconds']} s")
        if status != "graded" or got["score"] != got["max"] or not tests:
            row["problems"].append(f"batch: {key} {status}, {got['score']}/{got['max']} (full marks expected)")
        if not sandbox.startswith(f"sandbox: {mode}"):
            row["problems"].append(f"batch: {key} was not graded in the {mode} mode ({sandbox or 'no sandbox line'})")
        wanted = sum(n.split(":")[0] in problems for n in gpu_names) if cuda else 0
        if got["gpu_tests_run"] != wanted or got["gpu_tests_passed"] != wanted:
            row["problems"].append(f"batch: {key} ran {got['gpu_tests_run']} GPU tests, passed "
                                   f"{got['gpu_tests_passed']}, of {wanted}")
    log(f"batch of {len(BATCH_STUDENTS)} in {row['seconds']} s (exit {row['rc']})")
    return row


def bug_rows(log, out_dir, bugs, gpu_args, gpu_names, jobs, deadline) -> list[dict]:
    subs = out_dir / "submissions"

    def one(numbered):
        i, kind, bug = numbered
        slug = f"bug{i:02d}-{bug.problem}-{kind}"
        folder = bug.build(subs / slug)
        remaining = deadline - time.monotonic()
        if remaining < 20:
            return {"bug": bug.id, "kind": kind, "problem": bug.problem, "skipped": "time budget spent"}
        row = grade(log, out_dir, slug, folder, [*gpu_args, "--only", bug.problem], remaining)
        row.update(bug=bug.id, kind=kind, problem=bug.problem)
        if "failed" in row:
            row["caught_by_gpu_tests"] = [n for n in row["failed"] if n in gpu_names]
            row["caught_by_cpu_tests"] = [n for n in row["failed"] if n not in gpu_names]
        return row

    parallel = [b for b in bugs if b[2].problem not in MFU_PROBLEMS]
    serial = [b for b in bugs if b[2].problem in MFU_PROBLEMS]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(one, parallel))
    rows += [one(b) for b in serial]
    for row in rows:
        log(f"\n[{row['kind']}] {row['bug']}")
        if "skipped" in row:
            log(f"    skipped: {row['skipped']}")
        elif "failed" not in row:
            log(f"    grade failed: exit {row['rc']}: {' | '.join(row.get('stderr_tail', []))}")
        else:
            log(f"    {row['score']:g}/{row['max']:g} in {row['seconds']} s")
            for name in row["caught_by_gpu_tests"]:
                log(f"    caught by GPU test: {name}")
            if not row["caught_by_gpu_tests"]:
                log("    caught by no GPU test")
            log(f"    CPU tests failing: {len(row['caught_by_cpu_tests'])}")
    return rows


# ------------------------------------------------------------------------------ main


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="gpu_check_out", help="folder for the log, summary.json and grades")
    parser.add_argument("--dry-run-cpu", action="store_true",
                        help="exercise every step on the CPU: tiny sizes, --gpu skip, no CUDA-only readings")
    parser.add_argument("--budget", type=float, default=450.0,
                        help="seconds for the whole check; grading steps left when it is spent are skipped")
    parser.add_argument("--jobs", type=int, default=4, help="bug grades run at once (not the MFU ones)")
    parser.add_argument("--grade-limit", type=int, default=None,
                        help="grade only the first N bug submissions, GPU-only mistakes first (all are built)")
    args = parser.parse_args(argv)
    global torch, nn
    import torch
    from torch import nn

    cuda = torch.cuda.is_available() and not args.dry_run_cpu
    if not cuda and not args.dry_run_cpu:
        print("gpu_check: needs CUDA (torch.cuda.is_available() is False); "
              "--dry-run-cpu exercises the script on the CPU", file=sys.stderr)
        return NEEDS_CUDA_EXIT
    start = time.monotonic()
    deadline = start + args.budget
    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    log = Log(out_dir / "gpu_check.log")
    from reference import benchmarking as ref_bench
    from reference import optim as ref_optim

    summary: dict = {"dry_run_cpu": args.dry_run_cpu, "problems": [], "notes": []}
    problems, notes = summary["problems"], summary["notes"]

    log("== 1. environment")
    env = summary["env"] = environment(cuda, ref_bench)
    for key, value in env.items():
        log(f"{key:>24}: {value}")
    if "peak_error" in env:
        problems.append(f"GPU {env['gpu']!r} is not in the reference's peak table")

    device = torch.device("cuda" if cuda else "cpu")
    bf16, fp32 = (BF16_SIZES, FP32_SIZES) if cuda else (DRY_BF16_SIZES, DRY_FP32_SIZES)
    summary["mfu"] = mfu_section(log, ref_bench, device, env, bf16, fp32)
    for row in summary["mfu"]:
        if cuda and not 0 < row["median_reference"] <= 1:
            problems.append(f"reference MFU {row['dtype']} n={row['n']} = {row['median_reference']:.3f}, "
                            f"not in (0, 1]")
        if cuda and row["n"] >= 4096 and not 0.9 <= row["events_over_reference"] <= 1.1:
            problems.append(f"{row['dtype']} n={row['n']}: CUDA events and time_matmul disagree "
                            f"by more than 10% ({row['events_over_reference']:.3f})")

    mem = summary["memory"] = memory_section(log, ref_optim, device, 2048 if cuda else 64)
    for stage, want in (("created", 4), ("after_backward", 8), ("after_step", 16)):
        got = mem["stages"][stage]
        if got["ledger"] != want:
            problems.append(f"ledger {stage}: {got['ledger']} bytes/param, expected {want}")
        if cuda and abs(got["allocated"] - want) > 0.1:
            problems.append(f"allocated {stage}: {got['allocated']:.3f} bytes/param, expected {want}")

    gpu_args = ["--gpu", "require"] if cuda else ["--gpu", "skip"]
    ref_only = [] if cuda else ["--only", "benchmarking"]   # the dry run grades one problem
    log(f"\n== 4. sandboxed grade of the reference ({' '.join(gpu_args + ref_only)})")
    grades = summary["grades"] = []
    for slug, extra in (("reference", []), ("reference-uid", ["--isolation", "uid"])):
        remaining = deadline - time.monotonic()
        if remaining < 30:
            notes.append(f"{slug}: skipped, time budget spent")
            log(f"{slug}: skipped, time budget spent")
            continue
        row = grade(log, out_dir, slug, REFERENCE, [*gpu_args, *ref_only, *extra], remaining)
        grades.append(row)
        if extra and row["rc"] == 2 and any("unrecognized arguments" in s for s in row.get("stderr_tail", [])):
            row["unsupported"] = True
            notes.append("this grader has no --isolation option yet: the no-namespace (uid) grade was not run")
            log(f"{slug}: this grader has no --isolation option yet (unrecognized arguments); not run")
            continue
        if extra and row["rc"] == 2 and any("--isolation" in s for s in row.get("stderr_tail", [])):
            # the grader refused the mode on this machine (one line, no report): say why
            reason = next(s for s in row["stderr_tail"] if "--isolation" in s)
            row["unavailable"] = reason
            notes.append(f"the no-namespace (uid) grade could not run on this machine: {reason}")
            log(f"{slug}: not available on this machine: {reason}")
            continue
        describe_grade(log, slug, row)
        if "score" not in row or row["score"] != row["max"]:
            problems.append(f"{slug}: not full marks ({row.get('score')}/{row.get('max')}, exit {row['rc']})")

    gpu_names = gpu_test_names()
    # the problems with GPU tests (the dry run: the one problem it grades)
    batch_only = ref_only[1:] or sorted({name.split(":")[0] for name in gpu_names})
    log(f"\n== 5. a batch of {len(BATCH_STUDENTS)} through the job's template ({' '.join(gpu_args)} "
        f"--only {','.join(batch_only)})")
    remaining = deadline - time.monotonic()
    if remaining < 60:
        notes.append("batch: skipped, time budget spent")
        log("batch: skipped, time budget spent")
    else:
        summary["batch"] = batch_section(log, out_dir, gpu_args, batch_only, gpu_names, cuda, remaining)
        problems += summary["batch"]["problems"]

    log("\n== 6. planted bugs and GPU-only mistakes, each graded with "
        f"{' '.join(gpu_args)} --only <problem>")
    # the GPU-only mistakes first: if the budget runs out, planted bugs (also caught on the CPU) go
    bugs = [("gpu-only", b) for b in GPU_ONLY_BUGS] + [("planted", b) for b in all_bugs() if b.problem in BUG_PROBLEMS]
    bugs = [(i, kind, bug) for i, (kind, bug) in enumerate(bugs)]
    for i, kind, bug in bugs:   # every one must still apply to the reference, graded or not
        bug.build(out_dir / "submissions" / f"bug{i:02d}-{bug.problem}-{kind}")
    chosen = bugs if args.grade_limit is None else bugs[:args.grade_limit]
    if len(chosen) < len(bugs):
        notes.append(f"graded {len(chosen)} of {len(bugs)} bug submissions (--grade-limit)")
    rows = summary["bugs"] = bug_rows(log, out_dir, chosen, gpu_args, gpu_names, args.jobs, deadline)
    for row in rows:
        if "skipped" in row:
            notes.append(f"{row['bug']}: not graded ({row['skipped']})")
        elif "failed" not in row:
            problems.append(f"{row['bug']}: the grade failed (exit {row['rc']})")
        elif not row["failed"] and cuda:
            problems.append(f"{row['bug']}: lost no points")
        elif cuda and row["kind"] == "gpu-only" and not row["caught_by_gpu_tests"]:
            problems.append(f"{row['bug']}: no GPU test caught it")

    summary["seconds"] = round(time.monotonic() - start, 1)
    summary["ok"] = not problems
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    log(f"\n== done in {summary['seconds']} s (budget {args.budget:g} s); {len(problems)} problem(s)")
    for line in notes:
        log(f"note: {line}")
    for line in problems:
        log(f"PROBLEM: {line}")
    log(f"wrote {out_dir / 'summary.json'}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
