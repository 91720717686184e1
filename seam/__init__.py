"""The one seam between the tests and the code under test.

Tests never import student code. They hold an ``Impl`` and call through it with plain data:

    impl.tensors.view_strides((3, 4), (4, 1), (4, 3))     # -> (3, 1)
    impl.probes.linear_forward(4, 2, weight, x)           # class APIs go through probes.py
    impl.get("adamw_accounting.GPT2_XL")                  # -> Struct("TransformerConfig", {...})

Arguments and results are encoded to JSON (codec.py) and decoded again on the other side, in
this process (``InProcess``: students' own pytest, and the reference inside the grader) or in a
sandboxed worker process (``grader.sandbox.Sandbox``: submissions being graded). Either way a
test sees only built-in values, tensors and ``Struct``s, and exceptions are rebuilt here:
ValueError/IndexError/... by name, anything else as ``SubmissionError``.
"""


# Importing the package imports nothing: the registry (seam.problems) is read without torch by
# the command line, the options and the paths (a TA's `python -m grader merge --help` starts in a
# fraction of a second), and what needs torch (seam/impl.py: Impl, InProcess, the exceptions) is
# imported when a name of it is first asked for.
PUBLIC = ("Impl", "InProcess", "describe", "rebuild", "Struct", "SubmissionError", "ModuleUnavailableError",
          "SandboxFailure", "PASSTHROUGH", "GRADER_PLUGIN", "GPU_NOT_RUN", "PROBLEMS", "RULED")


def __getattr__(name: str):
    if name in PUBLIC:
        from . import impl
        return getattr(impl, name)
    raise AttributeError(f"module 'seam' has no attribute {name!r}")


__all__ = ["Impl", "InProcess", "describe", "Struct", "SubmissionError", "SandboxFailure", "PROBLEMS"]
