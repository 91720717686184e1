"""Mutants of one reference module: every small, plausible slip in the code a student writes.

A mutant is the module's source with one expression or statement replaced (the rest of the text,
line numbers included, untouched), so a survivor reads as a one-line diff. Only the functions a
student writes are mutated: those whose stub body raises NotImplementedError, and the
reference's private helpers (functions the stub does not have). Given code (dataclasses,
constants, peak tables) is the handout's, not the student's, and is left alone.

Not mutated, because a slip there cannot change a grade or is not a slip: docstrings, strings
and f-strings (error messages: tests check the exception type, not its words), type
annotations, decorators, default argument values (part of the given signature), the message
inside a ``raise``, and ``assert`` statements.

The operators (what a student's slip looks like):
  binary / augmented ops   + <-> -, * <-> /, // -> /, % -> //, ** -> *, @ -> *
  comparisons              < <-> <=, > <-> >=, == <-> !=, is <-> is not, in <-> not in
  boolean ops              and <-> or;  `not x` -> `x`;  `-x` -> `x`
  numbers                  n -> n + 1 (ints and floats);  True <-> False
  calls                    min <-> max, floor <-> ceil, argmin <-> argmax, amin <-> amax
  statements               `raise ...` -> `pass` (a missing check); a bare call
                           statement -> `pass` (a forgotten zero_grad / synchronize / copy_)

A mutant's id names its function, the original text and the replacement, and (when the same
slip occurs more than once in that function) which occurrence: stable under edits elsewhere
in the module, so the equivalent-mutant file stays valid.
"""

import ast
import dataclasses
import re
from functools import lru_cache
from pathlib import Path

from seam.problems import files

_BINOPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
           ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.MatMult: ast.Mult}
_CMPOPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
           ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_BOOLOPS = {ast.And: ast.Or, ast.Or: ast.And}
_SWAPS = {"min": "max", "max": "min", "floor": "ceil", "ceil": "floor", "argmin": "argmax",
          "argmax": "argmin", "amin": "amax", "amax": "amin"}


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str          # "<function>: <original> -> <replacement>[ #k]"
    function: str    # qualified name, e.g. "Linear.forward"
    line: int        # first line of the replaced text in the reference module
    source: str      # the whole mutated module


@dataclasses.dataclass(frozen=True)
class _Edit:
    node: ast.AST    # what is replaced (its text span in the source)
    new: str         # the replacement text
    what: str        # the original, as shown in the id


def _given(stub_source: str) -> set[str]:
    """Qualified names of the stub's functions that are given in full (no NotImplementedError)."""
    return {qual for qual, fn in _functions(ast.parse(stub_source))
            if not any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(fn))}


def _functions(tree: ast.Module):
    """(qualified name, node) for module-level functions and methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", item


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 70 else text[:67] + "..."


@lru_cache(maxsize=16)
def _lines(source: str) -> tuple[str, ...]:
    """``source`` split as the parser splits it (after \\r\\n, \\r or \\n only), ends kept."""
    return tuple(re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", source))


def segment(source: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(source, node)``, with the source split into lines once per
    module, not once per node (that split, character by character, was most of the mutants' cost)."""
    if getattr(node, "end_lineno", None) is None or getattr(node, "end_col_offset", None) is None:
        return None
    lines, first, last = _lines(source), node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return (lines[first].encode()[node.col_offset:].decode() + "".join(lines[first + 1:last])
            + lines[last].encode()[:node.end_col_offset].decode())


