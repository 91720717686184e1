"""The project's own suite: tests marked ``docker`` build images and run containers for minutes;
a plain run reports them skipped with the way to run them, `-m docker` runs them."""

import pytest

DOCKER_HOW = ("builds images and runs containers for minutes: start an engine with "
              "deploy/docker/start-dockerd.sh, then run `python -m pytest -m docker`")


def pytest_collection_modifyitems(config, items):
    if "docker" in (config.getoption("markexpr") or ""):
        return
    for item in items:
        if item.get_closest_marker("docker"):
            item.add_marker(pytest.mark.skip(reason=DOCKER_HOW))
