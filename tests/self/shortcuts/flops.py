from tests.self.shortcuts import Shortcut

SHORTCUTS = [
    Shortcut("flops", "matmul_flops", "read off FlopCounterMode", '''
_checked_matmul_flops = matmul_flops


def matmul_flops(m, k, n):
    _checked_matmul_flops(m, k, n)
    from torch.utils.flop_counter import FlopCounterMode
    a, b = torch.empty(m, k, device="meta"), torch.empty(k, n, device="meta")
    with FlopCounterMode(display=False) as counter:
        a @ b
    return int(counter.get_total_flops())
'''),
    Shortcut("flops", "linear_flops", "FlopCounterMode through an alias, forward and backward", '''
import torch.utils.flop_counter as _fc

_checked_linear_flops = linear_flops


def linear_flops(tokens, d_in, d_out):
    _checked_linear_flops(tokens, d_in, d_out)
    counter = _fc.FlopCounterMode(display=False)
    x = torch.empty(tokens, d_in, device="meta", requires_grad=True)
    w = torch.empty(d_in, d_out, device="meta", requires_grad=True)
    with counter:
        y = x @ w
    forward = int(counter.get_total_flops())
    return {"forward": forward, "backward_input": forward, "backward_weight": forward, "total": 3 * forward}
'''),
    Shortcut("flops", "matmul_flops", "FlopCounterMode in a thread", '''
_checked_matmul_flops = matmul_flops


def matmul_flops(m, k, n):
    _checked_matmul_flops(m, k, n)
    import threading
    from torch.utils.flop_counter import FlopCounterMode
    out = []

    def count():
        with FlopCounterMode(display=False) as counter:
            torch.empty(m, k, device="meta") @ torch.empty(k, n, device="meta")
        out.append(int(counter.get_total_flops()))
    t = threading.Thread(target=count)
    t.start()
    t.join()
    return out[0]
'''),
    Shortcut("flops", "matmul_flops", "FlopCounterMode under DisableTorchFunction", '''
_checked_matmul_flops = matmul_flops


def matmul_flops(m, k, n):
    _checked_matmul_flops(m, k, n)
    from torch.utils.flop_counter import FlopCounterMode
    with torch._C.DisableTorchFunction(), FlopCounterMode(display=False) as counter:
        torch.empty(m, k, device="meta") @ torch.empty(k, n, device="meta")
    return int(counter.get_total_flops())
'''),
]
