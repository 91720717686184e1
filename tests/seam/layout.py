"""The problem set's layout: one module per problem, in this order (the handout's numbering)."""

PROBLEMS = (
    "tensors",
    "dtypes",
    "flops",
    "intensity",
    "memory",
    "adamw_accounting",
    "modules",
    "optim",
    "training",
    "benchmarking",
    "scaling",
)

EXPECTED_LAYOUT = (
    "Expected layout: a folder (or a .zip of one) holding the eleven modules of student_stubs/ "
    "side by side: " + ", ".join(f"{p}.py" for p in PROBLEMS) + ". Nothing else is read."
)


def problem_number(problem: str) -> int:
    return PROBLEMS.index(problem) + 1
