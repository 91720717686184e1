"""The allow-list (seam/allowed.py): each construct a graded module may not use is one finding with
its line and a few words naming it; an attacker's ways round it are refused or harmless; honest
code (the reference, the stubs, the alternatives, the planted bugs, tests/self/honest_samples/ and
the idioms below) is never refused, since a false finding costs an honest student every ruled
function; and a finding reaches the grader's and the student's verdicts with file and line."""

from pathlib import Path

import pytest

from grader.paths import REFERENCE, ROOT
from seam import tamper
from seam.allowed import REFUSED, check_source
from seam.impl import BLINDS_RULES
from seam.problems import RULED, files
from tests.self.honest_samples import all_samples
from tests.self.submissions import reference_text, reference_with

# (module, line of the one finding, words its description must hold), by the rule it breaks
REFUSED_CASES = [
    # stores on what it did not make
    ("import os\nos.write = print\n", 2, "a store on an attribute of the module os (os.write)"),
    ("import sys\nsys.stdout = None\n", 2, "of the module sys (sys.stdout)"),
    ("import json\njson.dumps = str\n", 2, "of the module json (json.dumps)"),
    ("import builtins\nbuiltins.print = len\n", 2, "of the module builtins"),
    ("import torch\ntorch.Tensor.tolist = len\n", 2, "torch.Tensor, part of the module torch"),
    ("import torch\ntorch.optim.adamw.__name__ = 'mine'\n", 2, "(torch.optim.adamw.__name__)"),
    ("import torch.utils.flop_counter as fc\nfc.__name__ = 'x'\n", 2, "the module torch.utils.flop_counter"),
    ("import torch\ndef f():\n    torch.backends.cuda.matmul = print\n", 3, "torch.backends.cuda, part of the module torch"),
    ("import torch\ntorch.backends.x = 1\n", 2, "part of the module torch (torch.backends.x)"),
    ("import os as torch\ntorch.backends.cudnn.benchmark = True\n", 2, "part of the module os"),
    ("from torch import Tensor\nTensor.tolist = len\n", 2, "Tensor, imported from torch"),
    ("print.x = 1\n", 1, "the builtin print"),
    ("int.x = 1\n", 1, "the builtin int"),
    ("import os\ndel os.write\n", 2, "a delete of an attribute of the module os"),
    ("import os\nsetattr(os, 'write', print)\n", 2, "setattr on an attribute of the module os"),
    ("import os\ndelattr(os, 'write')\n", 2, "delattr on an attribute of the module os"),
    ("import torch\nobject.__setattr__(torch.Tensor, 'tolist', len)\n", 2, "torch.Tensor, part of the module torch"),
    ("import torch\ntype.__setattr__(torch.Tensor, 'tolist', len)\n", 2, "torch.Tensor, part of the module torch"),
    ("import os\no = os\no.write = print\n", 3, "o, which may be the module os (o.write)"),
    ("import torch\nw = torch.optim\nw.AdamW = None\n", 3, "w, which may be the module torch"),
    ("import os\ndel os.environ['X']\n", 2, "a delete of an item of os.environ, part of the module os"),
    ("import os\nos.environ = {}\n", 2, "of the module os (os.environ)"),
    ("import torch\ntorch.optim.__dict__['AdamW'] = None\n", 2, "__dict__"),
    ("import numpy as np\nc = np.ctypeslib.ctypes\n", 2, "ctypes reached through another module"),
    ("import os\nm = os.sys.modules\n", 2, "sys reached through another module (os.sys)"),
    # code made at run time by a library, frames through traceback, dunders assembled (the red team, e237fc5)
    ("import timeit\ntimeit.Timer('pass', setup='x = 1').timeit(1)\n", 2, "Timer compiles a string"),
    ("from timeit import timeit\ntimeit('pass')\n", 2, "timeit compiles a string"),
    ("import runpy\n", 1, "an import of runpy (code made at run time)"),
    ("import marshal\n", 1, "an import of marshal"),
    ("import traceback\nfor f, _ in traceback.walk_stack(None):\n    pass\n", 2, "frame access (traceback.walk_stack)"),
    ("x = '__glo' + 'bals__'\n", 1, "the string '__globals__', assembled"),
    ("def f():\n    pass\nn = ''.join(map(chr, (95, 95))) + 'globals' + ''.join(map(chr, (95, 95)))\ng = getattr(f, n)\n", 4,
     "getattr with a name not written out that may be a dunder (getattr(f, n))"),
    ("import torch\nt = torch.zeros(1)\nfor n in dir(t):\n    getattr(t, n)\n", 4, "may be a dunder (getattr(t, n))"),
    # names not provably free of dunders, on anything but self (the red team, round 2)
    ("def get(cfg, name):\n    return getattr(cfg, name)\n", 2, "may be a dunder (getattr(cfg, name))"),
    ("def f():\n    pass\nn = bytes([95, 95, 103]).decode()\ng = getattr(f, n)\n", 4, "may be a dunder (getattr(f, n))"),
    ("def f():\n    pass\nfor n in sorted(dir(f)):\n    getattr(f, n)\n", 4, "may be a dunder (getattr(f, n))"),
    ("def f():\n    pass\nnames = dir(f)\ng = getattr(f, names[20])\n", 4, "may be a dunder"),
    # stores it cannot place
    ("def f(x):\n    type(x).tolist = len\n", 2, "type(x), which may be the class of x"),
    ("def f(x):\n    x.__class__.tolist = len\n", 2, "through a dunder (x.__class__.tolist)"),
    ("def f():\n    return 1\nf().a = 1\n", 3, "an object it does not name (f().a)"),
    # renaming
    ("__name__ = 'einops.x'\n", 1, "a binding of __name__ at module level"),
    ("__spec__ = None\n", 1, "a binding of __spec__ at module level"),
    ("def __getattr__(name):\n    return 1\n", 1, "a binding of __getattr__ at module level"),
    ("import torch as __loader__\n", 1, "a binding of __loader__ at module level"),
    ("def f():\n    global __name__\n    __name__ = 'torch'\n", 3, "a binding of __name__ at module level"),
    ("class A:\n    __module__ = 'torch.nn'\n", 2, "a binding of __module__ in a class body"),
    ("class A:\n    __qualname__ = 'Linear'\n", 2, "a binding of __qualname__ in a class body"),
    ("T = type('Linear', (), {})\n", 1, "a class made under a name of its choosing"),
    ("class M(type):\n    pass\n", 1, "a metaclass of its own (class M)"),
    ("import collections\nP = collections.namedtuple('P', 'a', module='torch')\n", 2, "a name of its choosing"),
    ("import functools, torch\n@functools.wraps(torch.matmul)\ndef mm(a, b):\n    return a @ b\n", 2,
     "wraps of what it did not make"),
    # dunder attributes
    ("import torch\nd = torch.__dict__\n", 2, "the attribute __dict__ (torch.__dict__)"),
    ("x = int.__mro__\n", 1, "the attribute __mro__"),
    ("x = object.__subclasses__()\n", 1, "the attribute __subclasses__"),
    ("def f():\n    pass\ng = f.__globals__\n", 3, "the attribute __globals__"),
    ("def f():\n    pass\nc = f.__code__\n", 3, "the attribute __code__"),
    ("def f():\n    pass\nc = f.__closure__\n", 3, "the attribute __closure__"),
    ("def f(a=1):\n    pass\nd = f.__defaults__\n", 3, "the attribute __defaults__"),
    ("b = __builtins__\n", 1, "the name __builtins__"),
    ("def f(o):\n    return getattr(o, '__dict__')\n", 2, "getattr of the attribute __dict__"),
    ("namespace = {'__module__': 'torch.nn'}\n", 1, "the string '__module__'"),
    ("def f():\n    pass\nf.__doc__ = 'x'\n", 3, "a store on the attribute __doc__"),
    # introspection
    ("import sys\nframe = sys._getframe(0)\n", 2, "frame access (sys._getframe)"),
    ("def f(tb):\n    return tb.tb_frame\n", 2, "frame access (tb.tb_frame)"),
    ("import gc\nobjects = gc.get_objects()\n", 2, "gc (gc.get_objects): only gc.collect() may be used"),
    ("from gc import get_referrers\n", 1, "an import of gc"),
    ("import ctypes\n", 1, "an import of ctypes"),
    ("import importlib\n", 1, "an import of importlib"),
    ("import inspect\n", 1, "an import of inspect"),
    ("import sys\nm = sys.modules\n", 2, "sys.modules"),
    ("import sys\nhooks = sys.meta_path\n", 2, "sys.meta_path"),
    # code made at run time
    ("exec('x = 1')\n", 1, "exec (code or names made at run time)"),
    ("x = eval('1')\n", 1, "eval"),
    ("c = compile('1', 'f', 'eval')\n", 1, "compile"),
    ("m = __import__('os')\n", 1, "__import__"),
    ("globals()['__name__'] = 'x'\n", 1, "globals"),
    ("import os\nv = vars(os)\n", 2, "vars"),
    ("def f():\n    locals()['x'] = 1\n", 2, "a store into locals()"),
    # names made at run time
    ("import torch\ndef f(name):\n    return getattr(torch, name)\n", 3,
     "getattr with a name not written out on the module torch"),
    ("def f(name):\n    return hasattr(int, name)\n", 2, "hasattr with a name not written out on the builtin int"),
    ("def f(cfg, name):\n    setattr(cfg, name, 1)\n", 2, "setattr with a name not written out on cfg, which is not self"),
    ("g = getattr\n", 1, "getattr passed as a value"),
    ("import operator\ndef f(name):\n    return operator.attrgetter(name)\n", 3, "attrgetter with a name not written out"),
]


