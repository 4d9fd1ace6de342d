"""The LLM loop as people run it, against the loopback endpoint (a test double with fixed replies):
streamed replies heard as they form, reasoning kept apart from the answer and never parsed as code,
first-token and total latency, refusals, parallel samples and rate limits said as such."""

from __future__ import annotations

import time

import pytest

from db import runs_repo
from engine.propose.llm import LLMConfig, LLMProposer
from engine.propose.reply_files import latest_replies
from engine.runs.run import LLMOptions, RunRequest, create_run, execute_run, run_folder
from tests.llm_server import start_server
from tests.test_propose_llm import context, problem  # noqa: F401 - the fixture
from tests.test_runs import ScriptedPipeline, problem_slug  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def server():
    srv, url = start_server()
    yield srv, url
    srv.shutdown()


def _proposer(url: str, model: str, **options) -> LLMProposer:
    return LLMProposer(LLMConfig(base_url=url, model=model, api_key_env="REFINERY_TEST_NO_SUCH_KEY", timeout_s=10,
                                 max_retries=0, **options))


def test_a_streamed_reply_is_heard_forming_and_ends_as_the_same_candidate(server, problem):  # noqa: F811
    srv, url = server
    heard: list[tuple[str, str]] = []
    proposal = _proposer(url, "good").propose(context(problem), on_delta=lambda kind, text: heard.append((kind, text)))
    assert srv.requests[-1]["stream"] is True
    answers = [text for kind, text in heard if kind == "answer"]
    assert len(answers) > 5 and all(b.startswith(a) for a, b in zip(answers, answers[1:], strict=False))
    assert answers[-1] == proposal.reply and "class ModelNew" in proposal.source
    assert (proposal.tokens_in, proposal.tokens_out) == (321, 123)
    assert 0 < proposal.meta["first_token_s"] <= proposal.latency_s


def test_the_first_token_is_timed_apart_from_the_whole_reply(server, problem):  # noqa: F811
    _, url = server
    proposal = _proposer(url, "slow-first").propose(context(problem))
    assert proposal.meta["first_token_s"] >= 0.9 and proposal.error is None


@pytest.mark.parametrize("model", ["think", "think-tags"])
def test_reasoning_is_kept_apart_and_never_parsed_as_code(server, problem, model):  # noqa: F811
    _, url = server
    proposal = _proposer(url, model).propose(context(problem))
    assert proposal.error is None and "class ModelNew" in proposal.source and "class Fake" not in proposal.source
    assert "elementwise and bandwidth-bound" in proposal.reasoning
    assert "<think>" not in proposal.reply and "bandwidth-bound" not in proposal.reply


def test_the_same_reply_without_streaming_gives_the_same_record(server, problem):  # noqa: F811
    srv, url = server
    proposal = _proposer(url, "think", stream=False).propose(context(problem))
    assert "stream" not in srv.requests[-1] and "elementwise and bandwidth-bound" in proposal.reasoning
    assert "class ModelNew" in proposal.source


def test_a_refusal_is_a_proposal_error_in_words(server, problem):  # noqa: F811
    _, url = server
    proposal = _proposer(url, "refusal").propose(context(problem))
    assert proposal.source == "" and proposal.error == "the reply contains no code block"
    assert "can't help" in proposal.reply


def test_a_rate_limit_is_said_as_such(server, problem):  # noqa: F811
    _, url = server
    proposal = _proposer(url, "ratelimit-once").propose(context(problem))
    assert "HTTP 429 (rate limit)" in proposal.error and proposal.meta["endpoint_failure"] == "http-429"


