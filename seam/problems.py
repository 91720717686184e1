"""The problem set: one entry per problem, in the handout's order. The one registry.

Everything else derives from ``PROBLEMS``: problem numbers (the position here), the handout's
problem table and each section's heading and points line (`python -m grader rubric --write`
writes them, a self-test checks them), the given dataclasses that cross the seam by value, the
pytest markers (`-m optim`), the layout a submission must have. A problem's files carry its
name, never its number; where each kind of file lives is ``LAYOUT`` below, the one place those
paths are written (``files(problem)``: one problem's, relative to the repository root).

Adding a problem is a line here plus those files: `python -m grader new-problem NAME` writes the
line and every file's skeleton (docs/maintaining.md: "How to add a problem").

Honest work: a problem's ``rules`` say what its functions may not hand to a library (or, for
einops, must hand to it), each with the learning goal it protects and the handout's sentence.
seam/honest.py enforces them by what runs; the handout prints them (`python -m grader rubric
--write`); a function that breaks its rule scores as if it were unwritten.
"""

import dataclasses
import re
from pathlib import PurePosixPath
from types import MappingProxyType

from seam.rule_check import refusal  # (absolute: the registry is also read as a file on its own)


@dataclasses.dataclass(frozen=True)
class Rule:
    """What the functions it covers may not hand to a library, as seam/honest.py watches it run:
    code of ``modules`` running under them (a class of theirs derived from one of their classes
    counts too), a torch function, Tensor method or ATen op named in ``ops`` (any spelling, any
    alias: the name PyTorch dispatches), a cast into a narrow float format (``casts``), or, for
    ``must``, a returned tensor that no call into that module produced (nor torch computed from
    what one produced)."""
    name: str                       # a few words, in the report: "AdamW written by hand"
    may_not: str                    # what the handout prints under "What your code may not use"
    why: str                        # the learning goal it protects
    handout: str                    # the problem whose section states it ...
    quote: str                      # ... in these words (a self-test checks they are there)
    modules: tuple[str, ...] = ()   # Python modules (and their submodules) whose code may not run
    ops: tuple[str, ...] = ()       # torch functions / Tensor methods / ATen ops, by name
    casts: bool = False             # no cast into a narrow float dtype (seam/honest.py: cast_in)
    must: str = ""                  # the module whose call must have produced the returned tensor
    numbers: bool = False           # its functions take and return numbers: honest code makes no
                                    # tensor, so the watch's profiler starts at the first torch op
    absent: tuple[str, ...] = ()    # taken out of the sandbox's Python before any student code
                                    # runs (seam/absent.py): modules of ``modules`` (stand-ins that
                                    # refuse in one line) and ATen kernels of ``ops`` ("aten.<op>":
                                    # they refuse, whoever calls them, from Python or C++)

    def __post_init__(self):
        # options that cannot work together are refused here, when the registry is read
        reason = refusal(self)
        if reason:
            raise ValueError(reason)


OWN_ADAMW = Rule(
    "AdamW written by hand",
    "PyTorch's Adam or AdamW code in any form: `torch.optim.Adam` / `AdamW` (as a base class, "
    "kept inside, or called), `torch.optim.adam` / `adamw` and their functional forms, the fused "
    "kernels `_fused_adam_` / `_fused_adamw_`. Plain tensor ops and `torch._foreach_*` are yours to use",
    "the update rule, its moments and bias corrections are the problem; torch's optimizer is the "
    "oracle the tests compare it with", "optim", "You write AdamW by hand",
    modules=("torch.optim.adam", "torch.optim.adamw",
             "seam.adamw_shaped"),  # what a probe hands over, if their AdamW delegates to it
    ops=("_fused_adam_", "_fused_adamw_", "_fused_adam", "_fused_adamw"),
    absent=("torch.optim.adam", "torch.optim.adamw", "aten._fused_adam_", "aten._fused_adamw_",
            "aten._fused_adam", "aten._fused_adamw"))
FROM_THE_NUMBERS = Rule(
    "layouts computed from the numbers",
    "a tensor to ask: no `stride()`, `storage_offset()`, `is_contiguous()`, `view`, `reshape`, "
    "`as_strided`, `transpose` or other view of a real tensor, nor its strides read through "
    "another library (`.numpy()`, `np.asarray`, DLPack) (`nbytes` may read a dtype's "
    "element size from torch)",
    "the point is to know how PyTorch walks storage; a strided tensor would just tell you",
    "tensors", "you compute those layouts from the integers alone",
    ops=("stride", "storage_offset", "is_contiguous", "is_non_overlapping_and_dense", "as_strided",
         "as_strided_", "empty_strided", "view", "view_as", "_unsafe_view", "reshape", "reshape_as",
         "_reshape_alias", "transpose", "transpose_", "t", "t_", "T", "mT", "H", "mH", "permute",
         "movedim", "moveaxis", "swapaxes", "swapdims", "expand", "expand_as", "narrow", "select",
         "slice", "unfold", "unsqueeze", "squeeze", "flatten", "unflatten", "contiguous", "diagonal",
         "split", "chunk", "unbind", "tensor_split", "alias", "__getitem__", "data_ptr",
         "untyped_storage", "storage", "set_", "resize_",
         # the same question asked of a strided array: numpy's view of the tensor, DLPack's
         "numpy", "__array__", "__dlpack__", "_to_dlpack", "to_dlpack"),
    numbers=True)
