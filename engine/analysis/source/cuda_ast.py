"""CUDA C++ syntax trees (tree-sitter-cuda) and the declarations the other analyses read from them.

A real parser rather than regular expressions, because the questions asked of the source
(which expression indexes this global access? is this barrier inside a loop?) are about
structure. tree-sitter is error-tolerant: a candidate with a syntax error still yields a tree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

try:  # the analysis degrades to compiler-only facts where the parser is not installed
    import tree_sitter_cuda
    from tree_sitter import Language, Node, Parser
except ImportError:  # pragma: no cover - exercised only on machines without the wheels
    tree_sitter_cuda = None
    Node = object  # type: ignore[misc,assignment]


class ParserUnavailable(RuntimeError):
    pass


TYPE_BYTES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "char2": 2,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2,
    "nv_bfloat16": 2, "bfloat16": 2, "at::Half": 2, "at::BFloat16": 2, "c10::Half": 2, "c10::BFloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "half2": 4, "__half2": 4,
    "__nv_bfloat162": 4, "nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4,
    "double": 8, "long": 8, "long long": 8, "unsigned long": 8, "unsigned long long": 8, "long long int": 8,
    "size_t": 8, "int64_t": 8, "uint64_t": 8, "float2": 8, "int2": 8, "uint2": 8, "short4": 8, "half4": 8,
    "float3": 12, "int3": 12,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16, "ulonglong2": 16,
    "double4": 32, "longlong4": 32,
}
VECTOR_TYPES = frozenset({"float2", "float3", "float4", "int2", "int3", "int4", "uint2", "uint4", "half2", "__half2",
                          "__nv_bfloat162", "nv_bfloat162", "double2", "double4", "char4", "uchar4", "short2",
                          "short4", "longlong2", "ulonglong2"})
DTYPE_BYTES = {"float32": 4, "tf32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int32": 4, "int64": 8}


@functools.cache
def _parser() -> Parser:
    if tree_sitter_cuda is None:
        raise ParserUnavailable("tree-sitter / tree-sitter-cuda are not installed: source features are skipped")
    return Parser(Language(tree_sitter_cuda.language()))


def parser_available() -> bool:
    return tree_sitter_cuda is not None


def parse(source: str | bytes):
    """The syntax tree of a CUDA translation unit."""
    data = source.encode() if isinstance(source, str) else source
    return _parser().parse(data)


@functools.lru_cache(maxsize=4096)
def parse_expression(text: str) -> Node | None:
    """One expression as a node (macro bodies, `dim3 g(a, b)` arguments the parser took for types)."""
    tree = parse(f"auto __expr = ({text});")
    found = [n for n in walk(tree.root_node) if n.type == "init_declarator"]
    if not found:
        return None
    value = found[0].child_by_field_name("value")
    return value


def text(node: Node | None) -> str:
    return node.text.decode(errors="replace") if node is not None else ""


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node`, itself first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def line_of(node: Node) -> int:
    return node.start_point[0] + 1


def strip_comments(node_text: str) -> str:
    return node_text.split("//", 1)[0].strip()


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str


def macros(root: Node) -> dict[str, Macro]:
    """Every #define in the unit (the last definition of a name wins, as after preprocessing)."""
    found: dict[str, Macro] = {}
    for node in walk(root):
        if node.type == "preproc_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            found[text(name)] = Macro(text(name), None, strip_comments(text(value)))
        elif node.type == "preproc_function_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            params = node.child_by_field_name("parameters")
            names = tuple(text(c) for c in params.children if c.type == "identifier") if params else ()
            found[text(name)] = Macro(text(name), names, strip_comments(text(value)))
    return found


_LAUNCH = re.compile(r"<<\s*<")  # `<<<` and the `<< <` spelling of older formatters; nvcc takes both
_HIDDEN_FROM_HOST = frozenset({"__constant__", "__device__", "__shared__", "__managed__", "extern", "volatile"})


def has_launch(code: str) -> bool:
    """Whether source text holds a kernel launch (`k<<<g, b>>>` or `k<< <g, b>> >`)."""
    return _LAUNCH.search(code) is not None


