"""Find the problem modules in what a student uploaded: a folder, a nested folder, or a .zip."""

import dataclasses
import shutil
import tempfile
import zipfile
from pathlib import Path

from seam.problems import EXPECTED_LAYOUT, PROBLEMS

MAX_ZIP_BYTES = 64 << 20
MAX_MODULE_BYTES = 4 << 20  # one problem module: its size as stated (a sparse file's too), before any copy
MAX_ZIP_FILES = 5000
MAX_DEPTH = 4
SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".venv", "venv", "node_modules"}


@dataclasses.dataclass
class Located:
    folder: Path | None        # the folder holding the modules (None: nothing usable)
    notes: list[str]           # what the student should read: where we looked, what is missing
    cleanup: Path | None = None
    status: str = "graded"     # for the gradebook: graded | not found | ambiguous | empty


def _candidates(top: Path):
    """Folders under ``top`` (breadth first, a few levels deep) and how many modules each holds."""
    frontier = [(top, 0)]
    while frontier:
        folder, depth = frontier.pop(0)
        names = {p.name for p in folder.iterdir() if p.is_file()}
        yield folder, sum(f"{p}.py" in names for p in PROBLEMS), depth
        if depth < MAX_DEPTH:
            frontier += [(d, depth + 1) for d in sorted(folder.iterdir())
                         if d.is_dir() and not d.is_symlink() and d.name not in SKIP_DIRS]


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
                if not str(target).startswith(str(dest.resolve())) or info.is_dir():
                    continue  # skip folders and anything that would land outside (zip slip)
                if info.filename.endswith(".py"):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(target, "wb") as out:
                        shutil.copyfileobj(src, out)
            return dest, ""
    except (zipfile.BadZipFile, OSError) as e:
        return None, f"{path.name} is not a readable zip file ({e})"


def locate(path: Path, problems=PROBLEMS) -> Located:
    """Where the modules are, and notes about what is missing (among ``problems``)."""
    path = Path(path)
    cleanup = None
    if path.is_file() and path.suffix == ".zip":
        unpacked, why = _unzip(path)
        if unpacked is None:
            return Located(None, [why, EXPECTED_LAYOUT], status="empty")
        path = cleanup = unpacked
    elif not path.is_dir():
        return Located(None, [f"upload {path.name} not found (give a folder or a .zip). {EXPECTED_LAYOUT}"],
                       status="not found")
    found = [c for c in _candidates(path) if c[1]]
    if not found:
        return Located(None, [f"no problem modules found in the submission (it is empty or laid "
                              f"out differently). {EXPECTED_LAYOUT}"], cleanup, status="empty")
    if len(found) > 1:
        # Two copies (an old and a new attempt, a partner's folder, ...): grading either one
        # would be a guess, so neither is graded and the student is told what was found.
        names = ", ".join(f"{_shown(folder, path)} ({count} module(s))" for folder, count, _ in found)
        return Located(None, [f"more than one submission in the upload: {names}. Graded as neither: "
                              f"upload exactly one folder (or zip) of modules. {EXPECTED_LAYOUT}"],
                       cleanup, status="ambiguous")
    folder, count, depth = found[0]
    notes = []
    if depth:
        notes.append(f"found the modules in {folder.relative_to(path)}/ ({depth} level(s) down); "
                     "graded from there")
    missing = [f"{p}.py" for p in problems if not (folder / f"{p}.py").is_file()]
    notes += [why for p in problems if (why := too_large(folder / f"{p}.py"))]
    if missing:
        notes.append(f"missing: {', '.join(missing)} (those problems score 0). {EXPECTED_LAYOUT}")
    return Located(folder, notes, cleanup)


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


def _shown(folder: Path, top: Path) -> str:
    rel = folder.relative_to(top)
    return "the top folder" if rel == Path(".") else f"{rel}/"
