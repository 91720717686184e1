"""Who handed in what: the uploads in a class folder, and the students behind each one.

Two layouts (`python -m grader batch SUBMISSIONS`):
  * a folder with one sub-folder or .zip per student; the name is the student id;
  * Gradescope's "Download Submissions" export: folders ``submission_<id>/`` and
    ``submission_metadata.yml``, which names the students of each submission (a group
    submission has several). Its shape (Ruby symbols as keys, as Gradescope writes it)::

        submission_123456:
          :submitters:
          - :name: Ada Lovelace
            :sid: '1815'
            :email: ada@example.edu
          :created_at: 2024-02-01 23:59:00.000000000 -08:00
          :score: 0.0
          :status: processed
          :results: {...}

Each upload gets a key (its folder name, or the zip's name without .zip): the name of its
folder in the batch output and what the shards are cut by.

A student who resubmitted appears in several submissions of one export; ``choose`` keeps, for
each student, the one Gradescope marks ``:active: true``, else the latest ``:created_at:``
(then the highest submission id), and reports the others as superseded: one gradebook row per
student. A group submission counts for each member whose choice it is.
"""

import dataclasses
import datetime
import hashlib
import os
import re
from pathlib import Path

import yaml

from seam.problems import PROBLEMS, files

METADATA = "submission_metadata.yml"


class RosterError(ValueError):
    """The class folder cannot be read as either layout (the TA's mistake: exit 2)."""


@dataclasses.dataclass(frozen=True)
class Student:
    sid: str
    name: str = ""
    email: str = ""


    def identity(self) -> str:
        """Who this is across submissions: the SID, else the email ("": unknown, never taken
        for anyone else, not even for someone of the same name)."""
        return self.sid or self.email.lower()


@dataclasses.dataclass(frozen=True)
class Upload:
    key: str                      # folder name in OUT_DIR; the shard is cut by it
    path: Path                    # the student's folder or zip (may not exist: "not found")
    students: tuple[Student, ...]
    created: datetime.datetime | None = None   # :created_at: (an export's), for resubmissions
    active: bool | None = None                 # :active: where the export says it

    def record(self) -> dict:
        return {"key": self.key, "students": [dataclasses.asdict(s) for s in self.students]}

    def fingerprint(self) -> str:
        """A hash of the upload's content (every file, by relative name): a rerun regrades an
        upload whose bytes changed, even under a name already graded."""
        return fingerprint(self.path)


FINGERPRINT_BYTES = 256 << 20   # past this much (a venv uploaded by mistake), sizes stand in for the
MODULE_NAMES = {str(files(p).module) for p in PROBLEMS}   # bytes of every file but these


def fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    path = Path(path)
    if path.is_file():
        files = [(path.name, path)]
    elif path.is_dir():
        files = _files_below(path)
    else:
        return "absent"
    read = 0
    for rel, file in files:
        digest.update(rel.encode(errors="surrogateescape") + b"\0")
        try:
            size = file.stat().st_size
            module = file.name in MODULE_NAMES   # always by its bytes, however much came before
            read += 0 if module else size
            digest.update(file.read_bytes() if module or read <= FINGERPRINT_BYTES else str(size).encode())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()[:16]


def _files_below(top: Path) -> list[tuple[str, Path]]:
    """(its path relative to ``top``, path) of every regular file below ``top``, sorted; links are
    neither followed nor counted (as ``Path.rglob`` with ``is_file`` and not ``is_symlink``). Without
    recursion: a student's folders may go deeper than Python's recursion limit (rglob recurses)."""
    out, pending = [], [top]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        out.append((Path(entry.path).relative_to(top).as_posix(), Path(entry.path)))
        except OSError:
            continue  # unreadable, or a path past PATH_MAX: as rglob, nothing from there
    return sorted(out)