def _file_scope(root: Node) -> Iterator[Node]:
    """Top-level nodes, looking into namespaces and `extern "C" { }` blocks."""
    for node in root.children:
        if node.type in ("namespace_definition", "linkage_specification"):
            body = node.child_by_field_name("body")
            if body is not None:
                yield from _file_scope(body)
        else:
            yield node


def _constant_body(type_name: str, value: Node) -> str | None:
    if value.type == "argument_list" or value.type == "initializer_list":
        inner = [text(c) for c in value.children if c.is_named and c.type != "comment"]
        if type_name == "dim3":
            return f"dim3({', '.join(inner)})"
        return inner[0] if len(inner) == 1 else None
    return text(value)


def constants(root: Node) -> dict[str, Macro]:
    """File-scope `const`/`constexpr` numbers and dim3s, enumerators, and the `static constexpr`
    members of structs (as `Cfg::TILE`), as object-like macros.

    A host launch (`<<<grid, BLOCK>>>`) or a kernel's index reads `const int BLOCK = 256;` the way
    it reads `#define BLOCK 256`; device-memory variables (`__constant__`) and mutable globals are
    left out, since their values can change before a kernel reads them.
    """
    found: dict[str, Macro] = {}
    for node in _file_scope(root):
        if node.type == "enum_specifier" and not any(c.type in ("class", "struct") for c in node.children):
            _enumerators(node, found)
            continue
        if node.type in ("struct_specifier", "class_specifier") or (
                node.type == "declaration" and node.child_by_field_name("type") is not None
                and node.child_by_field_name("type").type in ("struct_specifier", "class_specifier")):
            _static_members(node if node.type != "declaration" else node.child_by_field_name("type"), found)
            continue
        if node.type != "declaration":
            continue
        qualifiers = {text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        if not qualifiers & {"const", "constexpr"} or qualifiers & _HIDDEN_FROM_HOST:
            continue
        type_name = text(node.child_by_field_name("type"))
        for declarator in node.children_by_field_name("declarator"):
            name = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
            value = declarator.child_by_field_name("value") if name is not None else None
            if name is None or name.type != "identifier" or value is None:
                continue  # pointers, arrays and declarations without a value
            body = _constant_body(type_name, value)
            if body:
                found[text(name)] = Macro(text(name), None, strip_comments(body))
    return found


def _static_members(node: Node, found: dict[str, Macro]) -> None:
    """`struct Cfg { static constexpr int TILE = 32; };` gives `Cfg::TILE`."""
    name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
    if name is None or body is None:
        return
    for field_node in body.children:
        if field_node.type != "field_declaration":
            continue
        qualifiers = {text(c) for c in field_node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        value = field_node.child_by_field_name("default_value")
        member = field_node.child_by_field_name("declarator")
        if "static" in qualifiers and qualifiers & {"const", "constexpr"} and value is not None and member is not None:
            found[f"{text(name)}::{text(member)}"] = Macro(f"{text(name)}::{text(member)}", None,
                                                        strip_comments(text(value)))


def shared_declarations(root: Node) -> list[Node]:
    """File-scope `__shared__` arrays: every kernel of the unit sees them as its own block's memory."""
    return [node for node in _file_scope(root) if node.type == "declaration"
            and any(text(c) == "__shared__" for c in node.children)]


def _enumerators(node: Node, found: dict[str, Macro]) -> None:
    body = node.child_by_field_name("body")
    previous: str | None = None
    for enumerator in body.children if body is not None else []:
        if enumerator.type != "enumerator":
            continue
        name, value = enumerator.child_by_field_name("name"), enumerator.child_by_field_name("value")
        expression = text(value) if value is not None else ("0" if previous is None else f"({previous}) + 1")
        found[text(name)] = Macro(text(name), None, expression)
        previous = text(name)


def type_bytes(type_name: str, default: int | None = None) -> int | None:
    cleaned = " ".join(w for w in type_name.replace("*", " ").split()
                       if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct"))
    return TYPE_BYTES.get(cleaned, default)


@dataclass(frozen=True)
class Param:
    name: str
    type_name: str  # base type without qualifiers or '*'
    is_pointer: bool
    is_const: bool = False
    is_restrict: bool = False
    index: int = 0
    depth: int = 0  # levels of indirection: 1 for `float*`, 2 for `const char* const*` (an array of pointers)


@dataclass
class FunctionDef:
    name: str
    node: Node
    body: Node | None
    params: list[Param]
    qualifiers: frozenset[str]  # __global__, __device__, __host__, __forceinline__
    template_params: list[str] = field(default_factory=list)
    launch_bounds: tuple[str, ...] = ()  # argument texts of __launch_bounds__
    template_defaults: dict[str, str] = field(default_factory=dict)  # `template <int TILE = 32>`: TILE -> "32"

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.qualifiers

    @property
    def line(self) -> int:
        return line_of(self.node)


def _param(node: Node, index: int) -> Param | None:
    declarator = node.child_by_field_name("declarator")
    type_node = node.child_by_field_name("type")
    if declarator is None:
        return None
    pointer = False
    restrict = False
    depth = 0
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator",
                                                         "array_declarator"):
        pointer = pointer or declarator.type in ("pointer_declarator", "array_declarator")
        depth += declarator.type in ("pointer_declarator", "array_declarator")
        restrict = restrict or any(text(c) in ("__restrict__", "__restrict") for c in declarator.children
                                   if c.type == "type_qualifier")
        declarator = declarator.child_by_field_name("declarator")
    qualifiers = [text(c) for c in node.children if c.type == "type_qualifier"]
    return Param(name=text(declarator), type_name=text(type_node), is_pointer=pointer,
                 is_const="const" in qualifiers, is_restrict=restrict or "__restrict__" in qualifiers, index=index,
                 depth=depth)


def _function(node: Node) -> FunctionDef | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    name_node = declarator.child_by_field_name("declarator")
    params_node = declarator.child_by_field_name("parameters")
    params = []
    for child in params_node.children if params_node else []:
        if child.type == "parameter_declaration" and (param := _param(child, len(params))):
            params.append(param)
    qualifiers = frozenset(c.type for c in node.children
                           if c.type in ("__global__", "__device__", "__host__", "__forceinline__", "__noinline__"))
    bounds: tuple[str, ...] = ()
    for child in node.children:
        if child.type == "launch_bounds":
            bounds = tuple(text(c) for c in child.children if c.type not in ("__launch_bounds__", "(", ")", ","))
    template_params: list[str] = []
    defaults: dict[str, str] = {}
    parent = node.parent
    if parent is not None and parent.type == "template_declaration":
        plist = parent.child_by_field_name("parameters")
        for child in plist.children if plist else []:
            inner = child.child_by_field_name("declarator") or child.child_by_field_name("name")
            if inner is not None:
                template_params.append(text(inner))
                default = child.child_by_field_name("default_value")
                if default is not None:
                    defaults[text(inner)] = text(default)
            elif child.type in ("type_parameter_declaration",):
                template_params.extend(text(c) for c in child.children if c.type == "type_identifier")
    name = text(name_node).split("::")[-1]
    return FunctionDef(name=name, node=node, body=node.child_by_field_name("body"), params=params,
                       qualifiers=qualifiers, template_params=template_params, launch_bounds=bounds,
                       template_defaults=defaults)


def functions(root: Node) -> list[FunctionDef]:
    """Every function definition, kernels and device helpers and host code alike."""
    found = []
    for node in walk(root):
        if node.type == "function_definition" and (fn := _function(node)):
            found.append(fn)
    return found


def kernels(root: Node) -> list[FunctionDef]:
    return [f for f in functions(root) if f.is_kernel]


def enclosing(node: Node, types: tuple[str, ...], stop: Node | None = None) -> Node | None:
    """The nearest ancestor of one of `types`, not looking above `stop`."""
    current = node.parent
    while current is not None and current != stop:
        if current.type in types:
            return current
        current = current.parent
    return None


def call_name(node: Node) -> str:
    """`atomicAdd` for `atomicAdd(...)`, `sync` for `block.sync()`, `reinterpret_cast` for its template call."""
    function = node.child_by_field_name("function")
    if function is None:
        return ""
    if function.type == "template_function":
        function = function.child_by_field_name("name")
    if function.type == "field_expression":
        function = function.child_by_field_name("field")
    if function.type == "qualified_identifier":
        return text(function).split("::")[-1]
    return text(function)
