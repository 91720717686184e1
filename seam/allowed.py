"""What a graded module may do, read from its syntax tree before it runs: an allow-list.

seam/tamper.py's deny-list names the techniques that blind a probe, and each fell to one line it
did not name (a module renamed through ``__name__``, ``os.write`` rebound before the seam calls
it). This look reads the other way round: a graded module may compute with what it imports,
define its own functions and classes and store on its own objects; it may not change what it did
not make, rename itself, or reach a namespace by a name its text does not hold (``REFUSED``, a
reason for each: README's table is made from it). ``check_source`` lists each construct outside
that; ``seam.tamper.scan`` reports them as the technique "allow-list", so every ruled function
scores as its rule broken and every "how" test fails (seam/impl.py).

Aliases are followed conservatively and by name, across the whole module: a name, an attribute
name or a parameter that any binding may fill with something the module did not make (``o =
os``, ``a, b = os, 1``, ``for m in (os,)``, a default ``o=os``, a call ``put(os)``) counts as that
thing everywhere. What a call returns is the module's own, except where the call may hand an
argument back (``type``, ``next``, ``max``, ``dict.get``, ``typing.cast``, ``contextlib.nullcontext``,
a function of its own that returns an import). What it does not follow: README, "what stays
forgeable".
"""

import ast
import builtins
import re

# What a graded module may not do: rule -> (what, why). README's allow-list table is this.
REFUSED = {
    "stores on what it did not make": (
        "store on or `del` an attribute of a module, of a name it imported, of a builtin or of `sys`, or "
        "of a name that may hold one (`o = os`, `a, b = os, 1`, `for m in (os,)`, a default `o=os`), also "
        "with `setattr` / `delattr` / `object.__setattr__`; store into an item of one (`torch.optim.__dict__[k]`); "
        "but a constant into a flag under `torch.backends` (`torch.backends.cudnn.benchmark = True`) and an "
        "item of `os.environ`, settings the grader never reads",
        "the grader's seam calls `os.write`, `json.dumps`, `print`, `torch.Tensor.tolist` ... in the "
        "student's process while it answers: rebound, they change what the grader is told"),
    "stores it cannot place": (
        "store on an attribute of an object it does not name: `type(x).a = ...`, `(o := os).a = ...`, "
        "`f().a = ...`, or through a dunder (`x.__class__.a = ...`)",
        "which object changes cannot be read from the text; its own objects are reached by a name "
        "(`self.w`, `p.grad`, `self.layers[0].weight`, `model.weight.data`)"),
    "renaming": (
        "bind a dunder at module level (`__name__`, `__spec__`, `__loader__`, `__file__`, `__package__`, "
        "`__builtins__`, `__path__`, a module `__getattr__` ...; `__all__`, `__doc__`, `__version__` and "
        "`__author__` may be), or `__module__`, `__qualname__`, `__name__`, `__class__`, `__dict__` in a "
        "class body; make a class under a name of its choosing (`type(name, bases, ns)`, a metaclass of "
        "its own, `module=` to namedtuple / Enum / make_dataclass); `functools.wraps` of what it did not make",
        "the honest-work watch tells the student's code from PyTorch's and einops' by module and class "
        "names: renamed, it passes for theirs"),
    "dunder attributes": (
        "read a dunder attribute but {allowed}; write any; name one in a string (`\"__dict__\"`, also "
        "assembled: `\"__di\" + \"ct__\"`); "
        "the names `__builtins__`, `__spec__`, `__loader__`",
        "`__dict__`, `__mro__`, `__subclasses__`, `__globals__`, `__code__`, `__closure__`, `__defaults__` "
        "reach namespaces and objects the text does not name, so nothing above could be checked"),
    "introspection": (
        "frames and tracebacks (`sys._getframe`, `f_locals`, `f_back`, `tb_frame`, `gi_frame`, "
        "`inspect`, `traceback.walk_stack` / `walk_tb`), `gc` (but `gc.collect()`), `ctypes`, `importlib`, `sys.modules`, `sys.meta_path` "
        "and sys's other import and hook tables, also as another module's attribute (`np.ctypeslib.ctypes`, "
        "`os.sys`)",
        "they reach the grader's own objects (a probe's frame, the watch's record, a module by its "
        "name) without naming them"),
    "code made at run time": (
        "`exec`, `eval`, `compile`, `__import__`, `globals()`, `vars()`, a store into `locals()`; a string "
        "handed to `timeit` as its statement or setup (time a function instead); `runpy`, `code`, `codeop`, "
        "`marshal`; code objects made or relabelled (`dis`, `types.FunctionType` / `CodeType`, `co_*=`)",
        "code and names that are not in the text cannot be checked, and code compiled from a string runs "
        "in no file, so the watch could not tell it is theirs (it counts such code as theirs anyway)"),
    "names made at run time": (
        "`getattr` / `hasattr` with a name not written out on a module, an import, a builtin or what may "
        "be one, and on anything but `self` with a name not provably free of dunders (one that begins with a "
        "letter or ends in anything but `__`, like `\"layer\" + str(i)` or an f-string ending `_proj`; a loop over or an "
        "item of written-out names; `f.name` of `dataclasses.fields`: a parameter, a `.decode()` or `dir(...)` "
        "is not); `setattr` / `delattr` with a name not written out on anything but `self`; any of these "
        "passed as a value; `operator.attrgetter` / `methodcaller` with a name not written out",
        "which attribute it reads or changes cannot be read from the text"),
}

# README's allow-list block (grader/rubric.py): what a module may do, the table, what is not followed.
ALLOWS = ("A graded module may import what it likes (but the modules below) and compute with it, define "
          "its own functions, classes and module-level names, and store on its own objects: `self.x`, "
          "`p.grad = None`, `self.layers[0].weight = ...`, `group[\"lr\"] = ...`, `Cls.attr` for a class "
          "of its own, `setattr(self, name, value)`. Anything in the table below (`seam/allowed.py`, read "
          "from the syntax tree, nothing runs) makes every ruled function \"not checked\", which scores as "
          "its rule broken, and every `how` test fail, with one line naming the construct, its file and line.")
NOT_FOLLOWED = ("What the look does not follow: an object handed back by library code it does not list (an "
                "attribute of what a library returns, a callback a library calls with a module), calls that "
                "change a library's state (`os.environ.update(...)`, `torch.set_default_dtype(...)`: calls, not "
                "stores), and names assembled other than from constants (`+`, f-strings, `join`).")

