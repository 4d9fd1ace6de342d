"""The LLM proposer against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import pytest

from engine.problems import Problem
from engine.propose import ParentView, ProposalContext
from engine.propose.llm import LLMConfig, LLMProposer
from engine.propose.replies import parse_reply
from tests.llm_server import start_server
from tests.test_problem_loader import GOOD_TOML, write_problem


@pytest.fixture(scope="module")
def server():
    srv, url = start_server()
    yield srv, url
    srv.shutdown()


@pytest.fixture
def problem(tmp_path) -> Problem:
    from engine.problems import load_problem

    toml = GOOD_TOML + '\n[[configs]]\nname = "secret-size"\nhidden = true\nparams = { batch_size = 7777, dim = 3 }\n'
    return load_problem(write_problem(tmp_path, "relu", toml=toml))


def context(problem, parent=None, hint=None) -> ProposalContext:
    return ProposalContext(problem=problem, parent=parent, step=1, sample=0, seed=0, gpu=False, hint=hint)


def proposer(url, model, timeout=10.0, retries=1) -> LLMProposer:
    return LLMProposer(LLMConfig(base_url=url, model=model, api_key_env="REFINERY_TEST_NO_SUCH_KEY",
                                 timeout_s=timeout, max_retries=retries))


def test_good_reply_gives_the_candidate_with_tokens_latency_and_template(server, problem):
    srv, url = server
    proposal = proposer(url, "good").propose(context(problem))
    assert proposal.error is None
    assert "class ModelNew" in proposal.source and proposal.language == "python"
    assert (proposal.tokens_in, proposal.tokens_out) == (321, 123)
    assert proposal.latency_s > 0 and proposal.prompt_template.startswith("refine_pytorch@")
    assert "Use one thread per element" in proposal.reply


def test_prompt_never_shows_hidden_configurations(server, problem):
    srv, url = server
    proposal = proposer(url, "good").propose(context(problem))
    sent = srv.requests[-1]["messages"][1]["content"]
    assert "7777" not in sent and "secret-size" not in sent and proposal.prompt == sent
    assert "batch_size=2" in sent


def test_prompt_carries_parent_verdict_feedback_and_hint(server, problem):
    srv, url = server
    parent = ParentView(candidate_id=5, source="class ModelNew: pass", language="python", verdict="incorrect",
                        message="output 0 differs", log="max abs error 3.2",
                        feedback="1. uncoalesced loads: 32 sectors")
    proposer(url, "good").propose(context(problem, parent, hint="try float4 loads"))
    sent = srv.requests[-1]["messages"][1]["content"]
    assert "incorrect" in sent and "max abs error 3.2" in sent and "32 sectors" in sent and "try float4" in sent


def test_reply_without_code_is_a_clear_error(server, problem):
    proposal = proposer(server[1], "nocode").propose(context(problem))
    assert proposal.error == "the reply contains no code block" and proposal.source == ""


def test_truncated_reply_is_reported_as_truncated(server, problem):
    proposal = proposer(server[1], "truncated").propose(context(problem))
    assert "truncated" in proposal.error


def test_several_different_candidates_are_ambiguous(server, problem):
    proposal = proposer(server[1], "several").propose(context(problem))
    assert "2 different code blocks" in proposal.error


def test_server_error_is_retried_then_reported(server, problem):
    srv, url = server
    before = len(srv.requests)
    proposal = proposer(url, "error500", retries=2).propose(context(problem))
    assert "HTTP 500" in proposal.error and len(srv.requests) - before == 3


def test_rate_limit_is_retried_with_backoff_and_succeeds(server, problem):
    proposal = proposer(server[1], "ratelimit-once", retries=2).propose(context(problem))
    assert proposal.error is None and "class ModelNew" in proposal.source


def test_timeout_is_reported_and_does_not_raise(server, problem):
    proposal = proposer(server[1], "slow", timeout=0.5, retries=0).propose(context(problem))
    assert "did not answer within" in proposal.error


def test_unreachable_endpoint_is_reported(problem):
    proposal = proposer("http://127.0.0.1:9/v1", "good", timeout=1, retries=0).propose(context(problem))
    assert "cannot reach" in proposal.error


def test_c_reply_is_recognised_by_its_entry_point():
    reply = "```cuda\n__global__ void k(){}\nextern \"C\" void kernel_gemm(int n) { k<<<1,1>>>(); }\n```"
    parsed = parse_reply(reply, "c", "kernel_gemm")
    assert parsed.language == "cuda" and parsed.error is None
    assert "none defines the entry point kernel_gemm()" in parse_reply("```c\nint x;\n```", "c", "kernel_gemm").error

