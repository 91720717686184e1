"""Idioms in benchmarking.py."""

from tests.self.honest_idioms import Idiom

TIMED = '''    t0 = time.perf_counter()
    for _ in range(trials):
        a @ b  # (m, n); launched asynchronously on CUDA
    if on_cuda:
        torch.cuda.synchronize(device)  # wait for the timed kernels, not just their launch
    t1 = time.perf_counter()
    return float((t1 - t0) / trials)
'''

IDIOMS = [
    Idiom(
        "timeit.timeit(fn, number=n) with a function passed in",
        "the notes time with timeit; students hand it a function that runs the trials and synchronises",
        (("import time\n", "import time\nimport timeit\n"),
         (TIMED, '''
    def run_trials() -> None:
        for _ in range(trials):
            a @ b  # (m, n); launched asynchronously on CUDA
        if on_cuda:
            torch.cuda.synchronize(device)  # wait for the timed kernels, not just their launch

    return float(timeit.timeit(run_trials, number=1) / trials)
'''))),
    Idiom(
        "a torch.backends flag set from a named constant (torch.backends.cuda.matmul.allow_tf32 = ALLOW_TF32)",
        "students state the matmul precision their fp32 peak assumes, in one named setting",
        (("import torch\n", '''import torch

# fp32 matmuls on the CUDA cores, as the fp32 peak below assumes (PyTorch's default).
ALLOW_TF32 = False
torch.backends.cuda.matmul.allow_tf32 = ALLOW_TF32
'''),)),
    Idiom(
        "a small class with __slots__ and a @property for the measured mean",
        "students keep a measurement's parts together in a light class and derive the mean",
        (('''def _name_tokens(''', '''class Timing:
    __slots__ = ("total", "trials")

    def __init__(self, total: float, trials: int) -> None:
        self.total = total
        self.trials = trials

    @property
    def mean(self) -> float:
        return self.total / self.trials


def _name_tokens('''),
         ("    return float((t1 - t0) / trials)\n", "    return float(Timing(t1 - t0, trials).mean)\n"))),
]
