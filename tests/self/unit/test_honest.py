"""The honest-work rules (seam/problems.py, seam/honest.py): declared once and printed by the
handout, charged to every test of the function that broke them (in a grade, in a merge of
passes, in a student's own pytest), and hard to switch off: each attack on the watch itself is a
test here, in-process (the planted shortcuts, graded, are in test_planted_bugs.py)."""

import subprocess
import sys

import pytest

from grader.batch.merge import join_results
from grader.paths import REFERENCE, ROOT
from seam import InProcess
from seam.honest import covered
from seam.problems import HEAD, PROBLEMS, RULED, line, section, touched
from tests.self.shortcuts import stub_definition
from tests.self.submissions import reference_text, reference_with


def test_each_rule_quotes_its_handout_and_covers_stub_functions():
    for function, rule in RULED.items():
        problem, _, name = function.partition(".")
        text = " ".join((ROOT / section(rule.handout)).read_text().split())
        assert " ".join(rule.quote.split()) in text, f"{rule.name}: {rule.quote!r} not in {section(rule.handout)}"
        assert stub_definition(problem, name)  # a function or class the stub defines
        assert rule.why and rule.may_not


def test_a_method_counts_as_its_class():
    assert list(covered(["optim.AdamW.step"])) == ["optim.AdamW"]
    assert touched(["optim.AdamW.step", "optim.memory_by_stage"], {"optim.AdamW": "x"}) == ["optim.AdamW"]
    assert touched(["optim.AdamWish"], {"optim.AdamW": "x"}) == []
    assert line("optim.AdamW", "torch.optim.adam.adam").startswith(HEAD + "optim.AdamW used torch.optim.adam.adam")


def _impl(tmp_path, problem: str, appended: str) -> InProcess:
    folder = reference_with(tmp_path / "s", {problem: reference_text(problem) + "\nimport torch\n" + appended})
    return InProcess(folder, package=f"honest_{tmp_path.name}")


ROUND_CAST = '''
_own_round_to = round_to
def round_to(x, fmt):
    {before}
    return x.float().to(torch.float16).float()
'''


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_a_shortcut_graded_in_the_sandbox_scores_as_unwritten(tmp_path):
    """Through the grader's sandbox (the worker's replies, the "load" request of each module
    first): the violation seen when the module is imported reaches the report."""
    import json
    from grader.grade import grade
    from tests.self.shortcuts import all_shortcuts
    shortcut = next(s for s in all_shortcuts() if s.name == "a subclass of torch.optim.AdamW")
    for name, folder in (("shortcut", shortcut.build(tmp_path / "s")),
                         ("unwritten", shortcut.build_unwritten(tmp_path / "u"))):
        assert grade(folder, tmp_path / f"{name}.json", gpu="skip", quiet=True, problems=["optim"]) == 0
    got, unwritten = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("shortcut", "unwritten"))
    assert got["score"] <= unwritten["score"], (got["score"], unwritten["score"])
    assert got["extra_data"]["honest_work"] == {"optim.AdamW": "torch.optim.AdamW as a base class"}
    assert got["output"].splitlines()[1].startswith(HEAD + "optim.AdamW used torch.optim.AdamW as a base class")


def test_the_reference_breaks_no_rule(tmp_path):
    impl = InProcess(REFERENCE, package=f"honest_ref_{tmp_path.name}")
    impl.dtypes.round_to(__import__("torch").tensor([1.0, 70000.0]), impl.get("dtypes.FP16"))
    impl.tensors.view_strides((3, 4), (4, 1), (12,))
    impl.einops.split_heads(__import__("torch").zeros(2, 3, 12), 4)
    assert impl.violations() == {}


