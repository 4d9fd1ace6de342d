"""What every proposer takes (the parent, its evaluation and feedback, the human's hint) and
returns (candidate source plus the record of how it was made)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from engine.problems.model import Problem

# The signature of a proposal from a proposer with nothing left that the run has not tried: the run
# stores no candidate for it, and ends once every sample of a step says so.
EXHAUSTED = "exhausted"


@dataclass(frozen=True)
class ParentView:
    """The candidate being refined, as a proposer may see it (no hidden configurations)."""

    candidate_id: int
    source: str
    language: str
    verdict: str
    message: str = ""
    log: str = ""
    speedup: float | None = None
    feedback: str = ""  # the ranked diagnoses sent onwards
    findings: tuple[str, ...] = ()  # names of the feedback tools that fired
    bottleneck: str | None = None
    proposal: dict = field(default_factory=dict)  # how the parent itself was made


@dataclass(frozen=True)
class ProposalContext:
    problem: Problem
    parent: ParentView | None
    step: int
    sample: int
    seed: int
    gpu: bool  # whether candidates will execute (else compile and analyse only)
    hint: str | None = None
    tried: frozenset[tuple[int | None, str]] = frozenset()
    history: tuple[tuple[str, str], ...] = ()  # conversation mode: (asked, replied) from the root to the parent
    templates: dict[str, str] | None = None  # the run's own prompt wording by template name (None: shipped)

    @property
    def target(self) -> str:
        """What this run can run: C on the CPU for a C problem without a GPU, else CUDA (a PyTorch problem
        has no CPU form; without a GPU its candidates are only compiled and analysed)."""
        return "c-cpu" if self.problem.kind == "c" and not self.gpu else "cuda"


@dataclass
class Proposal:
    source: str
    language: str  # python | cuda | c
    origin: str  # llm | library | human
    signature: str  # what distinguishes this proposal for the search memory
    strategy: str | None = None
    meta: dict = field(default_factory=dict)
    prompt: str | None = None
    reply: str | None = None
    prompt_template: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    error: str | None = None  # set when no candidate could be made (no code, endpoint down)
    reasoning: str | None = None  # a reasoning model's thinking, kept apart from the reply (never parsed as code)

    @property
    def exhausted(self) -> bool:
        return self.signature == EXHAUSTED


class Proposer(Protocol):
    name: str

    def propose(self, context: ProposalContext) -> Proposal: ...
