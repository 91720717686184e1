"""Idioms in flops.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "import inspect and inspect.signature(fn).bind(*args, **kwargs) in a checking decorator",
        "students check every size argument of a function in one place, by the parameter names",
        (("import math\n", '''import functools
import inspect
import math
'''),
         ("def matmul_flops(m: int, k: int, n: int) -> int:\n", '''def _sizes_checked(fn):
    """Check every argument of fn as a size before fn runs."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = inspect.signature(fn).bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            _check_count(name, value)
        return fn(*args, **kwargs)
    return wrapper


@_sizes_checked
def matmul_flops(m: int, k: int, n: int) -> int:
'''))),
    Idiom(
        "math.prod, operator.mul with functools.reduce, and itertools to multiply and sum counts",
        "a product of several sizes reads as one call",
        (("import math\n", "import functools\nimport itertools\nimport math\nimport operator\n"),
         ("    return int(2 * m * k * n)\n", "    return int(functools.reduce(operator.mul, (2, m, k, n), 1))\n"),
         ("    lm_head = 2 * T * V * d\n", "    lm_head = math.prod((2, T, V, d))\n"),
         ('''        "total": int(attn_proj + attn_scores + ffn + lm_head),
''', '''        "total": int(sum(itertools.chain((attn_proj, attn_scores), (ffn, lm_head)))),
'''))),
    Idiom(
        "typing generics (TypeVar) and a typing.Protocol for what a config must have",
        "students annotate with structural types and generic helpers",
        (("import math\n", '''import math
from typing import Protocol, TypeVar

Number = TypeVar("Number", int, float)


class HasShape(Protocol):
    """What transformer_forward_flops reads of its config."""
    vocab_size: int
    num_layers: int
    d_model: int
    num_heads: int
    d_ff: int


def _same(value: Number) -> Number:
    return value
'''),
         ("def transformer_forward_flops(cfg: TransformerConfig, seq_len: int) -> dict[str, int]:\n",
          "def transformer_forward_flops(cfg: HasShape, seq_len: int) -> dict[str, int]:\n"),
         ("    return float(6 * n_params * n_tokens)\n", "    return float(_same(6 * n_params * n_tokens))\n"))),
]
