"""Idioms in scaling.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "functools.cache on a pure helper",
        "students memoise a pure function of numbers that a sweep calls again and again",
        (("import math\n", "import functools\nimport math\n"),
         ('''    n_params = math.sqrt(compute / (6 * tokens_per_param))
    return float(n_params), float(tokens_per_param * n_params)
''', '''    return _chinchilla(compute, tokens_per_param)


@functools.cache
def _chinchilla(compute: int | float, tokens_per_param: int | float) -> tuple[float, float]:
    n_params = math.sqrt(compute / (6 * tokens_per_param))
    return float(n_params), float(tokens_per_param * n_params)
'''))),
    Idiom(
        "a frozen dataclass that builds the returned tuple (dataclasses.astuple)",
        "students name the parts of a result with a dataclass and hand back the tuple the API asks for",
        (("import math\n", '''import math
from dataclasses import astuple, dataclass


@dataclass(frozen=True)
class Allocation:
    n_params: float
    n_tokens: float
    loss: float
'''),
         ("    return float(n_params), float(n_tokens), float(loss)\n",
          "    return astuple(Allocation(float(n_params), float(n_tokens), float(loss)))\n"))),
    Idiom(
        "numpy's np.errstate around the logarithms",
        "students make numpy raise instead of returning nan or -inf silently",
        (("    lx, ly = np.log(xs), np.log(ys)\n", '''    with np.errstate(divide="raise", invalid="raise"):
        lx, ly = np.log(xs), np.log(ys)
'''),)),
]
