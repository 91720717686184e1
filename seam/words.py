"""Words a person reads, and nothing else: the text of the notes for review.

What is here is shown (in a report, the student's pytest, docs/honest-work.md's table) and
decides nothing: no verdict, point or note depends on it, and it holds only literal text (the
project's own suite checks that). So it is left out of every hash of what decides
a verdict (grader/provenance.py ``WORDING``): rewording a note restales no behaviour or mutation
record and regrades no class. The kinds and ids these words are for, and what each means, are
set in the module that uses them (seam/review.py ``KINDS``, ``RUNTIME``).
"""

# a note's kind -> (why it could blind the watch, what to write instead); docs/honest-work.md's table is
# made from this
NOTES = {
    "threads": ("work in another thread or process escapes the watch, which follows the calling thread",
                "do the work in the calling thread"),
    "profilers": ("a profiler or tracer of yours replaces the watch's own",
                  "leave sys.setprofile / settrace and sys.monitoring alone"),
    "frames": ("a frame reaches the locals and globals of the grader's code running around yours",
               "pass values as arguments; for a function's parameters use inspect.signature"),
    "gc": ("gc's object lists reach the grader's own objects (the watch's record)",
           "keep references to your own objects; gc.collect() is fine"),
    "ctypes": ("native calls can remove the watch's hooks or rewrite memory",
               "write it in Python or torch"),
    "torch internals": ("torch._C and the mode stacks switch off the modes that watch torch calls",
                        "use torch's public API"),
    "code objects": ("a function's code replaced or made by hand runs as no file of yours",
                     "write the function out"),
    "imports by name": ("a module reached by a name made at run time (importlib, pydoc.locate, sys.modules, "
                        "__import__, a path added to sys.path) can be the grader's own",
                        "import modules with an import statement"),
    "code from text": ("code made from a string (exec, eval, compile, marshal) runs in no file of yours",
                       "write the code out as functions of your module"),
    "unpickling": ("unpickling calls whatever the pickled bytes name, from no file of yours",
                   "save and load state_dicts with torch.save and torch.load(path, weights_only=True)"),
    "the grader": ("the grader's own modules (seam) hold the watch and its record",
                   "nothing of the grader's is needed: the tests call your functions"),
    "removed code": ("code of a module the honest-work rules take out of the sandbox, pasted into the upload "
                     "or read and run from torch's files",
                     "write the update yourself from the handout's formulas"),
    "unreadable module": ("the review could not read this module as Python reads it, so what it does was not "
                          "looked at",
                          "save it as UTF-8"),
    "einops axes": ("no einops call in this function names the axes it works on, so torch computes what the "
                    "rule says einops must",
                    "write the function's rearrange/einsum/reduce with the axes named"),
}

# a note seen at run time: its id (seam/review.py RUNTIME) -> the grader's words for it
RUNTIME = {
    "watch changed": "the grader's rules or its watch changed",
    "probes changed": "the grader's probes changed while a check of how the work is done ran",
    "modes left off": "PyTorch's modes left switched off",
    "watch modes missing": "the watch's torch modes not in place when the call began",
    "modes popped": "torch's modes popped or disabled by a torch function their code called",
    "torch function disabled": "a DisableTorchFunction or _DisableTorchDispatch block",
    "mode stack popped": "torch's function-mode or dispatch-mode stack popped",
    "mode replaced": "torch's function mode replaced",
    "dispatch key changed": "a dispatch key excluded or included",
    "profiler replaced": "a profiler of theirs in place of the watch's",
    "profiler set": "sys.setprofile or sys.settrace called",
    "profiler left": "a profiler or tracer installed and left in place",
    "watch profiler missing": "the watch's profiler not in place once switched on",
    "thread ran": "a thread of theirs ran while the function was watched",
    "thread started": "another thread started",
    "process started": "another process started",
    "thread left running": "a thread it started still running after the call",
    "seen": "seen while their code was watched",
}
