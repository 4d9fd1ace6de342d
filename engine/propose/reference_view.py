"""The reference as a prompt shows it: the kernel and its entry point always, headers trimmed first, and
no machine's paths.

An imported C program's reference.c inlines its headers where the program includes them, so PolyBench's
`polybench.h` comes before the kernel and a plain cut at the prompt's limit ended inside a PAPI macro,
never reaching `kernel_trmm`. Here, when the reference is longer than the limit, the inlined headers are
left out first (largest first, each replaced by a line that names it and says so), then the compiler's
`#line` markers; only if that is not enough is the middle of the text left out, keeping the beginning and
the end, where the importer puts the kernel and the entry point. What was left out is said in the prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_REFERENCE_CHARS = 12000
INLINED = re.compile(r"^/\* (#\s*include\s*[<\"][^>\"]+[>\"]): inlined from .*\*/\s*$")
LINE_MARKER = re.compile(r'^\s*#\s*line\s+(\d+)\s+"([^"]*)"\s*$')
# An absolute path (two or more parts after a leading slash, not a division or a comment opener).
ABSOLUTE_PATH = re.compile(r"(?<![\w.)\]:/~])/(?:[A-Za-z0-9_.+\-]+/)+([A-Za-z0-9_.+\-]+)")


def without_machine_paths(text: str) -> str:
    """Each absolute path replaced by its last two parts (`utilities/polybench.h`): where a file lay on the
    machine that imported it says nothing to a model and leaks that machine's layout into datasets."""
    def short(match: re.Match) -> str:
        parts = match.group(0).rstrip("/").split("/")
        return "/".join(parts[-2:])

    return ABSOLUTE_PATH.sub(short, text)


@dataclass(frozen=True)
class ReferenceView:
    text: str
    left_out: tuple[str, ...] = ()  # what the prompt does not show, in words

    python: bool = False

    @property
    def note(self) -> str:
        """A comment closing the reference, saying what was left out ("" when nothing was)."""
        if not self.left_out:
            return ""
        words = ("Left out of this prompt to fit it: " + "; ".join(self.left_out)
                 + ". The kernel and its entry point are shown whole.")
        return f"\n# {words}\n" if self.python else f"\n/* {words} */\n"


def _header_blocks(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, last line, the #include) of each top-level inlined header: from its marker comment to
    the `#line` that resumes the file that included it."""
    blocks, stack = [], []
    for number, line in enumerate(lines):
        marker = INLINED.match(line)
        if marker:
            stack.append((number, marker.group(1)))
            continue
        directive = LINE_MARKER.match(line)
        if directive and stack and not INLINED.match(lines[number - 1]):
            start, include = stack.pop()
            if not stack:
                blocks.append((start, number, include))
    return blocks


def _trim_headers(text: str, limit: int) -> tuple[str, list[str]]:
    """Leave out inlined headers, the largest first, until the text fits or none is left."""
    lines, left_out = text.split("\n"), []
    while len("\n".join(lines)) > limit:
        blocks = _header_blocks(lines)
        if not blocks:
            break
        start, end, include = max(blocks, key=lambda block: block[1] - block[0])
        count = end - start + 1
        lines[start:end + 1] = [f"/* {include}: inlined here, left out of this prompt ({count} lines) */"]
        left_out.append(f"the inlined header {include} ({count} lines)")
    return "\n".join(lines), left_out


def prompt_reference(source: str, limit: int = MAX_REFERENCE_CHARS, python: bool = False) -> ReferenceView:
    """The reference for a prompt (see the module): whole where it fits, else trimmed as said."""
    text = without_machine_paths(source)
    if len(text) <= limit:
        return ReferenceView(text, python=python)
    text, left_out = _trim_headers(text, limit)
    if len(text) > limit:
        kept = [line for line in text.split("\n") if not LINE_MARKER.match(line)]
        if len(kept) < len(text.split("\n")):
            left_out.append("the compiler's #line markers")
            text = "\n".join(kept)
    if len(text) > limit:
        head = limit // 4
        tail = limit - head
        gap = len(text) - head - tail
        gap_words = f"… {gap:,} characters left out of this prompt …"
        text = text[:head] + (f"\n# {gap_words}\n" if python else f"\n/* {gap_words} */\n") + text[-tail:]
        left_out.append(f"{gap:,} characters from the middle of the text (the end, with the kernel and the "
                        "entry point, is whole)")
    return ReferenceView(text, tuple(left_out), python)
