"""Which C loop nests can run as whole-array numpy operations, and how their loops read.

A `for` loop in the canonical form (`for (i = lo; i < hi; i++)`) whose whole nest only assigns array
elements, each at an index that names every loop around it (so no two iterations write one element),
and reads the arrays it writes only at the element it writes, computes the same values whether its
iterations run one by one or all at once; such a nest is vectorised, the others run as Python loops.
The importer checks the result against the compiled program anyway, so a nest judged wrongly shows up
as a mismatch rather than as wrong inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast, c_generator

from engine.problem_import.cimport.numpy_expr import MATH, RANDOM, base_and_indices

_GEN = c_generator.CGenerator()


@dataclass(frozen=True)
class Loop:
    var: str
    lo: c_ast.Node
    hi: c_ast.Node
    inclusive: bool
    step: int  # +1, -1 or another constant
    declares: c_ast.Decl | None = None  # `for (int i = …)`


def _constant_step(node: c_ast.Node) -> int | None:
    if isinstance(node, c_ast.Constant) and node.type == "int":
        return int(node.value.rstrip("uUlL"), 0)
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        inner = _constant_step(node.expr)
        return -inner if inner is not None else None
    return None


def canonical(node: c_ast.For) -> Loop | None:
    """The loop's variable, bounds and step, or None where it is not `for (v = lo; v <op> hi; v += k)`."""
    declares = None
    if isinstance(node.init, c_ast.DeclList) and len(node.init.decls) == 1 and node.init.decls[0].init is not None:
        declares = node.init.decls[0]
        var, lo = declares.name, declares.init
    elif isinstance(node.init, c_ast.Assignment) and node.init.op == "=" and isinstance(node.init.lvalue, c_ast.ID):
        var, lo = node.init.lvalue.name, node.init.rvalue
    else:
        return None
    cond, step = node.cond, None
    if not (isinstance(cond, c_ast.BinaryOp) and isinstance(cond.left, c_ast.ID) and cond.left.name == var
            and cond.op in ("<", "<=", ">", ">=")):
        return None
    nxt = node.next
    if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var:
        step = {"p++": 1, "++": 1, "p--": -1, "--": -1}.get(nxt.op)
    elif isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var:
        amount = _constant_step(nxt.rvalue)
        step = amount if nxt.op == "+=" else -amount if nxt.op == "-=" and amount is not None else None
    if not step or (step > 0) != (cond.op in ("<", "<=")):
        return None
    if assigns(node.stmt, var):
        return None
    return Loop(var, lo, cond.right, cond.op in ("<=", ">="), step, declares)


def assigns(node: c_ast.Node | None, name: str) -> bool:
    if node is None:
        return False
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and node.lvalue.name == name:
        return True
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and isinstance(node.expr, c_ast.ID) \
            and node.expr.name == name:
        return True
    return any(assigns(child, name) for _, child in node.children())


def _index_text(indices: list[c_ast.Node | None]) -> tuple[str, ...]:
    return tuple("*" if i is None else _GEN.visit(i) for i in indices)


class _Check:
    """Walks one nest and says whether it may run vectorised."""

    def __init__(self, arrays: set[str]) -> None:
        self.arrays = arrays
        self.writes: dict[str, set[tuple[str, ...]]] = {}
        self.reads: list[tuple[str, tuple[str, ...]]] = []
        self.locals: set[str] = set()
        self.ok = True

    def fail(self) -> bool:
        self.ok = False
        return False

    def statement(self, node: c_ast.Node | None, around: list[str], conditional: bool) -> bool:
        if node is None or isinstance(node, c_ast.EmptyStatement | c_ast.Pragma):
            return True
        if isinstance(node, c_ast.Compound):
            return all(self.statement(s, around, conditional) for s in node.block_items or [])
        if isinstance(node, c_ast.For):
            loop = canonical(node)
            if loop is None or loop.step != 1 or loop.var in around:
                return self.fail()
            for bound in (loop.lo, loop.hi):
                self.expression(bound)
            return self.statement(node.stmt, [*around, loop.var], conditional)
        if isinstance(node, c_ast.If):
            self.expression(node.cond)
            return self.statement(node.iftrue, around, True) and self.statement(node.iffalse, around, True)
        if isinstance(node, c_ast.Decl):
            if conditional or node.init is None or not isinstance(node.type, c_ast.TypeDecl):
                return self.fail()
            self.locals.add(node.name)
            self.expression(node.init)
            return self.ok
        if isinstance(node, c_ast.Assignment):
            return self.assignment(node.lvalue, node.rvalue, around, node.op != "=")
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            return self.assignment(node.expr, None, around, True)
        return self.fail()

    def assignment(self, target: c_ast.Node, value: c_ast.Node | None, around: list[str], reads_target: bool) -> bool:
        if isinstance(value, c_ast.Assignment):  # A[i] = B[i] = v
            if not self.assignment(value.lvalue, value.rvalue, around, value.op != "="):
                return False
            value = None
        base, indices = base_and_indices(target)
        if base is None or base not in self.arrays or not indices:
            return self.fail()
        named = {i.name for i in indices if isinstance(i, c_ast.ID)}
        if not set(around) <= named:
            return self.fail()
        for index in indices:
            if index is not None:
                self.expression(index)
        text = _index_text(indices)
        self.writes.setdefault(base, set()).add(text)
        if reads_target:
            self.reads.append((base, text))
        if value is not None:
            self.expression(value)
        return self.ok

    def expression(self, node: c_ast.Node) -> None:
        if isinstance(node, c_ast.FuncCall):
            name = node.name.name if isinstance(node.name, c_ast.ID) else ""
            if name not in MATH and name not in RANDOM:
                self.fail()
        if isinstance(node, c_ast.Assignment) or (isinstance(node, c_ast.UnaryOp) and
                                                  node.op in ("++", "--", "p++", "p--")):
            self.fail()
            return
        if isinstance(node, c_ast.ArrayRef) or (isinstance(node, c_ast.UnaryOp) and node.op == "*"):
            base, indices = base_and_indices(node)
            if base is not None and base in self.arrays:
                self.reads.append((base, _index_text(indices)))
            for index in indices:
                if index is not None:
                    self.expression(index)
            return
        for _, child in node.children():
            self.expression(child)


def vectorisable(node: c_ast.For, arrays: set[str]) -> bool:
    """Whether the nest rooted at `node` may run as whole-array operations (see the module's docstring)."""
    check = _Check(arrays)
    if not check.statement(node, [], False) or not check.ok:
        return False
    return all(base not in check.writes or text in check.writes[base] for base, text in check.reads)


def depth(node: c_ast.Node | None) -> int:
    """How many loops deep the nest goes."""
    if node is None:
        return 0
    own = 1 if isinstance(node, c_ast.For) else 0
    return own + max((depth(child) for _, child in node.children()), default=0)
