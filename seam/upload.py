"""Which files of an upload are graded: the one locator, used by the grader and shipped to
students (`python -m seam.check UPLOAD` runs it on the zip they are about to submit).

An upload is a folder or a .zip. The folders in it (a few levels deep; ``__MACOSX/``, ``.git/``
and the like are never read) are candidates, and the first rule that applies picks one:

  1. the assignment folder itself (the bundle `release --student` writes: ``student_stubs/``
     next to ``tests/`` and ``seam/``): its ``student_stubs/`` is graded, whatever else lies
     beside it (a stray copy, notebooks); the ``tests/`` and ``seam/`` of any folder holding
     both are never candidates (their ``common/<problem>.py`` and ``probes/<problem>.py`` are
     named like the problems), even where ``student_stubs/`` was renamed or emptied;
  2. else the one folder holding every problem module;
  3. else the folder holding the most problem modules, if no other holds as many.

Two bundles, two complete folders, or a tie for the most are graded as neither, and the notes
name each candidate: grading either would be a guess. From the chosen folder the problem
modules are copied, and the helper modules they import from beside them (``graded_files``:
plain files, no symlinks, none over MAX_MODULE_BYTES, at most MAX_HELPER_FILES helper files;
every other entry is named with why it is not graded);
a module that is a folder is reported as such, and a module is found by its exact name (a
"Tensors.py" that macOS would open as tensors.py is reported, not graded).

A zip is unpacked as Gradescope's unzip does (backslashes are folders, a leading "/" is
dropped), with its whole tree of folders but only its .py files (and nested zips) written, so a
zip and the same folder unpacked give the same answer; an entry that cannot be read is skipped
and named. An upload that holds no module but one zip (a folder of the student's with their zip
in it, a zip of a zip) is graded from that zip, unpacked by the same rules and limits; several
zips are named, never guessed between, and a zip inside that one is named, not opened.
"""

import dataclasses
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

from .problems import EXPECTED_LAYOUT, PROBLEMS

MAX_ZIP_BYTES = 64 << 20
MAX_MODULE_BYTES = 4 << 20  # one problem module: its size as stated (a sparse file's too), before any copy
MAX_HELPER_FILES = 32      # helper files graded beside the problem modules (seam/helpers.py)
MAX_ZIP_FILES = 5000         # .py files in a zip (only they are unpacked)
MAX_ZIP_ENTRIES = 200_000    # every entry, a .git/ folder's objects included
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
    """Every folder under ``top`` (breadth first, MAX_DEPTH levels), skipping SKIP_DIRS and links,
    and the ``tests/`` and ``seam/`` of any folder holding both: the assignment folder's own, whose
    files are named like the problems (even when its student_stubs/ was renamed or emptied)."""
    found, frontier = [], [(top, 0)]
    while frontier:
        folder, depth = frontier.pop(0)
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        files = {p.name for p in entries if p.is_file() and not p.is_symlink()}
        dirs = {p.name for p in entries if p.is_dir() and not p.is_symlink()}
        assignment = all(part in dirs for part in BUNDLE_PARTS[1:])
        found.append(_Folder(folder, depth, sum(f"{p}.py" in files for p in PROBLEMS),
                             assignment and BUNDLE_PARTS[0] in dirs))
        if depth < MAX_DEPTH:
            frontier += [(folder / d, depth + 1) for d in sorted(dirs)
                         if d not in SKIP_DIRS and not d.endswith(".py")
                         and not (assignment and d in BUNDLE_PARTS[1:])]
    return found


class _Unpacked(Exception):
    """The zip as a whole cannot be read: the message says why."""


def _member(name: str) -> str:
    """An entry's name as Info-ZIP's unzip (Gradescope's) unpacks it: Windows' backslashes are
    folders, a leading slash or drive letter is dropped."""
    name = name.replace("\\", "/")
    if len(name) > 1 and name[1] == ":":
        name = name[2:]
    return name.lstrip("/")


def _kept(name: str) -> bool:
    """What an unpacked zip writes: .py files, and the zips nested in it (``locate`` opens one
    where the upload holds no module)."""
    return name.endswith(".py") or name.lower().endswith(".zip")


