"""Each isolation mode's decisions live on its ``Isolation`` (grader/sandbox/isolation.py): the
command the zygote starts under, what the worker sees and is told, whether a uid is leased,
whether the scratch is a folder to measure. The zygote and the sandbox ask it and never test a
mode's name, so a new mode touches only isolation.py and the scripts it configures (zygote_server.py,
worker.py). Pure decisions: nothing is
started here, and no mode need work on this machine."""

import ast
import contextlib
import sys
from pathlib import Path

import pytest

from grader.sandbox import isolation
from grader.sandbox.isolation import MODES, TRAITS, Isolation
from grader.sandbox.launch import launch
from grader.sandbox.view import INSIDE, Layout, python_paths
from seam import Impl

SANDBOX = Path(isolation.__file__).parent
MAY_NAME_MODES = {"isolation.py"}  # the modes themselves

# mode -> (launcher, namespaces, pivot, landlock allow-list, warns of exposed folders)
EXPECTED = {
    "bwrap": ("bwrap", True, False, False, False),
    "namespaces": ("unshare", True, True, False, False),
    "landlock": (None, False, False, True, False),
    "uid": (None, False, False, False, True),
    "process": (None, False, False, False, False),
}


def test_every_mode_has_its_decisions():
    assert tuple(TRAITS) == MODES == tuple(EXPECTED)


@pytest.fixture
def layout(tmp_path):
    for name in ("lib", "inbox", "work"):
        (tmp_path / name).mkdir()
    return Layout(root=tmp_path, lib=tmp_path / "lib", inbox=tmp_path / "inbox", work=tmp_path / "work",
                  secret=(str(tmp_path / "checkout"),), python=(sys.executable, python_paths()),
                  disk_bytes=1 << 20, cuda=False)


@pytest.mark.parametrize("drop", [True, False], ids=["root", "not-root"])
@pytest.mark.parametrize("mode", MODES)
def test_what_each_mode_decides(mode, drop):
    launcher, namespaces, pivot, landlock, warns = EXPECTED[mode]
    iso = Isolation(mode, drop=drop, user_ns=namespaces and not drop)
    assert iso.launcher == launcher
    assert iso.namespaces is namespaces and iso.pid_namespace is namespaces
    assert iso.pivot is pivot
    assert iso.traits.landlock is landlock and iso.traits.warns_exposed is warns
    assert iso.watches_disk is not namespaces      # a folder on the grader's disk, or a tmpfs
    assert iso.leases_uid is drop                  # a root grader never runs a worker as root
    assert iso.by_group is (drop and not namespaces)
    assert iso.sweeps_uid is (drop and not namespaces)
    # it may write the shared temporary folders where nothing holds it to its scratch; what its
    # leased uid left there is swept, and the grader's own uid's could not be
    assert iso.writes_outside is (not namespaces and not landlock)
    assert iso.sweeps_outside is (drop and not namespaces and not landlock)
    assert iso.leaves_behind is (not drop and not namespaces and not landlock)


@pytest.mark.parametrize("mode", MODES)
def test_how_each_mode_starts_its_zygote(mode, layout, monkeypatch):
    launcher, namespaces, pivot, landlock, _ = EXPECTED[mode]
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)
    started = launch(Isolation(mode, drop=True), layout)
    assert (started.prefix[0] if started.prefix else None) == launcher
    assert started.prefix[-1:] == (["--"] if launcher else [])
    inside = {"lib": str(INSIDE / "lib"), "submission": str(INSIDE / "submission"), "work": str(INSIDE / "work")}
    outside = {"lib": str(layout.lib), "submission": str(layout.inbox), "work": str(layout.work)}
    where = inside if namespaces else outside
    assert {k: started.config[k] for k in where} == where
    # bwrap starts the zygote inside the view it built; unshare's zygote builds it after it started
    assert started.script == (f"{INSIDE}/lib/zygote_server.py" if launcher == "bwrap"
                              else f"{layout.lib}/zygote_server.py")
    assert started.cwd == ("/" if namespaces else str(layout.work))
    config = started.config
    assert "mode" not in config                      # the worker is told decisions, never the name
    assert config["pivot"] is pivot and config["pid_ns"] is namespaces
    assert ("view" in config and "newroot" in config) is pivot
    if pivot:
        assert Path(config["newroot"]).is_dir()
        assert ("tmpfs", str(INSIDE / "work"), layout.disk_bytes, "0777") in [tuple(v) for v in config["view"]]
    assert (config["landlock"] is not None) is landlock
    assert config["shm"] == ("/dev/shm" if namespaces else None)  # its own tmpfs, emptied after each worker
    if landlock:
        assert config["landlock"]["write"] == [str(layout.work)]
        assert not any(r == layout.secret[0] for r in config["landlock"]["read"])


