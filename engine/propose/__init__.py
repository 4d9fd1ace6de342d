"""Proposers: `library` (offline default, climbs the shipped implementations and tunables),
`llm` (any OpenAI-compatible endpoint) and `human` (pasted code). `make_proposer` picks one; `library_refusal`
says where the library proposer has nothing to propose (an imported problem)."""

from __future__ import annotations

from engine.propose.base import EXHAUSTED, ParentView, Proposal, ProposalContext, Proposer
from engine.propose.human import human_proposal
from engine.propose.library import LibraryProposer, library_refusal


def make_proposer(name: str, llm_options: dict | None = None) -> Proposer:
    if name == "library":
        return LibraryProposer()
    if name == "llm":
        from engine.propose.llm import LLMConfig, LLMProposer

        return LLMProposer(LLMConfig(**(llm_options or {})))
    raise ValueError(f"unknown proposer {name!r}: use library or llm (human candidates are pasted in a run)")


__all__ = ["EXHAUSTED", "LibraryProposer", "ParentView", "Proposal", "ProposalContext", "Proposer", "human_proposal",
           "library_refusal", "make_proposer"]