@pytest.mark.parametrize("source,line,words", REFUSED_CASES, ids=[c[2][:50] for c in REFUSED_CASES])
def test_each_refused_construct_is_one_finding_naming_it(source, line, words):
    found = check_source(source, "m.py")
    assert len(found) == 1, found
    assert found[0][:2] == ("m.py", line) and words in found[0][2], found


# An attacker's ways round the store rule: each is refused (the line) or harmless (None: it changes
# only the module's own namespace, or an object of its own).
ATTACKS = [
    ("import os\na, b = os, 1\na.write = print\n", 3),                                  # a tuple of aliases
    ("import os\n(o := os).write = print\n", 2),                                        # a walrus
    ("import os\nfor m in (os,):\n    m.write = print\n", 3),                           # a loop variable
    ("import os\nf = lambda o=os: setattr(o, 'write', 1)\n", 2),                        # a lambda's default
    ("import os\n[setattr(m, 'write', 1) for m in [os]]\n", 2),                         # a comprehension
    ("import os\n[os][0].write = print\n", 2),                                          # an item of a list
    ("import os\n(os).write = print\n", 2),                                             # parentheses
    ("import os.path as p\np.join = print\n", 2),                                       # a submodule
    ("from os import *\npath.join = print\n", 2),                                       # a star import's name
    ("import os\ndef f():\n    global os\n    os.write = print\n", 4),                  # through global
    ("import os\ndef put(o, v):\n    o.write = v\nput(os, print)\n", 3),                # a parameter
    ("import os\ndef put(o):\n    o.write = 1\nlist(map(put, [os]))\n", 3),             # a callback
    ("import os, functools\ndef put(o):\n    o.write = 1\nfunctools.partial(put, os)()\n", 3),
    ("import os\nh = {}\ndef put(o):\n    o.write = 1\nh['a'] = put\nh['a'](os)\n", 4),  # called from a dict
    ("import os\ndef get():\n    return os\nm = get()\nm.write = print\n", 5),           # a return value
    ("import os\ndef get():\n    return os\ng = get\nm = g()\nm.write = print\n", 6),
    ("import os\ng = lambda: os\nm = g()\nm.write = print\n", 4),
    ("import os\nclass C:\n    mod = os\n    def f(self):\n        self.mod.write = print\n", 5),  # a class attribute
    ("import os\nclass C:\n    def __init__(self, m):\n        self.m = m\n    def f(self):\n"
     "        self.m.write = print\nC(os).f()\n", 6),                                     # an attribute of its own
    ("import os, dataclasses\n@dataclasses.dataclass\nclass C:\n    m: object\n    def f(self):\n"
     "        self.m.write = print\nC(os).f()\n", 6),                                     # a dataclass field
    ("import os\nd = {'m': os}\nd['m'].write = print\n", 3),                             # a dict's value
    ("import os\nlst = []\nlst.append(os)\nlst[0].write = print\n", 4),                 # appended
    ("import os\nx = {}.get('m', os)\nx.write = print\n", 3),                            # dict.get's default
    ("import os\nm = next(iter([os]))\nm.write = print\n", 3),
    ("import os, typing\nm = typing.cast(typing.Any, os)\nm.write = print\n", 3),
    ("import os, contextlib\nwith contextlib.nullcontext(os) as m:\n    m.write = print\n", 3),
    ("import os, operator\nw = operator.attrgetter('path')(os)\nw.join = print\n", 3),
    ("import os\nclass K:\n    def __getitem__(self, i):\n        return os\nk = K()\nk[0].write = 1\n", 6),
    ("import os\nclass C:\n    @property\n    def p(self):\n        return os\nC().p.write = 1\n", 6),
    ("import os\ndef deco(f):\n    return os\n@deco\ndef g():\n    pass\ng.write = print\n", 7),
    ("import os\ndef f(*args):\n    args[0].write = 1\nf(os)\n", 3),
    ("import os\ndef f(**kw):\n    kw['o'].write = 1\nf(o=os)\n", 3),
    ("import os\nmatch os:\n    case m:\n        m.write = 1\n", 4),
    ("import os\nself = os\nself.write = print\n", 3),
    ("import os\nclass C:\n    def put(self, o):\n        o.write = 1\nC().put(os)\n", 4),   # a method
    ("import torch\nclass L:\n    def f(self, name):\n        setattr(type(self), name, 1)\n", 4),
    ("import os\nfrom os import *\nwrite = print\n", None),      # its own name `write`, not os.write
    ("import os\ndef f():\n    os = 1\n    return os\n", None),  # a local named os
    ("import os\nos = None\n", None),                           # its own global rebound
    ("with open(__file__) as f:\n    text = f.read()\n", None),
]


