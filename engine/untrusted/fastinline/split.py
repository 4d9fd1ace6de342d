"""A load_inline CUDA file cut in two: a device unit that nvcc compiles without torch's headers and a
host unit that g++ compiles with torch's precompiled header.

Almost all of a load_inline build is spent parsing torch's headers three times over (nvcc's cudafe++
and cicc, then the host compiler), while the kernels need none of them. So the kernels, device
functions, device variables and the types, macros and non-torch includes they may use go to the device
unit, byte for byte (nvcc compiles them with torch's own flags: the same device code); the host
functions go to the host unit, where each `kernel<<<grid, block, shmem, stream>>>(args)` becomes a call
of a launcher the device unit defines with the kernel's own parameters (the same conversions of the
same arguments, the launch itself compiled by nvcc). A templated kernel gets a templated launcher,
instantiated in the device unit for exactly the types the host object asks for (`instantiations`).
`#line` directives keep every diagnostic pointing at torch's `cuda.cu`. Whatever the cut cannot take
raises `CannotSplit` with the reason, and the caller builds the candidate torch's way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

LAUNCHER = "__rf_launch_"
SYMBOL = "__rf_symbol_"
TORCH_TOKENS = re.compile(r"\b(torch|at|c10|pybind11|py)::|\bTORCH_|\bPYBIND11_|\bAT_(DISPATCH|ASSERT)|\bC10_")
TORCH_HEADER = re.compile(r"^(torch|ATen|c10|pybind11|caffe2)/|^Python\.h$")
DEVICE_HEADER = re.compile(r"^(cooperative_groups|mma\.h|cuda_pipeline|cuda_awbarrier|sm_\d+_|crt/|cub/|cute/|"
                           r"cutlass/|cuda/(pipeline|barrier|annotated_ptr|ptx))")
# torch's scalar types that kernels name (AT_DISPATCH_*_AND_HALF): small headers the device unit may include.
SCALAR_TYPES = {"Half": "c10/util/Half.h", "BFloat16": "c10/util/BFloat16.h", "complex": "c10/util/complex.h"}
SCALAR_TOKEN = re.compile(r"\b(?:at|c10)::(Half|BFloat16|complex)\b")
# Standard headers torch/types.h includes, which kernels use without including them (int64_t, std::min).
DEVICE_PRELUDE = "".join(f"#include <{h}>\n" for h in ("cstdint", "cstddef", "climits", "cmath", "limits", "algorithm",
                                                       "type_traits", "utility", "cassert", "cstdio"))
CONFIG = ("dim3 __rf_grid", "dim3 __rf_block", "size_t __rf_shmem", "cudaStream_t __rf_stream")


class CannotSplit(ValueError):
    """The CUDA file has something the cut does not handle; the reason says what."""


@dataclass(frozen=True)
class Kernel:
    name: str
    template: str | None  # the template parameter list, `<typename T, int N>`, of a templated kernel
    template_args: str  # the parameter names as arguments, `<T, N>`, or ""
    params: tuple[str, ...]  # each parameter's declaration, named
    names: tuple[str, ...]

    def launcher(self) -> str:
        head = f"template {self.template}\n" if self.template else ""
        return f"{head}void {LAUNCHER}{self.name}({', '.join((*CONFIG, *self.params))})"


@dataclass(frozen=True)
class SplitSource:
    """The two units. `device` still lacks the explicit instantiations of templated launchers
    (`instantiations` adds them once the host object says which ones it calls)."""

    device: str
    host: str
    kernels: tuple[Kernel, ...]
    templated: bool
    device_headers: tuple[str, ...] = field(default=())

    def with_instantiations(self, demangled: list[str]) -> str:
        """The device unit with `template void __rf_launch_k<float>(…);` for each launcher symbol."""
        lines, headers = [], []
        for symbol in demangled:
            signature = symbol.removeprefix("void ").strip()
            if "{lambda" in signature or "(anonymous namespace)" in signature or "{unnamed" in signature:
                raise CannotSplit(f"a launcher instantiated on an unnamed type: {signature}")
            headers += [SCALAR_TYPES[t] for t in SCALAR_TOKEN.findall(signature)]
            lines.append(f"template void {signature};")
        missing = [h for h in dict.fromkeys(headers) if h not in self.device_headers]
        prelude = "".join(f"#include <{h}>\n" for h in missing)
        return prelude + self.device + "\n#line 1 \"<launchers>\"\n" + "\n".join(lines) + "\n"


@functools.cache
def _parser():
    import tree_sitter_cuda
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_cuda.language()))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _head_words(node) -> set[str]:
    """The specifier words before a function's or declaration's declarator (`__global__`, `static`, …)."""
    words = set()
    for child in node.children:
        if child.type in ("function_declarator", "compound_statement", "init_declarator", "identifier",
                          "array_declarator", "pointer_declarator", "reference_declarator"):
            break
        words.update(re.findall(r"[A-Za-z_]\w*", _text(child)))
    return words


def _function_declarator(node):
    """The function_declarator of a function definition or prototype, else None."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator")
    return declarator if declarator is not None and declarator.type == "function_declarator" else None


