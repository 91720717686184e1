"""Honest work by absence: what a rule forbids is taken out of the sandbox worker's Python.

A watch in the student's process can be blinded; code that is not there cannot be run. So before
any student module is imported (once, in the sandbox's zygote before it forks any worker:
grader/sandbox/zygote_server.py, in every isolation mode and in the container), each rule's
``absent`` (seam/problems.py) goes:

- a module (``torch.optim.adamw``, ``torch.utils.flop_counter``): every class and function made
  from its file, or naming it as its module (torch's wrappers of them), is gone under every name.
  Wherever the garbage collector sees a reference to one (modules' names, ``sys.modules``, the
  seam's own modules, registries such as ``flop_registry``, classes' attributes, closures, lists),
  a stand-in takes its place; nothing then holds the real one, and it is freed. A stand-in class
  may still be a base class (the watch then names it as one); made, called or entered, a stand-in
  raises one line naming the rule, and charges it to the ruled function running;
- an ATen kernel (``aten._fused_adamw_``): every overload, on every backend, refuses, whoever
  calls it (``torch._fused_adamw_``, torch's own optimizer with ``fused=True``, C++).

Nothing is exempt: the probes hold no forbidden object either (the optimizer they hand over has
AdamW's state, not its update: seam/adamw_shaped.py), so no graded code can reach one through
them. The student's own ``pytest`` runs the oracles in the same process: nothing is taken out
there.
"""

import gc
import sys
import types
import warnings

from .problems import PROBLEMS, RULED, Rule, section


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


class StandIn(type):
    """The type of every stand-in class: what tells one from the real class it replaces."""


def _stand_in_class(real: type, rule: Rule, refusals: _Refusals) -> type:
    what = f"{real.__module__}.{real.__qualname__}"

    def refuse(*args, **kwargs):
        refusals.refuse(rule, what)

    def init_subclass(cls, **kwargs):  # a class of theirs on it imports; the watch names the base
        pass

    return StandIn(real.__name__, (), {"__module__": real.__module__, "__qualname__": real.__qualname__,
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
    """A module taken out: the real one's names (each class or function of its own a stand-in), and
    a stand-in for any other name asked of it (``from torch.utils.flop_counter import X`` imports;
    using X raises)."""

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


def _made_in(obj, modules: dict, files: dict):
    """The rule whose removed module made ``obj``, a class or function (a class naming it as its
    module; a function made from its file or naming it), else None. No code of ``obj``'s runs."""
    if type(obj) is types.FunctionType:
        rule, name = files.get(obj.__code__.co_filename), obj.__module__
    else:
        rule, name = None, type.__dict__["__dict__"].__get__(obj).get("__module__")  # as its namespace says
    return rule or (modules.get(name) if type(name) is str else None)


def _classes_of(holders) -> dict:
    """id of a class's own namespace (a dict among ``holders``) -> the class: it is changed through
    the class, not the dict, so that the class's attribute cache sees the change. (A class made in
    Python has ``__module__`` in its namespace: other dicts need no look for their class.)"""
    namespaces = [h for h in holders if type(h) is dict and "__module__" in h]
    if not namespaces:
        return {}
    return {id(gc.get_referents(vars(t))[0]): t for t in gc.get_referrers(*namespaces) if issubclass(type(t), type)}


def _swap(holder, stand_in: dict, classes: dict) -> None:
    """Where ``holder`` refers to a real object, make it refer to its stand-in (``stand_in``: id of
    the real object -> its stand-in). A kind of holder not listed here keeps its reference, and the
    real object lives on: the suite looks for any that survive."""
    def new(value):
        return stand_in.get(id(value), value)
    if isinstance(holder, dict):
        owner = classes.get(id(holder))
        for key, value in list(holder.items()):
            if new(key) is key and new(value) is value:
                continue
            if owner is not None:
                setattr(owner, key, new(value))
            elif new(key) is key:
                holder[key] = new(value)
            else:
                del holder[key]
                holder[new(key)] = new(value)
    elif isinstance(holder, list):
        holder[:] = [new(v) for v in holder]
    elif isinstance(holder, set):
        real = {v for v in holder if new(v) is not v}
        holder -= real
        holder |= {new(v) for v in real}
    elif isinstance(holder, types.CellType):
        holder.cell_contents = new(holder.cell_contents)


def _take_out(refusals: _Refusals) -> tuple[dict, list]:
    """Replace each removed module and everything made in it by stand-ins, wherever referenced;
    returns the stand-in modules and the kernels' libraries."""
    modules, files, gone, libraries = {}, {}, {}, []
    for rule in dict.fromkeys(RULED.values()):
        for name in rule.absent:
            if not name.startswith("aten."):
                modules[name] = rule
                gone[name] = _Gone(name, rule, refusals)
                real = sys.modules.get(name)
                if getattr(real, "__file__", None):
                    files[real.__file__] = rule
        ops = [m.removeprefix("aten.") for m in rule.absent if m.startswith("aten.")]
        if ops:
            libraries.append(_kernels(ops, rule, refusals))
    real_modules = {name: sys.modules[name] for name in gone if sys.modules.get(name) is not None}
    made = [(obj, _made_in(obj, modules, files)) for obj in gc.get_objects()
            if type(obj) is types.FunctionType or issubclass(type(obj), type)]
    reals = [obj for obj, rule in made if rule is not None]
    stand_in = {id(m): gone[name] for name, m in real_modules.items()}
    for obj, rule in made:
        if rule is not None:
            stand_in[id(obj)] = (_stand_in_class if isinstance(obj, type) else _stand_in_function)(obj, rule, refusals)
    del made
    mine = (reals, real_modules, sys._getframe())
    holders = [h for h in gc.get_referrers(*reals, *real_modules.values()) if not any(h is m for m in mine)]
    classes = _classes_of(holders)
    for holder in holders:
        _swap(holder, stand_in, classes)
    for name, real in real_modules.items():  # its names now hold stand-ins
        for key, value in vars(real).items():
            if not key.startswith("__") or key in ("__all__", "__doc__"):
                setattr(gone[name], key, value)
    sys.modules.update(gone)  # `import torch.optim.adamw` finds the stand-in
    return gone, libraries


def remove(honest=None) -> dict:
    """Take every rule's ``absent`` out of this process; returns what keeps the kernels' refusals
    registered (keep it for the life of the process) and the names of the modules gone. Run once,
    before any student module is imported."""
    gc.unfreeze()  # frozen objects (the zygote's, before the fork) are hidden from get_referrers
    gone, libraries = _take_out(_Refusals(honest))
    gc.collect()   # the real objects, now unreferenced, are freed
    gc.freeze()    # and what is left stays out of later collections, as the zygote meant
    return {"libraries": libraries, "gone": sorted(gone)}
