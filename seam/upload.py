"""Which files of an upload are graded: the one locator, used by the grader and shipped to
students (`python -m seam.check UPLOAD` runs it on the zip they are about to submit).

An upload is a folder or a .zip. The folders in it (a few levels deep; ``__MACOSX/``, ``.git/``
and the like are never read) are candidates, and the first rule that applies picks one:

  1. the assignment folder itself (the bundle `release --student` writes: ``student_stubs/``
     next to ``tests/`` and ``seam/``): its ``student_stubs/`` is graded, whatever else lies
     beside it (the bundle's own ``tests/common/<problem>.py``, a stray copy, notebooks);
  2. else the one folder holding every problem module;
  3. else the folder holding the most problem modules, if no other holds as many.

Two bundles, two complete folders, or a tie for the most are graded as neither, and the notes
name each candidate: grading either would be a guess. From the chosen folder only the problem
modules are copied (``graded_modules``: plain files, no symlinks, none over MAX_MODULE_BYTES);
a module that is a folder is reported as such.
"""

import dataclasses
import shutil
import tempfile
import zipfile
from pathlib import Path

from .problems import EXPECTED_LAYOUT, PROBLEMS

MAX_ZIP_BYTES = 64 << 20
MAX_MODULE_BYTES = 4 << 20  # one problem module: its size as stated (a sparse file's too), before any copy
MAX_ZIP_FILES = 5000
MAX_DEPTH = 4
SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".venv", "venv", "node_modules", ".ipynb_checkpoints",
             ".idea", ".vscode"}
BUNDLE_PARTS = ("student_stubs", "tests", "seam")  # what makes a folder the assignment's own


@dataclasses.dataclass
class Located:
    folder: Path | None        # the folder holding the modules (None: nothing usable)
    notes: list[str]           # what the student should read: where we looked, what is missing
    cleanup: Path | None = None
    status: str = "graded"     # for the gradebook: graded | not found | ambiguous | empty
    top: Path | None = None    # the upload as read (the unpacked zip): ``notes`` name folders from here


@dataclasses.dataclass
class _Folder:
    path: Path
    depth: int
    modules: int               # problem modules in it (plain files)
    bundle: bool               # the assignment folder: student_stubs/, tests/ and seam/ side by side


def _scan(top: Path) -> list[_Folder]:
    """Every folder under ``top`` (breadth first, MAX_DEPTH levels), skipping SKIP_DIRS and links."""
    found, frontier = [], [(top, 0)]
    while frontier:
        folder, depth = frontier.pop(0)
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        files = {p.name for p in entries if p.is_file() and not p.is_symlink()}
        dirs = {p.name for p in entries if p.is_dir() and not p.is_symlink()}
        found.append(_Folder(folder, depth, sum(f"{p}.py" in files for p in PROBLEMS),
                             all(part in dirs for part in BUNDLE_PARTS)))
        if depth < MAX_DEPTH:
            frontier += [(folder / d, depth + 1) for d in sorted(dirs)
                         if d not in SKIP_DIRS and not d.endswith(".py")]
    return found


def _unzip(path: Path) -> tuple[Path | None, str]:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_FILES or sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
                return None, f"{path.name} is too large to grade (over {MAX_ZIP_FILES} files or " \
                             f"{MAX_ZIP_BYTES >> 20} MiB unpacked)"
            dest = Path(tempfile.mkdtemp(prefix="grader-upload-"))
            for info in infos:
                target = (dest / info.filename).resolve()
                if not target.is_relative_to(dest.resolve()) or info.is_dir():
                    continue  # skip folders and anything that would land outside (zip slip)
                if info.filename.endswith(".py"):  # tests/ and seam/ hold .py files: a bundle stays one
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
            return dest, ""
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        return None, f"{path.name} is not a readable zip file ({e})"


def _shown(folder: Path, top: Path) -> str:
    rel = folder.relative_to(top)
    return "the top folder" if rel == Path(".") else f"{rel.as_posix()}/"


def _listing(folders: list[_Folder], top: Path) -> str:
    return ", ".join(f"{_shown(f.path, top)} ({f.modules} module(s))" for f in folders)


