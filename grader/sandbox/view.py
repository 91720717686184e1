"""What a sandbox's worker may see: the Python it runs on, the system's libraries, its lib and its
submission, its scratch, and never the grader's secrets (the checkout, the output folders). Read
by the modes (isolation.py) and the launch (launch.py): a namespaced worker's whole file system
(``view``), Landlock's allow-list (``landlock_rules``), and the hard-linked Python a leased uid
runs where root's is hidden."""

import dataclasses
import hashlib
import importlib.util
import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

INSIDE = Path("/sandbox")   # where lib/, submission/ and work/ appear in a namespaced view
SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32",
               "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
PROBED = ("torch", "numpy", "jaxtyping", "beartype", "einops")  # packages the worker imports
DEVICES = ("null", "zero", "full", "random", "urandom")  # the device nodes every worker opens (zygote_server.py's too)


@dataclasses.dataclass(frozen=True)
class Layout:
    """A zygote's folders on the grader's side, and what its worker must never see."""
    root: Path                      # the zygote's folder (0711, root's)
    lib: Path                       # the seam and the worker script
    inbox: Path                     # the current submission's modules
    work: Path                      # the scratch
    secret: tuple[str, ...]         # the checkout and the output folders
    python: tuple[str, list[str]]   # (the interpreter, the folders it reads): Isolation.python()
    disk_bytes: int                 # the scratch's size, where it is a tmpfs
    cuda: bool                      # the GPU's device nodes are let through


LINKED = Path("/var/lib/grader-python")  # hard-linked trees of a hidden Python, root's


def worker_python(namespaces: bool) -> tuple[str, list[str]]:
    """(the interpreter a worker runs, the folders it reads): this one, or, outside a namespace
    where a leased uid cannot read this one, its hard-linked tree (``linked_python``)."""
    if namespaces or os.geteuid() != 0 or not _python_hidden():
        return sys.executable, python_paths()
    tree, images = linked_python()
    paths = [str(tree)] + [p for p in python_paths() if not any(_inside(p, s) for s in images)]
    return image_of(_executable(), images) or sys.executable, paths


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def image_of(path: str, images: dict[str, Path]) -> str | None:
    """Where ``path`` (a real path inside one of the mirrored folders) lies in the tree, or None."""
    for source, image in images.items():
        if _inside(path, source):
            return str(image / os.path.relpath(path, source))
    return None


