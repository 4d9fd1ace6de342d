"""Failures of ours or of the LLM endpoint are not the model's: a step whose endpoint failed earns no reward
and no diagnosis of code that does not exist; a reply without code (the model's own answer) keeps its penalty."""

from __future__ import annotations

from engine.problems import get_problem
from engine.propose.base import Proposal
from engine.reward.score import FAILURE_REWARD
from engine.runs.pipeline import outcome_of
from engine.schema.verdict import EvaluationResult, Verdict
from engine.settings import get_settings


def _failed(error: str, **meta) -> tuple[Proposal, EvaluationResult]:
    proposal = Proposal(source="", language="python", origin="llm", signature="x", error=error, meta=meta)
    return proposal, EvaluationResult(Verdict.PROPOSAL_ERROR, error)


def test_a_step_the_endpoint_failed_earns_nothing_and_is_not_diagnosed(refinery_home):
    proposal, result = _failed("cannot reach http://127.0.0.1:9/v1", endpoint_failure="unreachable")
    outcome = outcome_of(get_problem("relu"), proposal, result, get_settings())
    assert outcome.reward.total == 0.0 and outcome.reward.tiered == 0.0
    assert outcome.feedback_text == "" and outcome.findings == []


def test_a_reply_without_code_is_the_models_and_keeps_its_penalty(refinery_home):
    proposal, result = _failed("the reply holds no code block")
    outcome = outcome_of(get_problem("relu"), proposal, result, get_settings())
    assert outcome.reward.total == FAILURE_REWARD["proposal_error"]
    assert outcome.feedback_text == ""  # still no diagnosis of code that does not exist
