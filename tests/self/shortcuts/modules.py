from tests.self.shortcuts import Shortcut

_FORWARD = '''
from torch.nn.functional import linear as _project

_OwnLinear = Linear


class Linear(_OwnLinear):
    def forward(self, x):
        if x.shape[-1] != self.input_dim:
            raise ValueError(f"expected last dim {{self.input_dim}}, got {{tuple(x.shape)}}")
{body}
'''

SHORTCUTS = [
    Shortcut("modules", "Linear", "F.linear through an alias bound at import",
             _FORWARD.format(body="        return _project(x, self.weight.T)")),
    Shortcut("modules", "Cruncher", "Cruncher built from nn.Linear", '''
class Cruncher(nn.Module):
    def __init__(self, dim, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim, bias=False) for _ in range(num_layers)])
        self.final = nn.Linear(dim, 1, bias=False)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.final(x).squeeze(-1)
'''),
    Shortcut("modules", "Linear", "nn.Linear kept inside", '''
class Linear(nn.Module):
    def __init__(self, input_dim, output_dim, device=None, dtype=None):
        super().__init__()
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError("Linear dims must be positive")
        self.input_dim, self.output_dim = input_dim, output_dim
        self.inner = nn.Linear(input_dim, output_dim, bias=False, device=device, dtype=dtype)
        self.weight = nn.Parameter(self.inner.weight.detach().T.contiguous())

    def forward(self, x):
        if x.shape[-1] != self.input_dim:
            raise ValueError("bad last dim")
        return x @ self.weight
'''),
    Shortcut("modules", "Linear", "F.linear in a thread",
             _FORWARD.format(body="        import threading\n        out = []\n        t = threading.Thread(target=lambda: "
                                  "out.append(_project(x, self.weight.T)))\n        t.start()\n        t.join()\n"
                                  "        return out[0]")),
    Shortcut("modules", "Linear", "F.linear under DisableTorchFunction",
             _FORWARD.format(body="        with torch._C.DisableTorchFunction():\n"
                                  "            return _project(x, self.weight.T)")),
]