# Dunder attributes honest code reads (its own methods called through super() or a base, a name
# for a message, the protocols it implements); every other one, and any write, is refused.
READ_DUNDERS = frozenset(f"__{n}__" for n in (
    "init new post_init name qualname doc class version len iter next repr str format eq ne lt le "
    "gt ge hash bool call enter exit aenter aexit getitem setitem delitem contains sizeof float int "
    "index complex round floor ceil trunc array neg pos abs invert add sub mul matmul truediv "
    "floordiv mod pow radd rsub rmul rmatmul rtruediv rfloordiv rmod rpow iadd isub imul imatmul "
    "itruediv ifloordiv ipow and or xor rand ror rxor").split())
REFUSED["dunder attributes"] = (REFUSED["dunder attributes"][0].format(
    allowed="`__init__`, `__new__`, `__name__`, `__qualname__`, `__class__`, `__doc__`, `__version__` and the "
            "operator and container protocols (`__len__`, `__getitem__`, `__add__` ...)"),
    REFUSED["dunder attributes"][1])
MODULE_MAY_BIND = frozenset({"__all__", "__doc__", "__version__", "__author__"})
CLASS_MAY_NOT_BIND = frozenset({"__module__", "__qualname__", "__name__", "__class__", "__dict__",
                                "__bases__", "__mro__", "__annotations__", "__weakref__", "__spec__"})
NAMES_MAY_READ = frozenset({"__name__", "__file__", "__doc__", "__debug__"})  # module globals, read
STRINGS_MAY_NAME = READ_DUNDERS | {"__main__", "__all__"}

MODULES = {"ctypes": "ctypes", "_ctypes": "ctypes", "importlib": "importlib", "inspect": "frames (inspect)",
           "gc": "gc",  # gc: but gc.collect()
           # code compiled from a string runs in no file of theirs, so the watch cannot tell it is theirs
           "runpy": "code made at run time", "code": "code made at run time", "codeop": "code made at run time",
           "marshal": "code made at run time", "dis": "code objects"}
# Code objects made or relabelled (a function of theirs filed under a library's file name): the
# watch tells whose code runs by its file and globals, which a code object of theirs could fake.
CODE_OBJECTS = frozenset({"FunctionType", "CodeType", "LambdaType", "codeobj", "co_code", "co_filename",
                          "co_name", "co_qualname", "co_consts"})
# The modules above, and sys and builtins, as other modules hold them (``np.ctypeslib.ctypes``,
# ``os.sys.modules``): read as an attribute of an import, they are refused as their import is.
REACHED = {**MODULES, "ctypeslib": "ctypes", "sys": "sys", "builtins": "builtins"}
FRAMES = frozenset({"walk_stack", "walk_tb", "_getframe", "_current_frames", "currentframe", "f_locals", "f_globals", "f_back",
                    "f_code", "f_builtins", "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame",
                    "cr_code", "ag_frame", "ag_code"})
SYS_REFUSED = frozenset({"modules", "meta_path", "path_hooks", "path_importer_cache", "last_traceback",
                         "last_value", "last_exc", "displayhook",
                         "excepthook", "addaudithook", "monitoring",
                         "_getframemodulename", "builtin_module_names"})
RUN_TIME_CODE = frozenset({"exec", "eval", "compile", "__import__", "globals", "vars"})
COMPILES_STRINGS = frozenset({"Timer", "timeit", "repeat"})  # timeit's, given a string for stmt / setup
BY_NAME = frozenset({"getattr", "setattr", "delattr", "hasattr"})
# Builtins whose result may be an argument (is_), or hold one (holds); library functions likewise,
# by their last name; methods whose receiver's items come back; methods that put into a receiver.
PASS_BUILTINS = frozenset({"getattr", "next", "anext", "max", "min", "super", "vars", "globals", "locals"})
HOLD_BUILTINS = frozenset({"list", "tuple", "set", "frozenset", "dict", "sorted", "reversed", "filter",
                           "map", "zip", "enumerate", "iter", "aiter"})
PASS_CALLS = frozenset({"cast", "nullcontext", "copy", "deepcopy", "reduce", "proxy", "ref", "SimpleNamespace",
                        "attrgetter", "itemgetter", "methodcaller", "partial", "partialmethod", "wraps",
                        "update_wrapper", "getattr_static", "locate", "import_module", "enter_context",
                        "get", "pop", "popitem", "setdefault", "popleft", "first", "__getitem__"})
HOLD_CALLS = frozenset({"deque", "ChainMap", "OrderedDict", "defaultdict", "Counter", "chain", "cycle",
                        "repeat", "islice", "tee", "accumulate", "compress", "dropwhile", "takewhile",
                        "zip_longest", "product", "permutations", "combinations", "groupby", "starmap",
                        "namedtuple", "values", "items", "keys", "copy", "from_iterable", "MappingProxyType"})
RECEIVER_CALLS = frozenset({"get", "pop", "popitem", "setdefault", "popleft", "values", "items", "keys",
                            "copy", "__getitem__"})
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft",
                      "extendleft", "put", "put_nowait", "__setitem__"})
NAMED_CLASSES = frozenset({"namedtuple", "make_dataclass", "new_class", "Enum", "IntEnum", "Flag", "IntFlag",
                           "StrEnum", "NamedTuple", "TypedDict"})  # module= / qualname= names the class
_BUILTINS = frozenset(dir(builtins))
_DUNDER = re.compile(r"__\w+__\Z")


def _dunder(name) -> bool:
    return type(name) is str and bool(_DUNDER.match(name)) and len(name) > 4


