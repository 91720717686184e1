"""What a forbidden shortcut still keeps when nothing watches it: the points of each ruled
function that absence and behaviour alone defend.

    python -m tests.self.behaviour record [PROBLEM ...]   (writes tests/self/behaviour.json, minutes)
    python -m tests.self.behaviour --check                (lists the problems whose entry is stale)

Each planted shortcut (tests/self/shortcuts/), and a library-only one per function below, is graded
in the grader's sandbox (what a rule forbids is absent there) with the honest-work watch switched
off, as if a student had blinded it (a planted shortcut of a function with a library-only one is
measured only where its module lists it in ``MEASURED``: one that answers every case by itself, as
a hybrid of the library and hand arithmetic does): the points it earns on the tests that call its function are
the points it keeps ("taken"; only those tests are run for it); the rest are held by absence (the forbidden code raises) and by
cases the library cannot answer (a format torch has no dtype for, a layout it will not build).
"how" tests measure what the code runs, so a blinded watch passes them: they count as taken. The
reference's run says which tests call which function. docs/honest-work.md's trust table is made from this
record (grader/trust.py); tests/self/unit/test_trust.py says when it is stale.
"""

import ast
import contextlib
import hashlib
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

from grader.grade import run_tests
from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import Limits
from grader.sandbox.sandbox import Sandbox
from grader.paths import BEHAVIOUR, REFERENCE, ROOT, problem_file
from seam import InProcess
from seam.problems import PROBLEMS, RULED, touched
from tests.self.mutation.inputs import tests_hash
from tests.self.shortcuts import Shortcut, all_shortcuts

RECORD = BEHAVIOUR

# The planted shortcuts keep the reference's answer where the library has none (they are there to
# be caught, not to measure): these answer from the library alone, after the reference's checks of
# the arguments, and give up (NotImplementedError) where the library cannot answer, as a student
# with nothing but the shortcut would. Functions not named here are measured with the planted ones.
_LIBRARY = {
    "dtypes": {
        "round_to": "x.float().to(_dt(fmt)).float()",
        "max_value": "float(torch.finfo(_dt(fmt)).max)",
        "eps": "float(torch.finfo(_dt(fmt)).eps)",
        "smallest_normal": "float(torch.finfo(_dt(fmt)).smallest_normal)",
        "smallest_subnormal": "float(torch.finfo(_dt(fmt)).smallest_normal * torch.finfo(_dt(fmt)).eps)",
        "nvfp4_quantize": "_dt(FP4_E2M1)",  # torch casts into no 4-bit float: float4_e2m1fn_x2 holds pairs
    },
    "tensors": {  # on the meta device: no storage, any layout torch will build
        "contiguous_strides": "tuple(_built(lambda: torch.empty(tuple(shape), device='meta')).stride())",
        "element_offset": "_t(shape, strides, storage_offset)[tuple(index)].storage_offset()",
        "is_contiguous": "_t(shape, strides).is_contiguous()",
        "transpose": "(lambda y: (tuple(y.shape), y.stride()))(_t(shape, strides).transpose(dim0, dim1))",
        "select": "(lambda y: (tuple(y.shape), y.stride(), y.storage_offset()))"
                  "(_t(shape, strides, storage_offset).select(dim, index))",
        "narrow": "(lambda y: (tuple(y.shape), y.stride(), y.storage_offset()))"
                  "(_t(shape, strides, storage_offset).narrow(dim, start, length))",
        "view_strides": "_view(shape, strides, new_shape)",
        "reshape_copies": "_view(shape, strides, new_shape) is None",
    },
    "flops": {  # products of meta tensors: no storage, any shape whose sizes torch holds
        "matmul_flops": "_mm(m, k, n)",
        "linear_flops": "(lambda f: {'forward': f, 'backward_input': _mm(tokens, d_out, d_in), "
                        "'backward_weight': _mm(d_in, tokens, d_out), 'total': 3 * f})(_mm(tokens, d_in, d_out))",
        "transformer_forward_flops": "_forward(cfg, seq_len)",
        # 6·N·D as three (N × 1) @ (1 × D) products, for whole numbers (a tensor's sizes are ints)
        "training_flops": "float(3 * _mm(_whole(n_params), 1, _whole(n_tokens)))",
    },
    "intensity": {
        "matmul_intensity": "float(_mm(b, d, f) / (bytes_per_element * (b * d + d * f + b * f)))",
    },
    "einops": {
        "attention_scores_flops": "_count(lambda: torch.einsum('bqhd,bkhd->bhqk', "
                                  "*(torch.empty(batch, s, heads, dim, device='meta') for s in (seq1, seq2))))",
    },
    "adamw_accounting": {  # 6·B·T·P as three (B·T × P) @ (P × 1) products: forward 2, backward 4
        "adamw_step_flops": "3 * _mm(batch_size * cfg.context_length, parameter_count(cfg), 1)",
        "training_days": "steps * 3 * _mm(batch_size * cfg.context_length, parameter_count(cfg), 1)"
                         " / (peak_flops * mfu) / 86400",
    },
}
# FlopCounterMode on meta tensors; a shape torch will not build (a size or a storage past 64 bits)
# gives up, as a student with nothing but the counter would.
_COUNTER = '''
def _count(run):
    from torch.utils.flop_counter import FlopCounterMode
    try:
        with FlopCounterMode(display=False) as counter:
            run()
    except (RuntimeError, TypeError, ValueError, OverflowError) as e:
        raise NotImplementedError(f"torch will not build it: {str(e)[:80]}") from None
    return counter.get_total_flops()
def _mm(m, k, n):
    return _count(lambda: torch.empty(m, k, device="meta") @ torch.empty(k, n, device="meta"))
'''
_HELPERS = {
    "dtypes": '''
def _dt(fmt):
    dt = TORCH_DTYPES.get(fmt.name)
    if dt is None:
        raise NotImplementedError(f"torch has no dtype for {fmt.name}")
    return dt
''',
    "tensors": '''
def _built(make):
    try:
        return make()
    except (RuntimeError, TypeError) as e:  # a size past 64 bits, a storage size that overflows
        raise NotImplementedError(f"torch will not build it: {str(e)[:80]}") from None
def _t(shape, strides, offset=0):
    return _built(lambda: torch.empty(0, device="meta").as_strided(tuple(shape), tuple(strides), offset))
def _view(shape, strides, new_shape):
    try:
        return tuple(_t(shape, strides).view(tuple(new_shape)).stride())
    except NotImplementedError:
        raise
    except RuntimeError:
        return None
''',
    "flops": _COUNTER + '''
def _whole(x):
    if x != int(x):
        raise NotImplementedError(f"no tensor has {x!r} elements")
    return int(x)
def _forward(cfg, seq_len):
    T, L, d, dff, V = seq_len, cfg.num_layers, cfg.d_model, cfg.d_ff, cfg.vocab_size
    parts = {"attn_proj": L * _mm(T, d, 4 * d), "attn_scores": L * 2 * _mm(T, d, T), "ffn": L * _mm(T, d, 3 * dff),
             "lm_head": _mm(T, d, V)}
    return {**parts, "total": sum(parts.values())}
''',
    "intensity": _COUNTER,
    "einops": _COUNTER,
    "adamw_accounting": _COUNTER,
}


