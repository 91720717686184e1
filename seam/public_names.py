"""The public name of the library function a student called, for a charge's message.

The watch (seam/honest.py) sees the first Python frame of a forbidden module run under a student's
call, and that frame is often a library's internal: numpy's ``np.polyfit`` first runs
``numpy.lib._polynomial_impl._polyfit_dispatcher`` (its array-function dispatcher, called from C
before the implementation), ``np.sum`` may be seen first in ``numpy._core.fromnumeric._wrapreduction``,
and torch's ``AdamW`` is defined in ``torch.optim.adamw``. A report names what the student wrote:
``numpy.polyfit``, ``numpy.sum``, ``torch.optim.AdamW.step``.

It runs inside the watch's profiler, so it runs no code of any object it looks at: it reads
modules' and classes' namespaces as dicts, follows only exact types (functions, real modules,
numpy's dispatcher objects), and falls back to the module and qualified name the file tells.
"""

import sys
from types import FunctionType, MappingProxyType, ModuleType


def _dispatcher_type():
    """numpy's type for its public functions (np.polyfit), if numpy is imported, else None."""
    overrides = _namespace(sys.modules.get("numpy._core.overrides"))
    found = _get(overrides, "_ArrayFunctionDispatcher") if overrides is not None else None
    return found if issubclass(type(found), type) else None


def _get(namespace, key):
    """``namespace[key]`` or None, for a module's dict or a class's mapping proxy (no code runs)."""
    if type(namespace) is dict:
        return dict.get(namespace, key)
    if type(namespace) is MappingProxyType:
        return namespace.get(key)
    return None


def _namespace(obj):
    """A real module's or class's own namespace, read without running any of its code."""
    if type(obj) is ModuleType:
        return ModuleType.__dict__["__dict__"].__get__(obj)
    if issubclass(type(obj), type):
        return type.__dict__["__dict__"].__get__(obj)
    return None


def _implementation(obj):
    """The Python function behind a public object: itself, or what a numpy dispatcher calls."""
    if type(obj) is FunctionType:
        return obj
    kind = _dispatcher_type()
    if kind is not None and type(obj) is kind:
        impl = obj._implementation  # (a member of numpy's C type: no Python code runs)
        return impl if type(impl) is FunctionType else None
    return None


def _member(namespace: dict, name: str, code) -> bool:
    """``namespace[name]`` is the function (method, static or class method, property) of ``code``."""
    value = _get(namespace, name)
    if type(value) in (staticmethod, classmethod):
        value = value.__func__
    elif type(value) is property:
        value = value.fget
    impl = _implementation(value)
    for _ in range(8):  # through functools.wraps decorators (torch's optimizers' step)
        if impl is None or impl.__code__ is code:
            break
        wrapped = _get(FunctionType.__dict__["__dict__"].__get__(impl), "__wrapped__")
        impl = wrapped if type(wrapped) is FunctionType else None
    return impl is not None and impl.__code__ is code


def _top(code, namespace: dict):
    """(the module-level object ``code`` belongs to, the public rest of its name), or None."""
    parts = code.co_qualname.split(".")
    if "<locals>" in parts:
        return None
    top = _get(namespace, parts[0])
    if len(parts) == 1:
        # numpy's dispatcher runs first, a module-level function of its own: "_polyfit_dispatcher"
        # for polyfit (numpy's convention; a dispatcher shared by several functions keeps its name)
        name = code.co_name
        if name.startswith("_") and name.endswith("_dispatcher"):
            public = name[1:-len("_dispatcher")]
            obj = _get(namespace, public)
            if _dispatcher_type() is not None and type(obj) is _dispatcher_type():
                return obj, public
        return (top, parts[0]) if _member(namespace, parts[0], code) else None
    inner = _namespace(top) if issubclass(type(top), type) else None
    for part in parts[1:-1]:
        inner = _namespace(_get(inner, part)) if inner is not None else None
    if inner is not None and _member(inner, parts[-1], code):
        return top, ".".join(parts)
    return None


def home(obj, name: str, module: str) -> str:
    """The shortest public module that holds ``obj`` under ``name``: the package whose name a
    student writes (``numpy`` for numpy.lib._polynomial_impl.polyfit); else ``module``."""
    parts = module.split(".")
    for n in range(1, len(parts) + 1):
        if any(p.startswith("_") for p in parts[:n]):
            break
        namespace = _namespace(sys.modules.get(".".join(parts[:n])))
        if namespace is not None and _get(namespace, name) is obj:
            return ".".join(parts[:n])
    return module


def of_code(code, namespace: dict, module: str) -> str:
    """The public name of the function ``code`` is, run in ``namespace`` (its module's globals),
    defined in ``module``: "numpy.polyfit", "torch.optim.AdamW.step"; "module.qualname" if the
    namespace holds no such function under its name."""
    try:
        found = _top(code, namespace) if type(namespace) is dict else None  # (a frame's globals)
        if found is not None:
            obj, rest = found
            return f"{home(obj, rest.split('.')[0], module)}.{rest}"
    except Exception:  # a namespace no library would have: the name the file tells
        pass
    return f"{module}.{code.co_qualname}"


def of_class(cls) -> str:
    """The public name of a library class (a base class of a student's): torch.optim.AdamW."""
    module, qual = str(type.__dict__["__module__"].__get__(cls)), str(type.__dict__["__qualname__"].__get__(cls))
    if "." not in qual:
        return f"{home(cls, qual, module)}.{qual}"
    return f"{module}.{qual}"


def entry(frame, inside, theirs):
    """The outermost frame of a run of library frames that ``inside`` accepts, below the first
    frame of theirs: the function the student's code called (numpy's polyfit, not the _sum it
    calls, when the watch starts only inside it)."""
    while frame.f_back is not None and inside(frame.f_back) and not theirs(frame.f_back):
        frame = frame.f_back
    return frame
