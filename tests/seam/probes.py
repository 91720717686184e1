"""Probes: trusted drivers for the parts of the API that are classes or take objects.

A probe runs next to the implementation (in the sandbox worker when grading) and turns an object
API into plain data: it builds the student's Linear/AdamW/..., drives it, and returns tensors and
numbers. It holds no expected answers; the tests compare what it returns with the reference.
Each probe takes the ``Callee`` first (``c.module("modules")`` imports the problem's module) and
is registered with the problem it belongs to, so the grader can charge a crash to that problem.
"""

PROBLEM_OF: dict[str, str] = {}
__all__: list[str] = []


def probe(problem: str):
    def register(fn):
        PROBLEM_OF[fn.__name__] = problem
        __all__.append(fn.__name__)
        return fn
    return register
