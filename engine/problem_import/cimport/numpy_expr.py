"""C expressions as numpy code with C's arithmetic: the expression half of the input translation.

Each expression becomes Python text plus its C type, so that C's usual arithmetic conversions, integer
division (toward zero) and remainder (the dividend's sign) and float-versus-double arithmetic come out as C
computes them: `(double)(i*j+1) / n` is `np.float64(i * j + 1) / n`, `(i + j) % m` is `np.fmod(i + j, m)`.
Inside a vectorised loop nest the loop variables are index grids, so the same text computes every
iteration at once; reads there go through `_at`, which keeps indices of masked-out iterations in bounds.
Anything outside the subset (pointer arithmetic, structs, calls it does not know) raises Untranslatable.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from pycparser import c_ast

from engine.problem_import.cimport.ctype import BYTES, NUMPY_DTYPES, resolve_names

RANKS = ["_Bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "long",
         "unsigned long", "float", "double", "long double"]
FLOATS = ("float", "double", "long double")
NUMPY_CAST = {"double": "np.float64", "float": "np.float32", "long double": "np.float64"}
MATH = {  # C function -> (numpy function, result type; None: the argument's)
    "sqrt": ("np.sqrt", "double"), "sqrtf": ("np.sqrt", "float"), "exp": ("np.exp", "double"),
    "expf": ("np.exp", "float"), "log": ("np.log", "double"), "logf": ("np.log", "float"),
    "log10": ("np.log10", "double"), "log2": ("np.log2", "double"), "pow": ("np.power", "double"),
    "powf": ("np.power", "float"), "sin": ("np.sin", "double"), "sinf": ("np.sin", "float"),
    "cos": ("np.cos", "double"), "cosf": ("np.cos", "float"), "tan": ("np.tan", "double"),
    "tanh": ("np.tanh", "double"), "tanhf": ("np.tanh", "float"), "atan": ("np.arctan", "double"),
    "atan2": ("np.arctan2", "double"), "fabs": ("np.abs", "double"), "fabsf": ("np.abs", "float"),
    "abs": ("np.abs", "int"), "labs": ("np.abs", "long"), "floor": ("np.floor", "double"),
    "floorf": ("np.floor", "float"), "ceil": ("np.ceil", "double"), "ceilf": ("np.ceil", "float"),
    "fmod": ("np.fmod", "double"), "fmodf": ("np.fmod", "float"), "fmin": ("np.fmin", "double"),
    "fmax": ("np.fmax", "double"), "fminf": ("np.fmin", "float"), "fmaxf": ("np.fmax", "float"),
    "round": ("np.round", "double"), "exp2": ("np.exp2", "double"),
}
RANDOM = {"rand": ("_rand", "int"), "random": ("_rand", "long"), "drand48": ("_uniform", "double"),
          "lrand48": ("_rand", "long")}
RESERVED = set(keyword.kwlist) | {"np", "rng", "range", "int", "float", "len", "min", "max", "abs", "sum", "print",
                                  "params", "values", "dict", "list", "tuple", "object", "type", "round"}


class Untranslatable(ValueError):
    """C the translation does not cover: the message names the construct and where it is."""


def where(node: c_ast.Node) -> str:
    coord = getattr(node, "coord", None)
    return f" at {coord.file}:{coord.line}" if coord else ""


def py_name(name: str) -> str:
    return f"{name}_" if name in RESERVED or name.startswith("_") else name


@dataclass
class Var:
    """A C variable as the translation holds it: a number, a one-element cell (its address is taken), or an
    ndarray standing for an array or a pointer (`ndim` dimensions, the first one the pointer's)."""

    name: str
    ctype: str
    kind: str = "scalar"  # scalar | cell | array
    ndim: int = 0
    dims: tuple[str, ...] = ()  # python text of the declared extents (arrays), "" where unknown


@dataclass
class Value:
    code: str
    ctype: str  # a number type; "array" for an ndarray that is a pointer or an array
    ndim: int = 0  # arrays: dimensions left

    @property
    def is_float(self) -> bool:
        return self.ctype in FLOATS


def base_and_indices(node: c_ast.Node) -> tuple[str | None, list[c_ast.Node | None]]:
    """The variable under `A[i][j]`, `(*B)[r][s]` or `*p` (None if it is not a plain name) and the index
    expressions outermost first, None for a dereference."""
    indices: list[c_ast.Node | None] = []
    while True:
        if isinstance(node, c_ast.ArrayRef):
            indices.insert(0, node.subscript)
            node = node.name
        elif isinstance(node, c_ast.UnaryOp) and node.op == "*":
            indices.insert(0, None)
            node = node.expr
        else:
            break
    return (node.name if isinstance(node, c_ast.ID) else None), indices


def rank(ctype: str) -> int:
    return RANKS.index(ctype) if ctype in RANKS else RANKS.index("int")


def promote(ctype: str) -> str:
    return "int" if rank(ctype) < rank("int") else ctype


def common(a: str, b: str) -> str:
    a, b = promote(a), promote(b)
    return a if rank(a) >= rank(b) else b


def convert(value: Value, to: str) -> Value:
    """`value` as C converts it to `to` (an assignment, a cast, the usual arithmetic conversions)."""
    if value.ctype == to or (not value.is_float and to not in FLOATS) and value.ctype != "_Bool":
        return Value(value.code, to)
    if to in FLOATS and value.code.lstrip("-").isdigit():
        return Value(f"{value.code}.0" if to != "float" else f"np.float32({value.code})", to)
    if to in FLOATS:
        code = value.code if value.code.startswith(NUMPY_CAST[to] + "(") else f"{NUMPY_CAST[to]}({value.code})"
        return Value(code, to)
    if to == "_Bool":
        return Value(f"({value.code} != 0)", to)
    return Value(f"_int({value.code})", to)


def type_of(node: c_ast.Node, typedefs: dict) -> str:
    if isinstance(node, c_ast.Typename):
        node = node.type
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        return resolve_names(node.type.names, typedefs)[0]
    raise Untranslatable(f"a cast to a pointer or struct type{where(node)}")


class Expressions:
    """Translates expressions against the variables in scope (`scope`) and the index grids of the
    vectorised loops around them (`grid`: loop variable -> its python text)."""

    def __init__(self, typedefs: dict, scope: dict[str, Var]) -> None:
        self.typedefs, self.scope = typedefs, scope
        self.grid: list[str] = []

    @property
    def vector(self) -> bool:
        return bool(self.grid)

    def __call__(self, node: c_ast.Node) -> Value:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Untranslatable(f"{type(node).__name__} expressions{where(node)}")
        return method(node)

    def number(self, node: c_ast.Node) -> Value:
        value = self(node)
        if value.ctype == "array":
            raise Untranslatable(f"an array used as a number{where(node)}")
        return value

    def _Constant(self, node: c_ast.Constant) -> Value:  # noqa: N802
        text = node.value
        if node.type == "char":
            return Value(str(ord(text[1:-1].encode().decode("unicode_escape"))), "int")
        if node.type in ("float", "double", "long double"):
            body = text.rstrip("fFlL")
            if text[-1] in "fF":
                return Value(f"np.float32({body})", "float")
            return Value(body if ("." in body or "e" in body.lower()) else f"{body}.0", "double")
        if node.type == "string":
            raise Untranslatable(f"a string{where(node)}")
        digits = text.rstrip("uUlL")
        number = int(digits, 8) if digits.startswith("0") and digits[1:].isdigit() else int(digits, 0)
        suffix = text[len(digits):].lower()
        return Value(str(number), "unsigned int" if "u" in suffix else "long" if "l" in suffix else "int")

    def _ID(self, node: c_ast.ID) -> Value:  # noqa: N802
        var = self.scope.get(node.name)
        if var is None:
            raise Untranslatable(f"the name {node.name!r}, which the translation does not know{where(node)}")
        if var.kind == "cell":
            return Value(f"{var.name}[0]", var.ctype)
        if var.kind == "array":
            return Value(var.name, "array", var.ndim)
        return Value(var.name, var.ctype)

    def element_type(self, node: c_ast.Node) -> str:
        while isinstance(node, c_ast.ArrayRef | c_ast.UnaryOp):
            node = node.name if isinstance(node, c_ast.ArrayRef) else node.expr
        if isinstance(node, c_ast.ID) and node.name in self.scope:
            return self.scope[node.name].ctype
        raise Untranslatable(f"an array access whose array is not a variable{where(node)}")

    def access(self, node: c_ast.Node) -> tuple[Var, list[str]]:
        """The array variable and index texts of `A[i][j]`, `(*B)[r][s]` or `*p`."""
        name, indices = base_and_indices(node)
        if name is None or self.scope.get(name, Var("", "", "scalar")).kind != "array":
            raise Untranslatable(f"an access through something that is not an array variable{where(node)}")
        var = self.scope[name]
        texts = []
        for index in indices:
            if index is None:  # `*p`: its first element
                texts.append("0")
                continue
            value = self.number(index)
            if value.is_float:
                raise Untranslatable(f"a floating-point array index{where(index)}")
            texts.append(value.code)
        return var, texts

    def _ArrayRef(self, node: c_ast.ArrayRef) -> Value:  # noqa: N802
        var, indices = self.access(node)
        if len(indices) > var.ndim:
            raise Untranslatable(f"more indices than {var.name!r} has dimensions{where(node)}")
        if len(indices) < var.ndim:
            if self.vector:
                raise Untranslatable(f"a row of an array inside a vectorised loop{where(node)}")
            return Value(f"{var.name}[{', '.join(indices)}]", "array", var.ndim - len(indices))
        if self.vector:
            return Value(f"_at({var.name}, {', '.join(indices)})", var.ctype)
        return Value(f"{var.name}[{', '.join(indices)}]", var.ctype)

    def _UnaryOp(self, node: c_ast.UnaryOp) -> Value:  # noqa: N802
        if node.op == "*":
            return self._ArrayRef(node)
        if node.op == "sizeof":
            target = node.expr
            size = BYTES.get(type_of(target, self.typedefs)) if isinstance(target, c_ast.Typename) else None
            if size is None:
                raise Untranslatable(f"sizeof of an expression{where(node)}")
            return Value(str(size), "unsigned long")
        if node.op == "&":
            if isinstance(node.expr, c_ast.ID) and self.scope.get(node.expr.name, Var("", "")).kind in ("cell",
                                                                                                        "array"):
                return Value(self.scope[node.expr.name].name, "array", max(self.scope[node.expr.name].ndim, 1))
            raise Untranslatable(f"taking an address other than a variable's{where(node)}")
        value = self.number(node.expr)
        if node.op == "-":
            value = convert(value, promote(value.ctype))
            return Value(f"-{_paren(value.code)}", value.ctype)
        if node.op == "+":
            return convert(value, promote(value.ctype))
        if node.op == "!":
            return Value(f"np.logical_not({value.code})", "_Bool")
        if node.op == "~":
            return Value(f"~{_paren(value.code)}", promote(value.ctype))
        raise Untranslatable(f"the operator {node.op!r} inside an expression{where(node)}")

    def _BinaryOp(self, node: c_ast.BinaryOp) -> Value:  # noqa: N802
        left, right = self.number(node.left), self.number(node.right)
        if node.op in ("&&", "||"):
            joined = "np.logical_and" if node.op == "&&" else "np.logical_or"
            return Value(f"{joined}({left.code}, {right.code})", "_Bool")
        if node.op in ("<<", ">>"):
            return Value(f"{_paren(left.code)} {node.op} {_paren(right.code)}", promote(left.ctype))
        ctype = common(left.ctype, right.ctype)
        if node.op in ("+", "-") and right.code == "0" and ctype not in FLOATS:
            return convert(left, ctype)  # PolyBench's padding: `n + 0`
        a, b = convert(left, ctype), convert(right, ctype)
        if node.op in ("<", "<=", ">", ">=", "==", "!="):
            return Value(f"({_paren(a.code)} {node.op} {_paren(b.code)})", "_Bool")
        if node.op == "/" and ctype not in FLOATS:
            return Value(f"_idiv({a.code}, {b.code})", ctype)
        if node.op == "%":
            return Value(f"np.fmod({a.code}, {b.code})", ctype)
        if node.op in ("+", "-", "*", "/", "&", "|", "^"):
            return Value(f"{_paren(a.code)} {node.op} {_paren(b.code)}", ctype)
        raise Untranslatable(f"the operator {node.op!r}{where(node)}")

    def _TernaryOp(self, node: c_ast.TernaryOp) -> Value:  # noqa: N802
        cond, yes, no = self.number(node.cond), self.number(node.iftrue), self.number(node.iffalse)
        ctype = common(yes.ctype, no.ctype)
        yes, no = convert(yes, ctype), convert(no, ctype)
        if self.vector:
            return Value(f"np.where({cond.code}, {yes.code}, {no.code})", ctype)
        return Value(f"({yes.code} if {cond.code} else {no.code})", ctype)

    def _Cast(self, node: c_ast.Cast) -> Value:  # noqa: N802
        target = node.to_type.type
        if isinstance(target, c_ast.PtrDecl):
            value = self(node.expr)
            if value.ctype != "array":
                raise Untranslatable(f"a cast of a number to a pointer{where(node)}")
            return value
        return convert(self.number(node.expr), type_of(node.to_type, self.typedefs))

    def _FuncCall(self, node: c_ast.FuncCall) -> Value:  # noqa: N802
        name = node.name.name if isinstance(node.name, c_ast.ID) else ""
        args = node.args.exprs if node.args else []
        if name in RANDOM:
            helper, ctype = RANDOM[name]
            return Value(f"{helper}(rng{''.join(', ' + g for g in self.grid)})", ctype)
        if name not in MATH:
            raise Untranslatable(f"a call of {name or 'a function pointer'}() inside an expression{where(node)}")
        function, ctype = MATH[name]
        values = [self.number(a) for a in args]
        if ctype in FLOATS:
            values = [convert(v, ctype) for v in values]
        else:
            ctype = promote(values[0].ctype) if values else ctype
        return Value(f"{function}({', '.join(v.code for v in values)})", ctype)

    def _ExprList(self, node: c_ast.ExprList) -> Value:  # noqa: N802
        if len(node.exprs) != 1:
            raise Untranslatable(f"a comma expression{where(node)}")
        return self(node.exprs[0])


def _paren(code: str) -> str:
    """`code` bracketed unless it is one name, number, call or subscript."""
    if re.fullmatch(r"[\w.]+", code):
        return code
    opened = re.match(r"^[\w.]*[(\[]", code)
    if opened and _closes_at_end(code, opened.end() - 1):
        return code
    return f"({code})"


def _closes_at_end(code: str, start: int) -> bool:
    depth = 0
    for i in range(start, len(code)):
        depth += code[i] in "(["
        depth -= code[i] in ")]"
        if depth == 0:
            return i == len(code) - 1
    return False


def dtype_text(ctype: str) -> str:
    return f"np.{NUMPY_DTYPES.get(ctype, 'float64')}"
