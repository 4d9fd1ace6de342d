"""What a program's text says about its kernel: which function it is, what main hands it, and which sizes
a configuration sets.

The kernel is the function of the program that main calls with arrays (PolyBench's `kernel_*`, else the
one such function that does not read as set-up or output: `init_*`, `print_*`, `check_*` …). Each of its
arguments becomes an argument of the entry point: an array with its element count, or a scalar with its
value, both as expressions over the configuration's parameters where the text says them (`m` is `M`,
`A` is `M * M`). What the text leaves open (a scalar that `init_array` sets, say) is found by running the
program (`engine.problem_import.cimport.capture`); an array whose length nothing in main says is asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pycparser import c_ast, c_generator

from engine.problem_import.cimport.ctype import CType, TypeError_, ctype_of, element_bytes
from engine.problem_import.cimport.preprocess import Unit
from engine.problem_import.cimport.sizes import product, size_expression
from engine.problem_import.cimport.sources import CProgram, SourceError
from engine.problems.expressions import ExpressionError, evaluate

NOT_A_KERNEL = re.compile(r"init|print|dump|check|verify|compare|alloc|free|read|write|load|save|usage|time|"
                          r"rand|fill|setup|report|show|error|assert", re.IGNORECASE)
ALLOCATORS = ("malloc", "calloc", "polybench_alloc_data", "aligned_alloc")


@dataclass(frozen=True)
class KernelArg:
    """One argument of the kernel as the entry point takes it."""

    name: str
    ctype: CType
    dims: tuple[str, ...] = ()  # C text of each extent in the kernel's own names ("" where C leaves it open)
    size: str | None = None  # arrays: element count over the parameters (None: not known)
    value: str | None = None  # scalars: value over the parameters (None: found by running the program)

    @property
    def is_array(self) -> bool:
        return self.ctype.is_array


@dataclass(frozen=True)
class Analysis:
    unit: Unit
    kernel: str
    call: c_ast.FuncCall
    args: tuple[KernelArg, ...]
    closure: tuple[str, ...]  # the kernel and the program's functions it calls
    sizes: dict[str, int]  # a configuration's parameters as the program writes them (its default sizes)
    kernel_macros: tuple[str, ...] = ()  # sizes the kernel's own code reads by name that configurations vary
    fixed_macros: dict[str, int] = field(default_factory=dict)  # those it reads that every configuration leaves
    main_sizes: dict[str, c_ast.Decl] = field(default_factory=dict)  # main's own size variables (plain programs)


def c_text(node: c_ast.Node | None) -> str:
    return "" if node is None else c_generator.CGenerator().visit(node)


def calls(node: c_ast.Node) -> list[c_ast.FuncCall]:
    found = []

    class Visitor(c_ast.NodeVisitor):
        def visit_FuncCall(self, call):  # noqa: N802 - pycparser's visitor names
            if isinstance(call.name, c_ast.ID):
                found.append(call)
            self.generic_visit(call)

    Visitor().visit(node)
    return found


def ids(node: c_ast.Node) -> set[str]:
    found = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_ID(self, ident):  # noqa: N802
            found.add(ident.name)

    Visitor().visit(node)
    return found


def _declared(function: c_ast.FuncDef) -> set[str]:
    names = {p.name for p in (function.decl.type.args.params if function.decl.type.args else []) if
             getattr(p, "name", None)}

    class Visitor(c_ast.NodeVisitor):
        def visit_Decl(self, decl):  # noqa: N802
            if decl.name:
                names.add(decl.name)
            self.generic_visit(decl)

    Visitor().visit(function.body)
    return names


def closure(unit: Unit, root: str) -> tuple[str, ...]:
    """`root` and every function of the program it calls, in the order the file defines them."""
    functions, seen, todo = unit.functions, {root}, [root]
    while todo:
        for call in calls(functions[todo.pop()].body):
            if call.name.name in functions and call.name.name not in seen:
                seen.add(call.name.name)
                todo.append(call.name.name)
    return tuple(name for name in functions if name in seen)


def params_of(function: c_ast.FuncDef) -> list[c_ast.Decl]:
    args = function.decl.type.args
    params = [p for p in (args.params if args else []) if not isinstance(p, c_ast.EllipsisParam)]
    if len(params) == 1 and isinstance(params[0], c_ast.Typename):  # f(void)
        return []
    return params


def choose_kernel(unit: Unit, entry: str | None, path) -> tuple[str, c_ast.FuncCall]:
    """The kernel's name and main's (first) call of it; raises SourceError saying why none or several."""
    functions = unit.functions
    if "main" not in functions:
        raise SourceError(f"{path}: defines no main: the importer reads how main sets sizes and data and calls "
                          "the kernel")
    called = [c for c in calls(functions["main"].body) if c.name.name in functions and c.name.name != "main"]
    if entry is not None:
        call = next((c for c in called if c.name.name == entry), None)
        if call is None:
            names = ", ".join(dict.fromkeys(c.name.name for c in called)) or "no function of the program"
            raise SourceError(f"{path}: main does not call {entry!r} (it calls {names})")
        return entry, call

    def takes_arrays(call: c_ast.FuncCall) -> bool:
        """Some array parameter gets data (not a string literal, which a prompt or a message is)."""
        given = call.args.exprs if call.args else []
        return any(isinstance(p.type, c_ast.ArrayDecl | c_ast.PtrDecl)
                   and not (isinstance(a, c_ast.Constant) and a.type == "string")
                   for p, a in zip(params_of(functions[call.name.name]), given, strict=False))

    names = list(dict.fromkeys(c.name.name for c in called if takes_arrays(c)))
    chosen = [n for n in names if n.lower().startswith("kernel")] or [n for n in names if not NOT_A_KERNEL.search(n)]
    if len(chosen) != 1:
        if not names:
            raise SourceError(f"{path}: main calls no function of the program with arrays, so there is no kernel "
                              "to import (where the work is written in main itself, move it into a function that "
                              "main calls; where a function main calls is the kernel, name it with --entry)")
        raise SourceError(f"{path}: more than one function main calls could be the kernel "
                          f"({', '.join(chosen or names)}); name it with --entry")
    return chosen[0], next(c for c in called if c.name.name == chosen[0])


class _MainScope:
    """main's variables up to the kernel's call: what each is, as an expression over the parameters."""

    def __init__(self, unit: Unit, call: c_ast.FuncCall, sizes: set[str]) -> None:
        self.unit, self.sizes = unit, sizes
        self.decls: dict[str, c_ast.Decl] = {}
        self.assigned: dict[str, list[c_ast.Node]] = {}
        self._walk(unit.functions["main"].body, call)
        self.size_vars = {n: d for n, d in self.decls.items() if self._is_size_var(n, d)}

    def _walk(self, node: c_ast.Node, stop: c_ast.Node) -> bool:
        if node is stop:
            return True
        if isinstance(node, c_ast.Decl) and node.name:
            self.decls[node.name] = node
        if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
            self.assigned.setdefault(node.lvalue.name, []).append(node.rvalue)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") \
                and isinstance(node.expr, c_ast.ID):
            self.assigned.setdefault(node.expr.name, []).append(node)
        return any(self._walk(child, stop) for _, child in node.children())

    def _is_size_var(self, name: str, decl: c_ast.Decl) -> bool:
        if decl.init is None or name in self.assigned or not isinstance(decl.type, c_ast.TypeDecl):
            return False
        if not isinstance(decl.type.type, c_ast.IdentifierType) or any(
                n in ("float", "double") for n in decl.type.type.names):
            return False
        return not ids(decl.init) and size_expression(decl.init, lambda _n: None, self.unit.typedefs) is not None

    def name_of(self, name: str, depth: int = 0) -> tuple[str, int] | None:
        if name in self.sizes or name in self.size_vars:
            return name, 9
        decl = self.decls.get(name)
        if decl is None or depth > 16:
            return None
        sources = ([decl.init] if decl.init is not None else []) + self.assigned.get(name, [])
        if len(sources) != 1 or not isinstance(decl.type, c_ast.TypeDecl):
            return None
        return size_expression(sources[0], lambda n: self.name_of(n, depth + 1), self.unit.typedefs)

    def expression(self, node: c_ast.Node) -> str | None:
        found = size_expression(node, self.name_of, self.unit.typedefs)
        return found[0] if found else None

    def elements(self, node: c_ast.Node, element: CType) -> str | None:
        """How many elements of `element` the expression main passes points to, over the parameters."""
        if isinstance(node, c_ast.Cast):
            return self.elements(node.expr, element)
        if isinstance(node, c_ast.UnaryOp) and node.op == "&" and isinstance(node.expr, c_ast.ID):
            decl = self.decls.get(node.expr.name)
            return "1" if decl is not None and isinstance(decl.type, c_ast.TypeDecl) else None
        if isinstance(node, c_ast.UnaryOp) and node.op == "*" and isinstance(node.expr, c_ast.ID):
            return self._extent(node.expr.name, skip_first=True)
        if isinstance(node, c_ast.ID):
            return self._extent(node.name, skip_first=False)
        return None

    def _extent(self, name: str, skip_first: bool) -> str | None:
        decl = self.decls.get(name) or self.unit.globals.get(name)
        if decl is None:
            return None
        try:
            ctype = ctype_of(decl.type, self.unit.typedefs)
        except TypeError_:
            return None
        dims = list(ctype.dims[1:] if skip_first else ctype.dims)
        if dims and all(d is not None for d in dims):
            parts = [self.expression(d) for d in dims]
            return product(parts) if all(p is not None for p in parts) else None
        if skip_first or not ctype.dims or any(d is not None for d in ctype.dims[1:]):
            return None
        sources = ([decl.init] if decl.init is not None else []) + self.assigned.get(name, [])
        allocations = [s for s in sources if _allocation(s) is not None]
        if len(allocations) != 1:
            return None
        call = _allocation(allocations[0])
        args = call.args.exprs if call.args else []
        if call.name.name == "calloc" and len(args) == 2:
            count = self.expression(args[0])
            return count if count is not None and self._element_size(args[1]) == element_bytes(ctype) else None
        total = args[1] if call.name.name == "aligned_alloc" and len(args) == 2 else args[0] if args else None
        return self._divide(total, element_bytes(ctype)) if total is not None else None

    def _element_size(self, node: c_ast.Node) -> int | None:
        return constant(node, self.unit.typedefs)

    def _divide(self, total: c_ast.Node, size: int) -> str | None:
        if isinstance(total, c_ast.BinaryOp) and total.op == "*":
            for keep, other in ((total.left, total.right), (total.right, total.left)):
                if self._element_size(other) == size:
                    return self.expression(keep)
        text = self.expression(total)
        return None if text is None else f"({text}) // {size}"


def constant(node: c_ast.Node, typedefs: dict) -> int | None:
    """The value of an integer constant expression (`1 << 20`, `4 * sizeof(float)`), or None."""
    found = size_expression(node, lambda _n: None, typedefs)
    try:
        value = evaluate(found[0], {}) if found else None
    except ExpressionError:
        return None
    return value if isinstance(value, int) else None


def _allocation(node: c_ast.Node) -> c_ast.FuncCall | None:
    while isinstance(node, c_ast.Cast):
        node = node.expr
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and node.name.name in ALLOCATORS:
        return node
    return None


def _kernel_macros(unit: Unit, names: tuple[str, ...], sizes: set[str]) -> tuple[str, ...]:
    used: list[str] = []
    for name in names:
        function = unit.functions[name]
        free = ids(function.body) - _declared(function) - set(unit.functions) - set(unit.globals)
        used += sorted(free & sizes)
    return tuple(dict.fromkeys(used))


def analyse(program: CProgram, unit: Unit, entry: str | None = None,
            given_sizes: dict[str, str] | None = None) -> Analysis:
    """The kernel, its arguments and the configuration's parameters; raises SourceError with what is missing."""
    given_sizes = given_sizes or {}
    kernel, call = choose_kernel(unit, entry, program.path)
    macro_sizes = {k: v for d in program.datasets.values() for k, v in d.items()} | program.macros
    scope = _MainScope(unit, call, set(macro_sizes))
    params = params_of(unit.functions[kernel])
    passed = call.args.exprs if call.args else []
    if len(params) != len(passed):
        raise SourceError(f"{program.path}: main passes {len(passed)} arguments to {kernel}, which takes {len(params)}")
    by_param = dict(zip([p.name for p in params], passed, strict=True))

    def kernel_name(name: str) -> tuple[str, int] | None:
        return size_expression(by_param[name], scope.name_of, unit.typedefs) if name in by_param else None

    args = []
    for param, given in zip(params, passed, strict=True):
        try:
            ctype = ctype_of(param.type, unit.typedefs)
            _ = ctype.entry
        except TypeError_ as exc:
            raise SourceError(f"{program.path}: argument {param.name!r} of {kernel}: {exc}") from exc
        if not ctype.is_array:
            args.append(KernelArg(param.name, ctype, value=scope.expression(given)))
            continue
        dims = tuple(c_text(d) for d in ctype.dims)
        size = given_sizes.get(param.name)
        if size is None and all(d is not None for d in ctype.dims):
            parts = [size_expression(d, kernel_name, unit.typedefs) for d in ctype.dims]
            size = product([p[0] for p in parts]) if all(p is not None for p in parts) else None
        if size is None:
            size = scope.elements(given, ctype)
        if size is None:
            raise SourceError(f"{program.path}: cannot tell how many elements argument {param.name!r} of {kernel} has "
                              f"(main passes `{c_text(given)}`); give it with --size {param.name}=EXPRESSION over "
                              f"{', '.join(list(macro_sizes) + list(scope.size_vars)) or 'the sizes'}")
        args.append(KernelArg(param.name, ctype, dims, size))
    names = closure(unit, kernel)
    sizes = dict(macro_sizes)
    for name, decl in scope.size_vars.items():
        sizes[name] = constant(decl.init, unit.typedefs)
    return Analysis(unit, kernel, call, tuple(args), names, sizes,
                    kernel_macros=_kernel_macros(unit, names, set(macro_sizes)), main_sizes=scope.size_vars)


