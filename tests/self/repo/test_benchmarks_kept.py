"""No benchmark goes stale unseen: each script in benchmarks/ has a smoke run in the
suite (tests/self/system/test_benchmarks.py), and none spells a layout by hand: a problem's files
come from seam/problems.py's LAYOUT (grader.paths), a batch's student folders from
grader/batch/output.py, so a move there moves them too."""

import re

from grader.batch.output import STUDENTS
from grader.paths import ROOT
from seam.problems import LAYOUT, folder
from tests.self.system.test_benchmarks import ELSEWHERE, SMOKE

BENCHMARKS = ROOT / "benchmarks"


def scripts() -> set[str]:
    return {p.stem for p in BENCHMARKS.glob("*.py")}


def test_every_benchmark_has_a_smoke_run():
    missing = sorted(scripts() - set(SMOKE) - set(ELSEWHERE))
    assert not missing, (f"benchmarks/ scripts without a smoke run: {missing}: give each a small mode and "
                         f"an entry in tests/self/system/test_benchmarks.py's SMOKE")
    assert not (set(SMOKE) | set(ELSEWHERE)) - scripts(), "SMOKE names a script benchmarks/ no longer has"
    for script, test in ELSEWHERE.items():  # a file of its own: it runs the script by name
        assert f"{script}.py" in (ROOT / test).read_text(), (script, test)


def layout_spelled(line: str) -> list[str]:
    """The layouts a line of code spells by hand: a LAYOUT folder joined as a literal (``ROOT /
    "reference"``, ``"tests/public/..."``; a test's node id, ``"tests/public/test_x.py::test_y"``,
    names a test, no file to open), a folder of two words or more as a string (``"tests/hidden"``,
    ``"student_stubs"``: "reference" alone may be a label), a problem's module as ``/ f"{p}.py"``,
    a batch's ``"students"`` folder."""
    names = {str(folder(k.kind)) for k in LAYOUT}
    folders = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    long = "|".join(sorted((re.escape(n) for n in names if re.search(r"[/_]", n)), key=len, reverse=True))
    patterns = (rf"""/\s*["']({folders})["']""", rf"""["']({folders})/[^"':\n]*["']""", rf"""["']({long})["']""",
                r"""/\s*f["']\{[\w.]+\}\.py["']""", rf"""/\s*["']{STUDENTS}["']""")
    return [m.group(0) for p in patterns for m in re.finditer(p, line)]


def test_layout_spelled_finds_what_it_names():
    assert layout_spelled('shutil.copytree(ROOT / "reference", x)') == ['/ "reference"']
    assert layout_spelled('p = "tests/public/snapshots/x.json"') == ['"tests/public/snapshots/x.json"']
    assert layout_spelled('(folder / f"{p}.py").write_text(s)') == ['/ f"{p}.py"']
    assert layout_spelled('out / "students" / key') == ['/ "students"']
    assert layout_spelled('["pytest", "tests/public", "tests/hidden"]') == ['"tests/public"', '"tests/hidden"']
    assert layout_spelled('problem_file(p, "module", folder)') == [] == layout_spelled('slug = "reference"')
    assert layout_spelled('WHY = {"tests/hidden/test_scaling.py::test_fit": "..."}') == []


def test_no_benchmark_spells_a_layout():
    found = {f"{path.name}:{n}": hits for path in sorted(BENCHMARKS.glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if not line.lstrip().startswith("#") and (hits := layout_spelled(line))}
    assert not found, f"read these from grader.paths (problem_file, REFERENCE ...) or grader.batch.output: {found}"
