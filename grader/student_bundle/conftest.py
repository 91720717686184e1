"""The assignment's top folder. pytest runs from here: its settings (pyproject.toml) find the
public tests in tests/public and the code in student_stubs/. Started from another folder (say
student_stubs/), it would find no tests and say nothing useful; this says where to run it."""

import pytest


def pytest_configure(config):
    start, top = config.invocation_params.dir, config.rootpath
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR and start != top \
            and not start.is_relative_to(top / "tests"):
        raise pytest.UsageError(f"run pytest from the assignment's top folder: "
                                f"cd {top} && python -m pytest")