def written_in_text(analysis: Analysis) -> set[str]:
    """The kernel's array arguments its own text assigns to (or hands to another function of the program):
    written even where one run leaves them unchanged (a stencil on a linear field)."""
    function = analysis.unit.functions[analysis.kernel]
    arrays = {a.name for a in analysis.args if a.is_array}
    found: set[str] = set()

    def base(node: c_ast.Node) -> str | None:
        while isinstance(node, c_ast.ArrayRef) or (isinstance(node, c_ast.UnaryOp) and node.op == "*"):
            node = node.name if isinstance(node, c_ast.ArrayRef) else node.expr
        return node.name if isinstance(node, c_ast.ID) else None

    class Visitor(c_ast.NodeVisitor):
        def visit_Assignment(self, node):  # noqa: N802
            found.add(base(node.lvalue))
            self.generic_visit(node)

        def visit_UnaryOp(self, node):  # noqa: N802
            if node.op in ("++", "--", "p++", "p--"):
                found.add(base(node.expr))
            self.generic_visit(node)

        def visit_FuncCall(self, node):  # noqa: N802
            if isinstance(node.name, c_ast.ID) and node.name.name in analysis.unit.functions:
                found.update(base(a) for a in (node.args.exprs if node.args else []))
            self.generic_visit(node)

    Visitor().visit(function.body)
    return found & arrays
