"""Idioms in adamw_accounting.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "setattr(sizes, k, v) over keyword overrides of the student's own dataclass",
        "students build a record of the formula's letters and let a caller override some by keyword",
        (("from dataclasses import dataclass\n", '''from dataclasses import dataclass


@dataclass
class Sizes:
    """The letters of the handout's formulas."""
    V: int
    D: int
    F: int
    L: int


def _sizes(cfg, **overrides) -> Sizes:
    sizes = Sizes(V=cfg.vocab_size, D=cfg.d_model, F=cfg.d_ff, L=cfg.num_layers)
    for k, v in overrides.items():
        setattr(sizes, k, v)
    return sizes
'''),
         ('''    _check_config(cfg)
    V, D, F, L = cfg.vocab_size, cfg.d_model, cfg.d_ff, cfg.num_layers
''', '''    _check_config(cfg)
    s = _sizes(cfg, L=cfg.num_layers)
    V, D, F, L = s.V, s.D, s.F, s.L
'''))),
    Idiom(
        "vars(self) in a __repr__ that nothing calls, and vars(budget) read for real",
        "students give their own record a readable repr and read its fields as a dict",
        (("from dataclasses import dataclass\n", '''from dataclasses import dataclass


@dataclass(repr=False)
class Budget:
    steps: int
    peak_flops: float
    mfu: float

    def __repr__(self) -> str:
        return f"Budget({vars(self)})"
'''),
         ('''    seconds = total_flops / (peak_flops * mfu)
''', '''    budget = vars(Budget(steps, peak_flops, mfu))
    seconds = total_flops / (budget["peak_flops"] * budget["mfu"])
'''))),
    Idiom(
        "json.dumps of the config (dataclasses.asdict) as the key of functools.lru_cache",
        "students cache an expensive count per config, keyed by its JSON text",
        (("from dataclasses import dataclass\n", "import functools\nimport json\nfrom dataclasses import asdict, dataclass\n"),
         ('''    _check_config(cfg)
    V, D, F, L = cfg.vocab_size, cfg.d_model, cfg.d_ff, cfg.num_layers
    per_block = 2 * D + 4 * D * D + 3 * D * F
    return int(2 * V * D + D + L * per_block)
''', '''    _check_config(cfg)
    return _parameter_count(json.dumps(asdict(cfg), sort_keys=True))


@functools.lru_cache(maxsize=None)
def _parameter_count(config_json: str) -> int:
    c = json.loads(config_json)
    V, D, F, L = c["vocab_size"], c["d_model"], c["d_ff"], c["num_layers"]
    per_block = 2 * D + 4 * D * D + 3 * D * F
    return int(2 * V * D + D + L * per_block)
'''))),
]
