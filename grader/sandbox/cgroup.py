"""Memory and process limits for a sandbox as a whole: every process of it together (the zygote,
its worker, whatever the worker forked), with a cgroup of its own where root may make one.

rlimits are per process (RLIMIT_AS) or per uid (RLIMIT_NPROC): three children of one worker
held 5.4 GiB against a 3.25 GiB limit. A cgroup counts them together. This machine kind has
cgroup v1 memory and pids controllers that root may write; a default Docker container has a
read-only cgroup file system, and there the rlimits are what holds (docs/trust.md, "Limits per sandbox").

The zygote joins the group before it execs (a shell writes its own pid into ``cgroup.procs``,
then execs the command: no Python runs between fork and exec), so all it forks is counted.
"""

import os
import secrets
import time
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
# What a sandbox holds resident beyond its tests' headroom: torch's import in the zygote and the
# worker (shared pages are charged once), about 0.5 GiB with CPU torch.
BASELINE_BYTES = 1 << 30


def _own(controller: str) -> Path | None:
    """This process's cgroup folder for a v1 ``controller`` (or the v2 one, controller "")."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller and controller in names.split(",")) or (not controller and names == ""):
            base = CGROUP / controller if controller else CGROUP
            if not controller and not (base / "cgroup.controllers").exists():
                base = CGROUP / "unified"
            return base / path.lstrip("/")
    return None


class Group:
    """One sandbox's cgroup(s): ``limits`` are {file name: value}, per folder."""

    def __init__(self, folders: dict[Path, dict[str, int]]):
        self.folders = list(folders)
        self.limits = folders

    @classmethod
    def make(cls, memory_bytes: int | None, processes: int) -> "Group | None":
        """A fresh group with these limits, or None where this machine does not let us make one."""
        name = f"grader-{secrets.token_hex(6)}"
        memory = {"memory.limit_in_bytes": memory_bytes + BASELINE_BYTES} if memory_bytes else {}
        wanted = {"memory": memory, "pids": {"pids.max": processes}}
        made: dict[Path, dict[str, int]] = {}
        for controller, limits in wanted.items():
            parent = _own(controller)
            if parent is None or not (parent / "cgroup.procs").exists():
                continue
            made[parent / name] = limits
        if len(made) < len(wanted):  # v2: one folder, both controllers enabled for children
            parent = _own("")
            if parent is not None and {"memory", "pids"} <= set(_read(parent / "cgroup.subtree_control").split()):
                made = {parent / name: {"memory.max": memory_bytes + BASELINE_BYTES} if memory_bytes else {}}
                made[parent / name]["pids.max"] = processes
            else:
                return None
        group = cls(made)
        try:
            for folder, limits in made.items():
                folder.mkdir()
                for file, value in limits.items():
                    (folder / file).write_text(str(value))
                for file, value in (("memory.memsw.limit_in_bytes", limits.get("memory.limit_in_bytes")),
                                    ("memory.swap.max", 0 if "memory.max" in limits else None)):
                    if value is not None and (folder / file).exists():  # no way around it through swap
                        (folder / file).write_text(str(value))
        except OSError:
            group.close()
            return None
        return group

    def procs(self) -> list[str]:
        """The files a process writes its pid into to join the group (a template's fork does)."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def prefix(self) -> list[str]:
        """Put before a command line: the command runs inside the group, and all it starts."""
        procs = self.procs()
        script = 'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 111; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *procs, "--"]

    def peak_bytes(self) -> int | None:
        """The most memory the group held at once (v1), or now (v2)."""
        for folder in self.folders:
            for file in ("memory.max_usage_in_bytes", "memory.peak", "memory.current"):
                if (folder / file).exists():
                    return int(_read(folder / file) or 0)
        return None

    def kill(self) -> None:
        """SIGKILL every process still in the group (what the sandbox's own kill missed)."""
        for _ in range(20):
            pids = {int(p) for folder in self.folders for p in _read(folder / "cgroup.procs").split()}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            time.sleep(0.05)

    def close(self) -> None:
        """Remove the folders (their processes are gone by now)."""
        for folder in self.folders:
            try:
                os.rmdir(folder)
            except OSError:
                pass


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
