"""What a honest-work rule's options must agree on, checked when the rule is made.

A ``Rule`` (seam/problems.py) is data that seam/honest.py reads to decide what to watch and how;
some combinations of its options make a rule that can never charge what it says it forbids (the
watch is off where the forbidden code runs, or two options ask for opposite things). Such a rule
is refused when the registry is imported, with one line naming the rule, the options and what to
do instead, rather than passing every test while watching nothing.

``refusal`` needs no torch (the registry is read without it); ``torch_refusal`` asks torch
whether each name of ``ops`` is one of its own, and runs when seam/honest.py is imported.
"""

import re

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _under(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _overlap(a: str, b: str) -> bool:
    """One module is the other or holds it."""
    return _under(a, (b,)) or _under(b, (a,))


def refusal(rule) -> str | None:
    """Why ``rule`` cannot work as written, in one line that names it, or None."""
    head = f"honest-work rule {rule.name!r}:"
    if not (rule.modules or rule.ops or rule.casts or rule.must):
        return f"{head} it forbids nothing the watch can see: give it modules, ops, casts or must"
    for op in rule.ops:
        if not op.isidentifier():
            return (f"{head} ops={op!r} is not a torch name: ops holds torch's function, Tensor method or ATen "
                    f"op names without a module; another library's function goes in modules, by its module")
    for option in ("modules", "absent"):
        for name in getattr(rule, option):
            if not _DOTTED.fullmatch(name):
                return f"{head} {option}={name!r} is not a dotted module name"
    if rule.must and not _DOTTED.fullmatch(rule.must):
        return f"{head} must={rule.must!r} is not a dotted module name"
    if rule.numbers and rule.must:
        return (f"{head} numbers=True (its functions return numbers) and must={rule.must!r} (a returned tensor "
                f"must come from that module) contradict: must judges only a returned tensor")
    gone = [m for m in rule.absent if not m.startswith("aten.")]
    if rule.numbers:
        for module in rule.modules:
            if not _under(module, ("torch",)) and not _under(module, gone):
                return (f"{head} numbers=True starts the watch's profiler at the first torch op, so code of "
                        f"modules={module!r} (not torch's) that runs none is never seen: drop numbers, or list "
                        f"{module!r} in absent")
    if rule.must:
        for option in ("modules", "absent"):
            for module in getattr(rule, option):
                if _overlap(module, rule.must):
                    return (f"{head} must={rule.must!r} and {option}={module!r} contradict: the result must come "
                            f"from code the rule also forbids")
    for name in rule.absent:
        if name.startswith("aten."):
            if name.removeprefix("aten.") not in rule.ops:
                return (f"{head} absent={name!r} is not in its ops: a kernel taken out of the sandbox would "
                        f"charge a call the watch allows; add {name.removeprefix('aten.')!r} to ops")
        elif not _under(name, rule.modules):
            return (f"{head} absent={name!r} is not among its modules: a module taken out of the sandbox "
                    f"would charge code the watch allows; add it to modules")
    return None


def torch_refusal(rule) -> str | None:
    """Why ``rule``'s ops cannot be seen, in one line, or None: the watch matches ops against
    torch's own calls only (a C function or Tensor method by name, an ATen op, what a torch
    function mode is handed), so a name torch does not have is never charged."""
    import torch
    import torch.nn.functional
    import torch.utils.dlpack
    homes = (torch.Tensor, torch, torch.nn.functional, torch.linalg, torch.fft, torch.special, torch._C,
             torch._C._nn, torch._C._autograd, torch.utils.dlpack)
    for op in rule.ops:
        if not any(hasattr(home, op) for home in homes) and not hasattr(torch.ops.aten, op):
            return (f"honest-work rule {rule.name!r}: ops={op!r} names nothing torch has, so the watch never "
                    f"sees it called; a function of another library goes in modules, by its module")
    return None
