from tests.self.bugs import REFERENCE, Bug

# torch.nn.Linear's (out, in) layout takes two edits far apart (the weight's creation and forward):
# the bug replaces the stretch of the reference between them.
_SOURCE = (REFERENCE / "modules.py").read_text()
_FORWARD = "        return x @ self.weight\n"
_LINEAR = _SOURCE[_SOURCE.index("        self.weight = nn.Parameter("):_SOURCE.index(_FORWARD) + len(_FORWARD)]

BUGS = [
    Bug("modules", "init std 1/input_dim instead of 1/sqrt(input_dim)",
        "        std = 1.0 / math.sqrt(input_dim)",
        "        std = 1.0 / input_dim"),
    Bug("modules", "truncation at ±3 absolute, as the notes' code (never bites)",
        "a=-3.0 * std, b=3.0 * std)",
        "a=-3.0, b=3.0)", mistake="truncation at ±3 absolute instead of ±3σ"),
    Bug("modules", "clamping a plain normal instead of truncating",
        "        nn.init.trunc_normal_(self.weight, mean=0.0, std=std, a=-3.0 * std, b=3.0 * std)",
        "        with torch.no_grad():\n"
        "            self.weight.normal_(0.0, std).clamp_(-3.0 * std, 3.0 * std)"),
    Bug("modules", "Cruncher's final layer dim -> dim",
        "        self.final = Linear(dim, 1)",
        "        self.final = Linear(dim, dim)"),
    Bug("modules", "forward via F.linear on the transposed weight",
        "        return x @ self.weight\n",
        "        return torch.nn.functional.linear(x, self.weight.T)\n"),
    Bug("modules", "device and dtype arguments ignored",
        "nn.Parameter(torch.empty(input_dim, output_dim, device=device, dtype=dtype))",
        "nn.Parameter(torch.empty(input_dim, output_dim))"),
    Bug("modules", "counting the state_dict (buffers and tied weights twice)",
        "    return int(sum(p.numel() for p in module.parameters()))",
        "    return int(sum(v.numel() for v in module.state_dict().values()))"),
    Bug("modules", "parameter_bytes assumes 4 bytes per parameter",
        "    return int(sum(p.numel() * p.element_size() for p in module.parameters()))",
        "    return int(sum(p.numel() * 4 for p in module.parameters()))"),
    Bug("modules", "weight stored as (output_dim, input_dim), nn.Linear's layout", _LINEAR,
        _LINEAR.replace("torch.empty(input_dim, output_dim,", "torch.empty(output_dim, input_dim,")
        .replace("return x @ self.weight\n", "return x @ self.weight.T\n"),
        mistake="the weight stored as (output_dim, input_dim)"),
]
