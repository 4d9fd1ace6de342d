"""Sizes and field offsets of the structs a CUDA file defines, so accesses through them have the
right byte distances.

An array of structs read one field per thread puts neighbouring lanes `sizeof(struct)` bytes apart,
not 4: the access model needs the struct's size (C layout: each field at a multiple of its own
alignment, the size rounded up to the largest alignment) and each field's offset and width. Pointer
members are 8 bytes, so a struct passed by value that carries device pointers (`job.data`) can be
followed too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.analysis.source.cuda_ast import Node, text, type_bytes, walk

POINTER_BYTES = 8
_COMPLEX = re.compile(r"^(?:[\w:]*::)?complex\s*<\s*(.+?)\s*>$")
_NAMED_COMPLEX = {"cuComplex": 8, "cuFloatComplex": 8, "cuDoubleComplex": 16, "c10::complex<float>": 8,
                  "c10::complex<double>": 16}
# vector types are aligned to their size (float3/int3 to their 4-byte components)
_ALIGN_OVERRIDE = {"float3": 4, "int3": 4}


@dataclass(frozen=True)
class Member:
    """One field of a struct."""

    name: str
    offset: int
    bytes: int  # of one element (the pointer itself for a pointer member)
    count: int  # array members: their extent; 1 otherwise
    type_name: str
    is_pointer: bool


@dataclass(frozen=True)
class Layout:
    """A struct's size, alignment and fields."""

    name: str
    size: int
    align: int
    members: dict[str, Member] = field(default_factory=dict)


def _clean(type_name: str) -> str:
    return " ".join(w for w in type_name.replace("*", " ").split()
                    if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class"))


def scalar_bytes(type_name: str, layouts: dict[str, Layout] | None = None) -> int | None:
    """Bytes of a built-in, complex or struct type; None when unknown. `complex<float>` (any namespace)
    is two floats, `cuDoubleComplex` two doubles."""
    cleaned = _clean(type_name)
    known = type_bytes(cleaned) or _NAMED_COMPLEX.get(cleaned.replace(" ", ""))
    if known:
        return known
    match = _COMPLEX.match(cleaned.replace(" ", "") if "<" in cleaned else cleaned)
    if match:
        inner = scalar_bytes(match.group(1), layouts)
        return 2 * inner if inner else None
    if layouts and cleaned.split("::")[-1] in layouts:
        return layouts[cleaned.split("::")[-1]].size
    return None


def _align(type_name: str, size: int, layouts: dict[str, Layout]) -> int:
    cleaned = _clean(type_name)
    if cleaned in _ALIGN_OVERRIDE:
        return _ALIGN_OVERRIDE[cleaned]
    if cleaned.split("::")[-1] in layouts:
        return layouts[cleaned.split("::")[-1]].align
    match = _COMPLEX.match(cleaned.replace(" ", ""))
    if match or cleaned in _NAMED_COMPLEX:
        return size  # thrust/cuda::std complex is aligned to its full size (8 or 16 bytes)
    return max(1, min(size, 16))


def _declarators(node: Node) -> list[tuple[str, bool, list[str]]]:
    """(name, is pointer, array extents) of each declarator of a field declaration."""
    found = []
    for declarator in node.children_by_field_name("declarator"):
        pointer, extents = False, []
        current = declarator
        while current is not None and current.type in ("pointer_declarator", "array_declarator"):
            if current.type == "pointer_declarator":
                pointer = True
            else:
                size = current.child_by_field_name("size")
                extents.append(text(size) if size is not None else "")
            current = current.child_by_field_name("declarator")
        if current is not None:
            found.append((text(current), pointer, extents))
    return found


def _layout(name: str, body: Node, layouts: dict[str, Layout], constants: dict[str, int]) -> Layout | None:
    offset, largest, members = 0, 1, {}
    for child in body.children:
        if child.type != "field_declaration":
            continue
        qualifiers = {text(c) for c in child.children if c.type in ("storage_class_specifier", "type_qualifier")}
        if "static" in qualifiers:
            continue
        type_name = text(child.child_by_field_name("type"))
        for member, pointer, extents in _declarators(child):
            size = POINTER_BYTES if pointer else scalar_bytes(type_name, layouts)
            if size is None:
                return None  # a member of unknown size: the struct's size is not known either
            count = 1
            for extent in extents:
                value = constants.get(extent) if not extent.isdigit() else int(extent)
                if value is None:
                    return None
                count *= value
            align = POINTER_BYTES if pointer else _align(type_name, size, layouts)
            offset = -(-offset // align) * align
            members[member] = Member(member, offset, size, count, _clean(type_name), pointer)
            offset += size * count
            largest = max(largest, align)
    if not members:
        return None
    return Layout(name, -(-offset // largest) * largest, largest, members)


def struct_layouts(root: Node, constants: dict[str, int] | None = None) -> dict[str, Layout]:
    """Every struct or class with a body whose members all have known sizes, by name (and by its
    `typedef` name); a struct used as a member must be defined first, as C requires."""
    layouts: dict[str, Layout] = {}
    for node in walk(root):
        if node.type not in ("struct_specifier", "class_specifier"):
            continue
        body = node.child_by_field_name("body")
        if body is None:
            continue
        name_node = node.child_by_field_name("name")
        names = [text(name_node)] if name_node is not None else []
        parent = node.parent
        if parent is not None and parent.type == "type_definition":
            names += [text(d) for d in parent.children_by_field_name("declarator")]
        if not names:
            continue
        layout = _layout(names[0], body, layouts, constants or {})
        if layout is not None:
            for name in names:
                layouts[name] = layout
    return layouts
