"""benchmarks/gpu_check.py, the one-shot check for a CUDA machine, tested here without one: it
refuses to start without CUDA ("needs CUDA", exit 3, nothing written), and its --dry-run-cpu
runs every step on tiny sizes on the CPU, writing the same log and summary.json: the batch step
too, with --gpu skip where a GPU run says --gpu require."""

import importlib.util
import json
import subprocess
import sys

import pytest
import torch

from grader.paths import ROOT
from grader.sandbox.isolation import Isolation
from tests.self.bugs import all_bugs

SCRIPT = ROOT / "benchmarks" / "gpu_check.py"


def script_module():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args, timeout=600):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without CUDA")
def test_needs_cuda(tmp_path):
    out = tmp_path / "out"
    proc = run("--out", str(out))
    assert proc.returncode == 3
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert "needs CUDA" in proc.stderr
    assert not out.exists()


def test_dry_run_cpu(tmp_path):
    out = tmp_path / "out"
    proc = run("--dry-run-cpu", "--out", str(out), "--grade-limit", "1", "--budget", "500")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"] and summary["dry_run_cpu"]
    assert summary["env"]["torch"] == torch.__version__ and summary["env"]["gpu"] is None
    assert [(r["dtype"], r["n"]) for r in summary["mfu"]] == [("bfloat16", 64), ("bfloat16", 128), ("float32", 64)]
    assert all(r["median_reference"] > 0 and r["median_events"] > 0 for r in summary["mfu"])
    ledger = {stage: row["ledger"] for stage, row in summary["memory"]["stages"].items()}
    assert ledger == {"created": 4, "after_backward": 8, "after_step": 16}
    reference, uid = summary["grades"]
    assert reference["slug"] == "reference" and reference["score"] == reference["max"] > 0
    # the no-namespace mode: graded with full marks, or refused by this machine with its reason
    assert uid["slug"] == "reference-uid"
    assert uid.get("score", -1) == uid.get("max") or uid.get("unavailable") or uid.get("unsupported")
    # the batch: two students, one job, both zygotes forks of its template, in a mode that forks them
    batch = summary["batch"]
    assert batch["rc"] == 0 and batch["problems"] == [] and batch["only"] == ["benchmarking"]
    assert Isolation.detect(batch["mode"], batch=True).spawns
    assert f"--jobs 1 --isolation {batch['mode']} --gpu skip --only benchmarking" in batch["command"]
    assert sorted(batch["students"]) == ["alice", "bob"]
    for got in batch["students"].values():
        assert got["status"] == "graded" and got["score"] == got["max"] == reference["max"], got
        assert got["gpu_tests_run"] == 0 and got["sandbox"].startswith(f"sandbox: {batch['mode']}"), got
    # every planted optim/benchmarking bug and GPU-only mistake still applies to the reference
    gc = script_module()
    planted = [b for b in all_bugs() if b.problem in gc.BUG_PROBLEMS]
    assert len(list((out / "submissions").iterdir())) == len(planted) + len(gc.GPU_ONLY_BUGS)
    [bug] = summary["bugs"]
    # the GPU-only "no synchronize" mistake; on the CPU the fake-CUDA test already catches it
    assert "no synchronize" in bug["bug"] and bug["score"] < bug["max"]
    assert bug["caught_by_cpu_tests"] and bug["caught_by_gpu_tests"] == []
    # what it printed is in the log too
    log = (out / "gpu_check.log").read_text()
    assert log.strip() == proc.stdout.strip()