def test_removing_the_profiler_is_a_note_and_the_cast_it_hid_no_charge(tmp_path):
    """sys.setprofile(None) switches the profiler off; the cast itself is still seen by the
    dispatch mode. The construct is a note (in the text and at run time), never a charge."""
    import torch
    impl = _impl(tmp_path, "dtypes", ROUND_CAST.format(before="import sys; sys.setprofile(None)"))
    impl.dtypes.round_to(torch.tensor([1.0]), impl.get("dtypes.FP16"))
    assert "cast into torch.float16" in impl.violations()["dtypes.round_to"]  # what ran: evidence
    assert {(n["kind"], n["seen"]) for n in impl.notes()} >= {("profilers", "in the text")}
    assert sys.getprofile() is None  # (the watch put back what was there)


def test_the_profiler_runs_where_a_rule_needs_it_or_the_text_holds_a_note(tmp_path):
    """Casts and einops' results are the modes' alone: no profiler under them (it would triple
    each op's cost), unless the text holds a note for review (getattr(torch, "_" + "C") reaches
    the switches that pop the modes): then the profiler sees C calls by name too."""
    from seam.honest import Honest
    plain = Honest(REFERENCE)
    assert not plain.dynamic
    assert not plain.watch("dtypes", ["dtypes.round_to"]).profiled
    assert not plain.watch("einops", ["einops.split_heads"]).profiled
    assert plain.watch("optim", ["optim.AdamW"]).profiled and plain.watch("modules", ["modules.Linear"]).profiled
    lazy = plain.watch("flops", ["flops.matmul_flops"])
    assert lazy.profiled and lazy.lazy
    impl = _impl(tmp_path, "dtypes", "def _fmt(name):\n    return getattr(torch, '_' + 'C')\n")
    dynamic = Honest(impl.folder)
    assert dynamic.dynamic and dynamic.watch("dtypes", ["dtypes.round_to"]).profiled
    assert not dynamic.watch("flops", ["flops.matmul_flops"]).lazy


def test_a_thread_started_at_import_and_fed_a_queue_is_a_note_not_a_charge(tmp_path):
    """No thread starts under the function; the work runs in one started earlier, which the watch
    sees run while the function is watched: a note (text and run time), no charge. The points of
    view_strides rest on behaviour: its tests hold layouts torch will not build."""
    import torch
    worker = '''
import queue as _queue, threading as _threading
_jobs, _done = _queue.Queue(), _queue.Queue()
def _serve():
    while True:
        _done.put(_jobs.get()())
_threading.Thread(target=_serve, daemon=True).start()
def view_strides(shape, strides, new_shape):
    _jobs.put(lambda: tuple(torch.empty_strided(tuple(shape), tuple(strides)).view(tuple(new_shape)).stride()))
    return _done.get()
'''
    impl = _impl(tmp_path, "tensors", worker)
    assert impl.tensors.view_strides((3, 4), (4, 1), (12,)) == (1,)
    impl.tensors.nbytes((2,), torch.float32)
    assert impl.violations() == {}
    notes = {(n["file"], n["kind"], n["seen"]) for n in impl.notes()}
    assert ("tensors.py", "threads", "in the text") in notes and ("tensors.py", "threads", "at run time") in notes


def test_the_registry_cannot_be_emptied_and_replacing_it_is_a_note(tmp_path):
    """The registry reached without naming seam (sys.modules): it is read-only, and a replaced one
    is seen after the call: a note at run time (and in the text), no charge."""
    import seam.honest
    import seam.problems
    with pytest.raises((AttributeError, TypeError)):
        seam.problems.RULED.clear()
    impl = _impl(tmp_path, "flops", '''
import sys as _sys
_own_matmul_flops = matmul_flops
def matmul_flops(m, k, n):
    _sys.modules["seam.honest"].RULED = {}
    return _own_matmul_flops(m, k, n)
''')
    ruled = seam.honest.RULED
    try:
        impl.flops.matmul_flops(2, 3, 4)
        assert impl.violations() == {}
        notes = {(n["kind"], n["seen"]) for n in impl.notes()}
        assert ("the grader", "at run time") in notes and ("imports by name", "in the text") in notes
    finally:
        seam.honest.RULED = ruled  # (this process's own, for the tests after)