NO_FLOP_COUNTER = Rule(
    "FLOPs counted from the shapes",
    "a FLOP counter: `torch.utils.flop_counter` (`FlopCounterMode`), `torch.profiler` / "
    "`torch.autograd.profiler` (`with_flops`), or a counting library (fvcore, thop, ptflops, ...)",
    "counting FLOPs by hand from the shapes is the skill; the counter is the tests' oracle",
    "flops", "Count them from the shapes, never read them off a FLOP counter",
    # torch's own: a FLOP count needs a torch op, which starts the watch of ``numbers``; the
    # counting libraries outside torch are not installed where the grader runs
    modules=("torch.utils.flop_counter", "torch.profiler", "torch.autograd.profiler",
             "torch.autograd.profiler_util"),
    ops=("_enable_profiler", "_prepare_profiler", "_enable_profiler_legacy"), numbers=True,
    absent=("torch.utils.flop_counter",))
ROUND_IT_YOURSELF = Rule(
    "rounding done by hand",
    "a PyTorch cast into a narrow float format (`.to(torch.float16)`, `.half()`, `.bfloat16()`, "
    "`copy_` into one, `torch.tensor(..., dtype=...)` of one); reinterpreting bits "
    "(`x.view(torch.float16)`) and widening back are allowed",
    "the bit layout of a format is the problem; the cast would do the rounding for you",
    "dtypes", "you round values into a format yourself", casts=True)
OWN_LINEAR = Rule(
    "Linear written by hand",
    "`torch.nn.Linear` (as a base class, a submodule or called) or `torch.nn.functional.linear`, "
    "under any name",
    "a linear layer is a matmul with a weight you own: the layout and initialisation are the problem",
    "modules", "Do not use `torch.nn.Linear` or `torch.nn.functional.linear`, under any name",
    modules=("torch.nn.modules.linear",), ops=("linear",))
THROUGH_EINOPS = Rule(
    "named axes through einops",
    "anything but einops for the axes: each function's result comes from an einops call "
    "(`einsum`, `rearrange`, `reduce`), as it returned it or computed from it (`q @ k` of "
    "rearranged operands); `view`, `transpose`, `permute` or `torch.einsum` alone do not count",
    "the pattern string that names every axis is the lesson", "einops", "Use the einops library",
    must="einops")


@dataclasses.dataclass(frozen=True)
class Problem:
    name: str                       # the module students fill in: student_stubs/<name>.py
    title: str                      # the handout's heading after the name
    structs: tuple[str, ...] = ()   # the problem's given dataclasses that tests pass by value
    rules: tuple[tuple[Rule, tuple[str, ...]], ...] = ()  # (rule, the module's names it covers)


PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    Problem("tensors", "storage, strides and views", rules=(
        (FROM_THE_NUMBERS, ("contiguous_strides", "element_offset", "is_contiguous", "transpose", "select",
                            "narrow", "view_strides", "reshape_copies")),)),
    Problem("dtypes", "number formats", structs=("FloatFormat",), rules=(
        (ROUND_IT_YOURSELF, ("max_value", "eps", "smallest_normal", "smallest_subnormal", "round_to",
                             "nvfp4_quantize")),)),
    Problem("flops", "counting FLOPs", rules=(
        (NO_FLOP_COUNTER, ("matmul_flops", "linear_flops", "transformer_forward_flops", "training_flops")),)),
    Problem("intensity", "arithmetic intensity and the roofline", rules=(
        (NO_FLOP_COUNTER, ("matmul_intensity", "elementwise_intensity")),)),
    Problem("memory", "the training-memory ledger"),
    Problem("adamw_accounting", "the adamwAccounting problem", structs=("TransformerConfig",), rules=(
        (NO_FLOP_COUNTER, ("adamw_step_flops", "training_days")),)),
    Problem("modules", "Linear and Cruncher", rules=((OWN_LINEAR, ("Linear", "Cruncher")),)),
    Problem("optim", "AdamW and its state", rules=((OWN_ADAMW, ("AdamW",)),)),
    Problem("training", "data, loop, checkpoints, mixed precision"),
    Problem("benchmarking", "MFU"),
    Problem("scaling", "scaling laws"),
    Problem("einops", "named axes", rules=(
        (THROUGH_EINOPS, ("attention_scores", "split_heads", "merge_heads", "mean_over")),
        (NO_FLOP_COUNTER, ("attention_scores_flops",)))),
)}

