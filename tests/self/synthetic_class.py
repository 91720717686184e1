"""A synthetic class, made from the corpora, written as a batch's output folder.

Each student's module of a problem is a variant of it: the reference, an alternative
(tests/self/alternatives: written apart from the reference), or a planted bug (the reference with
one slip, tests/self/bugs). Some students copy another's module, disguised: names renamed,
functions reordered, reformatted (``disguise``); every text is disguised a little, so no two
are identical. A copy is defined by lineage: two modules are copies when they come from the same
text (an alternative, or the reference: a bug is the reference with one line changed).

Results are composed, not graded 1,000 times: each distinct variant is graded once (in-process,
its problem's tests), and a student's results.json is the union of their variants' tests (a
disguise changes no behaviour). `python -m tests.self.synthetic_class OUT_DIR [N]` writes one.
"""

import ast
import builtins
import dataclasses
import json
import random
import sys
from pathlib import Path

from seam.problems import PROBLEMS
from tests.self.alternatives import all_alternatives
from tests.self.bugs import all_bugs
from tests.self.submissions import reference_text

HEAVY = ("training", "benchmarking")  # the reference only (each grading takes minutes in-process)


@dataclasses.dataclass(frozen=True)
class Variant:
    problem: str
    label: str        # "reference", "alt:<how>", "bug:<name>"
    text: str
    lineage: str      # "reference" or "alt:<how>": where the text comes from
    mistake: str = ""


def variants(per_problem_bugs: int = 2, per_problem_alts: int = 2) -> list[Variant]:
    out = []
    alts = all_alternatives()
    bugs = all_bugs()
    for p in PROBLEMS:
        ref = reference_text(p)
        out.append(Variant(p, "reference", ref, "reference"))
        if p in HEAVY:
            continue
        for _, how, path in [a for a in alts if a[0] == p][:per_problem_alts]:
            out.append(Variant(p, f"alt:{how}", path.read_text(), f"alt:{how}"))
        mine = [b for b in bugs if b.problem == p]
        mine = sorted(mine, key=lambda b: not b.mistake)[:per_problem_bugs]  # named mistakes first
        for b in mine:
            out.append(Variant(p, f"bug:{b.name}", b.apply(ref), "reference", b.mistake))
    return out


# ---- disguises: what a student copying a classmate does ---------------------------------------
_BUILTINS = frozenset(dir(builtins)) | {"self", "cls"}


