"""The imported problem's first implementation: the C kernel itself, run on one GPU thread.

This is a correctness baseline and the problem's speed baseline (the naive CUDA port, as DESIGN.md names
it), not a fast kernel: the kernel's own loops, unchanged, in a `__global__` function launched `<<<1, 1>>>`
by the entry point over device pointers. What C allows and CUDA C++ does not is rewritten: an array
parameter `double A[n][m]` becomes a pointer indexed `A[(long)(i) * (m) + (j)]`, a local array sized at
run time is allocated from the device heap, a size macro the kernel reads by name becomes a device
variable the launch sets, and an element type the harness does not carry (`char`) is copied from the
entry point's `int` array. It is generated from the preprocessed code, so macros appear expanded.
"""

from __future__ import annotations

import copy
import re

from pycparser import c_ast, c_generator

from engine.problem_import.cimport.ctype import ctype_of
from engine.problem_import.cimport.program import Analysis, ids
from engine.problem_import.cimport.reference import entry_name, entry_params

HEAP_BYTES = 1 << 30
MACRO_PARAM = "refinery_size_{}"


class PortError(ValueError):
    """The kernel uses something the port cannot carry to the GPU (a global variable, say)."""


def _type(spelled: str, pointer: bool, name: str, const: bool = False) -> c_ast.Node:
    decl = c_ast.TypeDecl(name, ["const"] if const else [], None, c_ast.IdentifierType(spelled.split()))
    return c_ast.PtrDecl([], decl) if pointer else decl


def _decl(name: str, node: c_ast.Node, init: c_ast.Node | None = None) -> c_ast.Decl:
    return c_ast.Decl(name, [], [], [], [], node, init, None)


def _long(node: c_ast.Node) -> c_ast.Node:
    return c_ast.Cast(c_ast.Typename(None, [], None, _type("long", False, None)), node)


def _plain(node: c_ast.Node) -> c_ast.Node:
    """An extent without PolyBench's padding: `n + 0` is `n`."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "+" and isinstance(node.right, c_ast.Constant) \
            and node.right.value == "0":
        return _plain(node.left)
    return copy.deepcopy(node)


def _count(dims: list[c_ast.Node]) -> c_ast.Node:
    """(long) d0 * d1 * …: how many elements an array of these extents holds."""
    total = _long(_plain(dims[0]))
    for extent in dims[1:]:
        total = c_ast.BinaryOp("*", total, _plain(extent))
    return total


def _linear(indices: list[c_ast.Node], dims: list[c_ast.Node]) -> c_ast.Node:
    """(long)(i) * (d1) + (j) ... for the first len(indices) of an array's extents."""
    total = _long(indices[0])
    for index, extent in zip(indices[1:], dims[1:], strict=False):
        total = c_ast.BinaryOp("+", c_ast.BinaryOp("*", total, _plain(extent)), index)
    for extent in dims[len(indices):]:
        total = c_ast.BinaryOp("*", total, _plain(extent))
    return total


class _Flatten(c_ast.NodeVisitor):
    """Rewrites every access to a many-dimensional array into one index into its flat pointer."""

    def __init__(self, arrays: dict[str, list[c_ast.Node]]) -> None:
        self.arrays = arrays

    def rewrite(self, node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ArrayRef):
            indices, base = [], node
            while isinstance(base, c_ast.ArrayRef):
                indices.insert(0, base.subscript)
                base = base.name
            if isinstance(base, c_ast.ID) and base.name in self.arrays:
                dims = self.arrays[base.name]
                indices = [self.rewrite(i) for i in indices]
                if len(indices) == len(dims):
                    return c_ast.ArrayRef(base, _linear(indices, dims))
                return c_ast.BinaryOp("+", base, _linear(indices, dims))  # a row: a pointer into the array
        for name, child in node.children():
            new = self.rewrite(child)
            if new is not child:
                _replace(node, name, new)
        return node


def _replace(parent: c_ast.Node, slot: str, new: c_ast.Node) -> None:
    if "[" in slot:
        field, index = slot[:-1].split("[")
        getattr(parent, field)[int(index)] = new
    else:
        setattr(parent, slot, new)


