"""Real containers: the grading image (deploy/docker/check.py) and the Gradescope autograder's
real setup.sh + run_autograder in a clean Debian container.

Marked `docker` and deselected from the default run (pyproject's addopts): with a Docker engine
up they take ~10-20 minutes on 2 busy cores (two image builds, five sandboxed grades). Run them
with `python -m pytest -m docker tests/self/system/test_docker.py`; `deploy/docker/start-dockerd.sh`
brings an engine up. Without an engine answering `docker info` they skip, saying so.
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import gradescope
from grader.grade import run_tests
from grader.paths import REFERENCE, ROOT
from grader.report import validate
from seam import InProcess
from tests.self.bugs import all_bugs

DEPLOY = ROOT / "deploy" / "docker"
BUG = next(b for b in all_bugs() if b.id == "intensity:ridge point inverted (bandwidth / peak)")


def _engine_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not _engine_answers(),
                       reason="no Docker engine answers `docker info` (deploy/docker/start-dockerd.sh "
                              "starts one where dockerd can run)"),
]


def test_image_grades_like_the_host(tmp_path):
    """deploy/docker/check.py: build on the stand-in base, grade the reference and a planted bug
    in the container under Docker's default seccomp."""
    summary = tmp_path / "summary.json"
    proc = subprocess.run([sys.executable, str(DEPLOY / "check.py"), "--bug", BUG.id,
                           "--summary", str(summary)], capture_output=True, text=True, timeout=3000)
    print(proc.stdout)
    assert summary.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    s = json.loads(summary.read_text())
    assert s["hadolint"] == "clean", s["hadolint"]
    ref, bug = s["reference"], s["bug_result"]
    assert ref["score"] == ref["max"] > 0 and not ref["failed"], ref
    assert ref["mode"] == "0o644"
    # default seccomp: no namespaces; Landlock where the kernel has it, else the uid mode
    assert s["sandbox"].startswith(("sandbox: landlock", "sandbox: uid")), s["sandbox"]
    assert "leased unprivileged uid" in s["sandbox"], s["sandbox"]
    assert s["uid_mode"]["score"] == s["uid_mode"]["max"] > 0, s["uid_mode"]
    assert s["allowlist_attacks"]["exit"] == 0, s["allowlist_attacks"]
    assert bug["failed"] == bug["host_failed"] and bug["failed"], bug
    assert all(name.startswith(f"{BUG.problem}:") for name in bug["failed"])
    assert bug["score"] == ref["score"] - bug["lost"]
    assert proc.returncode == 0 and s["ok"], proc.stdout[-3000:]


def _pip_environment() -> tuple[list[str], list[str]]:
    """This machine's pip environment for the container: its PIP_* variables, and read-only
    mounts of the local paths they name (a wheel folder, a CA bundle)."""
    env, mounts = [], []
    for key, value in sorted(os.environ.items()):
        if not key.startswith("PIP_"):
            continue
        env += ["-e", f"{key}={value}"]
        for part in value.split():
            if part.startswith("/") and os.path.exists(part):
                mounts += ["-v", f"{part}:{part}:ro"]
    # One try per index URL: an unreachable extra index (PyTorch's, from a network that only
    # reaches a mirror) costs seconds, not minutes of retries.
    return env + ["-e", "PIP_RETRIES=0"], mounts


def test_gradescope_in_a_clean_container(tmp_path):
    """setup.sh, then run_autograder for the reference and for a planted bug, in a Debian 12
    stand-in for Gradescope's image (apt and PyPI reachable)."""
    image = subprocess.run([str(DEPLOY / "standin-base.sh"), "plain"], capture_output=True, text=True,
                           timeout=1800)
    assert image.returncode == 0, image.stderr[-3000:]
    root = tmp_path / "autograder"
    zip_path = gradescope.release_gradescope(tmp_path / "autograder.zip")
    with zipfile.ZipFile(zip_path) as zf:  # as Gradescope unpacks it: with the stored modes
        for info in zf.infolist():
            Path(zf.extract(info, root / "source")).chmod(info.external_attr >> 16 & 0o777)
    subs = tmp_path / "subs"
    shutil.copytree(REFERENCE, subs / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    BUG.build(subs / "bug")
    script = """set -e
start=$(date +%s)
cd /autograder/source && bash ./setup.sh >/tmp/setup.log 2>&1 || { tail -n 40 /tmp/setup.log; exit 1; }
echo $(( $(date +%s) - start )) >/out/setup_seconds
command -v bwrap >/dev/null || { echo "setup.sh did not install bubblewrap"; exit 1; }
cp /autograder/source/run_autograder /autograder/run_autograder
for s in reference bug; do
    rm -rf /autograder/submission /autograder/results && mkdir -p /autograder/results
    cp -r "/subs/$s" /autograder/submission
    (cd /autograder && ./run_autograder) >"/out/$s.stdout" 2>&1
    cp /autograder/results/results.json "/out/$s.json"
done
"""
    env, mounts = _pip_environment()
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(["docker", "run", "--rm", "--network", "host", *env, *mounts,
                           "-v", f"{root}:/autograder", "-v", f"{subs}:/subs:ro", "-v", f"{out}:/out",
                           image.stdout.split()[-1], "bash", "-c", script],
                          capture_output=True, text=True, timeout=3000)
    subprocess.run(["chmod", "-R", "a+rwX", str(tmp_path)])  # root-owned files from the container
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    reports = {s: json.loads((out / f"{s}.json").read_text()) for s in ("reference", "bug")}
    for results in reports.values():
        validate(results)
    ref, bug = reports["reference"], reports["bug"]
    total = sum(t["max_score"] for t in ref["tests"])
    assert ref["score"] == total > 0, [t["name"] for t in ref["tests"] if t["status"] != "passed"]
    assert ref["output"].splitlines()[1] == gradescope.GPU_NOTE
    print(f"gradescope container: setup.sh {(out / 'setup_seconds').read_text().strip()} s; "
          f"reference {ref['score']:g}/{total:g}, planted bug {bug['score']:g}/{total:g}; "
          + next(l for l in ref["output"].splitlines() if l.startswith("sandbox: ")))
    lost = {t["name"].split(": ", 1)[1] for t in bug["tests"] if t["status"] != "passed"}
    facts = run_tests(InProcess(BUG.build(tmp_path / "inproc"), package="docker_gs_bug"), gpu="skip",
                      cuda=False, time_limit=60, quiet=True, problems=[BUG.problem]).facts.values()
    assert lost == {f.title for f in facts if f.outcome != "passed"} and lost
    assert bug["score"] == total - sum(t["max_score"] for t in bug["tests"] if t["status"] != "passed")
