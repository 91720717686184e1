"""Probes: trusted drivers for the parts of the API that are classes or take objects.

A probe runs next to the implementation (in the sandbox worker when grading) and turns an object
API into plain data: it builds the student's Linear/AdamW/..., drives it, and returns tensors and
numbers. It holds no expected answers; the tests compare what it returns with the reference.
Each probe takes the ``Callee`` first (``c.module("modules")`` imports the problem's module) and
is registered with the problem it belongs to, so the grader can charge a crash to that problem.
Probes use PyTorch's own modules and optimizers where they need a helper object, never another
problem's student code: a bug in one problem must not cost points in another.

One file per problem: probes/<problem>.py. Call them as ``impl.probes.<name>(...)``.
"""

import importlib
import pkgutil

PROBLEM_OF: dict[str, str] = {}
CALLS: dict[str, str] = {}  # what a student reads instead of the probe's name: "optim.AdamW"
HOW: dict[str, str] = {}    # probe -> the "how" it measures in the student's process (seam/review.py)
__all__: list[str] = []


def probe(problem: str, calls: str, how: str = ""):
    """Register a probe function under its name, charged to ``problem``; ``calls`` names the
    student's functions or classes it drives (messages name those, never the probe). ``how``:
    what it measures about how the work is done, in the student's process (no cast, a view, the
    pages read ...): such a probe answers only where nothing could blind it (seam/review.py)."""
    def register(fn):
        if fn.__name__ in PROBLEM_OF:
            raise RuntimeError(f"two probes named {fn.__name__}")
        PROBLEM_OF[fn.__name__] = problem
        if how:
            HOW[fn.__name__] = how
        CALLS[fn.__name__] = " / ".join(f"{problem}.{name}" for name in calls.split(" / "))
        __all__.append(fn.__name__)
        globals()[fn.__name__] = fn
        return fn
    return register


def manual_seed(seed: int) -> None:
    """``torch.manual_seed(seed)`` for a probe, less its cost on a machine without CUDA: there
    torch also queues the seed for CUDA, XPU and MTIA, each time with ``traceback.format_stack()``
    of the caller (under pytest's deep stack, a tenth of an in-process grade of optim), for
    devices that never start. The CPU generator gets the same seed either way."""
    import torch
    if torch.cuda.is_available():
        torch.manual_seed(seed)
    else:
        torch.random.default_generator.manual_seed(seed)


def problem_of(target: str) -> str:
    """The problem a seam target belongs to: ``optim.AdamW`` -> ``optim``, ``probes.adamw_run`` ->
    ``optim`` (the problem it is registered with); "" for an unknown probe."""
    head, _, name = target.partition(".")
    return PROBLEM_OF.get(name, "") if head == "probes" else head


def student_name(target: str) -> str:
    """``probes.adamw_run`` -> ``optim.AdamW``; any other target is already the student's name."""
    head, _, name = target.partition(".")
    return CALLS.get(name, target) if head == "probes" else target


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