def _unzip(path: Path) -> tuple[Path | None, list[str]]:
    """(the unpacked folder, notes) or (None, [why]). The whole tree of folders is made, as an
    unpacked upload has it, but only .py files (and nested zips) are written: the limits count
    those alone. An entry that cannot be read (encrypted, an unsupported method, a bad CRC) is
    skipped and named."""
    dest = None
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            modules = [i for i in infos if not i.is_dir() and _kept(_member(i.filename))]
            if len(infos) > MAX_ZIP_ENTRIES or len(modules) > MAX_ZIP_FILES \
                    or sum(i.file_size for i in modules) > MAX_ZIP_BYTES:
                raise _Unpacked(f"{path.name} is too large to grade (over {MAX_ZIP_ENTRIES} entries, "
                                f"{MAX_ZIP_FILES} .py files or {MAX_ZIP_BYTES >> 20} MiB of .py files)")
            dest = Path(tempfile.mkdtemp(prefix="grader-upload-"))
            root, skipped = dest.resolve(), []
            for info in infos:
                name = _member(info.filename)
                target = (dest / name).resolve()
                if not name or target == root or not target.is_relative_to(root):
                    continue  # anything that would land outside (zip slip)
                try:
                    if info.is_dir() or name.endswith("/"):
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if _kept(name):  # tests/ and seam/ hold .py files: a bundle stays one
                        with zf.open(info) as src, open(target, "wb") as out:
                            shutil.copyfileobj(src, out)
                except (RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error, EOFError, OSError,
                        ValueError) as e:
                    skipped.append(f"{name} ({type(e).__name__}: {str(e)[:80]})")
                    target.unlink(missing_ok=True) if target.is_file() else None
            notes = [f"could not unpack {len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'} of "
                     f"{path.name}, not graded: {'; '.join(skipped[:5])}{' ...' if len(skipped) > 5 else ''}"
                     ] if skipped else []
            return dest, notes
    except _Unpacked as e:
        why = str(e)
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, NotImplementedError, EOFError) as e:
        why = f"{path.name} is not a readable zip file ({type(e).__name__}: {e})"
    if dest is not None:
        shutil.rmtree(dest, ignore_errors=True)
    return None, [why]


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
        # its student_stubs/ is empty: the modules are elsewhere (never in its tests/ or seam/:
        # _scan leaves those out)
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


def _nested_zips(top: Path) -> list[Path]:
    """The zips in an upload, as deep as ``_scan`` looks, outside the folders it skips."""
    return sorted(p for f in _scan(top) for p in f.path.glob("*") if p.suffix.lower() == ".zip"
                  and p.is_file() and not p.is_symlink())


def _zip_names(zips: list[Path], top: Path) -> str:
    return ", ".join(_shown(z, top).rstrip("/") for z in zips[:5])


def _in_nested_zip(top: Path, problems, cleanup: Path | None, notes: list[str]) -> Located:
    """An upload that holds no module: the one zip in it is unpacked (the same rules and limits
    as an uploaded zip) and graded; several, or none, are said in the notes."""
    zips = _nested_zips(top)
    if len(zips) != 1:
        named = f"; it holds {len(zips)} zips ({_zip_names(zips, top)}): " \
                f"upload one of them, unpacked or as the zip itself" if zips else ""
        return Located(None, [*notes[:-1], notes[-1] + named] if notes else notes, cleanup, status="empty", top=top)
    inner = locate(zips[0], problems, nested=True)
    shown = _shown(zips[0], top).rstrip("/")
    if cleanup is not None:  # the outer zip's folder goes with the inner one's
        shutil.rmtree(cleanup, ignore_errors=True)
    if inner.folder is None:
        return dataclasses.replace(inner, notes=[f"the upload holds no module, only {shown}, which gave none:",
                                                 *inner.notes])
    return dataclasses.replace(inner, notes=[f"the upload holds no module but {shown}: unpacked it and graded "
                                             f"what it holds", *inner.notes])


