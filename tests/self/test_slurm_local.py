"""The cluster flow for real: deploy/slurm/local-cluster.sh brings up a one-node Slurm here, runs
the job array over shards and the merge job (deploy/slurm/submit.sh, grade-array.sbatch), and
compares the merged gradebook with an unsharded batch byte for byte. The Kubernetes manifests
are checked for what the grader relies on."""

import os
import shutil
import subprocess

import pytest
import yaml

from grader.gradebook import student_dirs
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
    rows = (out / "merged" / "gradebook.csv").read_text().splitlines()
    assert len(rows) == 7 and {r.split(",")[-2] for r in rows[1:]} == {"graded", "empty"}


def test_kubernetes_manifests():
    job = yaml.safe_load((ROOT / "deploy/k8s/grade-indexed-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    container = spec["template"]["spec"]["containers"][0]
    command = container["command"] + container["args"]
    assert command[:4] == ["python", "-m", "grader", "batch"]
    assert int(command[command.index("--shard-count") + 1]) == spec["completions"]
    assert any("$(JOB_COMPLETION_INDEX)" in a for a in command)
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    merge = yaml.safe_load((ROOT / "deploy/k8s/merge-job.yaml").read_text())
    mcmd = merge["spec"]["template"]["spec"]["containers"][0]["command"]
    assert mcmd[:4] == ["python", "-m", "grader", "merge"]
    assert [a for a in mcmd if a.startswith("/grading/out/shard-")] == \
        [f"/grading/out/shard-{i}" for i in range(spec["completions"])]
    images = {container["image"], merge["spec"]["template"]["spec"]["containers"][0]["image"]}
    assert len(images) == 1