def _declared_name(declarator) -> str | None:
    while declarator is not None:
        if declarator.type in ("identifier", "field_identifier"):
            return _text(declarator)
        if declarator.type == "qualified_identifier":
            return None
        declarator = declarator.child_by_field_name("declarator")
    return None


def _template_args(parameters) -> str:
    """`<typename T, int N = 4, typename... Ts>` → `<T, N, Ts...>`."""
    names = []
    for param in parameters.named_children:
        kind = param.type
        if kind == "comment":
            continue
        if kind in ("parameter_declaration", "optional_parameter_declaration"):
            name = _declared_name(param.child_by_field_name("declarator"))
        elif kind == "optional_type_parameter_declaration":
            name = _text(param.child_by_field_name("name"))
        elif kind in ("type_parameter_declaration", "variadic_type_parameter_declaration"):
            name = next((_text(c) for c in reversed(param.named_children) if c.type == "type_identifier"), None)
        elif kind == "variadic_parameter_declaration":
            name = next((_text(c) for c in _walk(param) if c.type == "identifier"), None)
        else:
            name = None
        if name is None:
            raise CannotSplit(f"a template parameter the cut cannot name: {_text(param)}")
        names.append(f"{name}..." if kind.startswith("variadic") else name)
    return f"<{', '.join(names)}>"


def _kernel(node, template) -> Kernel:
    declarator = _function_declarator(node)
    name = _declared_name(declarator.child_by_field_name("declarator"))
    if name is None:
        raise CannotSplit(f"a kernel with a qualified name: {_text(declarator)[:80]}")
    params, names = [], []
    for i, param in enumerate(declarator.child_by_field_name("parameters").named_children):
        if param.type == "comment":
            continue
        if param.type == "variadic_parameter" or _text(param) == "...":
            raise CannotSplit(f"kernel {name} takes variadic arguments")
        text = re.sub(r"\s*=.*$", "", _text(param), flags=re.S) if param.type == "optional_parameter_declaration" \
            else _text(param)
        param_name = _declared_name(param.child_by_field_name("declarator"))
        if _text(param).strip() == "void":
            continue
        if param_name is None:
            if re.search(r"[(\[]", text):
                raise CannotSplit(f"kernel {name} has an unnamed parameter of a complex type")
            param_name = f"__rf_arg{i}"
            text = f"{text} {param_name}"
        params.append(text)
        names.append(param_name)
    if template is not None:
        return Kernel(name, _text(template.child_by_field_name("parameters")),
                      _template_args(template.child_by_field_name("parameters")), tuple(params), tuple(names))
    return Kernel(name, None, "", tuple(params), tuple(names))