def _strip_pragmas(node: c_ast.Node) -> None:
    for _name, child in node.children():
        _strip_pragmas(child)
    if isinstance(node, c_ast.Compound) and node.block_items:
        node.block_items = [item for item in node.block_items if not isinstance(item, c_ast.Pragma)]


def _constant(node: c_ast.Node | None) -> bool:
    return isinstance(node, c_ast.Constant)


class _Function:
    """One function of the kernel's closure on its way to the GPU."""

    def __init__(self, analysis: Analysis, function: c_ast.FuncDef) -> None:
        self.analysis, self.function = analysis, copy.deepcopy(function)
        self.arrays: dict[str, list[c_ast.Node]] = {}
        self.heap = False
        self.prologue: list[c_ast.Node] = []
        self.epilogue: list[c_ast.Node] = []

    def params(self, intents: dict[str, str] | None) -> None:
        args = self.function.decl.type.args
        new = []
        for param in (args.params if args else []):
            if isinstance(param, c_ast.Typename):
                continue
            ctype = ctype_of(param.type, self.analysis.unit.typedefs)
            if not ctype.is_array:
                new.append(param)
                continue
            if len(ctype.dims) > 1:
                if any(d is None for d in ctype.dims[1:]):
                    raise PortError(f"parameter {param.name!r} of {self.function.decl.name} has an extent C "
                                    "leaves open")
                self.arrays[param.name] = list(ctype.dims)
            const = intents is not None and intents.get(param.name) == "in"
            if intents is not None and ctype.narrowed:
                wide = f"{param.name}_wide"
                new.append(_decl(wide, _type(ctype.entry, True, wide, const)))
                count = _count(list(ctype.dims))
                self.narrow(param.name, wide, ctype.spelled, count, intents.get(param.name) != "in")
                continue
            new.append(_decl(param.name, _type(ctype.spelled, True, param.name, const)))
        if intents is not None:
            new += [_decl(MACRO_PARAM.format(m), _type("int", False, MACRO_PARAM.format(m)))
                    for m in self.analysis.kernel_macros]
            self.prologue = [c_ast.Assignment("=", c_ast.ID(m), c_ast.ID(MACRO_PARAM.format(m)))
                             for m in self.analysis.kernel_macros] + self.prologue
        if args:
            args.params = new

    def narrow(self, name: str, wide: str, spelled: str, count: c_ast.Node, copy_back: bool) -> None:
        self.heap = True
        i = c_ast.ID("i")
        loop = c_ast.For(c_ast.DeclList([_decl("i", _type("long", False, "i"), c_ast.Constant("int", "0"))]),
                         c_ast.BinaryOp("<", i, count), c_ast.UnaryOp("p++", i), None)
        self.prologue.append(_decl(name, _type(spelled, True, name), self._malloc(spelled, count)))
        cast = c_ast.Typename(None, [], None, _type(spelled, False, None))
        self.prologue.append(c_ast.For(loop.init, loop.cond, loop.next, c_ast.Assignment(
            "=", c_ast.ArrayRef(c_ast.ID(name), i), c_ast.Cast(cast, c_ast.ArrayRef(c_ast.ID(wide), i)))))
        if copy_back:
            self.epilogue.append(c_ast.For(copy.deepcopy(loop.init), copy.deepcopy(loop.cond), copy.deepcopy(loop.next),
                                           c_ast.Assignment("=", c_ast.ArrayRef(c_ast.ID(wide), i),
                                                            c_ast.ArrayRef(c_ast.ID(name), i))))
        self.epilogue.append(c_ast.FuncCall(c_ast.ID("free"), c_ast.ExprList([c_ast.ID(name)])))

    def _malloc(self, spelled: str, count: c_ast.Node) -> c_ast.Node:
        size = c_ast.UnaryOp("sizeof", c_ast.Typename(None, [], None, _type(spelled, False, None)))
        call = c_ast.FuncCall(c_ast.ID("malloc"), c_ast.ExprList([c_ast.BinaryOp("*", size, count)]))
        return c_ast.Cast(c_ast.Typename(None, [], None, _type(spelled, True, None)), call)

    def locals(self) -> None:
        """Arrays sized at run time move to the device heap."""
        def visit(node: c_ast.Node) -> None:
            for _name, child in node.children():
                visit(child)
            if not isinstance(node, c_ast.Compound) or not node.block_items:
                return
            for i, item in enumerate(node.block_items):
                if not (isinstance(item, c_ast.Decl) and isinstance(item.type, c_ast.ArrayDecl)):
                    continue
                ctype = ctype_of(item.type, self.analysis.unit.typedefs)
                if all(_constant(d) for d in ctype.dims):
                    continue
                if len(ctype.dims) > 1:
                    self.arrays[item.name] = list(ctype.dims)
                count = _count(list(ctype.dims))
                node.block_items[i] = _decl(item.name, _type(ctype.spelled, True, item.name),
                                            self._malloc(ctype.spelled, count))
                self.epilogue.append(c_ast.FuncCall(c_ast.ID("free"), c_ast.ExprList([c_ast.ID(item.name)])))
                self.heap = True

        visit(self.function.body)

    def finish(self) -> c_ast.FuncDef:
        _strip_pragmas(self.function.body)
        _Flatten(self.arrays).rewrite(self.function.body)
        items = self.function.body.block_items or []
        self.function.body.block_items = [*self.prologue, *items, *self.epilogue]
        return self.function