@pytest.mark.parametrize("mode", MODES)
def test_only_a_mode_that_reads_the_machine_warns_of_exposed_folders(mode):
    iso = Isolation(mode, drop=True)
    text = iso.describe(secret=["/usr"])  # world-readable everywhere
    assert text.startswith(mode)
    assert ("WARNING: readable by the worker uid: /usr" in text) is EXPECTED[mode][4]
    assert "WARNING" not in iso.describe()
    # the report says what the GPU's filter lets through (seccomp.program's unix_sockets)
    assert "no sockets," in iso.describe() and "no sockets but Unix ones" in iso.describe(cuda=True)


@pytest.mark.parametrize("root", [True, False], ids=["root", "not-root"])
def test_auto_takes_no_mode_that_leaves_files_behind_for_a_batch(root, monkeypatch):
    """As the grader's own uid, the process mode's worker could leave files in /tmp for the next
    student, and no sweep can tell them from the grader's: ``auto`` skips it for a batch and says
    why; a single grade, or the TA's forced choice, still takes it."""
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0 if root else 1000)
    monkeypatch.setattr(isolation, "_unusable", lambda mode, r: None if mode == "process" else "not here")
    assert Isolation.detect().mode == "process"
    assert Isolation.detect("process", batch=True).mode == "process"
    if root:
        assert Isolation.detect(batch=True).mode == "process"
    else:
        with pytest.raises(isolation.IsolationUnavailable, match="no process: in a batch its worker"):
            Isolation.detect(batch=True)


@pytest.mark.parametrize("mode", MODES)
def test_a_uid_is_leased_only_where_the_mode_says(mode, monkeypatch):
    leases = []
    monkeypatch.setattr(isolation, "UidLease", lambda: leases.append(1) or "lease")
    assert Isolation(mode, drop=True).lease() == "lease"
    assert Isolation(mode, drop=False).lease() is None
    assert leases == [1]


# -- the architecture rule ----------------------------------------------------------------------
def _mode_names_compared(tree: ast.AST) -> list[int]:
    """Lines where a mode's name is compared (==, !=, in, a match case), or a ``.mode`` read."""
    def names(operand) -> list:  # a literal, or a tuple/list/set of them ("mode in (...)")
        items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
        return [c.value for c in items if isinstance(c, ast.Constant)]

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if any(name in MODES for operand in [node.left, *node.comparators] for name in names(operand)):
                lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant) \
                and node.value.value in MODES:
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "mode":
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_rule_sees_a_branch_on_a_mode():
    assert _mode_names_compared(ast.parse('if iso.mode in ("bwrap", "namespaces"):\n    pass\n')) == [1]
    assert _mode_names_compared(ast.parse('if cfg["mode"] == "landlock":\n    pass\n')) == [1]
    assert _mode_names_compared(ast.parse('match m:\n    case "uid":\n        pass\n')) == [2]
    assert _mode_names_compared(ast.parse('cfg = {"uid": 1}\nok = cfg["uid"] is None\n')) == []


def test_only_isolation_names_a_mode():
    """Zygote, Sandbox, the scripts and the rest ask the Isolation; none branches on a mode's name."""
    found = {}
    for path in sorted(SANDBOX.glob("*.py")):
        if path.name in MAY_NAME_MODES:
            continue
        lines = _mode_names_compared(ast.parse(path.read_text(), str(path)))
        if lines:
            found[path.name] = lines
    assert not found, f"a mode's name decides outside isolation.py: {found}"


@pytest.mark.parametrize("script", ["zygote_server.py", "worker.py"])
def test_the_zygote_and_the_worker_are_told_decisions_not_the_mode(script):
    source = (SANDBOX / script).read_text()
    assert 'cfg["mode"]' not in source and "cfg['mode']" not in source
    assert _mode_names_compared(ast.parse(source)) == []


# -- the deadline's hand-over ---------------------------------------------------------------------
def test_an_impl_takes_the_deadline_for_a_block():
    """The plugin hands each test's time limit over with ``deadline_for``: no attribute that the
    plugin and the sandbox both write."""
    assert isinstance(Impl().deadline_for(1.0), contextlib.AbstractContextManager)
    assert "deadline" not in vars(Impl)
    from grader.sandbox.sandbox import Sandbox
    box = Sandbox.__new__(Sandbox)
    box._deadline = None
    with box.deadline_for(30.0):
        assert 29 < box._deadline - __import__("time").monotonic() <= 30
    assert box._deadline is None