def _code(node) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _last(func) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _folded(node) -> str | None:
    """The string an expression of string constants makes ("_" + "C", f"..." of constants,
    "".join([...]) of constants), or None when it is not one."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left), _folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [_folded(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep, parts = _folded(node.func.value), [_folded(e) for e in node.args[0].elts]
        return sep.join(parts) if sep is not None and all(p is not None for p in parts) else None
    return None


def _literal(node) -> str | None:
    """The attribute name an argument writes out ("w", "_" + "w"), or None."""
    return _folded(node) if node is not None else None


class _Scope:
    def __init__(self, kind: str, parent, node=None):
        self.kind, self.parent, self.node = kind, parent, node   # module, class, function, comprehension
        self.bound, self.globals, self.nonlocals = set(), set(), set()
        self.star = None  # module scope: the module a star import came from


class _Reader:
    """One module: its scopes and bindings (``_visit``), what may not be its own (``_taint``), then
    each construct outside the allow-list (``_check``)."""

    def __init__(self, tree):
        self.scope_of, self.parent = {}, {}
        self.binds = []      # (scope, name, node, how): how is (kind, expression or detail)
        self.stores = []     # (Attribute/Subscript target, how or None for del, node)
        self.calls, self.names, self.attributes = [], [], []
        self.defs = {}       # name -> [(function node, its scope, offset of its first argument)]
        self.classes = {}    # name -> [(ClassDef, its scope)]
        self.returns = {}    # id(function node) -> [returned expressions]
        self.module = _Scope("module", None, tree)
        self._visit(tree, self.module)

    # -- scopes and bindings ------------------------------------------------------------------
    def _visit(self, node, scope):
        self.scope_of[id(node)] = scope
        for child in ast.iter_child_nodes(node):
            self.parent[id(child)] = node
        visit = getattr(self, "_" + type(node).__name__, None)
        if visit is None:
            self._children(node, scope)
        else:
            visit(node, scope)

    def _children(self, node, scope):
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _bind(self, scope, name, node, how):
        if name in scope.globals:
            self.module.bound.add(name)
        elif name not in scope.nonlocals:
            scope.bound.add(name)
        self.binds.append((scope, name, node, how))

    def _targets(self, target, how, scope, node):
        """Bind what an assignment target binds; a tuple unpacks pairwise where it can."""
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, node, how)
        elif isinstance(target, (ast.Tuple, ast.List)):
            value = how[1] if how[0] == "value" else None
            pairwise = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*value.elts, *target.elts))
            for i, element in enumerate(target.elts):
                self._targets(element, ("value", value.elts[i]) if pairwise else
                              ("each", how[1]) if how[0] != "none" else how, scope, node)
        elif isinstance(target, ast.Starred):
            self._targets(target.value, ("rest", how[1]) if how[0] != "none" else how, scope, node)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self.stores.append((target, how, node))
        self._visit(target, scope)

    def _Assign(self, node, scope):
        for target in node.targets:  # (before the lambda is read: _Lambda gives it its scope)
            if isinstance(node.value, ast.Lambda) and isinstance(target, (ast.Name, ast.Attribute)):
                self.defs.setdefault(_last(target), []).append((node.value, None, 0))
        self._visit(node.value, scope)
        for target in node.targets:
            self._targets(target, ("value", node.value), scope, node)

    def _AugAssign(self, node, scope):
        self._visit(node.value, scope)
        self._targets(node.target, ("value", node.value), scope, node)

    def _AnnAssign(self, node, scope):
        self._visit(node.annotation, scope)
        if node.value is not None:
            self._visit(node.value, scope)
        how = ("value", node.value) if node.value is not None else ("field", None)
        self._targets(node.target, how, scope, node)

    def _Delete(self, node, scope):
        for target in node.targets:
            self._targets(target, ("none", None), scope, node)
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                self.stores[-1] = (target, None, node)

    def _For(self, node, scope):
        self._visit(node.iter, scope)
        self._targets(node.target, ("each", node.iter), scope, node)
        for stmt in (*node.body, *node.orelse):
            self._visit(stmt, scope)

    _AsyncFor = _For

    def _With(self, node, scope):
        for item in node.items:
            self._visit(item.context_expr, scope)
            if item.optional_vars is not None:
                self._targets(item.optional_vars, ("value", item.context_expr), scope, node)
        for stmt in node.body:
            self._visit(stmt, scope)

    _AsyncWith = _With

    def _NamedExpr(self, node, scope):
        self._visit(node.value, scope)
        target = scope
        while target.kind == "comprehension":  # a walrus binds in the scope around the comprehension
            target = target.parent
        self._targets(node.target, ("value", node.value), target, node)

    def _Import(self, node, scope):
        for alias in node.names:
            self._bind(scope, alias.asname or alias.name.split(".")[0], node,
                       ("import", alias.name if alias.asname else alias.name.split(".")[0]))

    def _ImportFrom(self, node, scope):
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self.module.star = self.module.star or module
            else:
                self._bind(scope, alias.asname or alias.name, node, ("from", f"{alias.name}, imported from {module}"))

    def _Global(self, node, scope):
        scope.globals.update(node.names)

    def _Nonlocal(self, node, scope):
        scope.nonlocals.update(node.names)

    def _ExceptHandler(self, node, scope):
        if node.name:
            self._bind(scope, node.name, node, ("none", None))
        self._children(node, scope)

    def _Match(self, node, scope):
        self._visit(node.subject, scope)
        for case in node.cases:
            for sub in ast.walk(case.pattern):
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    self._bind(scope, name, sub, ("each", node.subject))
            self._visit(case, scope)

    def _Return(self, node, scope):
        self._returned(node.value, scope)
        self._children(node, scope)

    def _Yield(self, node, scope):
        self._returned(node.value, scope)
        self._children(node, scope)

    _YieldFrom = _Yield
    _Await = _Yield

    def _returned(self, value, scope):
        while scope is not None and scope.kind != "function":
            scope = scope.parent
        if value is not None and scope is not None:
            self.returns.setdefault(id(scope.node), []).append(value)

    def _function(self, node, scope, name, body):
        inner = _Scope("function", scope, node)
        arguments = node.args
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self._visit(default, scope)
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        params = [*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]
        params += [(a, None) for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for arg, default in params:
            self.scope_of[id(arg)] = inner
            self._bind(inner, arg.arg, arg, ("param", default))
            if arg.annotation is not None:
                self._visit(arg.annotation, scope)
        decorators = getattr(node, "decorator_list", [])
        method = scope.kind == "class" and not any(_last(d) == "staticmethod" for d in decorators)
        if name is not None:
            self.defs.setdefault(name, []).append((node, inner, 1 if method else 0))
        for stmt in body:
            self._visit(stmt, inner)
        if isinstance(node, ast.Lambda):
            self.returns.setdefault(id(node), []).append(node.body)
        return inner

    def _FunctionDef(self, node, scope):
        for decorator in node.decorator_list:
            self._visit(decorator, scope)
        if node.returns is not None:
            self._visit(node.returns, scope)
        self._bind(scope, node.name, node, ("def", node))
        self._function(node, scope, node.name, node.body)

    _AsyncFunctionDef = _FunctionDef

    def _Lambda(self, node, scope):
        inner = self._function(node, scope, None, [node.body])
        for entries in self.defs.values():  # a lambda given a name by an assignment (_Assign)
            for i, (fn, s, offset) in enumerate(entries):
                if fn is node and s is None:
                    entries[i] = (fn, inner, offset)

    def _ClassDef(self, node, scope):
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self._visit(part, scope)
        self._bind(scope, node.name, node, ("class", node))
        inner = _Scope("class", scope, node)
        self.classes.setdefault(node.name, []).append((node, inner))
        for stmt in node.body:
            self._visit(stmt, inner)

    def _comprehension(self, node, scope, parts):
        inner = _Scope("comprehension", scope, node)
        for i, generator in enumerate(node.generators):
            self.scope_of[id(generator)] = inner
            self._visit(generator.iter, scope if i == 0 else inner)  # the first runs outside
            self._targets(generator.target, ("each", generator.iter), inner, generator)
            for condition in generator.ifs:
                self._visit(condition, inner)
        for part in parts:
            self._visit(part, inner)

    def _ListComp(self, node, scope):
        self._comprehension(node, scope, [node.elt])

    _SetComp = _GeneratorExp = _ListComp

    def _DictComp(self, node, scope):
        self._comprehension(node, scope, [node.key, node.value])

    def _Call(self, node, scope):
        self.calls.append(node)
        self._children(node, scope)

    def _Name(self, node, scope):
        self.names.append(node)

    def _Attribute(self, node, scope):
        self.attributes.append(node)
        self._children(node, scope)

    # -- names, as Python resolves them ------------------------------------------------------
    def key(self, scope, name):
        """Where a name read in ``scope`` is bound: (scope id, name), or ("builtin"|"free", name)."""
        s = scope
        while s is not None:
            if name in s.globals:
                s = self.module
                break
            if name in s.bound and (s is scope or s.kind != "class"):
                break
            s = s.parent
        if s is not None and name in s.bound:
            return id(s), name
        return ("builtin" if name in _BUILTINS else "free"), name

    def bind_key(self, scope, name):
        if name in scope.globals:
            return id(self.module), name
        if name in scope.nonlocals:
            s = scope.parent
            while s is not None and (s.kind == "class" or name not in s.bound):
                s = s.parent
            return (id(s), name) if s is not None else ("free", name)
        return id(scope), name

    def name_key(self, node):
        return self.key(self.scope_of.get(id(node), self.module), node.id)


class _Taint(_Reader):
    """What may not be the module's own: a name, attribute name or function's result that may be
    (``is_``) or may hold (``holds``) a module, an import or a builtin it did not make."""

    def __init__(self, tree):
        super().__init__(tree)
        self.is_k, self.holds_k = {}, {}           # binding key -> where it may come from
        self.attr_is, self.attr_holds = {}, {}     # attribute name -> ...
        self.ret_is, self.ret_holds = {}, {}       # function name -> ...
        self.kind_of = {}                          # binding key -> {"import", "from", "def", "class", ...}
        self.module_of = {}                        # key of an import -> the module's dotted name
        self.from_of = {}                          # key of a from-import -> the module it came from
        self.builtin_alias = {}                    # key -> the builtin it is bound to (g = getattr)
        self.any_ret = self.dunder_leak = None
        self.attr_fns = {}                         # attribute name -> its functions stored there (self.f = put)
        for target, how, _ in self.stores:
            if isinstance(target, ast.Attribute) and how and isinstance(how[1], (ast.Name, ast.Attribute)) \
                    and _last(how[1]) in self.defs:
                self.attr_fns.setdefault(target.attr, set()).add(_last(how[1]))
        for scope, name, node, how in self.binds:
            key = self.bind_key(scope, name)
            self.kind_of.setdefault(key, set()).add(how[0])
            if how[0] == "import":
                self.module_of[key] = how[1]
            elif how[0] == "from":
                self.from_of[key] = how[1].rsplit(", imported from ", 1)[1]
        self.escaped = self._escaped()
        for _ in range(64):  # a fixed point: each round only adds
            before = (len(self.is_k), len(self.holds_k), len(self.attr_is), len(self.attr_holds),
                      len(self.ret_is), len(self.ret_holds), self.any_ret, self.dunder_leak)
            self._round()
            if before == (len(self.is_k), len(self.holds_k), len(self.attr_is), len(self.attr_holds),
                          len(self.ret_is), len(self.ret_holds), self.any_ret, self.dunder_leak):
                break

    @staticmethod
    def _put(table, key, origin):
        if origin and key not in table:
            table[key] = origin

    def _escaped(self) -> set:
        """Functions of its own handed on as values (a callback, ``partial(put, os)``, a decorator's
        argument): who calls them with what is not read, so their parameters follow any call."""
        out = set()
        for node in (*self.names, *self.attributes):
            name = _last(node)
            parent = self.parent.get(id(node))
            if name in self.defs and isinstance(node.ctx, ast.Load) and not (
                    isinstance(parent, ast.Call) and parent.func is node):
                out.add(name)
        for entries in self.defs.values():
            for fn, _, _ in entries:
                if any(_last(d) in self.defs for d in getattr(fn, "decorator_list", [])):
                    out.add(getattr(fn, "name", None))
        return out

    def builtin(self, func) -> str | None:
        """The builtin an expression names: ``getattr``, an alias of it, ``builtins.getattr``."""
        if isinstance(func, ast.Name):
            key = self.name_key(func)
            return func.id if key[0] == "builtin" else self.builtin_alias.get(key)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and self.module_of.get(self.name_key(func.value)) == "builtins":
            return func.attr
        return None

    def own(self, key, kinds=("def", "class")) -> bool:
        return bool(self.kind_of.get(key)) and self.kind_of[key] <= set(kinds)

    # -- what an expression may be, or hold ---------------------------------------------------
    def is_(self, e) -> str | None:
        if isinstance(e, ast.Name):
            key = self.name_key(e)
            if key[0] == "free":
                return f"a name from the star import of {self.module.star}" if self.module.star else None
            return None if key[0] == "builtin" else self.is_k.get(key)
        if isinstance(e, ast.Attribute):
            if e.attr == "__class__":
                return f"the class of {_code(e.value)}"
            return self.is_(e.value) or self.attr_is.get(e.attr) or self.attr_is.get("*") or self.dunder_leak
        if isinstance(e, ast.Subscript):
            return self.is_(e.value) or self.holds(e.value) or self.dunder_leak
        if isinstance(e, (ast.Starred, ast.NamedExpr)):
            return self.is_(e.value)
        if isinstance(e, ast.IfExp):
            return self.is_(e.body) or self.is_(e.orelse)
        if isinstance(e, ast.BoolOp):
            return next(filter(None, map(self.is_, e.values)), None)
        if isinstance(e, (ast.Await, ast.Yield, ast.YieldFrom)):
            return e.value and (self.is_(e.value) or self.holds(e.value))
        if isinstance(e, ast.Call):
            return self._call(e)[0]
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return self.dunder_leak
        return None

    def holds(self, e) -> str | None:
        if e is None:
            return None
        if isinstance(e, ast.Name):
            key = self.name_key(e)
            return self.is_(e) or self.holds_k.get(key)
        if isinstance(e, ast.Attribute):
            return self.is_(e) or self.holds(e.value) or self.attr_holds.get(e.attr)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return next(filter(None, map(self.holds, e.elts)), None)
        if isinstance(e, ast.Dict):
            return next(filter(None, map(self.holds, (*e.keys, *e.values))), None)
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.holds(e.elt)
        if isinstance(e, ast.DictComp):
            return self.holds(e.key) or self.holds(e.value)
        if isinstance(e, ast.Subscript):
            return self.is_(e) or self.holds(e.value)
        if isinstance(e, ast.BinOp):
            return self.holds(e.left) or self.holds(e.right)
        if isinstance(e, ast.IfExp):
            return self.holds(e.body) or self.holds(e.orelse)
        if isinstance(e, ast.BoolOp):
            return next(filter(None, map(self.holds, e.values)), None)
        if isinstance(e, ast.Call):
            is_, holds = self._call(e)
            return is_ or holds
        return self.is_(e)

    def _arguments(self, call, skip=("key",)) -> str | None:
        values = [*call.args, *(k.value for k in call.keywords if k.arg not in skip)]
        return next(filter(None, map(self.holds, values)), None)

    def _mentions(self, e) -> str | None:
        return next(filter(None, (self.holds(n) for n in ast.walk(e) if isinstance(n, ast.Name))), None)

    def _call(self, call) -> tuple:
        """(what the result may be, what it may hold)."""
        func, name = call.func, _last(call.func)
        found = self.builtin(func)
        if found == "type" and len(call.args) == 1:
            return f"the class of {_code(call.args[0])}", None
        if found in PASS_BUILTINS:
            return self._arguments(call), None
        if found in HOLD_BUILTINS:
            return None, self._arguments(call)
        if not isinstance(func, (ast.Name, ast.Attribute)):  # attrgetter("x")(os), (lambda: os)()
            return self._mentions(func) or self._arguments(call, skip=()), None
        key = self.name_key(func) if isinstance(func, ast.Name) else None
        if key is not None and self.own(key, ("def",)) or name in self.ret_is or name in self.ret_holds:
            own = self.ret_is.get(name), self.ret_holds.get(name)  # a function of its own, by its name
        else:
            own = None, None
        receiver = func.value if isinstance(func, ast.Attribute) else None
        inside = self.holds(receiver) if receiver is not None and name in RECEIVER_CALLS else None
        if found is None and name in PASS_CALLS:
            return self._arguments(call, skip=()) or inside or own[0], own[1]
        if found is None and name in HOLD_CALLS:
            return own[0], self._arguments(call, skip=()) or inside or own[1]
        if key is not None:
            if self.own(key, ("def",)) or key[0] == "builtin" or self.own(key, ("class", "import", "from")):
                return own
            return own[0] or self.any_ret, own[1]  # a parameter or a local: any function of its own
        if self.is_(receiver) and self.own_direct(receiver):
            return None, None  # torch.zeros(...): the library's function, its own result
        return own

    def own_direct(self, e) -> bool:
        """An import, or an attribute chain of one (torch.nn.functional): the library's code."""
        while isinstance(e, ast.Attribute):
            e = e.value
        return isinstance(e, ast.Name) and bool(self.kind_of.get(self.name_key(e), set()) & {"import", "from"})

    # -- one round of the fixed point --------------------------------------------------------
    def _round(self):
        for scope, name, node, how in self.binds:
            key = self.bind_key(scope, name)
            kind, detail = how
            is_ = holds = None
            if kind in ("import", "from"):
                is_ = f"the module {detail}" if kind == "import" else detail
            elif kind in ("def", "class"):
                is_ = self._decorated(detail)
            elif kind == "value":
                is_, holds = self.is_(detail), self.holds(detail)
                if isinstance(detail, ast.Name) and self.builtin(detail):
                    self.builtin_alias.setdefault(key, self.builtin(detail))
            elif kind == "each":
                is_ = holds = self.holds(detail)
            elif kind == "rest":
                holds = self.holds(detail)
            elif kind == "param" and detail is not None:
                is_, holds = self.is_(detail), self.holds(detail)
            self._put(self.is_k, key, is_)
            self._put(self.holds_k, key, holds)
            if scope.kind == "class":  # a class attribute: self.<name> reads it too
                self._put(self.attr_is, name, is_)
                self._put(self.attr_holds, name, holds)
        for target, how, _ in self.stores:
            if how is None or how[1] is None:
                continue
            value = how[1]
            is_, holds = (self.is_(value), self.holds(value)) if how[0] == "value" else (None, self.holds(value))
            if how[0] == "each":
                is_ = holds
            if isinstance(target, ast.Attribute):
                self._put(self.attr_is, target.attr, is_)
                self._put(self.attr_holds, target.attr, holds)
            else:
                self._fill(target.value, is_ or holds)
        for call in self.calls:
            self._round_call(call)
        for name, entries in self.defs.items():
            for fn, inner, _ in entries:
                for value in self.returns.get(id(fn), ()):
                    is_, holds = self.is_(value), self.holds(value)
                    self._put(self.ret_is, name, is_)
                    self._put(self.ret_holds, name, holds)
                    if name in self.escaped:  # what a callee it does not name (f = get; f()) may return
                        self.any_ret = self.any_ret or is_
                    if _dunder(name) and inner is not None and inner.parent.kind == "class":
                        self.dunder_leak = self.dunder_leak or is_ or holds  # x[0], x + y, x.a on its objects

    def _decorated(self, node) -> str | None:
        for decorator in getattr(node, "decorator_list", []):
            if isinstance(decorator, (ast.Name, ast.Attribute)):
                if self.builtin(decorator) or self.own_direct(decorator):
                    continue
                if isinstance(decorator, ast.Name) and self.own(self.name_key(decorator), ("def",)):
                    found = self.ret_is.get(decorator.id)
                else:
                    found = self.any_ret
            elif isinstance(decorator, ast.Call):  # a factory: wraps(torch.matmul), lru_cache(maxsize=8)
                found = self._arguments(decorator, skip=()) or (None if self.own_direct(decorator.func)
                                                                else self.any_ret)
            else:
                found = self._mentions(decorator) or self.any_ret
            if found:
                return found
        return None

    def _fill(self, container, origin):
        """A store into an item of ``container`` (or an append to it): it now holds ``origin``."""
        while isinstance(container, ast.Subscript):
            container = container.value
        if isinstance(container, ast.Name):
            self._put(self.holds_k, self.name_key(container), origin)
        elif isinstance(container, ast.Attribute):
            self._put(self.attr_holds, container.attr, origin)

    def _round_call(self, call):
        func, name = call.func, _last(call.func)
        found = self.builtin(func)
        if found == "setattr" and len(call.args) >= 3:
            attribute = _literal(call.args[1])
            self._put(self.attr_is, attribute or "*", self.holds(call.args[2]))
        if isinstance(func, ast.Attribute) and name in MUTATORS:
            self._fill(func.value, self._arguments(call, skip=()))
        origin = self._arguments(call, skip=())
        if not origin:
            return
        values = (*call.args, *(k.value for k in call.keywords))
        handed = {_last(a) for a in values} & self.escaped
        handed |= self.attr_fns.get(name, set()) if isinstance(func, ast.Attribute) else set()
        if isinstance(func, ast.Name):
            key = self.name_key(func)
            unknown = key[0] == "free" or bool(self.kind_of.get(key, set()) - {"def", "class", "import", "from"})
        else:
            unknown = not isinstance(func, ast.Attribute)
        if unknown:  # a callee the text does not name (a parameter, f()(...)): any escaped function
            handed |= self.escaped
        for entries in (self.defs.get(n, []) for n in handed):
            for fn, inner, _ in entries:
                self._all_params(fn, inner, origin)
        for fn in (a for a in values if isinstance(a, ast.Lambda)):
            self._all_params(fn, self.scope_of.get(id(fn.body)), origin)
        for fn, inner, offset in self._callees(call):
            self._map(call, fn, inner, offset)

    def _all_params(self, fn, inner, origin):
        if inner is None:
            return
        for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg):
            if arg is not None:
                self._put(self.is_k, (id(inner), arg.arg), origin)
                self._put(self.holds_k, (id(inner), arg.arg), origin)

    def _callees(self, call):
        """The functions of its own a call may run, with the offset of their first argument."""
        func = call.func
        if isinstance(func, ast.Name):
            key = self.name_key(func)
            kinds = self.kind_of.get(key, set())
            if "class" in kinds:
                for cls, inner in self.classes.get(func.id, []):
                    fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign)
                              and isinstance(s.target, ast.Name)]
                    for field in fields:  # a dataclass's fields
                        self._put(self.attr_is, field, self._arguments(call, skip=()))
                        self._put(self.attr_holds, field, self._arguments(call, skip=()))
                    for method in ("__init__", "__new__", "__post_init__"):
                        yield from ((fn, s, 1) for fn, s, _ in self.defs.get(method, []) if s.parent is inner)
            if kinds & {"def", "value", "param"}:
                yield from self.defs.get(func.id, [])
        elif isinstance(func, ast.Attribute) and not self.own_direct(func.value):
            by_class = isinstance(func.value, ast.Name) and "class" in self.kind_of.get(self.name_key(func.value), set())
            for fn, inner, offset in self.defs.get(func.attr, []):
                yield fn, inner, 0 if by_class else offset

    def _map(self, call, fn, inner, offset):
        if inner is None:
            return
        arguments = fn.args
        positional = [*arguments.posonlyargs, *arguments.args][offset:]
        named = {a.arg: a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        if spread:  # f(*xs) / f(**kw): any parameter
            self._all_params(fn, inner, self._arguments(call, skip=()))
            return
        for i, value in enumerate(call.args):
            arg = positional[i] if i < len(positional) else arguments.vararg
            if arg is not None:
                self._put(self.is_k, (id(inner), arg.arg), self.is_(value) if arg is not arguments.vararg else None)
                self._put(self.holds_k, (id(inner), arg.arg), self.holds(value))
        for keyword in call.keywords:
            arg = named.get(keyword.arg) or arguments.kwarg
            if arg is not None:
                self._put(self.is_k, (id(inner), arg.arg), self.is_(keyword.value) if arg is not arguments.kwarg else None)
                self._put(self.holds_k, (id(inner), arg.arg), self.holds(keyword.value))


class _Check(_Taint):
    """Each construct outside the allow-list: (line, what it is, in a few words)."""

    def __init__(self, tree):
        super().__init__(tree)
        self.found = []
        self._check(tree)

    def refuse(self, node, what: str):
        self.found.append((getattr(node, "lineno", 1), what))

    def _who(self, obj) -> tuple[str | None, str]:
        """(where the object may come from, how to say it): "the module os", "o, which may be ..."."""
        key = self.name_key(obj) if isinstance(obj, ast.Name) else None
        origin = self.is_(obj)
        if origin is None and key and key[0] == "builtin":
            origin = f"the builtin {obj.id}"
        if origin is None:
            return None, ""
        if key and (key[0] == "builtin" or self.kind_of.get(key, set()) & {"import", "from"}):
            return origin, origin
        if self.own_direct(obj):
            return origin, f"{_code(obj)}, part of {origin}"
        return origin, f"{_code(obj)}, which may be {origin}"

    def _namespace(self, obj) -> bool:
        """A name bound only to a ``SimpleNamespace(...)`` it made: storing on its attributes
        changes that namespace alone (``cfg.lr = 2e-3``), whatever it holds."""
        if not isinstance(obj, ast.Name):
            return False
        key = self.name_key(obj)
        binds = [how for s, n, _, how in self.binds if n == obj.id and self.bind_key(s, n) == key]
        return bool(binds) and all(how[0] == "value" and isinstance(how[1], ast.Call)
                                   and _last(how[1].func) == "SimpleNamespace" for how in binds)

    def _store_on(self, obj, node, what: str, shown) -> bool:
        """A store on an attribute of ``obj`` (what: "a store on", "a delete of", "setattr on")."""
        if what == "a store on" and self._namespace(obj):
            return False
        chain, root = [], obj
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            if isinstance(root, ast.Attribute):
                chain.append(root.attr)
            root = root.value
        if any(_dunder(a) for a in chain):
            self.refuse(node, f"{what} an attribute through a dunder ({_code(shown)})")
            return True
        origin, who = self._who(obj)
        if origin:
            self.refuse(node, f"{what} an attribute of {who} ({_code(shown)})")
            return True
        if not isinstance(root, ast.Name):
            self.refuse(node, f"{what} an attribute of an object it does not name ({_code(shown)})")
            return True
        return False

    def _self_like(self, obj) -> bool:
        """``self``: the first parameter of a plain method of one of its classes (not a metaclass)."""
        if not isinstance(obj, ast.Name) or self.is_(obj):
            return False
        key, scope = self.name_key(obj), self.scope_of.get(id(obj))
        while scope is not None and id(scope) != key[0]:
            scope = scope.parent
        if scope is None or scope.kind != "function" or isinstance(scope.node, ast.Lambda) \
                or scope.parent.kind != "class":
            return False
        fn = scope.node
        first = [*fn.args.posonlyargs, *fn.args.args][:1]
        return bool(first) and first[0].arg == obj.id and not self._metaclass(scope.parent.node) \
            and not {_last(d) for d in fn.decorator_list} & {"classmethod", "staticmethod"}

    def _metaclass(self, cls, seen=()) -> bool:
        """A class of its own that makes classes: a base ``type``, ``ABCMeta`` ..., or one of its own such."""
        for base in cls.bases:
            if self.builtin(base) == "type" or (_last(base) or "").endswith("Meta"):
                return True
            if isinstance(base, ast.Name) and base.id not in seen and self.own(self.name_key(base), ("class",)) \
                    and any(self._metaclass(c, (*seen, base.id)) for c, _ in self.classes.get(base.id, [])):
                return True
        return False

    def _setting(self, target, how) -> bool:
        """A store honest code makes on a library's settings, which nothing of the grader reads:
        a constant into a flag under ``torch.backends`` (``torch.backends.cuda.matmul.allow_tf32 =
        True``), an item of ``os.environ`` (``os.environ["OMP_NUM_THREADS"] = "1"``)."""
        if how is None or how[0] != "value":
            return False
        if isinstance(target, ast.Attribute):
            where, whole = target.value, isinstance(how[1], ast.Constant)
            chain = _code(where).split(".")
            return whole and chain[:2] == ["torch", "backends"] and len(chain) > 2 and self._imported(where, "torch")
        return _code(target.value) == "os.environ" and self._imported(target.value, "os")

    def _imported(self, node, module: str) -> bool:
        """The name at the root of an attribute chain is bound only by ``import <module>``."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name) or node.id != module:
            return False
        key = self.name_key(node)
        return self.kind_of.get(key) == {"import"} and self.module_of.get(key) == module

    def _check(self, tree):
        for target, how, node in self.stores:
            what = "a delete of" if how is None else "a store on"
            if self._setting(target, how):
                continue
            if isinstance(target, ast.Attribute):
                self._store_on(target.value, node, what, target)
            elif self.builtin(getattr(target.value, "func", None)) == "locals":
                self.refuse(node, f"a store into locals() ({_code(target)})")
            else:
                origin, who = self._who(target.value)
                if origin:
                    item = "a delete of an item of" if how is None else "a store on an item of"
                    self.refuse(node, f"{item} {who} ({_code(target)})")
        for scope, name, node, how in self.binds:
            self._binding(scope, name, node)
        for call in self.calls:
            self._check_call(call)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                self._read(node)
            elif isinstance(node, ast.Attribute) and _dunder(node.attr):
                self.refuse(node, f"a store on the attribute {node.attr} ({_code(node)})")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node)
            elif isinstance(node, ast.ClassDef):
                self._class(node)
            elif isinstance(node, ast.Constant) and _dunder(node.value) and node.value not in STRINGS_MAY_NAME:
                self.refuse(node, f"the string {node.value!r}")
            elif isinstance(node, (ast.BinOp, ast.Call, ast.JoinedStr)) and not isinstance(
                    self.parent.get(id(node)), (ast.BinOp, ast.JoinedStr)) and _dunder(_literal(node)) \
                    and _literal(node) not in STRINGS_MAY_NAME:  # the string assembled: "__glo" + "bals__"
                self.refuse(node, f"the string {_literal(node)!r}, assembled ({_code(node)})")

    def _binding(self, scope, name, node):
        if not _dunder(name):
            return
        key = self.bind_key(scope, name)
        kind = "module" if key[0] == id(self.module) else scope.kind
        if kind == "module" and name not in MODULE_MAY_BIND:
            self.refuse(node, f"a binding of {name} at module level")
        elif kind == "class" and name in CLASS_MAY_NOT_BIND:
            self.refuse(node, f"a binding of {name} in a class body")

    def _import(self, node):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top in MODULES and not (top == "gc" and (isinstance(node, ast.Import) or
                                                        all(a.name == "collect" for a in node.names))):
                self.refuse(node, f"an import of {name} ({MODULES[top]})")
        if isinstance(node, ast.ImportFrom) and node.module == "sys":
            for alias in node.names:
                if alias.name in SYS_REFUSED or alias.name in FRAMES:
                    self.refuse(node, f"sys.{alias.name}")

    def _class(self, node):
        if self._metaclass(node):
            self.refuse(node, f"a metaclass of its own (class {node.name})")
        for keyword in node.keywords:
            if keyword.arg == "metaclass" and isinstance(keyword.value, ast.Name) and \
                    self.own(self.name_key(keyword.value), ("class",)):
                self.refuse(node, f"a metaclass of its own (metaclass={keyword.value.id})")

    def _read(self, node):
        parent = self.parent.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        found = self.builtin(node)
        if found in RUN_TIME_CODE:
            self.refuse(node, f"{found} (code or names made at run time)")
        elif found in BY_NAME and not called:
            self.refuse(node, f"{found} passed as a value (names not written out)")
        elif found in ("attrgetter", "methodcaller") and not called:
            self.refuse(node, f"{found} passed as a value")
        if isinstance(node, ast.Name):
            key = self.name_key(node)
            if _dunder(node.id) and node.id not in NAMES_MAY_READ and key[0] in ("builtin", "free"):
                self.refuse(node, f"the name {node.id}")
            if self.module_of.get(key) == "gc" and not (isinstance(parent, ast.Attribute) and parent.attr == "collect"):
                self.refuse(node, f"gc ({_code(parent if isinstance(parent, ast.Attribute) else node)}): only gc.collect() may be used")
            return
        if _dunder(node.attr) and node.attr not in READ_DUNDERS and not (
                node.attr in ("__setattr__", "__delattr__") and called):
            self.refuse(node, f"the attribute {node.attr} ({_code(node)})")
        elif node.attr == "__new__" and self.builtin(node.value) == "type":
            self.refuse(node, f"a class made under a name of its choosing ({_code(node)})")
        elif node.attr in FRAMES:
            self.refuse(node, f"frame access ({_code(node)})")
        elif node.attr in SYS_REFUSED and isinstance(node.value, ast.Name) and \
                self.module_of.get(self.name_key(node.value)) == "sys":
            self.refuse(node, f"sys.{node.attr}")
        elif node.attr in CODE_OBJECTS:
            self.refuse(node, f"a code object made or changed ({_code(node)})")
        elif node.attr in REACHED and self.is_(node.value):
            self.refuse(node, f"{REACHED[node.attr]} reached through another module ({_code(node)})")

    def _check_call(self, call):
        func, name = call.func, _last(call.func)
        found = self.builtin(func)
        args = call.args
        if any((k.arg or "").startswith("co_") for k in call.keywords):  # code.replace(co_filename=...)
            self.refuse(call, f"a code object made or changed ({_code(call)})")
        if found in ("setattr", "delattr") and args:
            self._by_name(call, found, args[0], args[1] if len(args) > 1 else None, store=True)
        elif found in ("getattr", "hasattr") and args:
            self._by_name(call, found, args[0], args[1] if len(args) > 1 else None, store=False)
        elif name in ("__setattr__", "__delattr__") and isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Call) and self.builtin(owner.func) == "super":
                target, attribute = None, args[0] if args else None  # its own class's, on self
            elif self.builtin(owner) in ("object", "type"):
                target, attribute = (args[0] if args else owner), args[1] if len(args) > 1 else None
            else:
                target, attribute = owner, args[0] if args else None
            self._by_name(call, name.strip("_"), target, attribute, store=True)
        elif name in COMPILES_STRINGS and self._from(func, "timeit") and any(
                not isinstance(a, ast.Lambda) and not (isinstance(a, ast.Name) and self.own(self.name_key(a)))
                for a in [*args[:2], *(k.value for k in call.keywords if k.arg in ("stmt", "setup"))]):
            self.refuse(call, f"code made at run time: {name} compiles a string, whose code is in no file "
                              f"({_code(call)}); time a function of its own")
        elif (found == "type" or (name or "").endswith("Meta")) and len(args) == 3:
            self.refuse(call, f"a class made under a name of its choosing ({_code(call)})")
        elif name in ("attrgetter", "methodcaller") and any(_literal(a) is None for a in args[:1]):
            self.refuse(call, f"{name} with a name not written out ({_code(call)})")
        elif name in NAMED_CLASSES and any(k.arg in ("module", "qualname") for k in call.keywords):
            self.refuse(call, f"a class made under a name of its choosing ({_code(call)})")
        elif name in ("wraps", "update_wrapper") and not (isinstance(func, ast.Name) and self.own(self.name_key(func))):
            wrapped = args[0 if name == "wraps" else 1] if len(args) > (name != "wraps") else None
            if wrapped is not None and (self.is_(wrapped) or not isinstance(wrapped, ast.Name)):
                self.refuse(call, f"{name} of what it did not make ({_code(call)})")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                self.builtin(func.value.func) == "locals" and func.attr in MUTATORS | {"pop", "clear", "popitem"}:
            self.refuse(call, f"a store into locals() ({_code(call)})")

    def _binds_of(self, node) -> list:
        """Every binding (``how``) of the variable ``node`` names."""
        key = self.name_key(node)
        return [how for scope, name, _, how in self.binds if name == node.id and self.bind_key(scope, name) == key]

    def _written(self, node) -> list[str] | None:
        """The strings a literal holds, all written out (a tuple, list or set of them, nested
        tuples, a dict's values), or a name bound once to such a literal; else None."""
        if isinstance(node, ast.Name):
            binds = self._binds_of(node)
            return self._written(binds[0][1]) if len(binds) == 1 and binds[0][0] == "value" else None
        if isinstance(node, ast.Dict):
            node = ast.Tuple(elts=list(node.values))
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return None
        out = []
        for e in node.elts:
            inner = self._written(e) if isinstance(e, (ast.Tuple, ast.List)) else (
                [_literal(e)] if _literal(e) is not None else None)
            if inner is None:
                return None
            out += inner
        return out

    def _constants(self, node) -> list[str] | None:
        """The names an expression can take when each is written out: a variable every binding of
        which walks a literal of strings (``for name in ("float16", "bfloat16")``, ``for short, long
        in (("fp16", "float16"), ...)``, a module-level ``NAMES = (...)`` walked), or an item of a
        literal of them (``NAMES[k]`` of ``NAMES = {"fp16": "float16"}``); else None."""
        if isinstance(node, ast.Subscript):
            return self._written(node.value)
        if not isinstance(node, ast.Name):
            return None
        found = []
        for how in self._binds_of(node):
            walked = self._written(how[1]) if how[0] == "each" else None
            if walked is None:
                return None
            found += walked
        return found or None

    def _public(self, node, seen=()) -> bool:
        """A name built at run time that provably is no dunder (default: it may be one): a string
        that begins with a written letter or ends with anything but "__" (``f"layer{i}"``,
        ``"w" + str(i)``, ``f"{which}_proj"``), the ``.name`` of a walk over ``dataclasses.fields``,
        or a variable every binding of which is one of those."""
        parts = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts.insert(0, node.right)
            node = node.left
        parts.insert(0, node)
        if len(parts) > 1 or isinstance(node, ast.JoinedStr):
            pieces = [v for part in parts for v in (part.values if isinstance(part, ast.JoinedStr) else [part])]
            head, tail = pieces[0], pieces[-1]
            letter = isinstance(head, ast.Constant) and type(head.value) is str and head.value[:1].isalpha()
            ending = isinstance(tail, ast.Constant) and type(tail.value) is str and not tail.value.endswith("__")
            return letter or ending
        if isinstance(node, ast.Constant):
            return type(node.value) is str and not _dunder(node.value)
        if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Name):
            return all(how[0] == "each" and isinstance(how[1], ast.Call) and _last(how[1].func) == "fields"
                       for how in self._binds_of(node.value)) and bool(self._binds_of(node.value))
        if isinstance(node, ast.Name) and node.id not in seen:
            binds = self._binds_of(node)
            return bool(binds) and all(how[0] == "value" and self._public(how[1], (*seen, node.id)) for how in binds)
        return False

    def _from(self, func, module: str) -> bool:
        """``func`` is ``module.<name>`` or a name imported from ``module``."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return self.module_of.get(self.name_key(func.value)) == module
        return isinstance(func, ast.Name) and self.from_of.get(self.name_key(func)) == module

    def _by_name(self, call, what, obj, attribute, store):
        written = _literal(attribute)
        names = [written] if written is not None else self._constants(attribute) or []
        for name in names:
            if _dunder(name) and (store or name not in READ_DUNDERS):
                self.refuse(call, f"{what} of the attribute {name} ({_code(call)})")
                return
        if store and obj is not None and self._store_on(obj, call, f"{what} on", call):
            return
        if not names and attribute is not None:
            if store and obj is not None and not self._self_like(obj):
                self.refuse(call, f"{what} with a name not written out on {_code(obj)}, which is not self "
                                  f"({_code(call)})")
            elif not store:
                origin, who = self._who(obj)
                if origin or not isinstance(obj, (ast.Name, ast.Attribute, ast.Subscript)):
                    self.refuse(call, f"{what} with a name not written out on {who or _code(obj)} ({_code(call)})")
                elif not self._public(attribute) and not self._self_like(obj):  # on its own objects too:
                    # a dunder reaches every namespace (on self, a dunder gives self's own; the next
                    # step off it is refused here or by name)
                    self.refuse(call, f"{what} with a name not written out that may be a dunder ({_code(call)})")


def check_source(source: str, filename: str) -> list[tuple[str, int, str]]:
    """(file name, line, the construct in a few words) for each construct of one module's source
    that is outside the allow-list, in line order (one per line)."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError:
        return []  # it does not import either: its tests fail for that
    except (RecursionError, MemoryError, ValueError):
        return [(filename, 1, "a module too deeply nested to read")]
    return check_tree(tree, filename)


def check_tree(tree: ast.Module, filename: str) -> list[tuple[str, int, str]]:
    """``check_source`` of a module already parsed (seam/tamper.py reads each text once)."""
    try:
        found = _Check(tree).found
    except RecursionError:
        return [(filename, 1, "an expression too deeply nested to read")]
    by_line = {}
    for line, what in found:
        by_line.setdefault(line, what)
    return [(filename, line, what) for line, what in sorted(by_line.items())]
