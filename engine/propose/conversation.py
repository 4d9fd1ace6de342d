"""Conversation mode: each round continues the conversation of its path in the search tree (the task,
then for every earlier round the model's reply and the verdict and diagnosis it got), instead of a fresh
single-turn prompt. A context budget keeps the task and the newest rounds and leaves out the oldest
middle rounds, saying how many, so a long run never overflows the model's window."""

from __future__ import annotations

from dataclasses import dataclass

Turn = tuple[str, str]  # (what was asked, what the model replied)


@dataclass(frozen=True)
class Conversation:
    messages: list[dict]
    left_out: int  # earlier rounds not sent, to fit the budget


def conversation(system: str, history: tuple[Turn, ...], ask: str, budget_chars: int) -> Conversation:
    """The messages for the next round: system, the first turn (the task), as many of the newest turns as
    fit in `budget_chars`, and the new question."""
    def size(turns: list[Turn]) -> int:
        return sum(len(u) + len(a) for u, a in turns)

    if not history:
        return Conversation([{"role": "system", "content": system}, {"role": "user", "content": ask}], 0)
    first, rest = history[0], list(history[1:])
    room = budget_chars - len(system) - len(ask) - size([first])
    kept: list[Turn] = []
    for turn in reversed(rest):
        if size(kept) + len(turn[0]) + len(turn[1]) > room:
            break
        kept.insert(0, turn)
    left_out = len(rest) - len(kept)
    messages = [{"role": "system", "content": system}]
    for index, (user, assistant) in enumerate([first, *kept]):
        if index == 1 and left_out:
            user = f"({left_out} earlier round(s) left out to fit the context.)\n\n{user}"
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    next_ask = ask if kept or not left_out else f"({left_out} earlier round(s) left out to fit the context.)\n\n{ask}"
    messages.append({"role": "user", "content": next_ask})
    return Conversation(messages, left_out)
