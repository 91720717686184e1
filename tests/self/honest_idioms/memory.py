"""Idioms in memory.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "collections.defaultdict to total the recipe, an OrderedDict returned",
        "students sum a ledger by kind with a defaultdict and keep the keys' order with an OrderedDict",
        (("import math\n", "import math\nfrom collections import OrderedDict, defaultdict\n"),
         ('''    out: dict[str, int] = {}
    for kind in KINDS:
        full = n_params * sum(nbytes for _, nbytes, k in recipe if k == kind)
''', '''    per_kind: defaultdict[str, int] = defaultdict(int)
    for _, nbytes, k in recipe:
        per_kind[k] += nbytes
    out: OrderedDict[str, int] = OrderedDict()
    for kind in KINDS:
        full = n_params * per_kind[kind]
'''))),
    Idiom(
        "an enum.Enum of the ledger's kinds, KINDS read from it and a kind checked by Kind(kind)",
        "students name a closed set of choices with an Enum rather than bare strings",
        (("import math\n", "import enum\nimport math\n"),
         ('KINDS: tuple[str, ...] = ("params", "grads", "optimizer")\n', '''class Kind(enum.Enum):
    PARAMS = "params"
    GRADS = "grads"
    OPTIMIZER = "optimizer"


KINDS: tuple[str, ...] = tuple(kind.value for kind in Kind)
'''),
         ('''        if kind not in KINDS:
            raise ValueError''', '''        try:
            Kind(kind)
        except (ValueError, TypeError):
            raise ValueError'''))),
    Idiom(
        "logging.getLogger(__name__) with debug messages",
        "students log their intermediate numbers instead of printing them",
        (("import math\n", "import logging\nimport math\n\nlogger = logging.getLogger(__name__)\n"),
         ('''    out["total"] = out["params"] + out["grads"] + out["optimizer"]
    return out
''', '''    out["total"] = out["params"] + out["grads"] + out["optimizer"]
    logger.debug("model states at ZeRO stage %d over %d ranks: %s", zero_stage, data_parallel, out)
    return out
'''),
         ('''    return int(layers * per_layer)
''', '''    logger.debug("activations per layer: %d bytes", per_layer)
    return int(layers * per_layer)
'''))),
]