class _Cut:
    """Walks the top-level items once, sending each to the device unit, the host unit or both."""

    def __init__(self, source: bytes, path: str) -> None:
        self.source, self.path = source, path
        self.device: list[str] = []
        self.host: list[str] = []
        self.kernels: dict[str, list[Kernel]] = {}
        self.declared: set[tuple[str, tuple[str, ...]]] = set()  # launcher prototypes already in the host unit
        self.device_variables: dict[str, str] = {}  # name → typedef text for the host unit's reference
        self.host_items: list[tuple[object, int]] = []  # (node, index in self.host) to rewrite afterwards
        self.scalar_headers: list[str] = []

    def _line(self, node) -> str:
        return f'#line {node.start_point[0] + 1} "{self.path}"\n'

    def emit(self, node, where: str, text: str | None = None) -> None:
        chunk = self._line(node) + (text if text is not None else _text(node)) + "\n"
        if where in ("device", "both"):
            self._check_device(node, chunk)
            self.device.append(chunk)
        if where in ("host", "both"):
            self.host.append(chunk)
            self.host_items.append((node, len(self.host) - 1))

    def _check_device(self, node, chunk: str) -> None:
        stripped = SCALAR_TOKEN.sub("", chunk)
        self.scalar_headers += [SCALAR_TYPES[t] for t in SCALAR_TOKEN.findall(chunk)]
        if TORCH_TOKENS.search(stripped):
            raise CannotSplit(f"device code at line {node.start_point[0] + 1} uses torch: "
                              f"{TORCH_TOKENS.search(stripped).group(0)}")

    def raw(self, text: str) -> None:
        self.device.append(text)
        self.host.append(text)

    def items(self, parent) -> None:
        for node in parent.children:
            if node.type == ";":
                self.raw(";\n")  # a struct's closing `;` is a node of its own
            elif node.is_named:
                self.item(node)

    def item(self, node) -> None:  # noqa: C901 - one branch per kind of top-level item
        kind = node.type
        if kind in ("comment",):
            return
        if kind == "ERROR" or node.has_error:
            raise CannotSplit(f"syntax the cut cannot read at line {node.start_point[0] + 1}")
        if kind == "preproc_include":
            header = _text(node.child_by_field_name("path")).strip('<>"')
            if TORCH_HEADER.search(header):
                self.emit(node, "host")
            elif DEVICE_HEADER.search(header):
                self.emit(node, "device")
            else:
                self.emit(node, "both")
        elif kind in ("preproc_def", "preproc_function_def", "preproc_call"):
            self.emit(node, "host" if TORCH_TOKENS.search(_text(node)) else "both")
        elif kind.startswith("preproc_"):
            if any(n.type in ("function_definition", "template_declaration") for n in _walk(node)):
                raise CannotSplit(f"functions inside a preprocessor conditional at line {node.start_point[0] + 1}")
            self.emit(node, "host" if TORCH_TOKENS.search(_text(node)) or self._torch_include(node) else "both")
        elif kind == "namespace_definition":
            name = node.child_by_field_name("name")
            if name is None:
                raise CannotSplit(f"an anonymous namespace at line {node.start_point[0] + 1}")
            self.raw(f"namespace {_text(name)} {{\n")
            self.items(node.child_by_field_name("body"))
            self.raw("}\n")
        elif kind == "linkage_specification":
            body = node.child_by_field_name("body")
            self.raw(f"extern {_text(node.child_by_field_name('value'))} {{\n")
            if body.type == "declaration_list":
                self.items(body)
            else:
                self.item(body)
            self.raw("}\n")
        elif kind == "template_declaration":
            inner = next((c for c in node.named_children if c.type not in ("template_parameter_list", "comment")),
                         None)
            if inner is not None and inner.type in ("function_definition", "declaration") and \
                    _function_declarator(inner) is not None:
                self.function(node, inner, template=node)
            else:
                self.emit(node, "host" if TORCH_TOKENS.search(_text(node)) else "both")
        elif kind == "function_definition":
            self.function(node, node, template=None)
        elif kind == "declaration":
            if _function_declarator(node) is not None:
                self.function(node, node, template=None)
            else:
                self.variable(node)
        elif kind in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier", "type_definition",
                      "alias_declaration", "static_assert_declaration", "using_declaration",
                      "namespace_alias_definition", "concept_definition"):
            torchy = TORCH_TOKENS.search(_text(node)) or re.search(r"\bnamespace\s+(torch|at|c10|pybind11|py)\b",
                                                                   _text(node))
            self.emit(node, "host" if torchy else "both")
        elif kind == "template_instantiation":
            self.emit(node, "device" if re.search(r"\b__(global|device)__\b", _text(node)) else "host")
        elif kind == "expression_statement" and _text(node).strip() == ";":
            self.raw(";\n")
        else:
            raise CannotSplit(f"a top-level {kind} at line {node.start_point[0] + 1}")

    def _torch_include(self, node) -> bool:
        return any(n.type == "preproc_include" and
                   TORCH_HEADER.search(_text(n.child_by_field_name("path")).strip('<>"')) for n in _walk(node))

    def function(self, node, function, template) -> None:
        words = _head_words(function)
        if "__global__" in words:
            kernel = _kernel(function, template)
            self.kernels.setdefault(kernel.name, []).append(kernel)
            key = (kernel.name, kernel.params)
            if function.type == "function_definition":
                self.emit(node, "device")
                self.emit(node, "device", kernel.launcher() + " {\n  " + kernel.name + kernel.template_args +
                          "<<<__rf_grid, __rf_block, __rf_shmem, __rf_stream>>>(" + ", ".join(kernel.names) + ");\n}")
            else:
                self.emit(node, "device")
            if key not in self.declared:
                self.declared.add(key)
                self.host.append(self._line(node) + kernel.launcher() + ";\n")
        elif "__device__" in words and "__host__" not in words:
            self.emit(node, "device")
        elif "__host__" in words and "__device__" in words:
            shared = template is not None or words & {"inline", "__forceinline__", "constexpr", "static"} or \
                function.type != "function_definition"
            if shared:
                self.emit(node, "both")
            else:
                self.emit(node, "device")
                body = function.child_by_field_name("body")
                prototype = self.source[node.start_byte:body.start_byte].decode("utf-8", "replace").rstrip() + ";"
                self.emit(node, "host", prototype)
        elif "constexpr" in words and not TORCH_TOKENS.search(_text(node)):
            self.emit(node, "both")
        else:
            if re.search(r"\b(__device__|__global__|__shared__)\b", _text(node)):
                raise CannotSplit(f"device code inside host function at line {node.start_point[0] + 1}")
            self.emit(node, "host")

    def variable(self, node) -> None:
        words = _head_words(node)
        text = _text(node)
        if words & {"__constant__", "__device__", "__managed__"}:
            self.emit(node, "device")
            for declarator in node.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                name = _declared_name(target)
                if name is not None:
                    kept = [_text(c) for c in node.children if c.type not in ("init_declarator", "identifier",
                            "array_declarator", "pointer_declarator", ",", ";")
                            and _text(c) not in ("__constant__", "__device__", "__managed__", "static", "extern")]
                    renamed = self.source[target.start_byte:target.end_byte].decode()
                    renamed = re.sub(rf"\b{re.escape(name)}\b", f"__rf_type_{name}", renamed, count=1)
                    self.device_variables[name] = f"typedef {' '.join(kept)} {renamed};"
                    self.device.append(f"void* {SYMBOL}{name}() {{ return (void*)&{name}; }}\n")
        elif "__shared__" in words:
            self.emit(node, "device")
        elif TORCH_TOKENS.search(text):
            self.emit(node, "host")
        elif words & {"constexpr", "const"}:
            self.emit(node, "both")
        else:
            self.emit(node, "host")