def test_best_of_four_asks_concurrently_and_stores_reasoning_and_the_streamed_files(server, problem_slug):  # noqa: F811
    _, url = server
    run_id = create_run(RunRequest(problem_slug, strategy="best-of-n", rounds=1, samples=4, proposer="llm",
                                   llm=LLMOptions(url, "delay-0.5", "REFINERY_TEST_NO_SUCH_KEY", 0.0, concurrency=4)))
    phases: list[tuple[float, str]] = []
    execute_run(run_id, pipeline_factory=ScriptedPipeline, on_phase=lambda text: phases.append((time.perf_counter(),
                                                                                                 text)))
    asked = next(t for t, text in phases if "asking" in text)
    answered = next(t for t, text in phases if "building and verifying" in text)
    assert answered - asked < 1.5, f"4 requests of 0.5 s each took {answered - asked:.2f} s: not concurrent"
    rows = runs_repo.tree_rows(run_id)
    assert len(rows) == 1  # the loopback answers the same code four times: one candidate, siblings deduplicated
    streamed = latest_replies(run_folder(run_id) / "stream")
    assert any(key[0] == 0 and key[2] == "answer" and "ModelNew" in text for key, text in streamed.items())


def test_reasoning_is_stored_with_the_candidate_and_exported_in_trajectories(server, problem_slug, tmp_path):  # noqa: F811
    from engine.export import export_dataset

    _, url = server
    run_id = create_run(RunRequest(problem_slug, rounds=1, proposer="llm",
                                   llm=LLMOptions(url, "think", "REFINERY_TEST_NO_SUCH_KEY", 0.0)))
    execute_run(run_id, pipeline_factory=ScriptedPipeline)
    (row,) = runs_repo.tree_rows(run_id)
    assert "bandwidth-bound" in row.candidate.reasoning and "bandwidth-bound" not in (row.candidate.reply or "")
    result = export_dataset("trajectories", "jsonl", tmp_path / "t")
    import json

    (trajectory,) = [json.loads(line) for line in (tmp_path / "t/data/default.jsonl").read_text().splitlines()]
    assert "bandwidth-bound" in trajectory["turns"][0]["reasoning"]
    assert "bandwidth-bound" not in trajectory["messages"][1]["content"]
    assert result.counts["default"] == 1


def test_conversation_mode_continues_the_paths_conversation(server, problem_slug):  # noqa: F811
    srv, url = server
    run_id = create_run(RunRequest(problem_slug, rounds=3, proposer="llm", conversation=True,
                                   llm=LLMOptions(url, "good", "REFINERY_TEST_NO_SUCH_KEY", 0.0)))
    before = len(srv.requests)
    execute_run(run_id, pipeline_factory=ScriptedPipeline)
    sent = [r["messages"] for r in srv.requests[before:]]
    rows = runs_repo.tree_rows(run_id)
    parent_of = {r.candidate.id: r.candidate.parent_id for r in rows}

    def depth(candidate_id):
        return 0 if candidate_id is None else 1 + depth(parent_of[candidate_id])

    # system + task, then for each round on the path its reply and the verdict it got
    assert [len(m) for m in sent] == [2 + 2 * depth(r.candidate.parent_id) for r in rows]
    assert sent[1][1]["content"] == rows[0].candidate.prompt and sent[1][2]["content"] == rows[0].candidate.reply
    assert sent[1][-1]["content"].startswith("Result of the file in your last reply: **correct**")
    assert "1. vectorise the loads" in sent[1][-1]["content"]  # the diagnosis the last round got
    assert rows[1].candidate.prompt == sent[1][-1]["content"]  # what is stored is what was asked


def test_a_long_conversation_keeps_the_task_and_the_newest_rounds_within_its_budget():
    from engine.propose.conversation import conversation

    history = tuple((f"ask {k} " + "x" * 1000, f"reply {k} " + "y" * 1000) for k in range(10))
    sent = conversation("system", history, "next", budget_chars=8000)
    contents = [m["content"] for m in sent.messages]
    assert contents[1].startswith("ask 0") and contents[-1] == "next"
    assert sent.left_out == 7 and "7 earlier round(s) left out" in contents[3]
    assert contents[-2].startswith("reply 9") and sum(map(len, contents)) <= 8000 + 100