def locate(path: Path, problems=PROBLEMS, nested: bool = False) -> Located:
    """Where the modules are, and notes about what is missing (among ``problems``). An upload with
    no module but one zip inside is graded from that zip (``nested``: this is that zip, whose own
    zips are only named)."""
    path = Path(path)
    cleanup = None
    unpacking = []
    if path.is_file() and path.suffix.lower() == ".zip":
        unpacked, unpacking = _unzip(path)
        if unpacked is None:
            return Located(None, [*unpacking, EXPECTED_LAYOUT], status="empty")
        path = cleanup = unpacked
    elif not path.is_dir():
        return Located(None, [f"upload {path.name} not found (give a folder or a .zip). {EXPECTED_LAYOUT}"],
                       status="not found")
    folder, rule, notes = _choose(path)
    notes = unpacking + notes
    if folder is None and rule == "empty" and not nested:
        return _in_nested_zip(path, problems, cleanup, notes)
    if folder is None:
        zips = _nested_zips(path) if rule == "empty" else []
        if zips:
            notes.append(f"zips inside it are not opened a second time: {_zip_names(zips, path)}")
        return Located(None, notes, cleanup, status=rule, top=path)
    missing = []
    names = _names(folder)   # as written: on macOS and Windows "Tensors.py" would open as tensors.py
    for p in problems:
        module = folder / f"{p}.py"
        if module.name not in names:
            missing.append(module.name)
            near = sorted(n for n in names if n.lower() == module.name)
            if near:
                notes.append(f"{near[0]} is not {module.name}: names are case-sensitive where it is graded; "
                             f"rename it (that problem scores 0)")
        elif module.is_dir():
            notes.append(f"{_shown(module, path).rstrip('/')} is a folder, not a module: not graded "
                         f"(that problem scores 0)")
        elif module.is_symlink():
            notes.append(f"{module.name} is a symbolic link: not graded (upload the file itself)")
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


def _names(folder: Path) -> set[str]:
    try:
        return {p.name for p in Path(folder).iterdir()}
    except OSError:
        return set()


@dataclasses.dataclass
class Graded:
    """The files of the chosen folder the grader copies and runs, and those it leaves."""
    folder: Path
    modules: list[Path]                 # the problem modules
    helpers: dict[Path, list[str]]      # each helper file -> the graded files that import it
    ignored: list[tuple[str, str]]      # (file, why it is not graded), everything else beside them
    absolute: frozenset[str] = frozenset()  # helpers an absolute import names (seam/helpers.py)
    packages: list[str] = dataclasses.field(default_factory=list)  # helper package folders

    @property
    def files(self) -> list[Path]:
        return [*self.modules, *self.helpers]

    def name(self, path: Path) -> str:
        """A graded file as the report names it: its path in the folder ("helpers/maths.py")."""
        return Path(path).relative_to(self.folder).as_posix()

    def problems(self, helper: Path) -> list[str]:
        """The problems whose modules import ``helper``, directly or through other helpers."""
        out, seen, todo = set(), set(), list(self.helpers.get(helper, []))
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name.removesuffix(".py") in PROBLEMS and "/" not in name:
                out.add(name.removesuffix(".py"))
            else:
                todo += self.helpers.get(self.folder / name, [])
        return [p for p in PROBLEMS if p in out]

    def data(self) -> dict:
        """results.json's ``extra_data.files`` (``graded``, ``ignored``), and ``problems``: each
        helper's importing problems (its notes for review put those problems' points at stake)."""
        return {"graded": [self.name(f) for f in self.files],
                "ignored": [{"file": f, "why": why} for f, why in self.ignored],
                "problems": {self.name(h): self.problems(h) for h in self.helpers}}

    def lines(self) -> list[str]:
        """What a person reads beside the score: the helpers graded, and the files left out (an
        ``__init__.py`` holding nothing but a docstring, the stubs' own, goes unsaid)."""
        out = []
        if self.helpers:
            out.append(f"graded {len(self.modules)} problem module(s) and {len(self.helpers)} helper "
                       f"file(s) they import: " + ", ".join(
                           f"{self.name(h)} (imported by {', '.join(by)})" for h, by in self.helpers.items()))
        shown = [(f, why) for f, why in self.ignored if not (f == "__init__.py" and _blank(self.folder / f))]
        if shown:
            out.append("not graded: " + "; ".join(f"{f} ({why})" for f, why in shown[:SHOWN_IGNORED])
                       + (f"; and {len(shown) - SHOWN_IGNORED} more (every one in results.json's extra_data.files)"
                          if len(shown) > SHOWN_IGNORED else ""))
        return out


SHOWN_IGNORED = 12  # files left out named in a report's line (results.json names every one)


def _blank(path: Path) -> bool:
    """A module of nothing but a docstring (or nothing)."""
    import ast
    try:
        body = ast.parse(path.read_bytes()).body
    except (OSError, SyntaxError, ValueError):
        return False
    return all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)


