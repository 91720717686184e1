"""Honest work by absence: what a rule forbids is taken out of the sandbox worker's Python.

A watch in the student's process can be blinded; code that is not there cannot be run. So before
any student module is imported (grader/sandbox/worker.py, in every isolation mode and in the
container), each rule's ``absent`` (seam/problems.py) goes:

- a module (``torch.optim.adamw``, ``torch.utils.flop_counter``): ``sys.modules`` and every
  other module's names that held it, or an object defined in it (``torch.optim.AdamW``,
  ``torch.optim._functional.adamw``), get a stand-in instead. A stand-in class may still be a base
  class (the watch then names it as one) and answers ``isinstance`` as the real class would (an
  honest ``optimizer_state_bytes`` may ask of torch's optimizers); made, called or entered, a
  stand-in raises one line naming the rule, and charges it to the ruled function running;
- an ATen kernel (``aten._fused_adamw_``): every overload, on every backend, refuses, whoever
  calls it (``torch._fused_adamw_``, torch's own optimizer with ``fused=True``, C++).

The seam's probes keep the real classes they drive as oracles' helpers (the optimizers handed to
``optimizer_state_bytes`` and to the training loop): they took them at import, and the seam's
modules are left as they are. So an object of a
forbidden class can still reach a student function as an argument, and its methods still run
torch's code: that route is the watch's (seam/honest.py), and the README's trust table says so.

The student's own ``pytest`` runs the oracles in the same process: nothing is taken out there.
"""

import sys
import types
import warnings

from .problems import PROBLEMS, RULED, Rule, section

KEEP = ("seam", "seam.")  # the seam's modules keep what they hold (the probes' helpers)


class Forbidden(RuntimeError):
    """Raised by a stand-in: the forbidden code is not in the sandbox."""


def _owner_problem(rule: Rule) -> str:
    return next(p.name for p in PROBLEMS.values() for r, _ in p.rules if r is rule)


def message(rule: Rule, what: str) -> str:
    """The one line a stand-in raises (and the report's honest-work line names ``what``)."""
    return (f"{what} is forbidden by the honest-work rule '{rule.name}' of {_owner_problem(rule)} "
            f"and is not in the grader's sandbox (the handout, {section(rule.handout)}: \"{rule.quote}\")")


class _Refusals:
    """What a stand-in does when used: tell the watch (``honest``: seam/honest.py's record, or
    None), then raise."""

    def __init__(self, honest):
        self.honest = honest

    def refuse(self, rule: Rule, what: str):
        if self.honest is not None:
            self.honest.absent_used(rule, what, sys._getframe(2))
        raise Forbidden(message(rule, what))


def _stand_in_class(real: type, rule: Rule, refusals: _Refusals) -> type:
    what = f"{real.__module__}.{real.__qualname__}"

    class Meta(type):  # isinstance / issubclass answer as the real class would
        def __instancecheck__(cls, obj):
            return isinstance(obj, real) or type.__instancecheck__(cls, obj)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real) or type.__subclasscheck__(cls, sub)

    def refuse(*args, **kwargs):
        refusals.refuse(rule, what)

    def init_subclass(cls, **kwargs):  # a class of theirs on it imports; the watch names the base
        pass

    return Meta(real.__name__, (), {"__module__": real.__module__, "__qualname__": real.__qualname__,
                                    "__doc__": f"(not in the sandbox: {what})",
                                    "__new__": lambda cls, *a, **k: refuse(),
                                    "__init_subclass__": classmethod(init_subclass)})


def _stand_in_function(real, rule: Rule, refusals: _Refusals):
    what = f"{getattr(real, '__module__', None) or ''}.{getattr(real, '__qualname__', real.__name__)}"

    def stand_in(*args, **kwargs):
        refusals.refuse(rule, what)
    stand_in.__name__ = stand_in.__qualname__ = real.__name__
    stand_in.__module__ = getattr(real, "__module__", None)
    return stand_in


class _Gone(types.ModuleType):
    """A module taken out: the real one's plain values, a stand-in for each of its own classes and
    functions, and one for any other name asked of it (``from torch.utils.flop_counter import X``
    imports; using X raises)."""

    def __init__(self, name: str, rule: Rule, refusals: _Refusals):
        super().__init__(name, f"(not in the sandbox: the honest-work rule '{rule.name}')")
        self._rule, self._refusals = rule, refusals

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in_function(types.SimpleNamespace(__name__=name, __module__=self.__name__,
                                                        __qualname__=name), self._rule, self._refusals)


def _kernels(ops, rule: Rule, refusals: _Refusals):
    """A library that makes every overload of these ATen ops refuse, on every backend; kept alive
    by the caller (its registrations last as long as it does)."""
    import torch
    library = torch.library.Library("aten", "IMPL")
    keys = ("CPU", "CUDA", "Meta", "CompositeExplicitAutograd")
    with warnings.catch_warnings():  # "Overriding a previously registered kernel": that is the point
        warnings.simplefilter("ignore")
        for op in ops:
            packet = getattr(torch.ops.aten, op, None)
            if packet is None:
                continue
            for overload in packet.overloads():
                qualified = op if overload == "default" else f"{op}.{overload}"

                def refuse(*args, _what=f"torch's {op}", **kwargs):
                    refusals.refuse(rule, _what)
                for key in keys:
                    try:
                        library.impl(qualified, refuse, key)
                    except RuntimeError:  # a backend this op has no kernel slot for here
                        continue
    return library


def remove(honest=None) -> dict:
    """Take every rule's ``absent`` out of this process; returns what keeps the kernels' refusals
    registered (keep it for the life of the process) and, under "replaced", how many names now
    hold a stand-in. Run once, before any student module is imported."""
    refusals = _Refusals(honest)
    rules = list(dict.fromkeys(RULED.values()))
    replace: dict[int, object] = {}  # id of a real object -> its stand-in
    real_objects = []                 # ... each kept alive while ``replace`` is keyed by its id
    gone: dict[str, _Gone] = {}
    libraries = []
    for rule in rules:
        modules = [m for m in rule.absent if not m.startswith("aten.")]
        ops = [m.removeprefix("aten.") for m in rule.absent if m.startswith("aten.")]
        for name in modules:
            real = sys.modules.get(name)
            stand_in = gone[name] = _Gone(name, rule, refusals)
            if real is None:
                continue
            replace[id(real)] = stand_in
            real_objects.append(real)
            for key, value in list(vars(real).items()):
                real_objects.append(value)
                if isinstance(value, type) and value.__module__ == name:
                    value = replace.setdefault(id(value), _stand_in_class(value, rule, refusals))
                elif isinstance(value, types.FunctionType) and value.__module__ == name:
                    value = replace.setdefault(id(value), _stand_in_function(value, rule, refusals))
                elif key.startswith("__") and key not in ("__all__", "__doc__"):
                    continue
                setattr(stand_in, key, value)
        if ops:
            libraries.append(_kernels(ops, rule, refusals))
    replaced = 0
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name == KEEP[0] or module_name.startswith(KEEP[1]) or module_name in gone:
            continue
        try:
            names = list(vars(module).items())
        except TypeError:
            continue
        for key, value in names:
            stand_in = replace.get(id(value))
            if stand_in is not None and not key.startswith("__"):
                try:
                    setattr(module, key, stand_in)
                    replaced += 1
                except (AttributeError, TypeError):
                    continue
    sys.modules.update(gone)  # `import torch.optim.adamw` now finds the stand-in
    return {"libraries": libraries, "replaced": replaced, "gone": sorted(gone)}
