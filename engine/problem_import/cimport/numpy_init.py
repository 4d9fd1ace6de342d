"""The program's own initialisation as numpy: main's statements up to the kernel's call, and the functions
they call (PolyBench's `init_array`), translated into the `own_initialisation` of the problem's inputs.py.

The judge and the runner make every input from a seed with numpy alone (`engine.wire.c_inputs`), so
the program's C initialisation has to become Python to be used there. The translation mirrors the C:
variables keep their names, a loop nest that can run at once becomes whole-array operations
(`engine.problem_import.cimport.numpy_loops`), the others stay loops. A pointer or an array is an ndarray (a
pointer to arrays has its pointer as the first dimension, so `(*B)[r][s]` is `B[0, r, s]`); a scalar whose
address is taken is a one-element array. Allocations are zeroed, as the capture's are.
"""

from __future__ import annotations

import re

from pycparser import c_ast

from engine.problem_import.cimport.ctype import BYTES, TypeError_, ctype_of
from engine.problem_import.cimport.numpy_expr import (
    Expressions,
    Untranslatable,
    Value,
    Var,
    convert,
    dtype_text,
    py_name,
    where,
)
from engine.problem_import.cimport.numpy_loops import canonical, depth, vectorisable
from engine.problem_import.cimport.program import Analysis

IGNORED_CALLS = {"printf", "fprintf", "puts", "putchar", "fflush", "free", "srand", "srand48", "polybench_free_data",
                 "polybench_flush_cache", "polybench_prepare_instruments", "polybench_timer_start",
                 "polybench_timer_stop", "polybench_timer_print", "setbuf", "setvbuf"}
ALLOCATORS = {"malloc", "calloc", "polybench_alloc_data", "aligned_alloc"}
INDENT = "    "


def _contains(node: c_ast.Node | None, target: c_ast.Node) -> bool:
    if node is None:
        return False
    return node is target or any(_contains(child, target) for _, child in node.children())


def _addressed(node: c_ast.Node) -> set[str]:
    names = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_UnaryOp(self, op):  # noqa: N802
            if op.op == "&" and isinstance(op.expr, c_ast.ID):
                names.add(op.expr.name)
            self.generic_visit(op)

    Visitor().visit(node)
    return names