class _Renamer(ast.NodeTransformer):
    """Renames local names (arguments and variables of functions): behaviour unchanged."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def visit_FunctionDef(self, node):
        # bound otherwise than by a Name (renaming their uses alone would break them): arguments (a
        # caller may pass them by name), `except ... as e`, imports, global and nonlocal names
        keep = set(_BUILTINS)
        stored, uses = set(), []
        for n in ast.walk(node):  # one walk: this runs for every function of every disguised copy
            if isinstance(n, ast.Name):
                uses.append(n)
                if isinstance(n.ctx, ast.Store):
                    stored.add(n.id)
            elif isinstance(n, ast.arg):
                keep.add(n.arg)
            elif isinstance(n, ast.ExceptHandler):
                if n.name:
                    keep.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                keep.update((a.asname or a.name).split(".")[0] for a in n.names)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                keep.update(n.names)
        names = sorted(stored - keep)
        mapping = {n: f"{n}_{self.rng.randrange(10, 99)}" for n in names}
        for n in uses:
            if n.id in mapping:
                n.id = mapping[n.id]
        return node  # nested functions were walked with it

    visit_AsyncFunctionDef = visit_FunctionDef


def _reorder(tree: ast.Module, rng: random.Random) -> None:
    """Swap neighbouring function definitions (nothing runs between them, so order is free)."""
    body = tree.body
    for i in range(len(body) - 1):
        if isinstance(body[i], ast.FunctionDef) and isinstance(body[i + 1], ast.FunctionDef) and rng.random() < 0.5:
            body[i], body[i + 1] = body[i + 1], body[i]


def disguise(text: str, seed: int, heavy: bool = True) -> str:
    """The text renamed, reordered and reformatted (``heavy``), or only reformatted with one
    comment of its own (every student's text differs)."""
    rng = random.Random(seed)
    tree = ast.parse(text)
    if heavy:
        tree = _Renamer(rng).visit(tree)
        _reorder(tree, rng)
    return f"# {seed}\n" + ast.unparse(tree) + "\n"  # (names renamed, nodes moved: no location to fix)


# ---- the class ---------------------------------------------------------------------------------
@dataclasses.dataclass
class Student:
    key: str
    modules: dict[str, Variant]       # problem -> the variant it is
    texts: dict[str, str]             # problem -> the module's text
    copied_from: dict[str, str]       # problem -> the classmate's key


def make_class(n: int, seed: int = 0, pool: list[Variant] | None = None, copy_rate: float = 0.15) -> list[Student]:
    """``n`` students: each problem's module drawn from ``pool`` (a planted bug more often for a
    weaker student); with ``copy_rate`` a module is a disguised copy of an earlier classmate's.
    Alternatives are drawn as the students who wrote them: each alternative text by one student
    (then by those who copy it)."""
    rng = random.Random(seed)
    pool = pool or variants()
    by_problem = {p: [v for v in pool if v.problem == p] for p in PROBLEMS}
    unused_alts = {p: [v for v in vs if v.label.startswith("alt:")] for p, vs in by_problem.items()}
    students: list[Student] = []
    for i in range(n):
        key = f"s{i:04d}"
        modules, texts, copied = {}, {}, {}
        # an ability: a weaker student slips more often, in every problem (a class's scores correlate
        # across problems, which item analysis relies on: the rest of the total says who is strong)
        slips = 0.7 * (1 - rng.random())
        for p in (p for p in PROBLEMS if by_problem[p]):
            if students and rng.random() < copy_rate:
                source = rng.choice(students)
                modules[p], copied[p] = source.modules[p], source.key
                texts[p] = disguise(source.texts[p], rng.randrange(1 << 30))
                continue
            bugs = [v for v in by_problem[p] if v.label.startswith("bug:")]
            if bugs and rng.random() < slips:
                v = rng.choice(bugs)
            elif unused_alts[p] and (rng.random() < 0.3 or n - i <= len(unused_alts[p])):
                v = unused_alts[p].pop(0)
            else:
                v = next(v for v in by_problem[p] if v.label == "reference")
            modules[p] = v
            texts[p] = disguise(v.text, rng.randrange(1 << 30), heavy=v.lineage == "reference")
        students.append(Student(key, modules, texts, copied))
    return students


def grade_variants(pool: list[Variant], tmp: Path) -> dict[tuple[str, str], list[dict]]:
    """Each variant graded once, in-process (its problem's tests; the reference's other
    modules beside it): (problem, label) -> its tests, as results.json has them."""
    from grader.grade import run_tests
    from grader.report import build_results
    from tests.self.submissions import reference_with
    from seam import InProcess
    out = {}
    for i, v in enumerate(pool):
        folder = reference_with(tmp / f"v{i}", {v.problem: v.text})
        impl = InProcess(folder, package=f"synthetic_{tmp.name}_{i}")
        plugin = run_tests(impl, gpu="skip", cuda=False, time_limit=120, quiet=True, problems=[v.problem])
        results = build_results(plugin.facts.values(), 0.0, [], violations=impl.violations())
        out[v.problem, v.label] = results["tests"]
    return out


def results_of(student: Student, graded: dict[tuple[str, str], list[dict]]) -> dict:
    from grader.report import summary
    tests = [t for p in PROBLEMS if p in student.modules for t in graded[p, student.modules[p].label]]
    return {"score": sum(t["score"] for t in tests), "execution_time": 0.0, "output": summary(tests, []),
            "tests": tests}


def write_batch(out: Path, students: list[Student], graded: dict, statuses: dict[str, str] | None = None) -> Path:
    """The class as a batch's output folder (grader/batch/output.py): students/<key>/student.json,
    results.json and code/<problem>.py, and batch.json listing the uploads."""
    from grader.batch.output import BATCH, RESULTS, STUDENT, STUDENTS, write_json
    statuses = statuses or {}
    for s in students:
        folder = out / STUDENTS / s.key
        (folder / "code").mkdir(parents=True, exist_ok=True)
        status = statuses.get(s.key, "graded")
        write_json(folder / STUDENT, {"key": s.key, "status": status, "upload": s.key, "passes": [],
                                      "students": [{"sid": s.key, "name": f"Student {s.key}", "email": ""}]})
        if status == "graded":
            write_json(folder / RESULTS, results_of(s, graded))
            for p, text in s.texts.items():
                (folder / "code" / f"{p}.py").write_text(text)
    write_json(out / BATCH, {"passes": [], "uploads": [s.key for s in students]})
    return out


def edit_results(out: Path, key: str, change) -> None:
    """A written student's results.json changed in place by ``change(results)``, its score summed
    again (what a class demo plants on top of the drawn class)."""
    from grader.batch.output import RESULTS, STUDENTS, read_json, write_json
    path = out / STUDENTS / key / RESULTS
    results = read_json(path)
    change(results)
    results["score"] = sum(t["score"] for t in results["tests"])
    write_json(path, results)


def main() -> None:
    import tempfile
    out = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    pool = variants()
    graded = grade_variants(pool, Path(tempfile.mkdtemp()))
    write_batch(out, make_class(n, pool=pool), graded)
    print(json.dumps({"students": n, "variants": len(pool), "out": str(out)}))


if __name__ == "__main__":
    main()