def _launch_replacement(call, kernels: dict[str, list[Kernel]]) -> str:
    callee, config, arguments = call.children[0], call.children[1], call.children[2]
    target = callee
    prefix = ""
    while target.type == "qualified_identifier":
        target = target.child_by_field_name("name")
    template_args = ""
    if target.type == "template_function":
        template_args = _text(target.child_by_field_name("arguments"))
        target = target.child_by_field_name("name")
    name = _text(target)
    prefix = callee.text[:target.start_byte - callee.start_byte].decode()
    if name not in kernels:
        raise CannotSplit(f"launches {name}, which is not a kernel defined in the CUDA source")
    values = [_text(c) for c in config.named_children if c.type != "comment"]
    if not 2 <= len(values) <= 4:
        raise CannotSplit(f"a launch of {name} with {len(values)} configuration values")
    values += ["0"] * (4 - len(values))
    args = [_text(c) for c in arguments.named_children if c.type != "comment"]
    return f"{prefix}{LAUNCHER}{name}{template_args}({', '.join(values + args)})"


def _rewrite_host(cut: _Cut) -> None:
    """Launches → launcher calls; device variables → references to the device unit's objects."""
    names = set(cut.kernels)
    used_variables: set[str] = set()
    for node, index in cut.host_items:
        edits: list[tuple[int, int, str]] = []
        for child in _walk(node):
            if child.type == "call_expression" and len(child.children) == 3 and \
                    child.children[1].type == "kernel_call_syntax":
                edits.append((child.start_byte, child.end_byte, _launch_replacement(child, cut.kernels)))
        launch_spans = [(s, e) for s, e, _ in edits]
        for child in _walk(node):
            if child.type == "identifier" and _text(child) in names and \
                    not any(s <= child.start_byte < e for s, e in launch_spans):
                raise CannotSplit(f"uses kernel {_text(child)} other than by launching it "
                                  f"(line {child.start_point[0] + 1})")
            if child.type == "identifier" and _text(child) in cut.device_variables:
                used_variables.add(_text(child))
        if not edits:
            continue
        text = bytearray(cut.source[node.start_byte:node.end_byte])
        for start, end, replacement in sorted(edits, reverse=True):
            text[start - node.start_byte:end - node.start_byte] = replacement.encode()
        chunk = cut.host[index]
        cut.host[index] = chunk[:chunk.index("\n") + 1] + text.decode("utf-8", "replace") + "\n"
    if used_variables:
        bridge = "".join(f"{cut.device_variables[n]}\nvoid* {SYMBOL}{n}();\nstatic __rf_type_{n}& {n} = "
                         f"*static_cast<__rf_type_{n}*>({SYMBOL}{n}());\n" for n in sorted(used_variables))
        first_use = min(i for n, i in cut.host_items if any(
            c.type == "identifier" and _text(c) in used_variables for c in _walk(n)))
        cut.host.insert(first_use, bridge)


def split_cuda(source: str, path: str = "cuda.cu") -> SplitSource:
    """The device and host units of a load_inline CUDA file (torch's `cuda.cu`, its three includes first)."""
    data = source.encode()
    tree = _parser().parse(data)
    cut = _Cut(data, path)
    cut.items(tree.root_node)
    if not cut.kernels:
        raise CannotSplit("no kernel in the CUDA source")
    _rewrite_host(cut)
    host = "".join(cut.host)
    if "<<<" in host:
        raise CannotSplit("a launch the cut cannot rewrite (inside a macro?)")
    headers = tuple(dict.fromkeys(cut.scalar_headers))
    device = DEVICE_PRELUDE + "".join(f"#include <{h}>\n" for h in headers) + "".join(cut.device)
    kernels = tuple(k for group in cut.kernels.values() for k in group)
    return SplitSource(device, host, kernels, any(k.template for k in kernels), headers)
