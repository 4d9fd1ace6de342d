"""torch's own build of a load_inline extension, read from the `build.ninja` it writes.

Reading torch's file instead of recomputing its flags keeps every flag torch would pass (its defines,
include folders, `-std`, the arch list, the candidate's extra flags, the libraries it links) exactly
as the installed torch version chooses them; the fast build changes how the sources are compiled,
never with what.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

NAME_DEFINE = "-DTORCH_EXTENSION_NAME="
SUPPORTED_RULES = {"compile", "cuda_compile", "link"}


class UnsupportedBuild(ValueError):
    """A build file of a shape the fast build does not take (a SYCL or device-link build, several CUDA files)."""


@dataclass(frozen=True)
class TorchBuild:
    """What torch's ninja file says: the tools, the flag sets, the two sources and the library."""

    folder: Path
    cxx: tuple[str, ...]
    nvcc: tuple[str, ...]
    cflags: tuple[str, ...]  # main.cpp's
    cuda_cflags: tuple[str, ...]  # cuda.cu's, as given to nvcc
    ldflags: tuple[str, ...]
    cpp_source: Path
    cuda_source: Path | None
    library: Path  # <name>.so, where torch imports it from

    @property
    def name(self) -> str:
        return self.library.name.removesuffix(".so")

    def host_flags(self) -> tuple[str, ...]:
        """main.cpp's flags without the extension's name: the part a shared precompiled header must match."""
        return tuple(f for f in self.cflags if not f.startswith(NAME_DEFINE))


def _unescape(path: str) -> str:
    return path.replace("$ ", " ").replace("$:", ":").replace("$$", "$")


def _split_paths(text: str) -> list[str]:
    parts, current, i = [], "", 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            current += text[i:i + 2]
            i += 2
            continue
        if text[i] == " ":
            if current:
                parts.append(_unescape(current))
            current = ""
        else:
            current += text[i]
        i += 1
    if current:
        parts.append(_unescape(current))
    return parts


def parse_build_file(text: str, folder: Path) -> TorchBuild:
    """The TorchBuild of a torch-written `build.ninja` (torch's subset of ninja: top-level variables,
    three rules, one build line per object and one link line)."""
    variables: dict[str, str] = {}
    builds: list[tuple[str, str, list[str]]] = []
    in_rule = False
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw.startswith((" ", "\t")):
            if not in_rule:
                raise UnsupportedBuild(f"unexpected indented line: {raw.strip()}")
            continue
        in_rule = raw.startswith("rule ")
        if in_rule:
            if raw.split()[1] not in SUPPORTED_RULES:
                raise UnsupportedBuild(f"rule {raw.split()[1]} is not one the fast build runs")
        elif raw.startswith("build "):
            outputs, _, rest = raw[len("build "):].partition(":")
            rule, *inputs = _split_paths(rest.strip())
            builds.append((_unescape(outputs.strip()), rule, inputs))
        elif raw.startswith("default "):
            continue
        elif "=" in raw:
            key, _, value = raw.partition("=")
            variables[key.strip()] = value.strip()
    sources = {rule: inputs for _, rule, inputs in builds}
    links = [(out, inputs) for out, rule, inputs in builds if rule == "link"]
    if len(links) != 1 or "compile" not in sources or len(builds) > 3:
        raise UnsupportedBuild("not a load_inline build (main.cpp, at most one CUDA file, one library)")
    if variables.get("post_cflags") or variables.get("cuda_post_cflags") or variables.get("cuda_dlink_post_cflags"):
        raise UnsupportedBuild("post-flags or a device link step")
    cpp = sources["compile"]
    cuda = sources.get("cuda_compile")
    return TorchBuild(
        folder=folder, cxx=tuple(shlex.split(variables.get("cxx", "c++"))),
        nvcc=tuple(shlex.split(variables.get("nvcc", "nvcc"))),
        cflags=tuple(shlex.split(variables.get("cflags", ""))),
        cuda_cflags=tuple(shlex.split(variables.get("cuda_cflags", ""))),
        ldflags=tuple(shlex.split(variables.get("ldflags", ""))),
        cpp_source=Path(cpp[0]), cuda_source=Path(cuda[0]) if cuda else None, library=folder / links[0][0])


def read_build(folder: Path) -> TorchBuild:
    """The TorchBuild of the extension torch is about to build in `folder`."""
    folder = Path(folder)
    return parse_build_file((folder / "build.ninja").read_text(), folder)