def port_text(analysis: Analysis, intents: dict[str, str], source_name: str) -> str:
    """impls/naive.cu: the kernel's closure as device code and the entry point that launches it."""
    unit = analysis.unit
    used_globals = sorted(set(unit.globals).intersection(*[ids(unit.functions[n].body) for n in analysis.closure]))
    if used_globals:
        raise PortError(f"the kernel reads the program's global variable(s) {', '.join(used_globals)}")
    generator = c_generator.CGenerator(reduce_parentheses=True)
    device, heap = [], False
    for name in analysis.closure:
        port = _Function(analysis, unit.functions[name])
        kernel = name == analysis.kernel
        port.params(intents if kernel else None)
        port.locals()
        function = port.finish()
        heap = heap or port.heap
        if kernel:
            function.decl.name = function.decl.type.type.declname = f"{name}_naive"
            function.decl.storage = []
        text = generator.visit(function).replace("restrict", "__restrict__")
        device.append(("__global__ " if kernel else "__device__ ") + text.removeprefix("static "))
    typedefs = [generator.visit(t) + ";" for n, t in unit.typedefs.items() if n not in unit.stubs]
    macros = [f"__device__ int {m};  /* the program's size macro {m}, set by each launch */"
              for m in analysis.kernel_macros]
    macros += [f"#define {m} {v}  /* the program's {m}, the same in every configuration */"
               for m, v in analysis.fixed_macros.items()]
    params = entry_params(analysis, intents)
    signature = ", ".join(f"{t.replace('*', ' *')}{n}" if t.endswith("*") else f"{t} {n}" for t, n in params)
    launch_args = ", ".join(n for _t, n in params)
    entry = [f'extern "C" void {entry_name(analysis)}({signature})', "{"]
    if heap:
        entry += ["    static int heap_ready = 0;  /* device-side malloc needs room for the kernel's own arrays */",
                  f"    if (!heap_ready) {{ cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t){HEAP_BYTES}); "
                  "heap_ready = 1; }"]
    entry += [f"    {analysis.kernel}_naive<<<1, 1>>>({launch_args});", "}"]
    banner = [f"/* {analysis.kernel} from {source_name}, ported naively by `refinery problems import`:",
              " * the C kernel's own loops run on ONE GPU thread (<<<1, 1>>>). A correctness baseline and this",
              " * problem's speed baseline, not a fast kernel. Arrays are flat: A[i][j] of an n x m array reads",
              " * A[(long) i * m + j]. */"]
    return "\n".join([*banner, "#include <math.h>", "#include <stdlib.h>", "", *typedefs, *macros, "", *device,
                      *entry]) + "\n"


HOST_PRELUDE = """/* The naive CUDA port, emulated on the CPU: the same code, its launch a plain call. */
#define __global__
#define __device__
#define __restrict__ restrict
#define cudaDeviceSetLimit(limit, bytes) ((void)0)
"""


def host_emulation(port: str) -> str:
    """The port as C for a CPU, so that a machine with no GPU checks the port's rewriting of the kernel (flat
    indices, heap arrays, widened element types) against the program's own results."""
    text = re.sub(r"(\w+)<<<1, 1>>>\(", r"\1(", port).replace('extern "C" ', "")
    return HOST_PRELUDE + text
