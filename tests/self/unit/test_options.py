"""One grading run's options (grader/options.py): checked in one place, without torch, with one
message per mistake, the same from the command line, `grade` and `batch`; a batch job gets
them back from its JSON config unchanged."""

import dataclasses
import glob
import json
import os
import math
import subprocess
import sys
import time

import pytest

from grader.batch import scheduler
from grader.batch.scheduler import _Job, batch
from grader.cli import main
from grader.grade import check_options, grade
from grader.options import OptionError, Options, problem_names
from grader.paths import REFERENCE, ROOT
from seam.problems import PROBLEMS

KNOWN = ", ".join(PROBLEMS)
SECONDS = "must be a positive number of seconds, not "

# (the fields given to Options, the option the command line names, the one-line message)
MISTAKES = [
    ({"problems": ["nope"]}, "--only", f"unknown problem(s) nope; known: {KNOWN}"),
    ({"problems": "tensors,nope,zz,nope"}, "--only", f"unknown problem(s) nope, zz; known: {KNOWN}"),
    ({"problems": []}, "--only", f"give at least one problem: {','.join(PROBLEMS)}"),
    ({"problems": " , "}, "--only", f"give at least one problem: {','.join(PROBLEMS)}"),
    ({"time_limit": 0}, "--time-limit", f"--time-limit {SECONDS}0"),
    ({"time_limit": "0"}, "--time-limit", f"--time-limit {SECONDS}'0'"),
    ({"time_limit": -5.0}, "--time-limit", f"--time-limit {SECONDS}-5.0"),
    ({"time_limit": math.inf}, "--time-limit", f"--time-limit {SECONDS}inf"),
    ({"time_limit": "inf"}, "--time-limit", f"--time-limit {SECONDS}'inf'"),
    ({"time_limit": math.nan}, "--time-limit", f"--time-limit {SECONDS}nan"),
    ({"time_limit": "nan"}, "--time-limit", f"--time-limit {SECONDS}'nan'"),
    ({"time_limit": "soon"}, "--time-limit", "--time-limit 'soon' is not a number of seconds"),
    ({"time_limit": None}, "--time-limit", "--time-limit None is not a number of seconds"),
    ({"time_limit": True}, "--time-limit", "--time-limit True is not a number of seconds"),
    ({"gpu": "maybe"}, "--gpu", "--gpu must be one of auto, require, skip, only, not 'maybe'"),
    ({"isolation": "chroot"}, "--isolation",
     "--isolation must be one of auto, bwrap, namespaces, landlock, uid, process, not 'chroot'"),
]


@pytest.mark.parametrize("fields, option, message", MISTAKES)
def test_each_mistake_is_one_line_naming_it(fields, option, message):
    with pytest.raises(OptionError) as e:
        Options(**fields)
    assert isinstance(e.value, ValueError)
    assert str(e.value) == message and e.value.option == option and "\n" not in message
    assert message.endswith(e.value.reason)  # what the command line says after "argument --x: "


def test_options_are_normalised_once_when_made():
    o = Options(problems="optim, training,optim", time_limit="12.5")
    assert o == Options(gpu="auto", problems=["optim", "training"], time_limit=12.5, isolation="auto")
    assert Options().problems is None and Options().time_limit == 30.0
    assert Options.of(o, gpu="skip") == Options(gpu="skip", problems=["optim", "training"], time_limit=12.5)
    assert Options.of(None, gpu="skip") == Options(gpu="skip")
    with pytest.raises(OptionError, match="unknown problem"):
        Options.of(o, problems=["nope"])                                # a change is checked too
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.gpu = "skip"


def test_the_problem_names_are_the_registrys():
    assert problem_names() == tuple(PROBLEMS)


def test_importing_and_checking_the_options_imports_no_torch():
    """batch's parent checks its options before any grading: no torch for that (the problem
    names come from seam/problems.py; the seam package imports torch only for its Impl)."""
    code = ("import grader.options as o, sys; o.Options(gpu='skip', problems=['optim'], time_limit='5');"
            "print('torch' in sys.modules, ','.join(o.problem_names()))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", ",".join(PROBLEMS)]