def library_shortcuts() -> list[Shortcut]:
    """``_LIBRARY`` as shortcuts: each function checks its arguments as the reference does (its
    value unused), then answers from the library."""
    out = []
    for problem, bodies in _LIBRARY.items():
        for name, body in bodies.items():
            signature, call = _params(problem, name)
            code = (_HELPERS[problem] + f"\n_checked_{name} = {name}\n\ndef {name}({signature}):\n"
                    f"    _checked_{name}({call})\n    return {body}\n")
            out.append(Shortcut(problem, name, "the library alone", code))
    return out


def _params(problem: str, name: str) -> tuple[str, str]:
    """The reference function's parameters (defaults kept), and a call passing them on."""
    source = problem_file(problem, "reference").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise ValueError(f"{problem}.{name}: only plain parameters are passed on")
    plain = ast.arguments(posonlyargs=[], args=[ast.arg(a.arg) for a in args.args], vararg=None, kwonlyargs=[],
                          kw_defaults=[], kwarg=None, defaults=args.defaults)
    return ast.unparse(plain), ", ".join(a.arg for a in args.args)


def _facts(impl, problem: str, only: set[str] | None = None) -> list:
    return list(run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=[problem],
                          only=only).facts.values())


@contextlib.contextmanager
def _blind(folder: Path, problem: str):
    """The submission graded in the grader's sandbox, where what a rule forbids is absent, with
    the watch switched off, as a student who had blinded it would be graded (notes for review take
    no point: nothing else to switch off)."""
    box = Sandbox(folder, Limits(), isolation=Isolation.detect("auto"), problems=[problem], watched=False)
    try:
        box.prewarm()
        yield box
    finally:
        box.close()


