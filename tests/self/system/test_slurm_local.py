"""The cluster flow for real: deploy/slurm/local-cluster.sh brings up a one-node Slurm here, runs
the job array over shards and the merge job (deploy/slurm/submit.sh, grade-array.sbatch), and
compares the merged gradebook with an unsharded batch byte for byte. The Kubernetes manifests
are validated offline and checked for what the grader relies on; the Slurm Apptainer path is
checked as the submitting user against the image's layout."""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path, PurePosixPath

import kubernetes_validate
import pytest
import yaml

from grader.batch.output import student_dirs, student_rows
from grader.paths import ROOT

SLURM = [shutil.which(t) for t in ("slurmctld", "slurmd", "sbatch", "squeue", "munged")]


@pytest.mark.skipif(not all(SLURM), reason="Slurm is not installed here (slurmctld, slurmd, slurm-client, "
                    "munge; deploy/slurm/local-cluster.sh installs them with apt as root)")
@pytest.mark.skipif(os.geteuid() != 0, reason="the one-node cluster runs its daemons as root")
def test_job_array_then_merge_equals_the_unsharded_batch(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(STATE=str(tmp_path / "slurm"), SHARDS="3", ONLY="intensity")
    proc = subprocess.run(["bash", str(ROOT / "deploy/slurm/local-cluster.sh")], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "merged gradebook == unsharded gradebook" in proc.stderr
    out = tmp_path / "slurm" / "run" / "out"
    shards = [{d.name for d in student_dirs(out / f"shard-{i}")} for i in range(3)]  # (a shard may be empty)
    assert sum(map(len, shards)) == len(set().union(*shards)) == 6      # disjoint, the whole class
    rows = student_rows((out / "merged" / "gradebook.csv").read_text())
    assert len(rows) == 6 and {r["status"] for r in rows} == {"graded", "empty"}


def _image_layout() -> tuple[str, list[str], list[str]]:
    """What the Dockerfile and docs/deploy.md say of the image: its name (`docker build -t`),
    its entrypoint, and its root-only (0700) folders."""
    readme, dockerfile = (ROOT / "docs" / "deploy.md").read_text(), (ROOT / "Dockerfile").read_text()
    name = re.search(r"docker build -t (\S+) \.", readme).group(1)
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.M).group(1))
    private = re.findall(r"chmod 700 (/\S+)", dockerfile) + re.findall(r"mkdir -m 700 (/\S+)", dockerfile)
    return name, entrypoint, private


def test_kubernetes_manifests():
    name, entrypoint, private = _image_layout()
    assert entrypoint[:2] == ["tini", "--"] and sorted(private) == ["/grader", "/grading"]
    job = yaml.safe_load((ROOT / "deploy/k8s/grade-indexed-job.yaml").read_text())
    merge = yaml.safe_load((ROOT / "deploy/k8s/merge-job.yaml").read_text())
    for manifest in (job, merge):   # offline: the schemas kubernetes-validate ships, strict
        kubernetes_validate.validate(manifest, kubernetes_validate.latest_version(), strict=True)
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    containers = [job["spec"]["template"]["spec"]["containers"][0], merge["spec"]["template"]["spec"]["containers"][0]]
    for c in containers:
        assert c["image"].partition(":")[0] == name          # the image docs/deploy.md builds
        assert "command" not in c                              # tini stays PID 1: args only
        [mount] = c["volumeMounts"]
        where = PurePosixPath(mount["mountPath"])              # under /grading, never at it
        assert where != PurePosixPath("/grading") and where.is_relative_to("/grading")
        paths = [PurePosixPath(a) for a in c["args"] if a.startswith("/")]
        assert paths and all(p.is_relative_to(where) for p in paths), (paths, where)
    command = containers[0]["args"]
    assert command[0] == "batch"
    assert int(command[command.index("--shard-count") + 1]) == spec["completions"]
    assert any("$(JOB_COMPLETION_INDEX)" in a for a in command)
    assert containers[0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    out = command[command.index("--out") + 1].rpartition("/shard-")[0]
    mcmd = containers[1]["args"]
    assert mcmd[0] == "merge"
    assert [a for a in mcmd if "/shard-" in a] == [f"{out}/shard-{i}" for i in range(spec["completions"])]


STUB_APPTAINER = """#!/bin/bash
printf '%s\\n' "$PWD" > "$RECORD"
printf '%s\\n' "$@" >> "$RECORD"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the recorded command as another user (setpriv)")
def test_the_apptainer_path_runs_as_the_submitting_user(tmp_path):
    """grade-array.sbatch's Apptainer command, recorded by a stub `apptainer`, checked against the
    image's layout (its 0700 folders, from the Dockerfile) and run as an unprivileged user from
    the folder it starts in, with a Python that user can read (the image's venv is world-readable)."""
    from grader.sandbox.view import image_of, linked_python, worker_python
    _, _, private = _image_layout()
    checkout = Path(tempfile.mkdtemp(prefix="apptainer-checkout-"))  # readable by the user, as a TA's is
    try:
        os.chmod(checkout, 0o755)
        for part in ("grader", "seam", "pyproject.toml", "deploy"):
            (shutil.copytree if (ROOT / part).is_dir() else shutil.copy)(ROOT / part, checkout / part)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "apptainer").write_text(STUB_APPTAINER)
        (bin_dir / "apptainer").chmod(0o755)
        record = tmp_path / "record"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update(PATH=f"{bin_dir}:{env['PATH']}", RECORD=str(record), SUBMISSIONS=str(tmp_path / "class"),
                   OUT_DIR=str(tmp_path / "out"), GRADER_IMAGE="/images/grader.sif", SLURM_SUBMIT_DIR=str(checkout),
                   SLURM_ARRAY_TASK_ID="1", SLURM_ARRAY_TASK_COUNT="2")
        (tmp_path / "class").mkdir()
        done = subprocess.run(["bash", str(checkout / "deploy/slurm/grade-array.sbatch")], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        cwd, *argv = record.read_text().splitlines()
        image = argv.index("/images/grader.sif")
        options, command = argv[:image], argv[image + 1:]
        assert options[0] == "exec" and "--nv" in options
        binds = [options[i + 1] for i, o in enumerate(options) if o == "--bind"]
        start = options[options.index("--pwd") + 1] if "--pwd" in options else cwd
        assert not any(PurePosixPath(start).is_relative_to(p) for p in private), start   # not /grader
        assert start in binds and {env["SUBMISSIONS"], env["OUT_DIR"]} <= set(binds)
        assert command[:3] == ["python", "-m", "grader"] and command[3] == "batch"
        exe, _ = worker_python(namespaces=False)   # a Python the user can read, as the venv is,
        packages = os.path.realpath(sysconfig.get_paths()["purelib"])  # with the pins (its site-packages),
        images = linked_python()[1] if exe != sys.executable else {}  # in the linked tree where it is hidden
        site = image_of(packages, images) or packages
        as_user = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe,
                                  *command[1:3], "--version"], cwd=start, capture_output=True, text=True, timeout=120,
                                 env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONPATH": str(site)})
        assert as_user.returncode == 0 and "python -m grader" in as_user.stdout, as_user.stderr[-2000:]
    finally:
        shutil.rmtree(checkout, ignore_errors=True)
