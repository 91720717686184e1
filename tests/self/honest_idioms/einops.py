"""Idioms in einops.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        'hasattr(x, "shape") duck-typing for the number of dimensions',
        "students accept anything shaped like a tensor and read its rank from its shape",
        (('''def _check_count(''', '''def _ndim(x) -> int:
    return len(x.shape) if hasattr(x, "shape") else x.dim()


def _check_count('''),
         ('''    if x.dim() != 3:
        raise ValueError(f"x must be 3-d (batch, seq, hidden), got shape {tuple(x.shape)}")
    if axis not in AXES:
''', '''    if _ndim(x) != 3:
        raise ValueError(f"x must be 3-d (batch, seq, hidden), got shape {tuple(x.shape)}")
    if axis not in AXES:
'''))),
    Idiom(
        "typing.Literal for the axis names, AXES read with typing.get_args",
        "students let the type of the argument list its legal values, once",
        (('AXES = ("batch", "seq", "hidden")\n', '''Axis = Literal["batch", "seq", "hidden"]
AXES: tuple[str, ...] = get_args(Axis)
'''),
         ("from einops import einsum, rearrange, reduce\n",
          "from typing import Literal, get_args\n\nfrom einops import einsum, rearrange, reduce\n"),
         ("def mean_over(x: Float[Tensor, \"batch seq hidden\"], axis: str) -> Tensor:\n",
          "def mean_over(x: Float[Tensor, \"batch seq hidden\"], axis: Axis) -> Tensor:\n"))),
    Idiom(
        "a module-level dict that remembers each pattern string (dict.setdefault)",
        "students build each einops pattern once and reuse it",
        (('AXES = ("batch", "seq", "hidden")\n', 'AXES = ("batch", "seq", "hidden")\n_PATTERNS: dict[str, str] = {}\n'),
         ('''    kept = " ".join(a for a in AXES if a != axis)
    return reduce(x, f"batch seq hidden -> {kept}", "mean")
''', '''    kept = " ".join(a for a in AXES if a != axis)
    pattern = _PATTERNS.setdefault(axis, f"batch seq hidden -> {kept}")
    return reduce(x, pattern, "mean")
'''))),
]