def inputs_hash(problem: str) -> str:
    """What the record of a problem depends on: what its mutants' verdicts depend on (the
    mutation record's hash: its graded tests and data, the submission's other modules, the
    graded machinery its run imports, tests/self/mutation/inputs.py), its reference and its
    shortcuts, and this file."""
    h = hashlib.sha256(tests_hash(problem).encode())
    for path in (problem_file(problem, "reference"), ROOT / "tests/self/shortcuts" / f"{problem}.py", Path(__file__)):
        h.update(path.read_bytes() if path.exists() else b"")
    return h.hexdigest()[:16]


def hybrid_shortcuts() -> list[Shortcut]:
    """The planted shortcuts a problem's module lists in ``MEASURED``: each answers every case by
    itself (never the reference's answer), the library where it answers and hand arithmetic for
    what it cannot hold, so what it keeps is measured beside the library-only shortcut."""
    out = []
    for problem in PROBLEMS:
        if (ROOT / "tests/self/shortcuts" / f"{problem}.py").exists():
            out += getattr(importlib.import_module(f"tests.self.shortcuts.{problem}"), "MEASURED", [])
    return out


def measured_shortcuts() -> list[Shortcut]:
    """What the record grades: the library-only shortcuts, the planted ones of the functions that
    have none (they are there to be caught: where the library has no answer they keep the
    reference's), and the hybrids."""
    library = library_shortcuts()
    measured = {s.qualified for s in library}
    shortcuts = library + [s for s in all_shortcuts() if s.qualified not in measured]
    return shortcuts + [s for s in hybrid_shortcuts() if s.id not in {t.id for t in shortcuts}]


def record(problems=None) -> dict:
    """Each ruled problem's record (``problems``: only these)."""
    shortcuts = measured_shortcuts()
    out = {}
    for problem in sorted({f.split(".")[0] for f in RULED} & set(problems or PROBLEMS)):
        graded = _facts(InProcess(REFERENCE, package=f"behaviour_ref_{problem}", watched=False), problem)
        if bad := [f.nodeid for f in graded if f.outcome not in ("passed", "skipped")]:
            raise SystemExit(f"the reference itself fails {bad}: fix that before recording")
        functions = {}
        for function in sorted(f for f in RULED if f.startswith(problem + ".")):
            tests = {f.nodeid.split("::")[-1]: f for f in graded if touched(f.functions, {function: ""})}
            taken = {}
            for shortcut in (s for s in shortcuts if s.qualified == function):
                with tempfile.TemporaryDirectory() as tmp, _blind(shortcut.build(Path(tmp) / "s"), problem) as box:
                    got = _facts(box, problem, only=set(tests))
                passed = {f.nodeid.split("::")[-1] for f in got if f.outcome == "passed"}
                taken[shortcut.name] = sorted(name for name, t in tests.items() if name in passed or t.how)
                print(f"{function}: {shortcut.name}: {sum(tests[n].points for n in taken[shortcut.name]):g} "
                      f"of {sum(t.points for t in tests.values()):g}", flush=True)
            functions[function] = {"tests": {name: t.points for name, t in sorted(tests.items())},
                                   "how": sorted(name for name, t in tests.items() if t.how),
                                   "taken": taken}
        out[problem] = {"inputs": inputs_hash(problem), "functions": functions}
    return out


def load() -> dict:
    return json.loads(RECORD.read_text()) if RECORD.exists() else {}


def stale(record: dict | None = None) -> list[str]:
    """The ruled problems whose entry is missing or was made from other inputs."""
    record = load() if record is None else record
    ruled = sorted({f.split(".")[0] for f in RULED})
    return [p for p in ruled if record.get(p, {}).get("inputs") != inputs_hash(p)]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        late = stale()
        print(f"stale for {', '.join(late)}" if late else "current")
        return 1 if late else 0
    if argv[:1] == ["record"]:  # record [PROBLEM ...]: those problems' entries anew, the rest kept
        unknown = set(argv[1:]) - set(PROBLEMS)
        if unknown:
            print(f"no such problem(s): {sorted(unknown)}", file=sys.stderr)
            return 2
        # the graded tests use no third-party pytest plugin; not loading them makes each of the
        # many short sessions here cheaper (the reference's run, under the same, must pass)
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        fresh = record(argv[1:] or None)
        RECORD.write_text(json.dumps({**(load() if argv[1:] else {}), **fresh}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)}")
        return 0
    if argv[:1] in (["--help"], ["-h"]):
        print(__doc__)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