def test_the_endpoint_check_lists_models_and_says_what_is_wrong(server):
    from engine.propose.endpoint import check_endpoint

    _, url = server
    found = check_endpoint(url, "REFINERY_TEST_NO_SUCH_KEY", model="good")
    assert found.ok and "good" in found.models and "serves 3 model(s)" in found.message
    missing = check_endpoint(url, "REFINERY_TEST_NO_SUCH_KEY", model="gpt-9")
    assert not missing.ok and "does not serve 'gpt-9'" in missing.message
    down = check_endpoint("http://127.0.0.1:9/v1", timeout_s=2)
    assert not down.ok and "cannot reach http://127.0.0.1:9/v1" in down.message


def test_a_runs_tokens_and_cost_are_counted_where_the_model_is_priced(server, problem_slug):  # noqa: F811
    from engine.runs.usage import run_usage

    _, url = server
    run_id = create_run(RunRequest(problem_slug, rounds=2, proposer="llm",
                                   llm=LLMOptions(url, "good", "REFINERY_TEST_NO_SUCH_KEY", 0.0)))
    execute_run(run_id, pipeline_factory=ScriptedPipeline)
    priced = run_usage(run_id, {"good": (1.0, 2.0)})
    assert (priced.calls, priced.tokens_in, priced.tokens_out) == (2, 642, 246)
    assert priced.cost_usd == pytest.approx((642 * 1.0 + 246 * 2.0) / 1e6)
    assert run_usage(run_id, {}).cost_usd is None and "no price set" in run_usage(run_id, {}).describe()


def test_a_runs_own_prompt_wording_is_sent_stored_and_checked_before_it_starts(server, problem_slug):  # noqa: F811
    from engine.propose.prompts import template_text

    srv, url = server
    system = "You write CUDA for a museum of slow kernels. Reply with one code block."
    task = template_text("refine_pytorch").replace("# Task: {title}", "# Exhibit: {title}")
    run_id = create_run(RunRequest(problem_slug, rounds=1, proposer="llm", prompts={"system": system,
                                                                                      "refine_pytorch": task},
                                   llm=LLMOptions(url, "good", "REFINERY_TEST_NO_SUCH_KEY", 0.0)))
    before = len(srv.requests)
    execute_run(run_id, pipeline_factory=ScriptedPipeline)
    (messages,) = [r["messages"] for r in srv.requests[before:]]
    assert messages[0]["content"] == system and messages[1]["content"].startswith("# Exhibit: ")
    assert runs_repo.get_run(run_id).config["prompts"]["system"] == system
    (row,) = runs_repo.tree_rows(run_id)
    assert row.candidate.prompt_template.startswith("refine_pytorch@") and \
        row.candidate.prompt_template != "refine_pytorch@" + __import__("hashlib").sha256(
            template_text("refine_pytorch").encode()).hexdigest()[:8]
    with pytest.raises(ValueError, match="uses nonsense"):
        create_run(RunRequest(problem_slug, proposer="llm", prompts={"parent": "{nonsense}"},
                              llm=LLMOptions(url, "good")))


def test_endpoint_options_from_the_command_line_reach_the_endpoint(server, problem_slug):  # noqa: F811
    from typer.testing import CliRunner

    from engine.cli import app

    srv, url = server
    before = len(srv.requests)
    done = CliRunner().invoke(app, ["run", "--problem", problem_slug, "--proposer", "llm", "--base-url", url,
                                    "--model", "good", "--rounds", "1", "--device", "cpu", "--no-stream",
                                    "--max-tokens", "777", "--extra-body", '{"top_p": 0.5}'])
    assert done.exit_code == 0, done.output
    sent = srv.requests[before]
    assert sent["max_tokens"] == 777 and sent["top_p"] == 0.5 and "stream" not in sent
    bad = CliRunner().invoke(app, ["run", "--problem", problem_slug, "--proposer", "llm", "--extra-body", "{nope"])
    assert bad.exit_code == 2 and "not JSON" in bad.output
