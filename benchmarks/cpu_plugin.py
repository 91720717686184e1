"""A pytest plugin that records each test's CPU time, its own process's and every process it
started (graders, batch jobs, sandboxes, their templates), for `suite_time.py --cpu`.

Wall time on a shared 2-core machine moves with whatever else runs; CPU time moves with what
the tests do. Each pytest process (each xdist worker) puts itself in a cpuacct cgroup of its
own, which every process it starts inherits, and reads the group's total before and after each
test. Where no cgroup can be made (not root, a read-only cgroup file system), it records nothing
and says so once in the folder.

    SUITE_CPU_DIR=DIR python -m pytest -p cpu_plugin ...   (benchmarks/ on PYTHONPATH)

writes DIR/<worker>.jsonl: one {"id", "cpu_s", "wall_s"} per test.
"""

import json
import os
import time
from pathlib import Path

import pytest

CPUACCT = Path("/sys/fs/cgroup/cpuacct")   # cgroup v1 (this machine kind); v2 below
UNIFIED = Path("/sys/fs/cgroup")


class _Group:
    """This process's own CPU-accounting group: ``usage()`` in seconds, every descendant counted."""

    def __init__(self, name: str):
        if (CPUACCT / "cpuacct.usage").exists():
            self.path, self.read = CPUACCT / name, self._v1
        elif (UNIFIED / "cgroup.controllers").exists():
            self.path, self.read = UNIFIED / name, self._v2
        else:
            raise OSError("no cpuacct (v1) or unified (v2) cgroup file system")
        self.path.mkdir(exist_ok=True)
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def leave(self) -> None:
        """Back to the parent group, and this one removed (best effort: a process it started
        may still be ending; an empty group left behind costs nothing)."""
        try:
            (self.path.parent / "cgroup.procs").write_text(str(os.getpid()))
            self.path.rmdir()
        except OSError:
            pass

    def _v1(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def _v2(self) -> float:
        usage = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(usage["usage_usec"]) / 1e6


class CpuPerTest:
    def __init__(self, folder: Path):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.out = open(folder / f"{worker}.jsonl", "a")
        try:
            self.group = _Group(f"suite-cpu-{worker}-{os.getpid()}")
        except OSError as e:
            self.group = None
            (folder / "unmeasured.txt").write_text(f"no CPU figures: {e}\n")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if self.group is None:
            yield
            return
        cpu, wall = self.group.read(), time.monotonic()
        yield
        row = {"id": item.nodeid.split("@")[0], "cpu_s": round(self.group.read() - cpu, 3),
               "wall_s": round(time.monotonic() - wall, 3)}
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()


    def pytest_unconfigure(self, config):
        self.out.close()
        if self.group is not None:
            self.group.leave()


def pytest_configure(config):
    folder = os.environ.get("SUITE_CPU_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        config.pluginmanager.register(CpuPerTest(Path(folder)), "cpu_per_test")


def summary(folder: Path, top: int = 8) -> dict:
    """The suite's CPU seconds in all, and the test files that spent the most; {"unmeasured": why}
    where the plugin could make no cgroup."""
    if (folder / "unmeasured.txt").exists():
        return {"unmeasured": (folder / "unmeasured.txt").read_text().strip()}
    rows = [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.read_text().splitlines()]
    by_file: dict[str, float] = {}
    for r in rows:
        file = r["id"].split("::")[0]
        by_file[file] = by_file.get(file, 0.0) + r["cpu_s"]
    dearest = sorted(by_file.items(), key=lambda kv: -kv[1])[:top]
    return {"cpu_s": round(sum(r["cpu_s"] for r in rows), 1), "tests_measured": len(rows),
            "dearest_files": {k: round(v, 1) for k, v in dearest}}
