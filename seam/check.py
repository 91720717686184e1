"""`python -m seam.check UPLOAD`: before you submit, see what the grader will grade.

UPLOAD is the zip (or folder) you are about to hand in. This finds the modules in it with the
grader's own locator (seam/upload.py), lists the files that will be graded, and runs the public
tests on a copy of exactly those files: the problem modules and the helper modules they import
from beside them (``_util.py``, or a package folder); a file no problem module imports, a file
outside the chosen folder or a module that is really a folder is named as not graded, and is not
in the copy, as it will not be in the grader.

    python -m seam.check hw2.zip            # list, then run the public tests on those files
    python -m seam.check hw2.zip --list     # only list
    python -m seam.check hw2.zip -m optim   # pytest's options after UPLOAD go to pytest

Run it from the assignment folder (the one holding tests/). Exit status: pytest's; 1 when
nothing in UPLOAD would be graded; 2 for a wrong UPLOAD.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .problems import PROBLEMS, folder
from .upload import graded_files, locate

ROOT = Path(__file__).resolve().parents[1]   # the assignment folder: seam/ sits beside tests/


def describe(upload: Path) -> tuple[list[str], list[Path], object]:
    """(the lines to print, the files that will be graded, the Located to clean up)."""
    located = locate(upload)
    lines = [f"{upload}:"] + [f"  note: {n}" for n in located.notes]
    if located.folder is None:
        return lines + ["  nothing in it would be graded (every problem would score 0)"], [], located
    graded = graded_files(located.folder)
    shown = located.folder.relative_to(located.top).as_posix() if located.top else str(located.folder)
    lines.append(f"  will grade {len(graded.modules)} of {len(PROBLEMS)} modules, from "
                 f"{'the top folder' if shown == '.' else shown + '/'}:")
    lines += [f"    {m.name} ({m.stat().st_size} bytes)" for m in graded.modules]
    if graded.helpers:
        lines.append(f"  and {len(graded.helpers)} helper file(s) they import:")
        lines += [f"    {graded.name(h)} ({h.stat().st_size} bytes; imported by {', '.join(by)})"
                  for h, by in graded.helpers.items()]
    if graded.ignored:
        lines.append(f"  not graded ({len(graded.ignored)}):")
        lines += [f"    {f}: {why}" for f, why in graded.ignored]
    return lines, graded.files, located


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    upload, rest = Path(argv[0]), argv[1:]
    only_list = "--list" in rest
    rest = [a for a in rest if a != "--list"]
    if not upload.exists():
        print(f"seam.check: {upload}: no such file or folder (give the zip or folder you will upload)",
              file=sys.stderr)
        return 2
    if not (ROOT / folder("public_test")).is_dir():
        print(f"seam.check: no tests/public beside {ROOT / 'seam'}; run it from the assignment folder",
              file=sys.stderr)
        return 2
    lines, modules, located = describe(upload)
    try:
        print("\n".join(lines), flush=True)
        if only_list or not modules:
            return 0 if modules else 1
        with tempfile.TemporaryDirectory(prefix="seam-check-") as tmp:
            copy = Path(tmp) / "graded"
            copy.mkdir()
            for m in modules:  # (a helper package's files in its folder)
                (copy / m.relative_to(located.folder)).parent.mkdir(exist_ok=True)
                shutil.copyfile(m, copy / m.relative_to(located.folder))
            print(f"running the public tests on those {len(modules)} file(s):", flush=True)
            return subprocess.run([sys.executable, "-m", "pytest", str(folder("public_test")), f"--impl={copy}", *rest],
                                  cwd=ROOT).returncode
    finally:
        if located.cleanup:
            shutil.rmtree(located.cleanup, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
