"""A streamed chat completion read into one reply: the answer, the model's reasoning kept apart from it,
when the first token came, why it stopped and what it cost in tokens.

Reasoning arrives in two shapes: a separate delta field (`reasoning_content`, as DeepSeek and vLLM's
reasoning parsers send it, or `reasoning`), or `<think>…</think>` at the start of the content (models
served without a parser). Both end up in `reasoning`, never in the answer that is parsed for code.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

THINK = re.compile(r"^\s*<think>(.*?)(</think>|$)", re.S)
REASONING_FIELDS = ("reasoning_content", "reasoning")

# kind ("answer" | "reasoning"), the text so far of that kind
OnDelta = Callable[[str, str], None]


@dataclass
class StreamedReply:
    answer: str
    reasoning: str
    finish_reason: str | None
    first_token_s: float | None  # from the request to the first delta of either kind
    total_s: float
    tokens_in: int | None = None
    tokens_out: int | None = None


def split_think(content: str) -> tuple[str, str]:
    """(answer, reasoning) of a content that may open with a think block (an unclosed one is all reasoning)."""
    match = THINK.match(content)
    if not match:
        return content, ""
    return content[match.end():].lstrip("\n"), match.group(1).strip()


def _reasoning_delta(delta) -> str:
    for name in REASONING_FIELDS:
        value = getattr(delta, name, None)
        if value is None and getattr(delta, "model_extra", None):
            value = delta.model_extra.get(name)
        if value:
            return str(value)
    return ""


def read_stream(chunks: Iterable, started: float, on_delta: OnDelta | None = None) -> StreamedReply:
    """Accumulate the chunks of one completion; `on_delta` hears the growing answer and reasoning."""
    content, reasoning, finish, first = [], [], None, None
    tokens_in = tokens_out = None
    for chunk in chunks:
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            tokens_in, tokens_out = usage.prompt_tokens, usage.completion_tokens
        for choice in getattr(chunk, "choices", None) or []:
            delta = choice.delta
            thought, said = _reasoning_delta(delta), getattr(delta, "content", None) or ""
            if (thought or said) and first is None:
                first = time.perf_counter() - started
            if thought:
                reasoning.append(thought)
                if on_delta:
                    on_delta("reasoning", "".join(reasoning))
            if said:
                content.append(said)
                if on_delta:
                    on_delta("answer", "".join(content))
            finish = choice.finish_reason or finish
    answer, inline = split_think("".join(content))
    thought = "\n".join(t for t in ("".join(reasoning).strip(), inline) if t)
    return StreamedReply(answer, thought, finish, first, time.perf_counter() - started, tokens_in, tokens_out)