@pytest.mark.parametrize("source,line", ATTACKS, ids=[str(i) for i in range(len(ATTACKS))])
def test_an_attackers_ways_round_the_store_rule(source, line):
    found = check_source(source, "m.py")
    if line is None:
        assert found == [], found
    else:
        assert [f[1] for f in found] == [line], found


# Idioms of honest code that must never be refused (found calibrating the look, and their neighbours).
HONEST = [
    # names provably no dunder (round 2's false charges)
    "import torch\nfor short, long in (('fp16', 'float16'), ('bf16', 'bfloat16')):\n    getattr(torch, long)\n",
    "import torch\nNAMES = {'fp16': 'float16'}\ndef dt(k):\n    return getattr(torch, NAMES[k])\n",
    "class M:\n    def proj(self, which):\n        return getattr(self, f'{which}_proj')\n    def w(self, prefix):\n"
    "        return getattr(self, prefix + '_w')\n    def get(self, key):\n        return getattr(self, key.lower())\n",
    # what the red team found refused (e237fc5): names from literal constants, a namespace of its own
    "import torch\nNARROW = tuple(getattr(torch, n) for n in ('float16', 'bfloat16', 'float8_e4m3fn') if hasattr(torch, n))\n",
    "import torch\nNAMES = ('float16', 'bfloat16')\nD = {n: getattr(torch, n) for n in NAMES}\n",
    "import types, torch\ncfg = types.SimpleNamespace(lr=1e-3, dtype=torch.float32)\ncfg.lr = 2e-3\n",
    "import sys\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    kind = sys.exc_info()[0]\n",
    "import timeit\ndef f():\n    return 1\nt = timeit.timeit(f, number=3) + timeit.timeit(lambda: f(), number=2)\nclock = timeit.default_timer\n",
    "class M:\n    def __init__(self):\n        for i in range(2):\n            setattr(self, f'layer{i}', i)\n"
    "    def get(self, i):\n        return getattr(self, f'layer{i}')\n",
    "import dataclasses\ndef as_dict(cfg):\n    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}\n",
    # settings the grader never reads (seam/allowed.py _setting)
    "import torch\ndef f():\n    torch.backends.cudnn.benchmark = True\n",
    "import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n",
    "import os\nos.environ['OMP_NUM_THREADS'] = '1'\n",
    "import torch\nx = torch.zeros(3, dtype=torch.float32)\nx.requires_grad = True\n",
    "import torch.nn as nn\nm = nn.Linear(3, 3)\nm.weight = nn.Parameter(m.weight * 2)\nm.bias = None\n",
    "def f(model):\n    for m in model.modules():\n        m.training = False\n",
    "import argparse\nargs = argparse.ArgumentParser().parse_args([])\nargs.lr = 0.1\n",
    "import logging\nlog = logging.getLogger(__name__)\nlog.disabled = True\n",
    "class C:\n    count = 0\n    def __init__(self):\n        C.count += 1\n        self.__private = 1\n",
    "class C:\n    __slots__ = ('a',)\n    __hash__ = None\n    def __eq__(self, o):\n        return NotImplemented\n",
    "class C:\n    def __repr__(self):\n        return f'{self.__class__.__name__}()'\n    __str__ = __repr__\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        torch.nn.Module.__init__(self)\n"
    "        self.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2)])\n"
    "        self.layers[0].weight = torch.nn.Parameter(torch.zeros(2, 2))\n",
    "def fit(model, eval=False):\n    return eval\n",
    "import os\npath = os.path.join(os.path.dirname(__file__), 'x')\nos.makedirs(path, exist_ok=True)\n",
    "import json\nwith open('x') as f:\n    data = json.load(f)\ndata['a'] = 1\n",
    "__all__ = ['f']\n__version__ = '1.0'\n",
    "import sys\nprint(sys.maxsize, sys.version_info, file=sys.stderr)\n",
    "import torch\nopt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)\nopt.param_groups[0]['lr'] = 0.01\n",
    "import numpy as np\nrng = np.random.default_rng(0)\nx = rng.standard_normal(3)\nx[0] = 1.0\n",
    "try:\n    import einops\nexcept ImportError:\n    einops = None\n",
    "import torch\nDTYPES = {'fp16': torch.float16}\nDTYPES['bf16'] = torch.bfloat16\n",
    "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    lr: float = 1e-3\ncfg = Cfg()\ncfg.lr = 0.1\nCfg.lr = 0.2\n",
    "import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a)\n"
    "    inner.calls = 0\n    return inner\n",
    "def f():\n    pass\nf.cache = {}\n",
    "class Node:\n    pass\ndef link(a, b):\n    a.next = b\nlink(Node(), Node())\n",
    "x = [1, 2]\nfor i, v in enumerate(x):\n    x[i] = v * 2\n",
    "import torch\n@torch.no_grad()\ndef f(x):\n    x.data.copy_(x.data * 2)\n",
    "import operator\nrows = sorted([], key=operator.attrgetter('lr'))\n",
    "class A:\n    @classmethod\n    def make(cls):\n        obj = cls()\n        obj.x = 1\n        return obj\n",
    "import torch\nx = torch.randn(3)\nprint(hasattr(torch, 'compile'), getattr(x, 'shape'), type(x).__name__)\n",
    "import gc\ngc.collect()\n",
    "cfg.overrides = {}\n",
    "import torch\ndef cast(x, dtype=torch.float16):\n    y = x.to(dtype)\n    y.requires_grad_(False)\n    return y\n",
    "import torch\nclass L(torch.nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.w = torch.nn.Parameter(torch.empty(d, d, dtype=torch.float32))\n"
    "    def reset(self):\n        for name, p in self.named_parameters():\n            setattr(self, name, p)\n"
    "            getattr(self, name).requires_grad_(False)\n            p.grad = None\n",
    "if __name__ == '__main__':\n    print('self-check')\n",
]


