"""C types as the importer needs them: an element type and the extents of an array (or pointer) over it.

A parameter `double A[n][m]`, a pointer `float *x` and a pointer to arrays `double (*B)[n][n]` all become
an element type and a list of extents, the first one unknown (`None`) where C does not say it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

# The system's typedefs that programs use as numbers; others read as stand-ins and are refused where it matters.
SYSTEM_TYPEDEFS = {
    "size_t": "unsigned long", "ssize_t": "long", "ptrdiff_t": "long", "intptr_t": "long", "uintptr_t": "unsigned long",
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
    "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
}
_SPELLINGS = {
    "signed": "int", "unsigned": "unsigned int", "signed int": "int", "short int": "short", "signed short": "short",
    "unsigned short int": "unsigned short", "long int": "long", "signed long": "long", "long long": "long",
    "long long int": "long", "unsigned long int": "unsigned long", "unsigned long long": "unsigned long",
    "unsigned long long int": "unsigned long", "signed char": "signed char", "_Bool": "_Bool",
}
NUMPY_DTYPES = {
    "double": "float64", "float": "float32", "int": "int32", "long": "int64", "short": "int16", "char": "int8",
    "signed char": "int8", "unsigned char": "uint8", "unsigned short": "uint16", "unsigned int": "uint32",
    "unsigned long": "uint64", "_Bool": "bool",
}
BYTES = {"double": 8, "float": 4, "int": 4, "long": 8, "short": 2, "char": 1, "signed char": 1, "unsigned char": 1,
         "unsigned short": 2, "unsigned int": 4, "unsigned long": 8, "_Bool": 1, "long double": 16}
# The entry point's types (engine.problems.library.C_TYPES): other element types are widened to one of these.
ENTRY_TYPES = {"double": "double", "float": "float", "int": "int", "long": "long", "short": "int", "char": "int",
               "signed char": "int", "unsigned char": "int", "unsigned short": "int", "_Bool": "int",
               "unsigned int": "long", "unsigned long": "long"}
FLOATS = ("float", "double", "long double")


class TypeError_(ValueError):
    """A type the importer cannot carry across the entry point."""


@dataclass(frozen=True)
class CType:
    """`base` is the resolved element type; `dims` the extents, outermost first (`None`: unknown)."""

    base: str
    dims: tuple[c_ast.Node | None, ...] = ()
    spelled: str = ""  # the element type as written (a typedef name stays a name), for generated C
    const: bool = False

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def is_float(self) -> bool:
        return self.base in FLOATS

    @property
    def dtype(self) -> str:
        return NUMPY_DTYPES.get(self.base, "float64")

    @property
    def entry(self) -> str:
        """The type the flat entry point uses for this element (`int` for a `char`)."""
        if self.base not in ENTRY_TYPES:
            raise TypeError_(f"element type {self.spelled or self.base!r} cannot cross the entry point")
        return ENTRY_TYPES[self.base]

    @property
    def narrowed(self) -> bool:
        """The entry point's element is wider than the program's, so the wrapper copies between them."""
        return self.entry != self.base


def resolve_names(names: list[str], typedefs: dict[str, c_ast.Typedef]) -> tuple[str, str]:
    """(resolved base type, spelling) of an IdentifierType's names, following typedefs."""
    spelled = " ".join(names)
    seen = 0
    while len(names) == 1 and names[0] in typedefs and seen < 16:
        inner = typedefs[names[0]].type
        if not isinstance(inner, c_ast.TypeDecl) or not isinstance(inner.type, c_ast.IdentifierType):
            if names[0] in SYSTEM_TYPEDEFS:
                break
            raise TypeError_(f"type {names[0]!r} is not a plain number type")
        if names[0] in SYSTEM_TYPEDEFS:
            break
        names, seen = inner.type.names, seen + 1
    text = " ".join(n for n in names if n not in ("const", "volatile", "register", "static"))
    text = SYSTEM_TYPEDEFS.get(text, text)
    return _SPELLINGS.get(text, text), spelled


def ctype_of(node: c_ast.Node, typedefs: dict[str, c_ast.Typedef]) -> CType:
    """The CType of a declaration's `type` node (TypeDecl, ArrayDecl, PtrDecl)."""
    dims: list[c_ast.Node | None] = []
    while True:
        if isinstance(node, c_ast.ArrayDecl):
            dims.append(node.dim)
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
            if dims:
                raise TypeError_("pointers to pointers and arrays of pointers cannot cross the entry point")
            dims.append(None)
            node = node.type
        elif isinstance(node, c_ast.TypeDecl):
            inner = node.type
            if isinstance(inner, c_ast.IdentifierType):
                base, spelled = resolve_names(inner.names, typedefs)
                return CType(base, tuple(dims), spelled, "const" in (node.quals or []))
            kind = type(inner).__name__.lower()
            raise TypeError_(f"a {kind} cannot cross the entry point")
        elif isinstance(node, c_ast.FuncDecl):
            raise TypeError_("a function pointer cannot cross the entry point")
        else:
            raise TypeError_(f"unsupported type {type(node).__name__}")


def element_bytes(ctype: CType) -> int:
    return BYTES.get(ctype.base, 8)