class Translation:
    """Python text of one C function (or of main's beginning), built statement by statement."""

    def __init__(self, owner: Translator, scope: dict[str, Var], addressed: set[str]) -> None:
        self.owner, self.scope, self.addressed = owner, scope, addressed
        self.lines: list[str] = []
        self.expr = Expressions(owner.typedefs, scope)
        self.level = 1
        self.masks = 0

    def emit(self, text: str) -> None:
        self.lines.append(INDENT * self.level + text)

    # --- declarations and assignments -----------------------------------------------------------

    def declare(self, decl: c_ast.Decl) -> None:
        if isinstance(decl.type, c_ast.FuncDecl) or decl.name is None:
            return
        if "static" in (decl.storage or []):
            raise Untranslatable(f"a static local variable {decl.name!r}{where(decl)}")
        try:
            ctype = ctype_of(decl.type, self.owner.typedefs)
        except TypeError_ as exc:
            raise Untranslatable(f"variable {decl.name!r}: {exc}{where(decl)}") from exc
        name = py_name(decl.name)
        if ctype.is_array:
            dims = tuple("" if d is None else self.expr.number(d).code for d in ctype.dims)
            var = Var(name, ctype.base, "array", len(dims), dims)
            self.scope[decl.name] = var
            if decl.init is not None:
                self.emit(f"{name} = {self.array_value(decl.init, var)}")
            elif dims[0]:
                shape = ", ".join(dims) + ("," if len(dims) == 1 else "")
                self.emit(f"{name} = np.zeros(({shape}), {dtype_text(ctype.base)})")
            else:
                self.emit(f"{name} = None")
            return
        kind = "cell" if decl.name in self.addressed else "scalar"
        value = convert(self.expr.number(decl.init), ctype.base) if decl.init is not None else Value("0", "int")
        self.scope[decl.name] = Var(name, ctype.base, kind)
        if kind == "cell":
            self.emit(f"{name} = np.array([{value.code}], {dtype_text(ctype.base)})")
        else:
            self.emit(f"{name} = {convert(value, ctype.base).code}")

    def array_value(self, node: c_ast.Node, var: Var) -> str:
        """An allocation or another array, shaped as `var` (a pointer to arrays keeps its inner extents)."""
        inner = node
        while isinstance(inner, c_ast.Cast):
            inner = inner.expr
        if isinstance(inner, c_ast.FuncCall) and isinstance(inner.name, c_ast.ID) and inner.name.name in ALLOCATORS:
            code = self.allocation(inner, var)
        else:
            value = self.expr(node)
            if value.ctype != "array":
                raise Untranslatable(f"a pointer set to a number{where(node)}")
            code = value.code
        if var.ndim > 1:
            code = f"{code}.reshape((-1, {', '.join(var.dims[1:])}))"
        return code

    def allocation(self, call: c_ast.FuncCall, var: Var) -> str:
        args = [self.expr.number(a).code for a in (call.args.exprs if call.args else [])]
        size = BYTES.get(var.ctype, 8)
        name = call.name.name
        if name == "malloc" and len(args) == 1:
            count = f"({args[0]}) // {size}"
        elif name in ("calloc", "polybench_alloc_data") and len(args) == 2:
            count = f"({args[0]}) * ({args[1]}) // {size}"
        elif name == "aligned_alloc" and len(args) == 2:
            count = f"({args[1]}) // {size}"
        else:
            raise Untranslatable(f"a call of {name} with {len(args)} arguments{where(call)}")
        return f"np.zeros({count}, {dtype_text(var.ctype)})"

    def assign(self, target: c_ast.Node, op: str, value_node: c_ast.Node, mask: str | None) -> None:
        if isinstance(value_node, c_ast.Assignment):  # a = b = v: b first, then a from b
            self.assign(value_node.lvalue, value_node.op, value_node.rvalue, mask)
            value_node = value_node.lvalue
        if isinstance(target, c_ast.ID) and self.scope.get(target.name, Var("", "")).kind == "array":
            if op != "=":
                raise Untranslatable(f"pointer arithmetic on {target.name!r}{where(target)}")
            var = self.scope[target.name]
            self.emit(f"{var.name} = {self.array_value(value_node, var)}")
            return
        if op != "=":
            value_node = c_ast.BinaryOp(op[:-1], target, value_node, target.coord)
        value = self.expr.number(value_node)
        if isinstance(target, c_ast.ID):
            var = self.scope.get(target.name)
            if var is None:
                raise Untranslatable(f"assignment to {target.name!r}, which is not declared{where(target)}")
            code = convert(value, var.ctype).code
            self.emit(f"{var.name}[0] = {code}" if var.kind == "cell" else f"{var.name} = {code}")
            return
        var, indices = self.expr.access(target)
        if mask is not None:
            index = ", ".join(indices) + ("," if len(indices) == 1 else "")
            self.emit(f"_put({var.name}, ({index}), {value.code}, {mask})")
        else:
            self.emit(f"{var.name}[{', '.join(indices)}] = {value.code}")

    # --- statements ---------------------------------------------------------------------------------

    def block(self, items: list[c_ast.Node]) -> None:
        for item in items:
            self.statement(item)

    def statement(self, node: c_ast.Node | None) -> None:
        if node is None or isinstance(node, c_ast.EmptyStatement | c_ast.Pragma):
            return
        if isinstance(node, c_ast.Compound):
            self.block(node.block_items or [])
        elif isinstance(node, c_ast.Decl):
            self.declare(node)
        elif isinstance(node, c_ast.DeclList):
            for decl in node.decls:
                self.declare(decl)
        elif isinstance(node, c_ast.Assignment):
            self.assign(node.lvalue, node.op, node.rvalue, None)
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            self.assign(node.expr, "+=" if "+" in node.op else "-=", c_ast.Constant("int", "1"), None)
        elif isinstance(node, c_ast.FuncCall):
            self.call(node)
        elif isinstance(node, c_ast.For):
            self.loop(node)
        elif isinstance(node, c_ast.While):
            self.emit(f"while {self.expr.number(node.cond).code}:")
            self.nested(node.stmt)
        elif isinstance(node, c_ast.If):
            self.emit(f"if {self.expr.number(node.cond).code}:")
            self.nested(node.iftrue)
            if node.iffalse is not None:
                self.emit("else:")
                self.nested(node.iffalse)
        elif isinstance(node, c_ast.Return):
            self.emit("return" if node.expr is None else f"return {self.expr(node.expr).code}")
        elif isinstance(node, c_ast.Break | c_ast.Continue):
            self.emit("break" if isinstance(node, c_ast.Break) else "continue")
        else:
            raise Untranslatable(f"a {type(node).__name__} statement{where(node)}")

    def nested(self, node: c_ast.Node | None) -> None:
        self.level += 1
        before = len(self.lines)
        self.statement(node)
        if len(self.lines) == before:
            self.emit("pass")
        self.level -= 1

    def call(self, node: c_ast.FuncCall) -> None:
        name = node.name.name if isinstance(node.name, c_ast.ID) else ""
        if name in IGNORED_CALLS:
            return
        if name not in self.owner.functions:
            raise Untranslatable(f"a call of {name or 'a function pointer'}(){where(node)}")
        args = [self.expr(a).code for a in (node.args.exprs if node.args else [])]
        self.emit(f"{self.owner.function(name)}({', '.join(args)})")

    # --- loops --------------------------------------------------------------------------------------

    def loop(self, node: c_ast.For) -> None:
        loop = canonical(node)
        arrays = {n for n, v in self.scope.items() if v.kind == "array"}
        if loop is not None and not self.expr.vector and vectorisable(node, arrays):
            self.vector_nest(node, depth(node))
            return
        if loop is None:
            raise Untranslatable(f"a for loop that is not `for (i = a; i < b; i += k)`{where(node)}")
        if loop.declares is not None:
            self.scope[loop.var] = Var(py_name(loop.var), "int")
        var = self.scope.get(loop.var)
        if var is None or var.kind != "scalar":
            raise Untranslatable(f"loop variable {loop.var!r} is not a declared number{where(node)}")
        lo, hi = self.expr.number(loop.lo).code, self.expr.number(loop.hi).code
        end = (f"{hi} + 1" if loop.step > 0 else f"{hi} - 1") if loop.inclusive else hi
        step = "" if loop.step == 1 else f", {loop.step}"
        self.emit(f"for {var.name} in range({lo}, {end}{step}):")
        self.nested(node.stmt)

    def vector_nest(self, node: c_ast.For, levels: int) -> None:
        """The nest as whole-array operations: each loop an index grid on its own axis, masked to its bounds."""
        saved = dict(self.scope)
        try:
            self.vector_statement(node, [], None, levels)
        finally:
            self.scope.clear()
            self.scope.update(saved)
            self.expr.grid = []

    def vector_statement(self, node: c_ast.Node | None, grid: list[str], mask: str | None, levels: int) -> None:
        if node is None or isinstance(node, c_ast.EmptyStatement | c_ast.Pragma):
            return
        if isinstance(node, c_ast.Compound):
            for item in node.block_items or []:
                self.vector_statement(item, grid, mask, levels)
            return
        self.expr.grid = list(grid)
        if isinstance(node, c_ast.For):
            loop = canonical(node)
            name = py_name(loop.var)
            self.scope[loop.var] = Var(name, "int")
            lo, hi = self.expr.number(loop.lo).code, self.expr.number(loop.hi).code
            end = f"{hi} + 1" if loop.inclusive else hi
            self.emit(f"{name} = _axis({lo}, {end}, {len(grid)}, {levels})")
            bounded = any(re.search(rf"\b{re.escape(g)}\b", f"{lo} {hi}") for g in grid)
            if bounded:
                self.masks += 1
                inner = f"_m{self.masks}"
                own = f"({name} >= {lo}) & ({name} < {end})"
                self.emit(f"{inner} = {own}" if mask is None else f"{inner} = {mask} & {own}")
                mask = inner
            self.vector_statement(node.stmt, [*grid, name], mask, levels)
            self.expr.grid = list(grid)
            return
        if isinstance(node, c_ast.If):
            cond = self.expr.number(node.cond).code
            self.masks += 1
            yes, no = f"_m{self.masks}", f"_m{self.masks}n"
            self.emit(f"{yes} = {cond}" if mask is None else f"{yes} = {mask} & {cond}")
            self.vector_statement(node.iftrue, grid, yes, levels)
            if node.iffalse is not None:
                self.expr.grid = list(grid)
                negated = f"np.logical_not({cond})"
                self.emit(f"{no} = {negated}" if mask is None else f"{no} = {mask} & {negated}")
                self.vector_statement(node.iffalse, grid, no, levels)
            return
        if isinstance(node, c_ast.Decl):
            ctype = ctype_of(node.type, self.owner.typedefs)
            value = convert(self.expr.number(node.init), ctype.base)
            self.scope[node.name] = Var(py_name(node.name), ctype.base)
            self.emit(f"{py_name(node.name)} = {value.code}")
            return
        if isinstance(node, c_ast.Assignment):
            self.assign(node.lvalue, node.op, node.rvalue, mask or "True")
            return
        if isinstance(node, c_ast.UnaryOp):
            self.assign(node.expr, "+=" if "+" in node.op else "-=", c_ast.Constant("int", "1"), mask or "True")
            return
        raise Untranslatable(f"a {type(node).__name__} inside a vectorised loop{where(node)}")