class _TolerantLoader(yaml.BaseLoader):
    """Every scalar a string (an unquoted ``:sid: 0012`` stays "0012", never the octal 10 that
    would be another student's id), and a tag such as ``!ruby/object:BigDecimal`` (Rails writes
    them) read as the plain value under it instead of failing the whole class."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_TolerantLoader.add_multi_constructor("!", _untagged)


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def _when(value) -> datetime.datetime | None:
    """:created_at: as PyYAML reads it (a datetime, or a string it did not take for one)."""
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
    if isinstance(value, str) and value.strip():
        text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip())          # nanoseconds -> micro
        text = re.sub(r"\s+([+-]\d\d):?(\d\d)$", r"\1:\2", text)      # ' -08:00' -> '-08:00'
        try:
            return _when(datetime.datetime.fromisoformat(text))
        except ValueError:
            return None
    return None


def parse_metadata(text: str) -> dict[str, Upload]:
    """submission_metadata.yml -> {submission folder name: its Upload (path relative: the
    folder name)}. Raises RosterError."""
    try:
        data = yaml.load(text, Loader=_TolerantLoader)
    except yaml.YAMLError as e:
        raise RosterError(f"{METADATA} is not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise RosterError(f"{METADATA} should map submission folders to their submitters")
    out = {}
    for folder, entry in data.items():
        people = entry.get(":submitters") if isinstance(entry, dict) else None
        if not isinstance(people, list) or not all(isinstance(p, dict) for p in people):
            raise RosterError(f"{METADATA}: {folder} has no ':submitters:' list")
        students = tuple(Student(_text(p.get(":sid")), _text(p.get(":name")), _text(p.get(":email")))
                         for p in people)
        active = {"true": True, "false": False}.get(str(entry.get(":active", "")).strip().lower())
        out[str(folder)] = Upload(str(folder), Path(str(folder)), students, _when(entry.get(":created_at")),
                                  active)
    return out


def class_digest(uploads: list[Upload]) -> str:
    """Which download of the class this is: a hash of every upload's name, date and active flag.
    Shards and passes merged together must come from one (a resubmission in a later download
    could land in another shard and give its student two rows)."""
    digest = hashlib.sha256()
    for u in sorted(uploads, key=lambda u: u.key):
        digest.update(f"{u.key}\0{u.created}\0{u.active}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()[:16]


def _submission_id(key: str) -> int:
    digits = re.findall(r"\d+", key)
    return int(digits[-1]) if digits else -1


def choose(uploads: list[Upload]) -> tuple[list[Upload], dict[str, str]]:
    """(the uploads that count, each with the students it counts for; {superseded key: why}).
    For each student: the submission marked active, else the latest, else the highest id."""
    oldest = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    rank = {u.key: (u.active is True, u.created or oldest, _submission_id(u.key), u.key) for u in uploads}
    who = lambda s, u: s.identity() or f"(no SID or email, in {u.key})"  # never merged with anyone
    theirs: dict[str, list[Upload]] = {}
    for u in uploads:
        for s in u.students:
            theirs.setdefault(who(s, u), []).append(u)
    pick = {who: max(ups, key=lambda u: rank[u.key]).key for who, ups in theirs.items()}
    counted, superseded = [], {}
    for u in uploads:
        mine = tuple(s for s in u.students if pick[who(s, u)] == u.key)
        if mine or not u.students:
            counted.append(dataclasses.replace(u, students=mine))
        else:
            later = sorted({pick[who(s, u)] for s in u.students})
            superseded[u.key] = f"superseded by {', '.join(later)} (the active or latest submission)"
    return counted, superseded


def _export_root(folder: Path, skip: set[Path]) -> tuple[Path | None, list[str]]:
    """(the folder holding submission_metadata.yml, notes): the given one, or its only
    sub-folder, the export unzipped to ``assignment_<id>_export/`` (batch outputs, folders
    holding a batch.json, and hidden files may sit beside it). Among other folders, a sub-folder holding that file is one
    student's upload, never the class's roster: a student cannot replace the class by
    shipping one."""
    if (folder / METADATA).is_file():
        return folder, []
    entries = [d for d in folder.iterdir() if not d.name.startswith(".") and d.resolve() not in skip
               and not (d / "batch.json").is_file()]  # an earlier batch's output beside the export
    exports = [d for d in entries if d.is_dir() and (d / METADATA).is_file()]
    if len(exports) == 1 and len(entries) == 1:
        return exports[0], []
    if exports and not any(d.is_dir() for d in entries if d not in exports):
        # an export beside zips or files (its own zip, in Downloads/): neither reading is safe
        raise RosterError(f"{folder} holds an export ({', '.join(d.name for d in exports)}) and other "
                          f"files beside it ({', '.join(sorted(d.name for d in entries if d not in exports)[:5])}): "
                          f"give the export folder itself")
    return None, [f"{d.name} holds a {METADATA} but is graded as one upload among the others (to grade "
                  f"an export, give its folder itself)" for d in exports]


MAX_EXPORT_ENTRIES = 500_000      # entries in a downloaded export (.zip): every student's files
MAX_EXPORT_BYTES = 16 << 30       # its unpacked size, as the zip states it, before anything is written


def unpack_export(path: Path, into: Path) -> Path:
    """Gradescope's "Download Submissions" zip, as downloaded, unpacked below ``into``: the
    folder ``discover`` reads (the export's own top folder is found there as when a TA unzips
    it). zipfile drops absolute names and ``..`` and writes no links; the sizes are checked
    first, from the zip's directory."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_EXPORT_ENTRIES or sum(i.file_size for i in infos) > MAX_EXPORT_BYTES:
                raise RosterError(f"{path}: too large to unpack here (over {MAX_EXPORT_ENTRIES} entries or "
                                  f"{MAX_EXPORT_BYTES >> 30} GiB): unzip it yourself and give the folder")
            archive.extractall(into)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise RosterError(f"{path}: not a readable .zip ({e}); give the export's folder, unzipped") from None
    return into


def discover(folder: Path, exclude: tuple[Path, ...] = ()) -> tuple[list[Upload], list[str]]:
    """The class's uploads, sorted by key, and notes for the TA (ignored files). ``exclude``:
    folders that are not students (the output folder, when it lies inside)."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        raise RosterError(f"{folder}: {what} (give the folder of submissions, or Gradescope's "
                          f"export: its folder or its .zip)")
    skip = {p.resolve() for p in exclude}
    root, notes = _export_root(folder, skip)
    if root is not None:
        students = parse_metadata((root / METADATA).read_text(errors="replace"))
        uploads = [dataclasses.replace(u, path=root / k) for k, u in students.items()]
        extra = sorted(d.name for d in root.iterdir()
                       if d.name not in students and d.name != METADATA and not d.name.startswith(".")
                       and d.resolve() not in skip)
        if extra:
            notes.append(f"not in {METADATA}, not graded: {', '.join(extra)}")
        return sorted(uploads, key=lambda u: u.key), notes
    uploads, ignored, seen = [], [], set()
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith((".", "__MACOSX")) or entry.resolve() in skip:
            continue
        if entry.is_dir():
            key = entry.name
        elif entry.is_file() and entry.suffix.lower() == ".zip":
            key = entry.stem if entry.stem not in {e.name for e in folder.iterdir()} else entry.name
        else:
            ignored.append(entry.name)
            continue
        if key in seen:
            raise RosterError(f"two uploads are both called {key!r} in {folder}")
        seen.add(key)
        uploads.append(Upload(key, entry, (Student(key),)))
    if ignored:
        notes.append(f"neither a folder nor a .zip, not graded: {', '.join(ignored)}")
    return sorted(uploads, key=lambda u: u.key), notes
