"""A corpus of hostile submissions. Each tries to raise its score without doing the work.

The vehicle is the `intensity` problem: each attack submission's intensity.py is the reference
implementation, *gated*: its functions work only if ``ATTACK_WORKED`` ends up True, i.e. only if
the attack (reading the reference, reaching the network, ...) succeeded; otherwise they raise
NotImplementedError. So an attack that gets through earns points, and the suite's assertion
"score == 0" fails. Attacks that cheat directly (forged objects, a written results.json, killing
the grader) keep stub bodies. A control submission with the gate open proves the vehicle works.

Placeholders in sources: {ROOT} (the checkout), {OUT} (where the grader writes results.json),
{PORT} (a TCP port the test listens on at 127.0.0.1), and for the allow-list attacks {COPY} (a
world-readable copy of the reference elsewhere on disk), {SHARED} (the world-readable folder
that holds it, as a shared temporary folder would), {VICTIM} (another student's submission in a
sibling folder) and {MARK} (a file name the test looks for outside the sandbox afterwards).
"""

import ast
import dataclasses
from pathlib import Path

from grader.paths import problem_file
from tests.self.submissions import REFERENCE, reference_text, reference_with

VEHICLE = "intensity"

# The gate names the vehicle's functions (read from its stub) and reads no namespace unnamed.
_VEHICLE_FUNCTIONS = [node.name for node in ast.parse(problem_file(VEHICLE, "stub").read_text()).body
                      if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
GATE = '''
# ---- gate: the reference functions above stay only if the attack worked ----
try:
    ATTACK_WORKED
except NameError:
    ATTACK_WORKED = False
if not ATTACK_WORKED:
    def _not_earned(*args, **kwargs):
        raise NotImplementedError("attack did not work")
    {names} = _not_earned
'''.replace("{names}", " = ".join(_VEHICLE_FUNCTIONS))

STUB_FUNCS = '''
def matmul_intensity(b, d, f, bytes_per_element):
    raise NotImplementedError
def elementwise_intensity(flops_per_element, bytes_read_per_element, bytes_written_per_element):
    raise NotImplementedError
def ridge_point(peak_flops, bandwidth):
    raise NotImplementedError
def is_compute_bound(intensity, peak_flops, bandwidth):
    raise NotImplementedError
def roofline_seconds(flops, bytes_moved, peak_flops, bandwidth):
    raise NotImplementedError
'''


# Replies that cost the grader, not the worker (the red team's grader-memory-frames): with STUB_FUNCS, is_compute_bound
# answers millions of values in a few MB (a batch of 24 cases: 2.4 million in 7 MB, half the reply
# cap, so no size near the cap decides which limit speaks) and ridge_point the red team's 63 MB frame.
# (Neither function has an honest-work rule: the import of seam makes every ruled function "not
# checked", which would hide what the grader does with the reply.)
REPLY_FLOOD = '''
# (the reply channel is bound before student code, so the flood is sent as values: 100,000 empty
# lists a call, a batch of them under MAX_REPLY but over MAX_NODES; and a 63 MB frame, the red team's size)
def is_compute_bound(intensity, peak_flops, bandwidth):
    return [[]] * 100_000
def ridge_point(p, b):
    return "x" * 63_000_000
'''


@dataclasses.dataclass(frozen=True)
class Attack:
    name: str
    code: str                      # appended to the gated reference (or to stubs if not gated)
    gated: bool = True             # reference + gate, or plain stubs + code
    files: tuple = ()              # extra (relative path, content) pairs in the submission
    world_readable: bool = False   # wins wherever world-readable files are visible (uid mode)

    def build(self, dest: Path, out: Path, port: int, **more: str) -> Path:
        values = {"ROOT": str(REFERENCE.parent), "OUT": str(out), "PORT": str(port), **more}

        def fill(text: str) -> str:
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text

        if self.gated:
            body = reference_text(VEHICLE) + "\n" + fill(self.code) + GATE
        else:
            body = STUB_FUNCS + "\n" + fill(self.code)
        reference_with(dest, {VEHICLE: body}, problems=[VEHICLE])
        for rel, content in self.files:
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(fill(content))
        return dest


FORGED = '''
class Liar:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
    def __bool__(self): return True
    def __repr__(self): return "whatever you expected"
'''

CONTROL = Attack("control: gate open (must score full marks)", "ATTACK_WORKED = True")

ATTACKS = [
    Attack("write results.json everywhere at import", '''
import json, os
fake = json.dumps({"score": 1000, "execution_time": 1, "output": "pwned", "tests": []})
for path in ["{OUT}", "results.json", "/tmp/results.json", "/autograder/results/results.json",
             os.path.join("{ROOT}", "results.json")]:
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(fake)
        if path == "{OUT}":
            ATTACK_WORKED = True
    except OSError:
        pass
'''),
    Attack("replace results.json from a background process that outlives grading", '''
import os, time, json
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(600):
            time.sleep(0.05)
            try:
                with open("{OUT}", "w") as f:
                    json.dump({"score": 1000, "execution_time": 1, "output": "late", "tests": []}, f)
            except OSError:
                pass
    os._exit(0)
''', gated=False),
    Attack("conftest.py plugin marks every test passed", "", gated=False, files=(("conftest.py", '''
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
'''),)),
    Attack("pytest.ini and pyproject.toml that deselect failing tests", "", gated=False, files=(
        ("pytest.ini", "[pytest]\naddopts = -p no:terminal -k nothing_matches\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '--co'\n"))),
    Attack("sitecustomize, usercustomize and a .pth file", "", gated=False, files=(
        ("sitecustomize.py", "import builtins; builtins.__dict__['ATTACK_WORKED'] = True\n"),
        ("usercustomize.py", "import builtins; builtins.__dict__['ATTACK_WORKED'] = True\n"),
        ("evil.pth", "import builtins; builtins.__dict__['ATTACK_WORKED'] = True\n"))),
    Attack("modules shadowing torch, numpy, pytest and grader", "", gated=False, files=(
        ("torch.py", "def equal(*a): return True\ndef allclose(*a, **k): return True\n"),
        ("numpy.py", "raise SystemExit('shadow numpy')\n"),
        ("pytest.py", "def fail(*a, **k): pass\n"),
        ("grader/__init__.py", "SCORE = 1000\n"),
        ("tests/checks.py", "def expect_equal(*a, **k): pass\n"))),
    Attack("monkeypatch pytest, builtins, torch and the comparison helpers", '''
import builtins, math, torch
try:
    import pytest
    pytest.fail = lambda *a, **k: None
except Exception:
    pass
builtins.isinstance = lambda obj, cls: True
torch.equal = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
math.isclose = lambda *a, **k: True
import sys
for name, mod in list(sys.modules.items()):
    if name.endswith("checks") and hasattr(mod, "expect_equal"):
        mod.expect_equal = lambda *a, **k: None
        mod.fail = lambda *a, **k: None
'''),
    Attack("forged __eq__ / __float__ objects as results", FORGED + '''
def matmul_intensity(b, d, f, bytes_per_element): return Liar()
def elementwise_intensity(a, b, c): return Liar()
def ridge_point(p, b): return Liar()
def is_compute_bound(i, p, b): return Liar()
def roofline_seconds(f, b, p, w): return Liar()
''', gated=False),
    Attack("subclasses of float, tuple and bool with forged equality", '''
class F(float):
    def __eq__(self, o): return True
    __hash__ = float.__hash__
class T(tuple):
    def __eq__(self, o): return True
    __hash__ = tuple.__hash__
def matmul_intensity(b, d, f, bytes_per_element): return F(0.0)
def elementwise_intensity(a, b, c): return F(0.0)
def ridge_point(p, b): return F(1.0)
def is_compute_bound(i, p, b): return T()
def roofline_seconds(f, b, p, w): return F(0.0)
''', gated=False),
    Attack("sys.exit(0) at import", "import sys\nsys.exit(0)\n"),
    Attack("os._exit(0) on every call", '''
import os
def matmul_intensity(*a): os._exit(0)
def ridge_point(*a): os._exit(0)
''', gated=False),
    Attack("SIGKILL itself, its parent, its process group and every process it may signal", '''
import os, signal
def matmul_intensity(*a):
    for target in (os.getppid(), 1):
        try: os.kill(target, signal.SIGKILL)
        except OSError: pass
    try: os.kill(-1, signal.SIGKILL)
    except OSError: pass
    os.kill(os.getpid(), signal.SIGKILL)
''', gated=False),
    Attack("read the reference solution", '''
import os
try:
    src = open(os.path.join("{ROOT}", "reference", "intensity.py")).read()
    ATTACK_WORKED = "def matmul_intensity" in src
except OSError:
    pass
'''),
    Attack("read the hidden tests and their snapshots", '''
import os, glob
found = glob.glob(os.path.join("{ROOT}", "tests", "hidden", "*.py")) + \\
        glob.glob(os.path.join("{ROOT}", "tests", "**", "*.json"), recursive=True)
try:
    ATTACK_WORKED = any(open(p).read(1) for p in found)
except OSError:
    pass
'''),
    Attack("reach the network (the grader's loopback and the internet)", '''
import socket
for host, port in (("127.0.0.1", {PORT}), ("1.1.1.1", 53), ("8.8.8.8", 53)):
    try:
        socket.create_connection((host, port), timeout=1).close()
        ATTACK_WORKED = True
    except OSError:
        pass
'''),
    Attack("write into the grader's source", '''
import os
try:
    with open(os.path.join("{ROOT}", "grader", "report.py"), "a") as f:
        f.write("")
    ATTACK_WORKED = True
except OSError:
    pass
'''),
    Attack("infinite loop at import", "while True:\n    pass\n", gated=False),
    Attack("infinite loop on every call", '''
def matmul_intensity(*a):
    while True: pass
def elementwise_intensity(*a):
    while True: pass
def ridge_point(*a):
    while True: pass
''', gated=False),
    Attack("memory bomb", '''
def matmul_intensity(*a):
    blocks = []
    while True:
        blocks.append(bytearray(1 << 28))
''', gated=False),
    Attack("fork bomb", '''
import os
def matmul_intensity(*a):
    while True:
        try:
            os.fork()
        except OSError:
            pass
''', gated=False),
    Attack("huge output", '''
import sys
def matmul_intensity(*a):
    line = "x" * 1_000_000 + "\\n"
    while True:
        sys.stdout.write(line)
        sys.stderr.write(line)
''', gated=False),
    Attack("forge protocol frames on the response pipe", '''
import os, struct, json
def _forge():
    payload = json.dumps({"ok": 0.125}).encode()
    for fd in range(3, 64):
        try: os.write(fd, struct.pack(">Q", len(payload)) + payload)
        except OSError: pass
def elementwise_intensity(*a):
    _forge()
    return 0.5  # wrong; the forged frame carries the right answer
def matmul_intensity(*a):
    for fd in range(3, 64):
        try: os.write(fd, struct.pack(">Q", 1 << 62))
        except OSError: pass
''', gated=False),
    Attack("raise its own resource limits and escape to root", '''
import os, resource
try:
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    ATTACK_WORKED = True
except (ValueError, OSError):
    pass
try:
    os.setuid(0)
    ATTACK_WORKED = True
except OSError:
    pass
'''),
    Attack("deeply nested and enormous return values", '''
def matmul_intensity(*a):
    x = []
    for _ in range(100_000):
        x = [x]
    return x
def ridge_point(*a):
    return "y" * (300 << 20)
''', gated=False),
]


# ---- the allow-list attacks: what a deny-list cannot know about ----------------------------
# Each runs in every isolation mode available (tests/self/grading/test_allowlist.py). A copy of the
# solution, another student's folder, the grader's temporary files and arguments: none may be
# read, and nothing outside the worker's scratch may be written.

FIND_SOLUTION = r"""
import os, time
def _solution(path):
    try:
        with open(path) as f:
            src = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    if "def matmul_intensity" in src and "NotImplementedError" not in src.split("def matmul_intensity")[1][:600]:
        return src
    return None
"""

ALLOWLIST_ATTACKS = [
    Attack("import a world-readable copy of the reference found on disk", FIND_SOLUTION + r"""
_mine = os.path.dirname(os.path.abspath(__file__))
_found = _solution(os.path.join("{COPY}", "intensity.py"))
_start, _seen = time.monotonic(), 0
for _top in ["/", "/var/tmp", "/tmp", "/srv", "/opt", "/home", "/work", os.path.dirname(_mine)]:
    for _dir, _subdirs, _files in os.walk(_top):
        _subdirs[:] = [d for d in _subdirs if d not in ("proc", "sys", "dev")]
        if _found or time.monotonic() - _start > 1.5 or _dir.count("/") > 7:
            _subdirs[:] = []
            continue
        if "intensity.py" in _files and _dir != _mine:
            _found = _solution(os.path.join(_dir, "intensity.py"))
if _found:
    exec(compile(_found, "stolen", "exec"))  # the real functions, then the gate keeps them
    ATTACK_WORKED = True
""", world_readable=True),
    Attack("read another student's submission in a sibling folder", FIND_SOLUTION + r"""
for _p in [os.path.join("{VICTIM}", "intensity.py"),
           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "victim", "intensity.py")]:
    _src = _solution(_p)
    if _src:
        exec(compile(_src, "stolen", "exec"))
        ATTACK_WORKED = True
"""),
    Attack("overwrite another student's submission", r"""
import os
for _p in [os.path.join("{VICTIM}", "intensity.py"), os.path.join("{VICTIM}", "{MARK}")]:
    try:
        with open(_p, "a") as _f:
            _f.write("\nraise SystemExit('sabotaged')\n")
        ATTACK_WORKED = True
    except OSError:
        pass
"""),
    # {SHARED} first: the machine's other shared folders may hold anything (a crowded /tmp
    # outlasts the 1.5 s), and the verdict must follow from what the test planted, never from them
    Attack("scan the shared temporary folders for the grader's files", FIND_SOLUTION + r"""
import glob
_start = time.monotonic()
for _top in ["{SHARED}", "/tmp", "/var/tmp", "/dev/shm", "/run"]:
    for _dir, _subdirs, _files in os.walk(_top):
        if time.monotonic() - _start > 1.5:
            break
        for _name in _files:
            _path = os.path.join(_dir, _name)
            if _name == "results.json" or _name.endswith(".py") and "sandbox" not in _path:
                try:
                    with open(_path) as _f:
                        _text = _f.read(200000)
                except (OSError, UnicodeDecodeError):
                    continue
                if "def matmul_intensity" in _text and "NotImplementedError" not in _text or \
                        '"tests"' in _text and '"score"' in _text:
                    ATTACK_WORKED = True
""", world_readable=True),
    Attack("follow the grader's arguments and files in /proc", r"""
import os
_me = os.getpid()
for _pid in os.listdir("/proc"):
    if not _pid.isdigit() or int(_pid) == _me:
        continue
    try:
        with open(f"/proc/{_pid}/cmdline", "rb") as _f:
            _args = _f.read().decode(errors="replace").split("\0")
    except OSError:
        continue
    if not any("grader" in _a or "pytest" in _a for _a in _args):
        continue
    for _probe in (f"/proc/{_pid}/environ", f"/proc/{_pid}/cwd", f"/proc/{_pid}/root"):
        try:
            if os.path.isdir(_probe):
                os.listdir(_probe)
            else:
                open(_probe).read(1)
            ATTACK_WORKED = True
        except OSError:
            pass
    for _a in _args:  # paths on the grader's command line: the upload, the output folder
        for _path in (_a, os.path.join(_a, "intensity.py"), os.path.join(os.path.dirname(_a), "results.json")):
            try:
                if os.path.isfile(_path) and open(_path).read(1):
                    ATTACK_WORKED = True
            except OSError:
                pass
"""),
    Attack("write outside its scratch space", r"""
import os
for _p in [os.path.join("{ROOT}", "{MARK}"), os.path.join(os.path.dirname("{OUT}"), "{MARK}"),
           os.path.join("{VICTIM}", "{MARK}"), os.path.join("{COPY}", "{MARK}")]:
    try:
        with open(_p, "w") as _f:
            _f.write("x")
        ATTACK_WORKED = True
    except OSError:
        pass
for _p in ["/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), "/"]:
    try:
        with open(os.path.join(_p, "{MARK}"), "w") as _f:
            _f.write("x")
    except OSError:
        pass
"""),
]

# The walls every mode has, process mode included (grader/sandbox/seccomp.py): what Landlock and
# namespaces leave open (red team: landlock-chmod, channels, sysv-code-smuggling).
WALL_ATTACKS = [
    Attack("change file modes, owners and times (its module, its folders, its scratch)", r"""
import os
open("mine.txt", "w").close()
_me = os.path.abspath(__file__)
for _p in (_me, os.path.dirname(_me), os.getcwd(), os.path.abspath("mine.txt")):
    for _try in (lambda: os.chmod(_p, 0o777), lambda: os.chown(_p, os.getuid(), os.getgid()),
                 lambda: os.utime(_p, (0, 0))):
        try:
            _try()
            ATTACK_WORKED = True
        except OSError:
            pass
"""),
    Attack("kernel keyrings (the grader's, or one a leased uid keeps between runs)", r"""
import ctypes, platform
_libc = ctypes.CDLL(None, use_errno=True)
_nr = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine())
if _nr:
    if _libc.syscall(_nr[0], b"user", b"smuggled", b"secret", 6, -4) >= 0:   # add_key to @u
        ATTACK_WORKED = True
    if _libc.syscall(_nr[1], 0, -4, 0) >= 0:                                  # keyctl GET_KEYRING_ID @u
        ATTACK_WORKED = True
"""),
    Attack("SysV shared memory, queues and semaphores, POSIX queues (they outlive the worker)", r"""
import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
for _get in (lambda: _libc.shmget(0, 4096, 0o1600), lambda: _libc.msgget(0, 0o1600),
             lambda: _libc.semget(0, 1, 0o1600)):
    if _get() >= 0:
        ATTACK_WORKED = True
try:
    _rt = ctypes.CDLL("librt.so.1", use_errno=True)
    if _rt.mq_open(b"/smuggled", 0o100 | 2, 0o600, None) >= 0:
        ATTACK_WORKED = True
except OSError:
    pass
"""),
    Attack("sockets of any family (UNIX, UDP, a socketpair)", r"""
import socket
for _make in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),
              lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), lambda: socket.socketpair()):
    try:
        _made = _make()
        ATTACK_WORKED = True
    except OSError:
        pass
"""),
    Attack("new namespaces, io_uring, bpf, perf events, userfaultfd, ptrace", r"""
import ctypes, platform
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.unshare(0x10000000) == 0:              # CLONE_NEWUSER: capabilities in a namespace of its own
    ATTACK_WORKED = True
if _libc.ptrace(0, 0, None, None) == 0:         # PTRACE_TRACEME
    ATTACK_WORKED = True
_nrs = {"x86_64": (425, 321, 298, 323), "aarch64": (425, 280, 241, 282)}.get(platform.machine(), ())
_params = ctypes.create_string_buffer(120)
for _nr, _args in zip(_nrs, ((8, _params), (0, None, 0), (_params, 0, -1, -1, 0), (0,))):
    if _libc.syscall(_nr, *_args) >= 0:
        ATTACK_WORKED = True
"""),
]
# In the suite they run as one submission per mode (grading is the costly part): every door tried,
# the gate open if any opened. Run one alone to see which: WALL_ATTACKS[i].build(...).
DOORS = Attack("every door the syscall filter shuts: " + "; ".join(a.name for a in WALL_ATTACKS),
               "\n".join(a.code for a in WALL_ATTACKS))
ALLOWLIST_ATTACKS.append(DOORS)