class Translator:
    """Translates main's beginning (up to the kernel's call) and the program functions it calls."""

    def __init__(self, analysis: Analysis, sizes: list[str]) -> None:
        self.analysis, self.sizes = analysis, sizes
        self.typedefs = analysis.unit.typedefs
        self.functions = {n: f for n, f in analysis.unit.functions.items() if n not in ("main", analysis.kernel)}
        self.translated: dict[str, list[str]] = {}

    def function(self, name: str) -> str:
        if name not in self.translated:
            self.translated[name] = []  # a recursive call finds it started
            self.translated[name] = self._function(self.functions[name])
        return py_name(name)

    def _function(self, function: c_ast.FuncDef) -> list[str]:
        scope = {name: Var(py_name(name), "int") for name in self.sizes}  # macros: the enclosing function's
        translation = Translation(self, scope, _addressed(function.body))
        params = []
        for param in function.decl.type.args.params if function.decl.type.args else []:
            if isinstance(param, c_ast.Typename):
                continue
            try:
                ctype = ctype_of(param.type, self.typedefs)
            except TypeError_ as exc:
                raise Untranslatable(f"parameter {param.name!r} of {function.decl.name}: {exc}") from exc
            name = py_name(param.name)
            params.append(name)
            if ctype.is_array:
                dims = tuple("" if d is None else translation.expr.number(d).code for d in ctype.dims)
                scope[param.name] = Var(name, ctype.base, "array", len(dims), dims)
                shape = f"(-1, {', '.join(dims[1:])})" if len(dims) > 1 else "-1"
                translation.emit(f"{name} = {name}.reshape({shape})")
            else:
                scope[param.name] = Var(name, ctype.base)
                if param.name in translation.addressed:
                    scope[param.name] = Var(name, ctype.base, "cell")
                    translation.emit(f"{name} = np.array([{name}], {dtype_text(ctype.base)})")
        translation.block(function.body.block_items or [])
        return [f"def {py_name(function.decl.name)}({', '.join(params)}):", *(translation.lines or [INDENT + "pass"])]

    def own_initialisation(self) -> str:
        """`own_initialisation(params, rng)`: main up to the kernel's call; returns the kernel's arguments."""
        main = self.analysis.unit.functions["main"]
        scope = {name: Var(py_name(name), "int") for name in self.sizes}
        translation = Translation(self, scope, _addressed(main.body))
        for name in self.sizes:
            translation.emit(f"{py_name(name)} = params[{name!r}]")
        sized = set(self.analysis.main_sizes)
        for item in main.body.block_items or []:
            if _contains(item, self.analysis.call):
                break
            if isinstance(item, c_ast.Decl) and item.name in sized:
                scope[item.name] = Var(py_name(item.name), "int")
                continue  # a size the configuration sets
            translation.statement(item)
        else:
            raise Untranslatable("main's call of the kernel is not one of its statements")
        out = []
        for param, given in zip(self.analysis.args, self.analysis.call.args.exprs, strict=True):
            value = translation.expr(given)
            if param.is_array and value.ctype != "array":
                raise Untranslatable(f"argument {param.name!r} is not an array where main passes it")
            if not param.is_array and value.ctype == "array":
                raise Untranslatable(f"argument {param.name!r} is an array where main passes it")
            out.append(f"{param.name!r}: {value.code}")
        translation.emit("return {" + ", ".join(out) + "}")
        head = "def own_initialisation(params, rng):"
        doc = (f'{INDENT}"""The arguments main hands {self.analysis.kernel}, made as the program makes them '
               f'(translated from its C)."""')
        sizes, body = translation.lines[:len(self.sizes)], translation.lines[len(self.sizes):]
        functions = [INDENT + line if line else line for lines in self.translated.values() for line in [*lines, ""]]
        return "\n".join([head, doc, *sizes, *([""] if functions else []), *functions, *body]) + "\n"


def translate(analysis: Analysis, sizes: list[str]) -> str:
    """The Python text of `own_initialisation` and of the program functions it calls; raises Untranslatable."""
    return Translator(analysis, sizes).own_initialisation()