def test_importing_the_seam_is_a_note_in_its_own_module_only(tmp_path):
    impl = _impl(tmp_path, "memory", "import seam.probes as _p\n")
    assert impl.violations() == {}
    assert [(n["file"], n["kind"]) for n in impl.notes()] == [("memory.py", "the grader")]


def test_emptying_the_workers_record_through_gc_is_a_note(tmp_path):
    """torch's AdamW kept inside (present in a student's own pytest; absent in the sandbox), the
    worker's record found through gc and emptied before each reply: gc is a note for review."""
    impl = _impl(tmp_path, "optim", '''
import gc as _gc
def _forget():
    for o in _gc.get_objects():
        if type(o).__name__ == "Honest":
            o.violations.clear()
class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        params = list(params)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self._inner = torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.state, self.param_groups = self._inner.state, self._inner.param_groups
        _forget()
    def step(self, closure=None):
        try:
            return self._inner.step(closure)
        finally:
            _forget()
''')
    spec = {"seed": 0, "steps": 3, "checkpoints": [3], "kwargs": {}, "groups": [{"shapes": [[3, 2]]}]}
    impl.call("probes.adamw_run", spec=spec)
    assert impl._violations == {}  # the worker's record, emptied before each reply
    assert ("optim.py", "gc") in {(n["file"], n["kind"]) for n in impl.notes()}


def test_torch_pops_its_modes_itself_without_blame(tmp_path):
    """torch.einsum's handle_torch_function pops the grader's mode around its own call (and
    einops calls it): only a pop the student's code makes counts."""
    import torch
    impl = InProcess(REFERENCE, package=f"honest_einsum_{tmp_path.name}")
    impl.einops.attention_scores(torch.zeros(1, 2, 3, 4), torch.zeros(1, 5, 3, 4))
    assert impl.violations() == {}


def _results(functions_by_test, violations=None) -> dict:
    tests = [{"name": f"optim: t{i}", "number": f"8.{i + 1}", "score": 1.0, "max_score": 1.0, "status": "passed",
              "output": "passed", "visibility": "visible", "tags": ["optim"], "extra_data": {"functions": fns}}
             for i, fns in enumerate(functions_by_test)]
    out = {"score": float(len(tests)), "execution_time": 1.0, "output": f"Score: {len(tests)}/{len(tests)}",
           "tests": tests}
    if violations:
        out["extra_data"] = {"honest_work": violations}
        out["output"] += "\n" + line(*next(iter(violations.items())))
    return out


def test_merge_charges_a_rule_broken_in_one_pass_to_the_tests_of_another():
    cpu = _results([["optim.AdamW"], ["optim.optimizer_state_bytes"]], {"optim.AdamW": "torch.optim.adam.adam"})
    for t in cpu["tests"][:1]:
        t.update(score=0.0, status="failed", output=line("optim.AdamW", "torch.optim.adam.adam"))
    gpu = _results([[], [], ["optim.AdamW.step", "optim.memory_by_stage"]])
    gpu["tests"] = gpu["tests"][2:]
    merged = join_results("alice", [("cpu", cpu), ("gpu", gpu)])
    scores = {t["number"]: t["score"] for t in merged["tests"]}
    assert scores == {"8.1": 0.0, "8.2": 1.0, "8.3": 0.0}
    assert merged["extra_data"]["honest_work"] == {"optim.AdamW": "torch.optim.adam.adam"}
    lines = merged["output"].splitlines()
    assert lines[0] == "Score: 1/3" and sum(ln.startswith(HEAD) for ln in lines) == 1 and lines[1].startswith(HEAD)


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_a_students_own_pytest_says_it(tmp_path):
    """The public tests apply the rules: the failure line, and the progress table counts every
    test of the function as lost, also those that passed before the violation was seen."""
    from tests.self.shortcuts import all_shortcuts
    shortcut = next(s for s in all_shortcuts() if s.name == "view and transpose, no einops")
    folder = shortcut.build(tmp_path / "mine")
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/public/test_einops.py", f"--impl={folder}",
                           "-q", "-p", "no:cacheprovider", "-p", "no:randomly"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out[-2000:]
    assert "honest work: einops.split_heads used a tensor that no einops call returned" in out
    progress = out[out.index("your progress"):]
    assert progress.splitlines()[1].startswith(HEAD + "einops.split_heads")
    row = next(ln for ln in progress.splitlines() if ln.strip().startswith("12  einops"))
    assert "5 / 5" not in row, row