def ruled(problems) -> dict[str, "Rule"]:
    """"optim.AdamW" -> its rule: every function a rule covers, qualified by its problem (one rule
    each); a rule whose handout is no problem, or a covered name that is no Python name, is refused."""
    out: dict[str, Rule] = {}
    for p in problems.values():
        for rule, names in p.rules:
            if rule.handout not in problems:
                raise ValueError(f"honest-work rule {rule.name!r}: handout={rule.handout!r} is no problem")
            for name in names:
                if not name.isidentifier():
                    raise ValueError(f"honest-work rule {rule.name!r}: {p.name} covers {name!r}, not a name")
                if f"{p.name}.{name}" in out:
                    raise ValueError(f"honest-work rule {rule.name!r}: {p.name}.{name} has two rules")
                out[f"{p.name}.{name}"] = rule
    return out


# read-only, so that no code in the process can empty it
RULED = MappingProxyType(ruled(PROBLEMS))

# Why the problems without a rule have none (the handout and the trust model print it).
NO_RULE = {
    "memory": "its functions are arithmetic on given numbers: nothing in a library does the problem for you",
    "training": "using PyTorch is the problem; its how checks (memmap pages, weights_only, no GradScaler) "
                "check what matters",
    "benchmarking": "timing code is checked by how it synchronizes; a watch running during the timed "
                    "region would change what it measures",
    "scaling": "numpy, math and scipy are tools for the fits, not the answer; the formulas are the problem",
}

# struct class name -> the problem module that defines it (the callee rebuilds it from there)
STRUCT_MODULES = {struct: p.name for p in PROBLEMS.values() for struct in p.structs}

# ---- the layout: where each of a problem's files lives -------------------------------------

@dataclasses.dataclass(frozen=True)
class FileKind:
    """One kind of file a problem has, at ``pattern``: relative to the repository root (and to the
    students' bundle for what ``shipped`` marks), ``{name}`` the problem's name; a ``*`` makes it
    a glob (several files, each named by how it differs). Written as its ``parts``, the folders
    and the file's name."""
    kind: str                # the attribute of ``Files``: "stub", "public_test", ...
    parts: tuple[str, ...]
    required: bool           # every problem has it (else: only a problem that needs one)
    shipped: bool            # in the students' bundle (`python -m grader release --student`)
    graded: bool             # a change to it can change a grade (grader/provenance.py hashes it)
    holds: str               # what goes in it, as docs/maintaining.md's recipe says (`new-problem` prints it)

    @property
    def pattern(self) -> str:
        return "/".join(self.parts)


MODULE = "{name}.py"  # a problem's module in any folder laid out like student_stubs/ (a submission)
LAYOUT: tuple[FileKind, ...] = (
    FileKind("stub", ("student_stubs", MODULE), True, True, False,
             "the functions students write: the reference's signatures and docstrings, bodies "
             "`raise NotImplementedError` (the parity self-test checks)"),
    FileKind("reference", ("reference", MODULE), True, False, True,
             "the reference solution: the stub's module with the bodies written"),
    FileKind("handout", ("assignment", "problems", "{name}.md"), True, True, False,
             "the handout section's body (its heading, points line and honest-work part are "
             "generated by `python -m grader rubric --write`)"),
    FileKind("public_test", ("tests", "public", "test_{name}.py"), True, True, True,
             "public tests: the notes' numbers and `SNAPSHOT_INPUTS` (with `SNAPSHOT_TOLERANCE` for a "
             "target compared at other than CONDITIONED), each test with `@pytest.mark.points(n)`"),
    FileKind("snapshot", ("tests", "public", "snapshots", "{name}.json"), True, True, True,
             "the reference's answers on SNAPSHOT_INPUTS: written by `python -m grader snapshots`"),
    FileKind("hidden_test", ("tests", "hidden", "test_{name}.py"), True, False, True,
             "hidden tests: tables of seeded cases through `check_cases`, PyTorch as the oracle where "
             "it can be, each test with `@pytest.mark.points(n)`"),
    FileKind("common", ("tests", "common", "{name}.py"), False, True, True,
             "what the public and hidden tests share (constants, builders, named mistakes), if anything"),
    FileKind("mistakes", ("tests", "hidden", "{name}_mistakes.py"), False, False, True,
             "named mistakes that must stay hidden (they run code of their own), if any"),
    FileKind("probe", ("seam", "probes", "{name}.py"), False, True, True,
             "probes, if the tests need to see an object beside the student's code "
             "(`@probe(\"{name}\", calls=...)`)"),
    FileKind("bugs", ("tests", "self", "bugs", "{name}.py"), True, False, False,
             "`BUGS`: at least three planted bugs, each a one-line edit of the reference that must lose "
             "points on this problem"),
    FileKind("alternatives", ("tests", "self", "alternatives", "{name}__*.py"), True, False, False,
             "two or more alternative correct solutions, `{name}__<how>.py`, written differently from "
             "the reference: each must get full marks"),
)
KINDS = {k.kind: k for k in LAYOUT}


