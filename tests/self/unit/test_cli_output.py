"""The TA's command line: a mistake is exit 2 and one line (never a report that charges the
student), success says so, and every subcommand's --help ends with an example."""

import subprocess
import sys

import pytest

from grader.cli import build_parser, main
from grader.paths import REFERENCE, ROOT


def grader(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("option", [("--time-limit", "0"), ("--time-limit", "-5"), ("--time-limit", "nan"),
                                    ("--time-limit", "soon"), ("--only", ""), ("--only", ","),
                                    ("--only", "tensors,nope")])
def test_bad_grade_options_are_exit_2_one_line_no_report(tmp_path, capsys, option):
    out = tmp_path / "results.json"
    with pytest.raises(SystemExit) as exit_:
        main(["grade", str(REFERENCE), "--out", str(out), *option])
    err = capsys.readouterr()
    assert exit_.value.code == 2 and err.out == "" and err.err.count("\n") == 1, err.err
    assert err.err.startswith("python -m grader grade: error: argument " + option[0])
    assert not out.exists()


def test_the_real_command_line_says_the_same(tmp_path):
    run = grader("grade", str(REFERENCE), "--out", str(tmp_path / "r.json"), "--time-limit", "0")
    assert run.returncode == 2 and run.stdout == "" and run.stderr.count("\n") == 1, run.stderr


def test_release_into_a_non_empty_folder_is_one_line(tmp_path):
    (tmp_path / "work.py").write_text("a student's work\n")
    run = grader("release", "--student", str(tmp_path))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1 and "is not empty" in run.stderr, run.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["work.py"]


def subcommands():
    parser = build_parser()
    [action] = [a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)]
    return action.choices


def test_every_subcommand_help_shows_an_example():
    commands = subcommands()
    assert {"grade", "snapshots", "rubric", "release"} <= set(commands)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "example" in text.lower() and f"python -m grader {name}" in text.split("example")[-1], name
    assert "example" in build_parser().format_help()


def test_the_command_line_and_the_commands_that_grade_nothing_start_without_torch():
    """--help, merge, report and release read files and write files: no torch import (2 s) for
    them; the registry comes from seam/problems.py, the rule lines too (seam/__init__.py imports
    seam/impl.py, and torch, only when Impl is asked for)."""
    code = ("import sys, grader.cli as c, grader.batch.merge, grader.classreport, grader.release;"
            "c.build_parser(); print('torch' in sys.modules); from seam import InProcess; print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]
    run = grader("merge", "--help")
    assert run.returncode == 0 and "example" in run.stdout

def test_the_handout_points_table_says_points():
    from grader.rubric import handout_table, render
    header = render([]).splitlines()[0]
    assert "public points" in header and "hidden points" in header and "tests" not in header
    assert handout_table().splitlines()[0] == header