def _choose(top: Path) -> tuple[Path | None, str, list[str]]:
    """(the folder to grade, the rule that chose it, notes) or (None, status, notes)."""
    folders = _scan(top)
    bundles = [f for f in folders if f.bundle and (f.path / "student_stubs").is_dir()]
    outer = [b for b in bundles if not any(o is not b and b.path.is_relative_to(o.path) for o in bundles)]
    if len(outer) > 1:
        return None, "ambiguous", [
            f"more than one copy of the assignment folder in the upload: "
            f"{', '.join(_shown(b.path, top) for b in outer)}. Graded as neither: upload one. {EXPECTED_LAYOUT}"]
    if outer:
        stubs = outer[0].path / "student_stubs"
        if any(f.path == stubs and f.modules for f in folders):
            return stubs, "bundle", [f"graded {_shown(stubs, top)} (the assignment folder's own; "
                                     f"nothing beside it is read)"]
        # its student_stubs/ is empty: the modules are elsewhere, but never the bundle's own
        # tests/ and seam/ (their files are named like the problems)
        own = [outer[0].path / part for part in BUNDLE_PARTS[1:]]
        folders = [f for f in folders if not any(f.path.is_relative_to(o) for o in own)]
    candidates = [f for f in folders if f.modules]
    if not candidates:
        return None, "empty", [f"no problem modules found in the submission (it is empty or laid "
                               f"out differently). {EXPECTED_LAYOUT}"]
    complete = [f for f in candidates if f.modules == len(PROBLEMS)]
    most = max(f.modules for f in candidates)
    tied = complete if complete else [f for f in candidates if f.modules == most]
    if len(tied) > 1:
        # An old and a new attempt, a partner's folder ...: grading either one would be a guess.
        return None, "ambiguous", [
            f"more than one submission in the upload: {_listing(candidates, top)}. Graded as "
            f"neither: upload exactly one folder (or zip) of modules. {EXPECTED_LAYOUT}"]
    chosen = tied[0]
    notes = []
    if chosen.depth:
        notes.append(f"found the modules in {_shown(chosen.path, top)} ({chosen.depth} level(s) down); "
                     "graded from there")
    others = [f for f in candidates if f is not chosen]
    if others:
        why = "it holds every module" if complete else "it holds the most modules"
        notes.append(f"also found {_listing(others, top)}: not graded ({_shown(chosen.path, top)} "
                     f"was, {why})")
    return chosen.path, "complete" if complete else "most", notes


def locate(path: Path, problems=PROBLEMS) -> Located:
    """Where the modules are, and notes about what is missing (among ``problems``)."""
    path = Path(path)
    cleanup = None
    if path.is_file() and path.suffix.lower() == ".zip":
        unpacked, why = _unzip(path)
        if unpacked is None:
            return Located(None, [why, EXPECTED_LAYOUT], status="empty")
        path = cleanup = unpacked
    elif not path.is_dir():
        return Located(None, [f"upload {path.name} not found (give a folder or a .zip). {EXPECTED_LAYOUT}"],
                       status="not found")
    folder, rule, notes = _choose(path)
    if folder is None:
        return Located(None, notes, cleanup, status=rule, top=path)
    missing = []
    for p in problems:
        module = folder / f"{p}.py"
        if module.is_dir():
            notes.append(f"{_shown(module, path).rstrip('/')} is a folder, not a module: not graded "
                         f"(that problem scores 0)")
        elif module.is_symlink():
            notes.append(f"{module.name} is a symbolic link: not graded (upload the file itself)")
        elif not module.is_file():
            missing.append(module.name)
        elif why := too_large(module):
            notes.append(why)
    if missing:
        notes.append(f"missing: {', '.join(missing)} (those problems score 0). {EXPECTED_LAYOUT}")
    return Located(folder, notes, cleanup, top=path)


def too_large(module: Path) -> str | None:
    """Why ``module`` is not graded for its size (the sandbox never copies it), or None."""
    try:
        size = module.lstat().st_size
    except OSError:
        return None
    if size <= MAX_MODULE_BYTES:
        return None
    return (f"{module.name} is {size / (1 << 20):.0f} MiB; a module may be at most "
            f"{MAX_MODULE_BYTES >> 20} MiB: not graded (that problem scores 0)")


def graded_modules(folder: Path) -> list[Path]:
    """The files of ``folder`` the grader copies and runs: each problem module that is a plain
    file within the size limit. Nothing else beside them is read."""
    modules = [Path(folder) / f"{p}.py" for p in PROBLEMS]
    return [m for m in modules if m.is_file() and not m.is_symlink() and not too_large(m)]
