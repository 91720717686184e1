"""How a sandbox's zygote is started: the command it runs under (bwrap's, unshare's, or none), the
worker script where the starting process finds it, and the part of the worker's config its mode
decides (build a root by pivot_root, a PID namespace, Landlock's rules). The mode's decisions are
``Isolation``'s (isolation.py); this module only turns them into a command line."""

import dataclasses
from pathlib import Path

from .view import Layout, landlock_rules, view


@dataclasses.dataclass(frozen=True)
class Launch:
    """How a zygote is started: ``prefix + [python, "-I", script, json(config + the zygote's)]``."""
    prefix: list[str]   # the command it runs under (bwrap's, unshare's), or none
    script: str         # zygote_server.py, where the starting process finds it
    cwd: str
    config: dict        # the mode's part of the worker's config
    entry: dict         # what a template's fork does itself instead of ``prefix`` (spawn.py)


def launch(isolation, layout: Layout) -> Launch:
    """How a zygote of ``isolation``'s mode (an ``Isolation``: isolation.py, which imports this
    module) is started over ``layout``."""
    where = isolation.paths(layout)
    return Launch(prefix=isolation.prefix(layout), script=_script(isolation, layout, where),
                  cwd="/" if isolation.namespaces else where["work"],
                  config={**where, **worker_config(isolation, layout, where)},
                  entry={"unshare": isolation.launcher == "unshare", "user_ns": isolation.user_ns})


def _script(isolation, layout: Layout, where: dict) -> str:
    """zygote_server.py: inside the view where the launcher built it first (bwrap), else on the
    grader's side (the zygote of a pivot builds its view after it started)."""
    return str(layout.lib / "zygote_server.py") if isolation.pivot else f"{where['lib']}/zygote_server.py"


def worker_config(isolation, layout: Layout, where: dict) -> dict:
    """What the zygote and its workers (zygote_server.py, worker.py) are told instead of the mode's name: whether to build its root
    (``pivot``, with the ``view`` and an empty ``newroot`` folder), whether kill(-1) reaches
    only the sandbox (``pid_ns``), Landlock's allow-list (``landlock``, or None), and the
    sandbox's own /dev/shm to empty after each worker (``shm``, or None)."""
    # ``shm``: the view's own /dev/shm (a tmpfs of the sandbox's), emptied with the scratch after
    # each worker: a zygote that bwrap started serves a whole batch job, student after student
    config = {"pivot": isolation.pivot, "pid_ns": isolation.pid_namespace, "landlock": None,
              "shm": "/dev/shm" if isolation.namespaces else None}
    if isolation.pivot:
        newroot = layout.root / "newroot"
        newroot.mkdir(exist_ok=True)
        config.update(view=view(layout), newroot=str(newroot))
    if isolation.traits.landlock:
        config["landlock"] = landlock_rules(layout, where)
    return config


def bwrap_prefix(mounts: list[tuple[str, ...]], root: bool) -> list[str]:
    """bwrap's command line: ``mounts`` are (op, *args) for ro-bind, symlink, tmpfs ... in order."""
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--proc", "/proc",
           "--dev", "/dev"]
    if root:  # each child drops to the uid itself; the zygote kills what it leaves behind
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL"]
    else:
        cmd += ["--unshare-user"]
    made = {"/"}
    for op, *args in mounts:
        dest = args[0] if op == "tmpfs" else args[1]
        for parent in reversed(Path(dest).parents):  # bwrap would make them 0700: the worker
            if str(parent) not in made:              # could not reach what is bound below
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
        if op == "tmpfs":   # ("tmpfs", path, size_bytes, perms)
            cmd += ["--perms", args[2], "--size", str(args[1]), "--tmpfs", args[0]]
        else:
            cmd += [f"--{op}", *args]
    return cmd + ["--"]


def unshare_prefix(user_ns: bool) -> list[str]:
    # (no --kill-child: it sometimes fails in util-linux with "sigprocmask unblock failed";
    # the worker sets its own parent-death signal, and the sandbox kills the namespace's init)
    flags = ["unshare", "--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--mount-proc"]
    return flags + (["--user", "--map-root-user"] if user_ns else []) + ["--"]
