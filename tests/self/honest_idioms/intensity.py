"""Idioms in intensity.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "warnings.warn for a sub-byte element size",
        "students warn about an input that is legal but whose answer needs care",
        (("import math\n", "import math\nimport warnings\n"),
         ('''    _check_real("bytes_per_element", bytes_per_element, positive=True)
    flops = 2 * b * d * f
''', '''    _check_real("bytes_per_element", bytes_per_element, positive=True)
    if bytes_per_element < 1:
        warnings.warn(f"{bytes_per_element} bytes per element: packed formats also move scales",
                      stacklevel=2)
    flops = 2 * b * d * f
'''))),
    Idiom(
        "a custom exception class (a ValueError) and assert statements",
        "students name their own errors and assert what must hold",
        (("import math\n", '''import math


class IntensityInputError(ValueError):
    """A number given to this module that no roofline has."""
'''),
         ('''        raise ValueError(f"{name} must be finite, got {value!r}")
''', '''        raise IntensityInputError(f"{name} must be finite, got {value!r}")
'''),
         ('''    return float(flops / bytes_moved)
''', '''    assert flops > 0 and bytes_moved > 0, (flops, bytes_moved)
    return float(flops / bytes_moved)
'''))),
    Idiom(
        "functools.partial of the module's own check",
        "students fix an argument of their own helper once instead of repeating it",
        (("import math\n", "import functools\nimport math\n"),
         ('''def matmul_intensity(''', '''_check_positive = functools.partial(_check_real, positive=True)


def matmul_intensity('''),
         ('''    _check_real("peak_flops", peak_flops, positive=True)
    _check_real("bandwidth", bandwidth, positive=True)
    return float(peak_flops / bandwidth)
''', '''    _check_positive("peak_flops", peak_flops)
    _check_positive("bandwidth", bandwidth)
    return float(peak_flops / bandwidth)
'''))),
]
