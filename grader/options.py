"""What one grading run is asked for: ``Options``, checked here and only here.

The command line's argparse types are the checks below, ``grade`` and ``batch`` build an
``Options`` (or are given the command line's), and a batch job rebuilds it from its config:
one set of rules, one text per mistake. What the machine must offer for them (CUDA, a peak
FLOP/s entry, the isolation mode) is machine.check_options's part.

Nothing here imports torch (batch's parent checks its options before any grading): the problem
names come from the registry, seam/problems.py (the seam package imports torch only when its
Impl is first asked for: seam/__init__.py).
"""

import dataclasses
import math

from seam.problems import PROBLEMS
from .sandbox.isolation import MODES
from .sandbox.limits import Limits

GPU_MODES = ("auto", "require", "skip", "only")
ISOLATIONS = ("auto", *MODES)


class OptionError(ValueError):
    """A bad option. ``reason`` is what the command line says after "argument --x: "; str(e) is
    the one line grade and batch print (the option's name first where the reason lacks it)."""

    def __init__(self, option: str, reason: str, named: bool = True):
        self.option, self.reason = option, reason
        super().__init__(f"{option} {reason}" if named else reason)


def problem_names() -> tuple[str, ...]:
    """The registry's problems, in the handout's order."""
    return tuple(PROBLEMS)


def problem_list(names) -> list[str] | None:
    """--only tensors,flops (or a list of names): known problems, at least one (an empty list
    would grade all), each once; None: all of them."""
    if names is None:
        return None
    if isinstance(names, str):
        names = names.split(",")
    names = [n.strip() for n in names if n.strip()]
    known = problem_names()
    if not names:
        raise OptionError("--only", f"give at least one problem: {','.join(known)}", named=False)
    unknown = list(dict.fromkeys(n for n in names if n not in known))
    if unknown:
        raise OptionError("--only", f"unknown problem(s) {', '.join(unknown)}; known: {', '.join(known)}",
                          named=False)
    return list(dict.fromkeys(names))


def positive_seconds(value) -> float:
    """--time-limit: a finite number of seconds above 0 (the text or the number)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        seconds = float(value)
    except (TypeError, ValueError):
        raise OptionError("--time-limit", f"{value!r} is not a number of seconds") from None
    if not 0 < seconds < math.inf:
        raise OptionError("--time-limit", f"must be a positive number of seconds, not {value!r}")
    return seconds


def _one_of(option: str, choices: tuple[str, ...]):
    def check(value) -> str:
        if value not in choices:
            raise OptionError(option, f"must be one of {', '.join(choices)}, not {value!r}")
        return value
    return check


gpu_mode = _one_of("--gpu", GPU_MODES)
isolation_mode = _one_of("--isolation", ISOLATIONS)


@dataclasses.dataclass(frozen=True)
class Options:
    """One grading run's options, checked (and normalised: the time limit a float, the problems
    a list of known names, each once) when it is made; OptionError names the first bad one."""
    gpu: str = "auto"                         # auto | require | skip | only
    problems: list[str] | None = None         # None: every problem
    time_limit: float = Limits.time_per_test  # wall seconds per test (a test's marker overrides it)
    isolation: str = "auto"                   # auto or one of sandbox/isolation.py's MODES

    def __post_init__(self):
        for name, check in (("problems", problem_list), ("time_limit", positive_seconds),
                            ("gpu", gpu_mode), ("isolation", isolation_mode)):
            object.__setattr__(self, name, check(getattr(self, name)))

    @classmethod
    def of(cls, options: "Options | None" = None, **fields) -> "Options":
        """``options`` with ``fields`` changed, or new Options of ``fields``: checked either way."""
        return cls(**fields) if options is None else dataclasses.replace(options, **fields)

    def as_dict(self) -> dict:
        """For a batch job's JSON config: ``Options(**options.as_dict())`` is the same Options."""
        return dataclasses.asdict(self)

    @property
    def the_pass(self) -> dict:
        """What names a batch pass (batch.json, student.json): its GPU choice and problems."""
        return {"gpu": self.gpu, "only": self.problems}
