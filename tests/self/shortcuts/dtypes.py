from tests.self.shortcuts import Shortcut

_CAST = '''
_checked_round_to = round_to


def round_to(x, fmt):
    result = _checked_round_to(x, fmt)  # the errors and FP4, as before
    dt = TORCH_DTYPES.get(fmt.name)
    if dt is None or dt == torch.float32:
        return result
{body}
'''

SHORTCUTS = [
    Shortcut("dtypes", "round_to", "the cast to the torch dtype",
             _CAST.format(body="    return x.float().to(dt).float()")),
    Shortcut("dtypes", "round_to", "copy_ into a narrow tensor through getattr",
             _CAST.format(body="    out = torch.empty(x.shape, dtype=dt)\n    getattr(out, 'copy_')(x.float())\n"
                               "    return out.float()")),
    Shortcut("dtypes", "round_to", "the cast in a thread",
             _CAST.format(body="    import threading\n    out = []\n    t = threading.Thread(target=lambda: "
                               "out.append(x.float().to(dt).float()))\n    t.start()\n    t.join()\n    return out[0]")),
    Shortcut("dtypes", "round_to", "the cast under DisableTorchFunction and _DisableTorchDispatch",
             _CAST.format(body="    with torch._C.DisableTorchFunction(), torch._C._DisableTorchDispatch():\n"
                               "        return x.float().to(dt).float()")),
    # names made at run time: the static look cannot name the switch, so the profiler watches too
    Shortcut("dtypes", "round_to", "the cast with torch's dispatch modes popped through names made at run time",
             _CAST.format(body="    c = getattr(torch, ''.join(map(chr, (95, 67))))  # torch._C\n"
                               "    modes = [getattr(c, '_pop_torch_' + 'dispatch_stack')()\n"
                               "             for _ in range(getattr(c, '_len_torch_' + 'dispatch_stack')())]\n"
                               "    try:\n        return x.float().to(dt).float()\n    finally:\n"
                               "        for m in reversed(modes):\n"
                               "            getattr(c, '_push_on_torch_' + 'dispatch_stack')(m)")),
]
