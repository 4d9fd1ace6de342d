"""The samples of one step, taken as their replies arrive.

A step asks for one proposal per planned parent. An LLM proposer's requests go out together (at most its
endpoint's `concurrency` at once) and each reply is handed on the moment it is in, so that its build starts
while slower replies are still coming. What the step stores does not depend on the order of arrival: the
samples in request order, leaving out a sample whose proposer had nothing new and one that repeats the code
of a sibling asked before it. A repeat is evaluated once: the copy that arrived first is built, and its
outcome is stored with the copy first in request order (the same code gets the same judgement).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TypeVar

from engine.propose.base import Proposal

Context = TypeVar("Context")


def replies_as_they_arrive(ask: Callable[[Context], Proposal], contexts: Sequence[Context], width: int,
                           name: str = "ask") -> Iterator[tuple[int, Proposal]]:
    """(index of its context, proposal) for every context, in the order the replies arrive, with at most
    `width` requests in flight. At width 1 each is asked only once the one before it was taken. Closed
    early (a stop, Ctrl-C), it sends no request not yet sent and returns once those in flight have ended."""
    if width <= 1:
        for index, context in enumerate(contexts):
            yield index, ask(context)
        return
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix=name)
    try:
        asked = {pool.submit(ask, context): index for index, context in enumerate(contexts)}
        for reply in as_completed(asked):
            yield asked[reply], reply.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class Sample:
    """One sample the step stores: its request index, parent and proposal, and the index of the copy whose
    evaluation it carries (its own, unless a repeat of its code arrived before it)."""

    index: int
    parent: int | None
    proposal: Proposal
    evaluated: int


@dataclass
class StepSamples:
    parents: list[int | None]  # one per request, in request order
    arrived: dict[int, Proposal] = field(default_factory=dict)
    evaluated: dict[str, int] = field(default_factory=dict)  # signature of code → the index whose copy is evaluated

    def to_evaluate(self, replies: Iterable[tuple[int, Proposal]]) -> Iterator[tuple[int, Proposal]]:
        """The replies worth evaluating, passed on as they arrive: not one whose proposer had nothing new,
        and one copy of each code (failed replies, which have none, all pass: each is stored with its error)."""
        for index, proposal in replies:
            self.arrived[index] = proposal
            if proposal.exhausted or (proposal.source and proposal.signature in self.evaluated):
                continue
            if proposal.source:
                self.evaluated[proposal.signature] = index
            yield index, proposal

    def planned(self) -> list[Sample]:
        """What the step stores, in request order, as if every reply had come at once."""
        kept, seen = [], set()
        for index in sorted(self.arrived):
            proposal = self.arrived[index]
            if proposal.exhausted or (proposal.source and proposal.signature in seen):
                continue
            seen.add(proposal.signature)
            copy = self.evaluated.get(proposal.signature, index) if proposal.source else index
            kept.append(Sample(index, self.parents[index], proposal, copy))
        return kept
