"""A CUDA runner whose GPU the reference's peak table lacks: the MFU tests (marker gpu_peak) are
reported "not run: unknown GPU '<name>'" and left out of the total, never charged; `--gpu
require` refuses to start. Tested here on the CPU by injecting the GPU's name where the grader
reads it (grader.gpu.device_name); the MFU tests themselves never start on an unknown GPU, so
nothing here needs a GPU."""

import json

import pytest
import torch

from grader import gpu as gpu_info
from grader.grade import grade, run_tests
from grader.paths import REFERENCE
from grader.report import build_results, validate
from seam import InProcess

# Every spelling torch.cuda.get_device_name() gives for the cards the course may grade on.
KNOWN = ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200",
         "NVIDIA H200 NVL", "NVIDIA GH200 480GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe",
         "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"]
UNKNOWN = "NVIDIA B200"


@pytest.mark.parametrize("name", KNOWN)
def test_known_gpus_have_a_peak(name):
    assert gpu_info.has_peak(name)


@pytest.mark.parametrize("name", [UNKNOWN, "NVIDIA A10G", "NVIDIA H20", "NVIDIA GeForce RTX 4090"])
def test_other_gpus_have_none(name):
    assert not gpu_info.has_peak(name)


def test_device_name_without_cuda_is_none():
    if torch.cuda.is_available():
        pytest.skip("checks the CPU-only answer; this machine has CUDA")
    assert gpu_info.device_name() is None


@pytest.fixture(scope="module")
def runs():
    """The benchmarking tests against the reference, in-process: on the CPU (GPU tests not run,
    counted) and on a CUDA runner with an unknown GPU (its MFU tests not run, not counted)."""
    impl = InProcess(REFERENCE, package="unknown_gpu_reference")
    cpu = run_tests(impl, gpu="auto", cuda=False, time_limit=60, quiet=True, problems=["benchmarking"])
    odd = run_tests(impl, gpu="auto", cuda=True, time_limit=60, quiet=True, problems=["benchmarking"],
                    unknown_gpu=UNKNOWN)
    return list(cpu.facts.values()), list(odd.facts.values())


def test_mfu_tests_not_run_and_not_counted(runs):
    _, facts = runs
    mfu = [f for f in facts if f.needs_peak]
    assert len(mfu) == 2 and all(f.gpu for f in mfu)
    for f in mfu:
        assert (f.outcome, f.counted) == ("not_run", False)
        assert f.message.startswith(f"not run: unknown GPU '{UNKNOWN}'")
    assert all(f.outcome == "passed" for f in facts if not f.needs_peak)


def test_report_leaves_them_out_of_the_total_and_names_them(runs):
    cpu_facts, facts = runs
    results = build_results(facts, 1.0, [])
    validate(results)
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
    assert all(t["status"] == "passed" for t in results["tests"])
    titles = [f.title for f in facts if f.needs_peak]
    assert not any(title in t["name"] for t in results["tests"] for title in titles)
    lines = [line for line in results["output"].splitlines() if line.startswith("not counted: ")]
    assert len(lines) == 2 and all(f"unknown GPU '{UNKNOWN}'" in line for line in lines)
    assert "no CUDA here" not in results["output"]
    # the other tests keep the numbers they have in any other run
    on_cpu = {t["name"]: t["number"] for t in build_results(cpu_facts, 1.0, [])["tests"]}
    assert all(on_cpu[t["name"]] == t["number"] for t in results["tests"])
    # while without CUDA the same tests are counted and fail "not run: needs CUDA"
    assert sum("needs CUDA" in t["output"] for t in build_results(cpu_facts, 1.0, [])["tests"]) == 2


def test_gpu_require_refuses_an_unknown_gpu(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_info, "device_name", lambda: UNKNOWN)
    out = tmp_path / "results.json"
    assert grade(REFERENCE, out, gpu="require", quiet=True) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"'{UNKNOWN}'" in err[0] and "--gpu require" in err[0]
    assert not out.exists()


def test_grade_on_an_unknown_gpu_gives_full_marks(tmp_path, monkeypatch):
    """The whole command, sandbox included, on an injected unknown GPU: the reference loses
    nothing, the report names the GPU and the two tests it could not grade."""
    monkeypatch.setattr(gpu_info, "device_name", lambda: UNKNOWN)
    out = tmp_path / "results.json"
    assert grade(REFERENCE, out, gpu="auto", quiet=True, problems=["benchmarking"]) == 0
    results = json.loads(out.read_text())
    validate(results)
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
    assert f"GPU: {UNKNOWN}" in results["output"]
    assert results["output"].count(f"not run: unknown GPU '{UNKNOWN}'") == 2


def test_gpu_require_accepts_a_known_gpu(tmp_path, monkeypatch):
    """The refusal is for unknown GPUs only: on an (injected) H100 NVL `--gpu require` grades,
    and the report names the GPU. dtypes has no GPU tests, so nothing here needs CUDA."""
    monkeypatch.setattr(gpu_info, "device_name", lambda: "NVIDIA H100 NVL")
    out = tmp_path / "results.json"
    assert grade(REFERENCE, out, gpu="require", quiet=True, problems=["dtypes"]) == 0
    results = json.loads(out.read_text())
    assert "GPU: NVIDIA H100 NVL" in results["output"] and "not counted" not in results["output"]
    assert results["score"] == sum(t["max_score"] for t in results["tests"]) > 0