@pytest.mark.parametrize("problem", [p for p in PROBLEMS if not PROBLEMS[p].rules])
def test_a_problem_without_rules_says_why(problem):
    from seam.problems import NO_RULE
    assert NO_RULE[problem]
    assert NO_RULE[problem] in (ROOT / section(problem)).read_text()


@pytest.mark.e2e  # it grades (or runs a suite) end to end: not in the fast loop
def test_what_the_rules_allow_scores_full_marks(tmp_path):
    """nbytes may ask torch for a dtype's element size (the tensors rule leaves nbytes out), AdamW
    may update with torch._foreach_* kernels (arithmetic, not torch's optimizer), and the stub's
    TORCH_DTYPES may be used outside the ruled functions: full marks, no violation. (numpy in
    scaling is an alternative of its own: tests/self/alternatives/scaling__log_space_numpy.py.)"""
    from grader.grade import run_tests
    impl = _impl(tmp_path, "tensors", '''
_own_nbytes = nbytes
def nbytes(shape, dtype):
    _own_nbytes(shape, dtype)  # the errors, as before
    return _numel(shape) * torch.empty(0, dtype=dtype).element_size()
''')
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=["tensors"]).facts.values()
    assert [f.title for f in facts if f.outcome != "passed"] == [] and impl.violations() == {}
    (tmp_path / "optim").mkdir()
    impl = _impl(tmp_path / "optim", "optim", FOREACH_ADAMW)
    facts = run_tests(impl, gpu="skip", cuda=False, time_limit=60, quiet=True, problems=["optim"]).facts.values()
    assert [f.title for f in facts if f.outcome != "passed"] == [] and impl.violations() == {}
    import torch
    (tmp_path / "dt").mkdir()
    impl = _impl(tmp_path / "dt", "dtypes", '''
def torch_check(x, fmt):  # a helper of theirs, no ruled function: it may cast
    return x.float().to(TORCH_DTYPES[fmt.name]).float()
''')
    x = torch.tensor([1.0, 70000.0])
    assert impl.call("dtypes.torch_check", x, impl.get("dtypes.FP16")).tolist() == [1.0, float("inf")]
    assert impl.violations() == {}


FOREACH_ADAMW = '''
_OwnAdamW = AdamW


class AdamW(_OwnAdamW):
    """The reference's AdamW, each group updated with torch._foreach_* kernels, one per operation."""

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            if any(p.grad.is_sparse for p in params):
                raise ValueError("AdamW does not support sparse gradients")
            grads = [p.grad for p in params]
            for p in params:
                state = self.state[p]
                if len(state) == 0:  # lazy: no state before the first step
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] = int(state["step"]) + 1
            states = [self.state[p] for p in params]
            exp_avgs = [s["exp_avg"] for s in states]
            exp_avg_sqs = [s["exp_avg_sq"] for s in states]
            steps = [s["step"] for s in states]

            # One kernel per operation over the whole group (torch's foreach path, by hand).
            if weight_decay != 0:
                torch._foreach_mul_(params, 1 - lr * weight_decay)
            torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
            torch._foreach_mul_(exp_avg_sqs, beta2)
            torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1 - beta2)
            step_sizes = [-lr / (1 - beta1**t) for t in steps]
            denoms = torch._foreach_sqrt(exp_avg_sqs)
            torch._foreach_div_(denoms, [(1 - beta2**t) ** 0.5 for t in steps])
            torch._foreach_add_(denoms, eps)
            torch._foreach_addcdiv_(params, exp_avgs, denoms, step_sizes)

        return loss
'''


