"""Idioms in dtypes.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        'for name in ("has_inf", "has_nan"): getattr(fmt, name) to validate the flags',
        "a loop over the written-out names of the flags says each check once",
        (('''    if not isinstance(fmt.has_inf, bool) or not isinstance(fmt.has_nan, bool):
        raise ValueError(f"{fmt.name}: has_inf and has_nan must be bools")
''', '''    for name in ("has_inf", "has_nan"):
        if not isinstance(getattr(fmt, name), bool):
            raise ValueError(f"{fmt.name}: has_inf and has_nan must be bools")
'''),)),
    Idiom(
        "dataclasses.asdict, fields and replace on the FloatFormat dataclass",
        "students derive one format from another with replace, read fields by name with asdict "
        "and describe a format from its fields",
        (("from dataclasses import dataclass\n", "from dataclasses import asdict, dataclass, fields, replace\n"),
         ('FP8_E5M2 = FloatFormat("fp8_e5m2", 5, 2, has_inf=True, has_nan=True)\n',
          'FP8_E5M2 = replace(FP16, name="fp8_e5m2", mantissa_bits=2)  # fp16 with 2 mantissa bits\n'),
         ('''        raise ValueError(f"{fmt.name}: a format with inf must also have NaN (IEEE style)")
''', '''        raise ValueError(f"a format with inf must also have NaN (IEEE style): {_describe(fmt)}")


def _describe(fmt: FloatFormat) -> str:
    return ", ".join(f"{f.name}={getattr(fmt, f.name)!r}" for f in fields(fmt))
'''),
         ('''    _check_format(fmt)
    return 1 + fmt.exponent_bits + fmt.mantissa_bits
''', '''    _check_format(fmt)
    sizes = asdict(fmt)
    return 1 + sizes["exponent_bits"] + sizes["mantissa_bits"]
'''))),
    Idiom(
        "sys.float_info and math.isfinite checks on a computed limit",
        "students assert that what they computed fits in a Python float",
        (("from dataclasses import dataclass\n", "import math\nimport sys\nfrom dataclasses import dataclass\n"),
         ('''        return float((2.0 - 2.0 ** (1 - m)) * 2.0**emax)
''', '''        value = (2.0 - 2.0 ** (1 - m)) * 2.0**emax
        assert math.isfinite(value) and value <= sys.float_info.max, value
        return float(value)
'''))),
]