@dataclasses.dataclass(frozen=True)
class Files:
    """One problem's files, relative to the repository root (``alternatives``: a glob)."""
    problem: str
    module: PurePosixPath  # its module's file name in a submission folder
    stub: PurePosixPath
    reference: PurePosixPath
    handout: PurePosixPath
    public_test: PurePosixPath
    snapshot: PurePosixPath
    hidden_test: PurePosixPath
    common: PurePosixPath
    mistakes: PurePosixPath
    probe: PurePosixPath
    bugs: PurePosixPath
    alternatives: PurePosixPath

    def items(self) -> list[tuple[FileKind, PurePosixPath]]:
        """(kind, path) for every kind of file, in LAYOUT's order."""
        return [(k, getattr(self, k.kind)) for k in LAYOUT]


def files(problem: str) -> Files:
    """Where ``problem``'s files are (whether or not it exists yet: the scaffold asks first)."""
    return Files(problem, PurePosixPath(MODULE.format(name=problem)),
                 **{k.kind: PurePosixPath(k.pattern.format(name=problem)) for k in LAYOUT})


def folder(kind: str) -> PurePosixPath:
    """The folder holding every problem's file of this kind: ``folder("snapshot")``."""
    return PurePosixPath(KINDS[kind].pattern).parent


def any_problem(kind: str) -> str:
    """The glob matching this kind's file of every problem: "student_stubs/*.py"."""
    return KINDS[kind].pattern.format(name="*")


def dotted(path: PurePosixPath) -> str:
    """The module a Python file of the layout is imported as: "tests.public.test_optim"."""
    return ".".join(PurePosixPath(path).with_suffix("").parts)


def owners(path: str | PurePosixPath) -> list[tuple[str, str]]:
    """Every (kind, name) whose pattern in the layout fits a repository path; the name need not be
    a problem's. One at most for any file of a problem (`new-problem` refuses a name otherwise)."""
    path = PurePosixPath(path).as_posix()
    found = []
    for k in LAYOUT:
        regex = re.escape(k.pattern).replace(re.escape("{name}"), "(?P<name>[a-z][a-z0-9_]*?)")
        m = re.fullmatch(regex.replace(re.escape("*"), "[^/]+"), path)
        if m:
            found.append((k.kind, m.group("name")))
    return found


def owner(path: str | PurePosixPath) -> tuple[str, str] | None:
    """(kind, problem name) of a repository path that fits a pattern of the layout, else None: a
    problem's name first, else any (a stray file's, which is no problem's)."""
    found = owners(path)
    return next((f for f in found if f[1] in PROBLEMS), found[0] if found else None)


EXPECTED_LAYOUT = (
    "Expected layout: a folder (or a .zip of one) holding the modules of student_stubs/ "
    "side by side: " + ", ".join(str(files(p).module) for p in PROBLEMS) + ", and the helper modules they import from beside them. Nothing else is read."
)


def problem_number(problem: str) -> int:
    """1-based, the handout's numbering: the problem's place in PROBLEMS."""
    return list(PROBLEMS).index(problem) + 1


def section(problem: str) -> str:
    """The handout section of a problem, relative to the repository (and the student bundle)."""
    return str(files(problem).handout)


# ---- what a report says of a broken rule: seam/honest.py watches for one; the report, the
# plugin and merge say it (without torch) ----------------------------------------------------
HEAD = "honest work: "  # every line about a violation starts so (merge rebuilds them from the union)


def touched(functions, violated) -> list[str]:
    """The violated functions among those a test called (a method counts as its class)."""
    return sorted({v for v in violated for f in functions if f == v or f.startswith(v + ".")})


def line(function: str, used: str) -> str:
    """The one line a report, and every failure of that function, says about a violation."""
    rule = RULED[function]
    return (f"{HEAD}{function} used {used}: {rule.name} is the problem, so it may not use "
            f"{rule.may_not.split(':')[0].split(' (')[0]}. The handout ({section(rule.handout)}): "
            f"\"{rule.quote}\". Every test of {function} scores 0, as if it were unwritten")