DEEP = '''
import copy
def contiguous_strides(shape):
    # torch's Tensor.__deepcopy__ reads x.stride(), under 2 x 300 frames of copy.py's recursion
    nested = [torch.empty(tuple(shape))]
    for _ in range(300):
        nested = [nested]
    copy.deepcopy(nested)
    return _own_strides(shape)
'''


def test_an_op_buried_under_hundreds_of_frames_not_theirs_is_still_theirs(tmp_path):
    """No depth limit on whose code is on the stack (not even one of 400 frames): a forbidden op that
    torch's Python makes 600 frames below their function is charged to it."""
    impl = _impl(tmp_path, "tensors", "_own_strides = contiguous_strides\n" + DEEP)
    assert impl.tensors.contiguous_strides((2, 3)) == (3, 1)
    assert "tensors.contiguous_strides" in impl._violations, impl._violations


# Code in no file of a library or of the grader (compiled from a string, or a module written to
# the scratch and imported), bound to a ruled name: the seam calls it with no frame of their
# files on the stack. (The allow-list refuses timeit's strings too; _impl's look is the watch's.)
FROM_A_STRING = '''
import timeit as _timeit
_ns = {"torch": torch}
_timeit.Timer("pass", setup="""
global fast
def fast(shape):
    return tuple(torch.empty(tuple(shape), device="meta").stride())
""", globals=_ns).timeit(1)
contiguous_strides = _ns["fast"]
'''
FROM_THE_SCRATCH = '''
import sys as _sys, tempfile as _tempfile, os as _os
_dir = _tempfile.mkdtemp()
with open(_os.path.join(_dir, "fast_strides.py"), "w") as _f:
    _f.write("import torch\\ndef fast(shape):\\n    return tuple(torch.empty(tuple(shape), device='meta').stride())\\n")
_sys.path.append(_dir)
import fast_strides as _fast
contiguous_strides = _fast.fast
'''


@pytest.mark.parametrize("code", [FROM_A_STRING, FROM_THE_SCRATCH], ids=["a string", "the scratch"])
def test_code_in_no_file_of_a_library_is_theirs(tmp_path, code):
    """The red team's route (timeit's setup string) and its cousin (a module of their own in the
    scratch): whose code runs is told by the file, and code in none of a library's is theirs."""
    impl = _impl(tmp_path, "tensors", code.replace("contiguous_strides = ", "_unused = contiguous_strides\ncontiguous_strides = "))
    assert impl.tensors.contiguous_strides((2, 3)) == (3, 1)
    assert "tensors.contiguous_strides" in impl._violations, impl._violations


# A route past the file test: a function of theirs relabelled with a library's file name (its
# code object's co_filename replaced), so that no frame of a file of theirs is ever on the stack.
# (The allow-list refuses dis, FunctionType and co_*= too; the watch must not need it to.)
RELABELLED = '''
import dis as _dis, types as _types, dataclasses as _dc
from operator import methodcaller as _methodcaller
from torch.utils._pytree import tree_map as _tree_map
_reference_round_to = round_to
def _shortcut(x, fmt):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(fmt.name)
    if dtype is None:
        return _reference_round_to(x, fmt)
    return _tree_map(_methodcaller("float"), _tree_map(_methodcaller("to", dtype), x))
round_to = _types.FunctionType(_dis.Bytecode(_shortcut).codeobj.replace(
    co_filename=_dis.Bytecode(_dc.dataclass).codeobj.co_filename),
    {"torch": torch, "_tree_map": _tree_map, "_methodcaller": _methodcaller,
     "_reference_round_to": _reference_round_to}, "round_to")
'''


def test_a_function_under_a_librarys_file_name_is_still_theirs(tmp_path):
    """Whose code runs is told by file and globals together: a library's file name on code that
    runs in globals of theirs is theirs."""
    impl = _impl(tmp_path, "dtypes", RELABELLED)
    from tests.common.dtypes import FP16, f32
    impl.dtypes.round_to(f32([0.1, 1.7]), FP16)
    assert "dtypes.round_to" in impl._violations and "cast into torch.float16" in impl._violations["dtypes.round_to"]