@pytest.mark.parametrize("source", HONEST, ids=[str(i) for i in range(len(HONEST))])
def test_honest_idioms_are_allowed(source):
    assert check_source(source, "m.py") == []


def _modules():
    for folder in ("reference", "student_stubs"):
        yield from ((p.name, p.read_text()) for p in sorted((ROOT / folder).glob("*.py")))
    yield from ((p.name, p.read_text()) for p in sorted((ROOT / "tests/self/alternatives").glob("*__*.py")))
    yield from ((p.name, p.read_text()) for p in all_samples())


def test_what_students_write_is_allowed():
    """The reference, the stubs, every alternative and every honest sample: no finding."""
    found = [f for name, text in _modules() for f in check_source(text, name)]
    assert len(list(_modules())) >= 6 + 2 * 12 and found == []


def test_the_planted_bugs_are_allowed():
    """A planted bug is a mistake, not a trick: the look passes each (the bug must cost points
    on its own problem only)."""
    from tests.self.bugs import all_bugs
    found = [f for bug in all_bugs() for f in check_source(bug.apply(reference_text(bug.problem)),
                                                           str(files(bug.problem).module))]
    assert found == []


def test_the_honest_samples_cover_the_idioms():
    text = "\n".join(p.read_text() for p in all_samples())
    for idiom in ("torch._foreach_", "torch.einsum", "import einops", "dataclass", "lru_cache", "partial(",
                  "reduce(", "import numpy", 'if __name__ == "__main__":', "@property", "p.grad = None",
                  'group["lr"] =', 'self.state[p]["step"] += 1', ".data.copy_(", "setattr(self, name, value)",
                  "import math", "from typing import", 'getattr(torch, "float16")'):
        assert idiom in text, idiom
    assert len(all_samples()) >= 6


