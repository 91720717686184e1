"""A charge names the public function the student called (seam/public_names.py): numpy.polyfit,
not the array-function dispatcher the watch sees run first; numpy.sum, not the _wrapreduction it
runs; torch.optim.AdamW, not the module that defines it. Real call paths, watched in process."""

import inspect
import sys

import numpy as np
import torch

from seam import public_names
from seam.honest import Honest
from seam.problems import Rule

FITS = Rule("fits by hand", "numpy's fits", "the fit is the problem", "scaling", "fit it yourself",
            modules=("numpy",))
SOURCE = '''
import numpy as np
def fit(x, y):
    return np.polyfit(x, y, 1)
def total(x):
    return np.sum(x)
def solve(a, b):
    return np.linalg.solve(a, b)
'''


def _theirs(tmp_path) -> tuple[Honest, dict]:
    """A scaling module of theirs (its code objects name their file) and the worker's record, with
    FITS covering its functions."""
    path = tmp_path / "scaling.py"
    path.write_text(SOURCE)
    namespace = {"__name__": f"scaling_{tmp_path.name}"}
    exec(compile(SOURCE, str(path), "exec"), namespace)
    honest = Honest(str(tmp_path))
    honest.ruled = {f"scaling.{name}": FITS for name in ("fit", "total", "solve")}
    return honest, namespace


def test_a_charge_names_the_numpy_function_called_not_its_dispatcher(tmp_path):
    honest, theirs = _theirs(tmp_path)
    calls = {"fit": ([0.0, 1.0, 2.0], [1.0, 3.0, 5.0]), "total": ([1, 2, 3],), "solve": (np.eye(2), np.ones(2))}
    for name, args in calls.items():
        with honest.watch("scaling", [f"scaling.{name}"]):
            theirs[name](*args)
    assert honest.violations == {"scaling.fit": "numpy.polyfit", "scaling.total": "numpy.sum",
                                 "scaling.solve": "numpy.linalg.solve"}
    # what the frames alone say, which the report no longer prints
    assert np.polyfit.__wrapped__.__module__ == "numpy.lib._polynomial_impl"


def test_an_internal_frame_seen_first_is_named_by_the_call_it_serves(tmp_path):
    """A watch that starts inside the library (the profiler of a numbers rule arms at the first
    torch op) first sees an internal: the outermost frame of the library below theirs names it."""
    _, theirs = _theirs(tmp_path)
    seen = []

    def look(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "_wrapreduction" and not seen:
            seen.append(frame)
    sys.setprofile(look)
    try:
        theirs["total"]([1, 2, 3])
    finally:
        sys.setprofile(None)
    (inner,) = seen
    start = public_names.entry(inner, lambda f: f.f_code.co_filename.startswith(np.__path__[0]),
                               lambda f: f.f_code.co_filename == str(tmp_path / "scaling.py"))
    assert start is not inner and start.f_code.co_name == "sum"
    assert public_names.of_code(start.f_code, start.f_globals, "numpy._core.fromnumeric") == "numpy.sum"
    # a function no namespace holds under its name keeps the name its file tells
    assert public_names.of_code(inner.f_code, {}, "numpy._core.fromnumeric") == \
        "numpy._core.fromnumeric._wrapreduction"


def test_torch_classes_and_methods_are_named_where_students_import_them():
    adamw = sys.modules["torch.optim.adamw"]
    assert public_names.of_class(adamw.AdamW) == "torch.optim.AdamW"
    adam = sys.modules["torch.optim.adam"]  # (AdamW steps with Adam's step, under torch's decorators)
    # the code that runs: under torch's decorators, and under the profiling hook torch wraps round
    # an optimizer class's step once one of them is made (another test in this process may have)
    step = inspect.unwrap(adam.Adam.step).__code__
    assert step.co_name == "step"
    assert public_names.of_code(step, vars(adam), "torch.optim.adam") == "torch.optim.Adam.step"
    linear = sys.modules["torch.nn.modules.linear"]
    assert public_names.of_code(torch.nn.Linear.forward.__code__, vars(linear), "torch.nn.modules.linear") == \
        "torch.nn.Linear.forward"
