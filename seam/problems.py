"""The problem set: one entry per problem, in the handout's order. The one registry.

Everything else derives from ``PROBLEMS``: problem numbers (the position here), the handout's
problem table and each section's heading and points line (`python -m grader rubric --write`
writes them, a self-test checks them), the given dataclasses that cross the seam by value, the
pytest markers (`-m optim`), the layout a submission must have. A problem's files carry its
name, never its number: its stub, reference, handout section, public and hidden tests, probes
and planted bugs are all "<name>.py" or "test_<name>.py" (or "<name>.md") in their folders.

Adding a problem is a line here plus those files (the grader's README: "How to add a problem").
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Problem:
    name: str                       # the module students fill in: student_stubs/<name>.py
    title: str                      # the handout's heading after the name
    structs: tuple[str, ...] = ()   # the problem's given dataclasses that tests pass by value


PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    Problem("tensors", "storage, strides and views"),
    Problem("dtypes", "number formats", structs=("FloatFormat",)),
    Problem("flops", "counting FLOPs"),
    Problem("intensity", "arithmetic intensity and the roofline"),
    Problem("memory", "the training-memory ledger"),
    Problem("adamw_accounting", "the adamwAccounting problem", structs=("TransformerConfig",)),
    Problem("modules", "Linear and Cruncher"),
    Problem("optim", "AdamW and its state"),
    Problem("training", "data, loop, checkpoints, mixed precision"),
    Problem("benchmarking", "MFU"),
    Problem("scaling", "scaling laws"),
    Problem("einops", "named axes"),
)}

# struct class name -> the problem module that defines it (the callee rebuilds it from there)
STRUCT_MODULES = {struct: p.name for p in PROBLEMS.values() for struct in p.structs}

EXPECTED_LAYOUT = (
    "Expected layout: a folder (or a .zip of one) holding the modules of student_stubs/ "
    "side by side: " + ", ".join(f"{p}.py" for p in PROBLEMS) + ". Nothing else is read."
)


def problem_number(problem: str) -> int:
    """1-based, the handout's numbering: the problem's place in PROBLEMS."""
    return list(PROBLEMS).index(problem) + 1


def section(problem: str) -> str:
    """The handout section of a problem, relative to the repository (and the student bundle)."""
    return f"assignment/problems/{problem}.md"