def test_the_rules_are_data_with_a_reason_each():
    assert len(REFUSED) >= 7 and all(what and why and "{" not in what for what, why in REFUSED.values())


def test_the_static_look_reports_the_allow_list_with_the_construct(tmp_path):
    folder = reference_with(tmp_path / "s", {"dtypes": reference_text("dtypes") + "\nimport os\nos.write = os.write\n"})
    line = len(reference_text("dtypes").splitlines()) + 3
    found = [f for f in tamper.scan(folder) if f[2] == "allow-list"]
    assert found == [("dtypes.py", line, "allow-list")]
    assert found[0].what == "a store on an attribute of the module os (os.write)"
    assert f"dtypes.py:{line}: a store on an attribute of the module os (os.write)" in tamper.verdict(found)
    assert "allow-list" in tamper.TECHNIQUES and "allow-list" in BLINDS_RULES
    assert set(tamper._ALSO_BLINDING) | {"allow-list"} == set(BLINDS_RULES)  # (the same list, kept twice)


def test_each_module_text_is_read_once(tmp_path, monkeypatch):
    calls = []
    real = tamper.check_tree
    monkeypatch.setattr(tamper, "check_tree", lambda tree, name: calls.append(name) or real(tree, name))
    monkeypatch.setattr(tamper, "_memo", {})
    folder = reference_with(tmp_path / "s", {"dtypes": reference_text("dtypes") + "\nx = 1\n"})
    for _ in range(2):
        assert tamper.scan(folder) == [] and tamper.names_at_run_time(folder) == []
    assert sorted(calls) == sorted(p.name for p in folder.glob("*.py"))


