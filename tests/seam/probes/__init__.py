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
__all__: list[str] = []


def probe(problem: str):
    """Register a probe function under its name, charged to ``problem``."""
    def register(fn):
        if fn.__name__ in PROBLEM_OF:
            raise RuntimeError(f"two probes named {fn.__name__}")
        PROBLEM_OF[fn.__name__] = problem
        __all__.append(fn.__name__)
        globals()[fn.__name__] = fn
        return fn
    return register


for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