def _executable() -> str:
    """The interpreter as the worker must name it: its folder's real path, its own name (a venv's
    bin/python is a link to its base's; named through the venv, it finds the venv's pyvenv.cfg)."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def _mirrored(paths: list[str]) -> list[str]:
    """The Python folders the tree mirrors: those a leased uid cannot reach, and with them the
    venv this Python runs in (its pyvenv.cfg and bin/python name its base by path, and must name
    the base's image instead), wherever the venv lies."""
    hidden = [p for p in paths if unreadable_by_other([p])]
    if not hidden:
        return []
    venv = os.path.realpath(sys.prefix) if sys.prefix != sys.base_prefix else None
    extra = [p for p in paths if venv and _inside(venv, p) and p not in hidden]
    return sorted(hidden + extra)


def _site_dirs() -> list[str]:
    """The site-packages folders of this Python and of its base (a venv's base keeps its own)."""
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    found = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | {base["purelib"], base["platlib"]}
    found |= set(site.getsitepackages())
    return sorted(os.path.realpath(p) for p in found if p and os.path.isdir(p))


def linked_python() -> tuple[Path, dict[str, Path]]:
    """(a tree of hard links to this Python, made once per machine and version of its packages,
    outside root's home: the same files, readable as their modes say; {each folder it mirrors:
    its image in the tree}). A venv is mirrored with its base, each its own image in the tree,
    and what names the base by path (pyvenv.cfg's ``home``, bin/python's link, any absolute link)
    is rewritten to name the base's image: a new file, never the hard-linked original. OSError
    where it cannot be made (another file system)."""
    sources = _mirrored(python_paths())
    if not sources:
        raise OSError("no Python folder is hidden from other uids")
    stamp = ["tree 2"]
    for source in sources:
        stamp.append(source)
        for site_dir in (d for d in _site_dirs() if _inside(d, source)):
            stamp += [site_dir, str(os.stat(site_dir).st_mtime_ns), *sorted(os.listdir(site_dir))]
    key = hashlib.sha256("\0".join(stamp).encode()).hexdigest()[:16]
    tree = LINKED / key
    names = {source: f"{i}-{os.path.basename(source) or 'root'}" for i, source in enumerate(sources)}
    images = {source: tree / name for source, name in names.items()}
    if not tree.exists():
        LINKED.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = os.lstat(LINKED)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise OSError(f"{LINKED} is not root's alone; remove it")
        part = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=LINKED))
        os.chmod(part, 0o755)
        try:
            (part / "tree").mkdir(mode=0o755)
            for source, name in names.items():
                done = subprocess.run(["cp", "-al", source, str(part / "tree" / name)],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    raise OSError((done.stderr.strip().splitlines() or ["cp -al failed"])[-1])
            _retarget(part / "tree", {s: part / "tree" / n for s, n in names.items()}, images)
            try:
                os.rename(part / "tree", tree)  # atomic: a concurrent grader made it or we did
            except OSError:
                pass
        finally:
            shutil.rmtree(part, ignore_errors=True)
    if unreadable_by_other([str(tree)]):
        raise OSError(f"{tree} is not readable by other uids")
    return tree, images


def _retarget(top: Path, staged: dict[str, Path], images: dict[str, Path]) -> None:
    """In the staged tree: each link that reaches a mirrored folder from outside itself (an
    absolute link, a venv's bin/python) made to reach that folder's image, and each venv's
    pyvenv.cfg made to name its base's image. Each is replaced by a new file or link: the hard
    links share their inode with the original Python, which must stay as it is."""
    for source, where in staged.items():
        for folder, dirs, files in os.walk(where):
            for name in dirs + files:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    continue
                link = os.readlink(path)
                original = os.path.join(source, os.path.relpath(folder, where))
                target = os.path.normpath(os.path.join(original, link))
                image = image_of(target, images)
                if image and (os.path.isabs(link) or not _inside(target, source)):
                    os.unlink(path)
                    os.symlink(image, path)
        cfg = where / "pyvenv.cfg"
        if cfg.is_file() and not cfg.is_symlink():
            lines = []
            for line in cfg.read_text().splitlines():
                name, sep, value = line.partition("=")
                image = image_of(os.path.realpath(value.strip()), images) if sep else None
                lines.append(f"{name.strip()} = {image}" if image and name.strip() in ("home", "executable")
                             else line)
            cfg.unlink()
            cfg.write_text("\n".join(lines) + "\n")
            os.chmod(cfg, 0o644)


def _python_hidden() -> list[str]:
    return unreadable_by_other(python_paths())


def python_paths() -> list[str]:
    """Folders the worker's Python needs, read-only: the interpreter's prefixes, its stdlib and
    site-packages, the packages it imports, and the system's shared libraries."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths |= set(site.getsitepackages())
    for name in PROBED:
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            paths |= {os.path.dirname(p) for p in spec.submodule_search_locations}
    paths = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    return sorted(p for p in paths if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in paths))


def system_paths() -> list[tuple[str, str]]:
    """(kind, path) for the shared libraries: ("symlink", "/lib") where /lib -> usr/lib (merged
    /usr), ("bind", path) otherwise."""
    out = []
    for p in SYSTEM_LIBS:
        if os.path.islink(p):
            out.append(("symlink", p))
        elif os.path.exists(p):
            out.append(("bind", p))
    return out


def view(layout: Layout) -> list[tuple[str, ...]]:
    """The whole file system of a namespaced zygote, as (op, *args) in order."""
    python = python_paths()
    out = [("ro-bind", p, p) for p in python]
    out += [("symlink", os.readlink(p), p) if kind == "symlink" else ("ro-bind", p, p)
            for kind, p in system_paths() if p not in python]
    binds = [v[2] for v in out if v[0] == "ro-bind"]
    out += [("tmpfs", m, 65536, "0755") for m in masks(binds, list(layout.secret))]
    out += [("ro-bind", str(layout.lib), str(INSIDE / "lib")),
            ("ro-bind", str(layout.inbox), str(INSIDE / "submission")),
            ("tmpfs", str(INSIDE / "work"), layout.disk_bytes, "0777"),
            ("tmpfs", "/dev/shm", 1 << 20, "1777")]
    if layout.cuda:  # the GPU's device nodes, and /sys where the driver's libraries look
        out += [("dev-bind", str(d), str(d)) for d in sorted(Path("/dev").glob("nvidia*"))]
        out += [("ro-bind", "/sys", "/sys")]
    return out


def landlock_rules(layout: Layout, where: dict) -> dict:
    """Landlock's allow-list for a worker that sees the grader's file system: it reads its Python,
    the system's libraries, its lib and its submission (the secrets carved out), writes its
    scratch, opens the harmless devices (and the GPU's)."""
    # Its lib and its submission are the sandbox's own copies, never carved: a hidden output
    # folder may hold the sandbox's root (`--out /tmp/results.json` hides all of /tmp).
    rules = {"read": carve(layout.python[1] + [p for _, p in system_paths()], _secrets(layout))
             + [where["lib"], where["submission"]],
             "write": [where["work"]],
             "devices": [f"/dev/{d}" for d in DEVICES]
             + ([str(d) for d in Path("/dev").glob("nvidia*")] if layout.cuda else [])}
    if layout.cuda:  # where the driver looks
        rules["read"] += ["/proc/driver/nvidia", "/sys"]
    return rules


def _secrets(layout: Layout) -> list[str]:
    """The checkout and the output folders, and their images in a hard-linked Python tree
    (``linked_python`` mirrors whole prefixes: a checkout inside one is linked too)."""
    secret = list(layout.secret)
    if layout.python[0] != sys.executable:
        _, images = linked_python()
        secret += [image for image in (image_of(s, images) for s in layout.secret) if image]
    return secret


def masks(binds: list[str], secret: list[str]) -> list[str]:
    """Secret folders (the checkout, the output folder) that lie inside a folder the worker gets:
    they are covered by an empty tmpfs (a venv whose prefix is /usr, a checkout under it ...)."""
    return [s for s in secret if any(s.startswith(b.rstrip("/") + "/") for b in binds)]


def carve(read: list[str], secret: list[str]) -> list[str]:
    """Landlock's read rules with the secret folders taken out. Landlock can only allow, so a
    rule for a folder that holds a secret (a checkout inside a Python prefix) is replaced by a
    rule for each entry beside the path down to it: the secret and the folders above it get no
    rule, everything else beneath the folder still does. A rule's target is its real path (the
    kernel follows symlinks), so a link to a secret, or to a folder holding one, is carved too."""
    secret = [os.path.realpath(s) for s in secret]

    def inside(path: str, top: str) -> bool:
        return path == top or path.startswith(top.rstrip("/") + "/")

    out: list[str] = []
    pending = list(read)
    while pending:
        path = pending.pop()
        real = os.path.realpath(path)
        if any(inside(real, s) for s in secret):
            continue  # the secret itself, or inside it
        if not any(inside(s, real) and s != real for s in secret):
            out.append(path)
            continue
        try:
            pending += [entry.path for entry in os.scandir(real)]
        except OSError:
            continue  # unreadable: no rule
    return sorted(out)


def unreadable_by_other(paths: list[str]) -> list[str]:
    """Paths an unprivileged uid (not owner, not in the group) cannot reach: some folder on the
    way lacks the other-execute bit."""
    blocked = []
    for path in paths:
        parts = Path(path).parts
        for i in range(2, len(parts) + 1):
            try:
                if not os.stat(Path(*parts[:i])).st_mode & 0o001:
                    blocked.append(str(Path(*parts[:i])))
                    break
            except OSError:
                break
    return sorted(set(blocked))


def exposed(paths: list[Path]) -> list[str]:
    """Of ``paths`` (the grader's checkout, the output folder), those an unprivileged uid can reach."""
    return [str(p) for p in paths if p.exists() and not unreadable_by_other([str(p)])]