def test_the_machine_check_imports_torch_only_where_a_gpu_driver_is(monkeypatch, tmp_path):
    """batch's parent settles the machine's part too (grader/machine.py) before starting its jobs:
    on a machine with no GPU device node that takes no torch, and says "no CUDA" as torch would;
    where a node is, torch is asked."""
    from grader import gpu as gpu_info
    code = ("import grader.machine as m, grader.options as o, sys;"
            "s, p = m.check_options(o.Options(gpu='auto', problems=['optim']), batch=True);"
            "print('torch' in sys.modules, p is None and s.gpu_name is None)")
    if any(glob.glob(n) for n in gpu_info.DRIVER_NODES):
        pytest.skip("this machine has a GPU device node: torch is asked, as it must be")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != gpu_info.FAKE})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]
    import torch
    node = tmp_path / "nvidiactl"
    node.touch()
    monkeypatch.setattr(gpu_info, "DRIVER_NODES", (str(node),))   # a node: torch answers
    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: asked.append(1) or False)
    assert gpu_info.device_name() is None and gpu_info.device_uuid() is None and len(asked) == 2


def cli_line(command: str, option: str, reason: str) -> str:
    return f"python -m grader {command}: error: argument {option}: {reason} (see python -m grader {command} --help)"


# (the fields given to grade and batch, the same mistake typed on the command line)
TYPED = [
    ({"problems": "nope"}, ["--only", "nope"]),
    ({"problems": "tensors,nope,zz,nope"}, ["--only", "tensors,nope,zz,nope"]),
    ({"problems": ""}, ["--only", ""]),
    ({"problems": " , "}, ["--only", " , "]),
    ({"time_limit": "0"}, ["--time-limit", "0"]),
    ({"time_limit": "-5"}, ["--time-limit", "-5"]),
    ({"time_limit": "inf"}, ["--time-limit", "inf"]),
    ({"time_limit": "1e999"}, ["--time-limit", "1e999"]),
    ({"time_limit": "nan"}, ["--time-limit", "nan"]),
    ({"time_limit": "soon"}, ["--time-limit", "soon"]),
    ({"gpu": "maybe"}, ["--gpu", "maybe"]),
    ({"isolation": "chroot"}, ["--isolation", "chroot"]),
]


@pytest.mark.parametrize("fields, typed", TYPED)
def test_the_command_line_grade_and_batch_say_the_same(tmp_path, capsys, fields, typed):
    """One mistake, one text: the command line frames it as argparse does, grade and batch
    print it as is; none of them writes anything."""
    with pytest.raises(OptionError) as e:
        Options(**fields)
    (tmp_path / "class" / "ada").mkdir(parents=True)
    out, batch_out = tmp_path / "r.json", tmp_path / "o"
    for command, args in (("grade", [str(REFERENCE), "--out", str(out)]),
                          ("batch", [str(tmp_path / "class"), "--out", str(batch_out)])):
        with pytest.raises(SystemExit) as exit_:
            main([command, *args, *typed])
        err = capsys.readouterr()
        assert exit_.value.code == 2 and err.out == ""
        assert err.err == cli_line(command, e.value.option, e.value.reason) + "\n"
    assert grade(REFERENCE, out, quiet=True, **fields) == 2
    assert capsys.readouterr().err == f"error: {e.value}\n"
    assert batch(tmp_path / "class", batch_out, **fields) == 2
    assert capsys.readouterr().err == f"error: {e.value}\n"
    assert not out.exists() and not batch_out.exists()