def _plain(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _package_files(package: Path) -> list[Path]:
    """The .py files directly in a helper package folder (plain files; its sub-folders are not read)."""
    try:
        return sorted(p for p in package.iterdir() if p.suffix == ".py" and _plain(p))
    except OSError:
        return []


def graded_files(folder: Path) -> Graded:
    """The problem modules of ``folder``, each named exactly (a case-insensitive file system would
    also open "Tensors.py"), a plain file within the size limit; and the helper modules they
    import from beside them (seam/helpers.py: a ``_util.py``, or a package folder with an
    ``__init__.py``, at most MAX_HELPER_FILES files, each within the same limit), and the helpers'
    own helpers. Every other entry of ``folder`` is named in ``ignored`` with why."""
    from .helpers import imported, reserved
    folder = Path(folder)
    names = _names(folder)
    modules = [folder / f"{p}.py" for p in PROBLEMS if f"{p}.py" in names]
    modules = [m for m in modules if _plain(m) and not too_large(m)]
    helpers: dict[Path, list[str]] = {}
    why: dict[str, str] = {}   # an entry left out for a reason other than "nothing imports it"
    packages: list[str] = []
    absolute: set[str] = set()
    queue = [(m, 1) for m in modules]
    while queue:
        path, level = queue.pop(0)
        try:
            relative, plain = imported(path.read_bytes(), level)
        except OSError:
            continue
        importer = path.relative_to(folder).as_posix()
        for name, spelled in [*((n, "relative") for n in sorted(relative)), *((n, "absolute") for n in sorted(plain))]:
            if name in PROBLEMS or name.startswith("__") or not name.isidentifier():
                continue
            if spelled == "absolute" and reserved(name):
                if f"{name}.py" in names or name in names:
                    why.setdefault(name if name in names else f"{name}.py",
                                   f"`import {name}` is the library's (Python's own) {name}, not this file: "
                                   f"rename it, or import it as `from .{name} import ...`")
                continue
            package = folder / name
            if name in names and package.is_dir() and not package.is_symlink() and _plain(package / "__init__.py"):
                found, inner = _package_files(package), 2
                if name not in packages:
                    packages.append(name)
            elif f"{name}.py" in names and _plain(folder / f"{name}.py"):
                found, inner = [folder / f"{name}.py"], 1
            else:
                if f"{name}.py" in names:
                    why.setdefault(f"{name}.py", "a symbolic link or not a file: not graded (upload the file itself)")
                continue
            if spelled == "absolute":
                absolute.add(name)
            for helper in found:
                shown = helper.relative_to(folder).as_posix()
                if helper in helpers:
                    helpers[helper] += [importer] if importer not in helpers[helper] else []
                elif reason := too_large(helper):
                    why.setdefault(shown, reason.replace("(that problem scores 0)", "(what imports it fails)"))
                elif len(helpers) >= MAX_HELPER_FILES:
                    why.setdefault(shown, f"over the {MAX_HELPER_FILES} helper files graded: not graded")
                else:
                    helpers[helper] = [importer]
                    queue.append((helper, inner))
    graded = {m.name for m in modules} | {h.relative_to(folder).parts[0] for h in helpers}
    ignored = []
    for entry in sorted(names):
        path = folder / entry
        if entry in SKIP_DIRS or entry.startswith("."):
            continue
        if entry in packages:  # its entries that were not graded (a sub-folder, a link, a data file)
            kept = {h.name for h in helpers if h.parent == path}
            ignored += [(f"{entry}/{p.name}", "in a helper package but not one of its .py files: not graded")
                        for p in sorted(path.iterdir()) if p.name not in kept and p.name not in SKIP_DIRS]
            continue
        if entry in graded:
            continue
        if entry in why:
            ignored.append((entry, why[entry]))
        elif entry == "__init__.py":
            ignored.append((entry, "the folder's __init__.py is never run"))
        elif entry.endswith(".py") and entry.removesuffix(".py") in PROBLEMS:
            ignored.append((entry, "not a plain file within the size limit: not graded"))
        elif entry.endswith(".py") or path.is_dir():
            ignored.append((f"{entry}/" if path.is_dir() else entry, "no problem module imports it"))
        else:
            ignored.append((entry, "not a Python module"))
    return Graded(folder, modules, helpers, ignored, frozenset(absolute), packages)


def graded_modules(folder: Path) -> list[Path]:
    """The files of ``folder`` the grader copies and runs (``graded_files``): the problem modules,
    then the helpers they import. Nothing else beside them is read."""
    return graded_files(folder).files