class _Collector(ast.NodeVisitor):
    """The edits inside one function body (see the module docstring for what is skipped)."""

    def __init__(self, source: str):
        self.source = source
        self.edits: list[_Edit] = []

    def text(self, node) -> str:
        return segment(self.source, node)

    def add(self, node, new_node_or_text):
        new = new_node_or_text if isinstance(new_node_or_text, str) else f"({ast.unparse(new_node_or_text)})"
        self.edits.append(_Edit(node, new, self.text(node)))

    # -- what is not descended into ------------------------------------------------------
    def visit_JoinedStr(self, node):        # f-strings: messages
        pass

    def visit_Assert(self, node):
        pass

    def visit_AnnAssign(self, node):        # mutate the value, never the annotation
        if node.value is not None:
            self.visit(node.value)

    def visit_FunctionDef(self, node):      # a nested function: its body, not its signature
        for stmt in _body_without_docstring(node):
            self.visit(stmt)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit(node.body)

    # -- statements ----------------------------------------------------------------------
    def visit_Raise(self, node):            # a missing check; the message is not descended into
        self.add(node, "pass")

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call):
            self.add(node, "pass")
            self.generic_visit(node)
        # a bare string / constant statement (a docstring or a comment-like string): skipped

    def visit_AugAssign(self, node):
        swap = _BINOPS.get(type(node.op))
        if swap:
            self.add(node, f"{self.text(node.target)} {_op_text(swap)}= {self.text(node.value)}")
        self.generic_visit(node)

    # -- expressions ---------------------------------------------------------------------
    def visit_BinOp(self, node):
        swap = _BINOPS.get(type(node.op))
        if swap:
            self.add(node, ast.BinOp(node.left, swap(), node.right))
        self.generic_visit(node)

    def visit_Compare(self, node):
        for i, op in enumerate(node.ops):
            swap = _CMPOPS.get(type(op))
            if swap:
                ops = list(node.ops)
                ops[i] = swap()
                self.add(node, ast.Compare(node.left, ops, node.comparators))
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        self.add(node, ast.BoolOp(_BOOLOPS[type(node.op)](), node.values))
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, (ast.Not, ast.USub)):
            self.add(node, node.operand)
        self.generic_visit(node)

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, bool):
            self.add(node, ast.Constant(not value))
        elif isinstance(value, (int, float)):
            self.add(node, ast.Constant(value + 1))

    def visit_Call(self, node):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name in _SWAPS:
            new_func = (ast.Name(_SWAPS[name]) if isinstance(func, ast.Name)
                        else ast.Attribute(func.value, _SWAPS[name]))
            self.edits.append(_Edit(func, ast.unparse(new_func), self.text(func)))
        self.generic_visit(node)


def _op_text(op_type) -> str:
    return ast.unparse(ast.BinOp(ast.Name("a"), op_type(), ast.Name("b")))[2:-2]


def _body_without_docstring(fn):
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _apply(source: str, edit: _Edit) -> str:
    """The source with edit.node's span replaced; ast offsets count UTF-8 bytes, so work in bytes."""
    raw = source.encode()
    starts = [0]
    for line in raw.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    n = edit.node
    a = starts[n.lineno - 1] + n.col_offset
    b = starts[n.end_lineno - 1] + n.end_col_offset
    return (raw[:a] + edit.new.encode() + raw[b:]).decode()


def mutants(source: str, stub_source: str | None = None) -> list[Mutant]:
    """Every mutant of ``source`` (a reference module); with ``stub_source``, only of the
    functions the student writes (see the module docstring), else of every function."""
    tree = ast.parse(source)
    given = _given(stub_source) if stub_source is not None else set()
    out: list[Mutant] = []
    for qual, fn in _functions(tree):
        if qual in given:
            continue  # given code: the stub has it in full
        collector = _Collector(source)
        for stmt in _body_without_docstring(fn):
            collector.visit(stmt)
        seen: dict[str, int] = {}
        for edit in collector.edits:
            base = f"{qual}: {_short(edit.what)} -> {_short(edit.new)}"
            seen[base] = seen.get(base, 0) + 1
            mutant_id = base if seen[base] == 1 else f"{base} #{seen[base]}"
            out.append(Mutant(mutant_id, qual, edit.node.lineno, _apply(source, edit)))
    return out


def module_mutants(reference: Path, stubs: Path, problem: str) -> list[Mutant]:
    """The mutants of reference/<problem>.py, scoped by student_stubs/<problem>.py."""
    module = files(problem).module
    return mutants((reference / module).read_text(), (stubs / module).read_text())