def test_grade_and_batch_take_the_command_lines_options(tmp_path, capsys):
    """The Options object itself, with a field changed by keyword (checked again)."""
    (tmp_path / "class" / "ada").mkdir(parents=True)
    assert grade(REFERENCE, tmp_path / "r.json", Options(gpu="skip"), quiet=True, time_limit=0) == 2
    assert batch(tmp_path / "class", tmp_path / "o", Options(gpu="skip"), problems=["nope"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: --time-limit {SECONDS}0", f"error: unknown problem(s) nope; known: {KNOWN}"]


def test_check_options_is_the_machine_part(monkeypatch):
    from grader import gpu as gpu_info
    monkeypatch.setattr(gpu_info, "device_name", lambda: None)
    options = Options(gpu="skip", problems=["optim"], time_limit=7)
    setup, problem = check_options(options)
    assert problem is None and setup.options is options
    assert (setup.gpu, setup.problems, setup.time_limit, setup.limits.time_per_test) == ("skip", ["optim"], 7.0, 7.0)
    setup, problem = check_options(Options(gpu="only"))
    assert setup is None and problem.startswith("--gpu only, but CUDA is not available here")


def test_the_job_config_carries_the_options_round_trip(tmp_path, monkeypatch):
    """batch hands its Options to each job as a dict in the JSON config; the job makes the same
    Options of it."""
    options = Options(gpu="skip", problems=["intensity", "optim"], time_limit="12", isolation="auto")
    assert Options(**json.loads(json.dumps(options.as_dict()))) == options
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "intensity.py").write_text((REFERENCE / "intensity.py").read_text())
    seen = {}

    def no_jobs(tasks, cfg, jobs, out):
        seen.update(json.loads(json.dumps(cfg)))
        return 2

    monkeypatch.setattr(scheduler, "_run", no_jobs)
    for var in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX"):
        monkeypatch.delenv(var, raising=False)
    assert batch(tmp_path / "class", tmp_path / "o", options) == 2
    assert Options(**seen["options"]) == options and set(seen) == {"options", "hide", "parent"} and seen["parent"] == os.getpid()
    assert json.loads((tmp_path / "o" / "batch.json").read_text())["passes"] == [options.the_pass]


def test_a_job_given_bad_options_says_so_and_ends(tmp_path):
    """The job checks its config by the same rules (it is only JSON): one fatal line back, before
    it imports torch (a torch that cannot be imported is first on its path here)."""
    cfg = {"options": {**Options().as_dict(), "time_limit": 0}, "hide": [str(tmp_path)]}
    fake = tmp_path / "no-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the job imported torch before refusing its options')\n")
    job = _Job(0, cfg, tmp_path, env={**os.environ, "PYTHONPATH": str(fake.parent)})
    answers, deadline = [], time.monotonic() + 300
    try:
        while not answers and time.monotonic() < deadline:
            got = job.replies()
            if got is None:
                break
            answers += got
    finally:
        job.stop()
    assert answers == [{"fatal": f"--time-limit {SECONDS}0"}], (tmp_path / "job0.log").read_text()[-2000:]
    assert job.proc.returncode == 2


def test_a_batch_s_jobs_share_the_cores_and_sleep_when_idle():
    """Each job's torch gets its share of the cores and idle threads that sleep (the sandboxes
    keep OMP_WAIT_POLICY: tests/self/grading/test_template.py); what the TA set is kept."""
    from grader.batch.scheduler import job_env
    cores = len(os.sched_getaffinity(0))
    assert job_env(1, {}) == {"OMP_NUM_THREADS": str(cores), "OMP_WAIT_POLICY": "PASSIVE"}
    assert job_env(cores * 4, {"PATH": "/bin"}) == {"PATH": "/bin", "OMP_NUM_THREADS": "1",
                                                    "OMP_WAIT_POLICY": "PASSIVE"}
    mine = {"OMP_NUM_THREADS": "7", "OMP_WAIT_POLICY": "ACTIVE"}
    assert job_env(2, mine) == mine


def test_each_rule_is_written_once():
    """The messages live in grader/options.py alone (the command line's types call its checks)."""
    texts = {p: p.read_text() for p in (ROOT / "grader").rglob("*.py")}
    for needle in ("unknown problem", "positive number of seconds", "must be a positive", "give at least one problem"):
        where = [p.relative_to(ROOT).as_posix() for p, t in texts.items() for _ in range(t.count(needle))]
        assert where == ["grader/options.py"], (needle, where)
