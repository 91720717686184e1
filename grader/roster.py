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
"""

import dataclasses
from pathlib import Path

import yaml

METADATA = "submission_metadata.yml"


class RosterError(ValueError):
    """The class folder cannot be read as either layout (the TA's mistake: exit 2)."""


@dataclasses.dataclass(frozen=True)
class Student:
    sid: str
    name: str = ""
    email: str = ""


@dataclasses.dataclass(frozen=True)
class Upload:
    key: str                      # folder name in OUT_DIR; the shard is cut by it
    path: Path                    # the student's folder or zip (may not exist: "not found")
    students: tuple[Student, ...]

    def record(self) -> dict:
        return {"key": self.key, "students": [dataclasses.asdict(s) for s in self.students]}


class _TolerantLoader(yaml.SafeLoader):
    """Safe loading, but a tag such as ``!ruby/object:BigDecimal`` (Rails writes them) is read as
    the plain value under it instead of failing the whole class."""


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_TolerantLoader.add_multi_constructor("!", _untagged)


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def parse_metadata(text: str) -> dict[str, tuple[Student, ...]]:
    """submission_metadata.yml -> {submission folder name: its students}. Raises RosterError."""
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
        out[str(folder)] = tuple(Student(_text(p.get(":sid")), _text(p.get(":name")),
                                         _text(p.get(":email"))) for p in people)
    return out


def _export_root(folder: Path, skip: set[Path]) -> Path | None:
    """The folder holding submission_metadata.yml: the given one, or the one sub-folder that
    holds it (the export unzips to ``assignment_<id>_export/``; batch outputs may sit beside)."""
    if (folder / METADATA).is_file():
        return folder
    exports = [d for d in folder.iterdir() if d.is_dir() and (d / METADATA).is_file()
               and d.resolve() not in skip]
    return exports[0] if len(exports) == 1 else None


def discover(folder: Path, exclude: tuple[Path, ...] = ()) -> tuple[list[Upload], list[str]]:
    """The class's uploads, sorted by key, and notes for the TA (ignored files). ``exclude``:
    folders that are not students (the output folder, when it lies inside)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RosterError(f"{folder}: no such folder (give the folder of submissions, or "
                          f"Gradescope's export unzipped)")
    skip = {p.resolve() for p in exclude}
    root = _export_root(folder, skip)
    notes: list[str] = []
    if root is not None:
        students = parse_metadata((root / METADATA).read_text(errors="replace"))
        uploads = [Upload(k, root / k, who) for k, who in students.items()]
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