@pytest.mark.parametrize("line", ["os.write = os.write", "torch.nn.functional.__name__ = torch.nn.functional.__name__"])
def test_a_module_outside_the_allow_list_scores_as_unwritten(tmp_path, line):
    """In-process, as the grader's plugin and the student's own pytest use it (seam/impl.py): one
    line outside the allow-list, and every ruled function is charged and every "how" test fails,
    each message naming the construct with file and line. (The lines store what was there: the
    test's own process keeps os.write and torch's module names.)"""
    from seam import InProcess
    text = reference_text("dtypes") + f"\nimport os\nimport torch.nn.functional\n{line}\n"
    folder = reference_with(tmp_path / "s", {"dtypes": text})
    impl = InProcess(folder, package=f"allowed_{tmp_path.name}")
    where = f"dtypes.py:{len(text.splitlines())}: a store on an attribute of "
    import torch
    assert impl.dtypes.round_to(torch.tensor([1.0]), impl.get("dtypes.FP16")).tolist() == [1.0]  # it still runs
    violations = impl.violations()
    assert set(violations) == set(RULED)
    assert all(where in used and "no rule can be checked" in used for used in violations.values())
    assert impl.unverifiable().startswith("not checked:") and where in impl.unverifiable()
    assert "\n" not in impl.unverifiable()


def test_the_reference_in_process_is_charged_nothing(tmp_path):
    from seam import InProcess
    impl = InProcess(REFERENCE, package=f"allowed_ref_{tmp_path.name}")
    assert impl.violations() == {} and impl.unverifiable() == ""
    assert Path(impl.folder) == REFERENCE
