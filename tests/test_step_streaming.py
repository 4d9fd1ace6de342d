"""Parallel samples as people run them: a step's requests go out together, each reply is built (and
verified, where a worker is free) as soon as it is in, and what the step stores does not depend on the
order the replies came in. Against the loopback endpoint (a test double with fixed replies and a delay
per sample), through the real run, pipeline and verifier, with the compiler and the worker pool faked so
that the test sees when each build and each job started."""

from __future__ import annotations

import re
import threading
import time
from types import SimpleNamespace

import pytest

from db import runs_repo
from engine.compilation.candidate import CandidateBuild
from engine.propose.base import EXHAUSTED, Proposal
from engine.runs.run import LLMOptions, RunRequest, create_run, execute_run
from engine.runs.step_samples import StepSamples, replies_as_they_arrive
from engine.schema.verdict import EvaluationResult, Verdict
from engine.verify.pool import JobOutcome
from tests.llm_server import start_server
from tests.test_runs import no_client_retries, problem_slug  # noqa: F401 - the fixtures

SLOW_S = 2.0
# Five samples: 1 is slow; 2 has no code and 3 fails at the endpoint, both at once.
SAMPLES = f"samples-0.05,{SLOW_S},0.05:nocode,0.05:error500,0.05"


def proposal(signature: str, source: str = "code") -> Proposal:
    return Proposal(source=source, language="python", origin="llm", signature=signature)


def sample_of(source: str) -> int:
    return int(re.search(r"# sample (\d+)", source).group(1))


class RecordingPool:
    """A worker pool of one slot that judges every job correct at once, noting when each sample's job started."""

    size = 1
    gpu = False
    info = SimpleNamespace(device=None)

    def __init__(self):
        self.jobs: list[tuple[int, float]] = []

    def run(self, job, timeout_s=None, fresh=False):
        self.jobs.append((sample_of(job.candidate_source), time.perf_counter()))
        return JobOutcome("ok", EvaluationResult(Verdict.CORRECT, "correct", speedup=1.5, candidate_us=10.0,
                                                 baseline_us=15.0, device="cpu"))

    def close(self):
        pass


@pytest.fixture
def streamed_run(problem_slug, no_client_retries, monkeypatch):  # noqa: F811
    """A best-of-5 step of the LLM proposer through the real pipeline: the stored rows, and by sample when
    its build started, when its job started, and when its reply started to be sent."""
    from engine.runs.pipeline import RoundPipeline

    pool, builds = RecordingPool(), []

    def builder(problem, source, language, **options):
        builds.append((sample_of(source), time.perf_counter()))
        return CandidateBuild(True, language, "torch")

    def pipeline(problem, gpu):
        made = RoundPipeline(problem, gpu)
        made.verifier.builder = builder
        return made

    monkeypatch.setattr("engine.runs.pipeline.make_pool", lambda settings: pool)
    server, url = start_server()
    try:
        run_id = create_run(RunRequest(problem_slug, strategy="best-of-n", rounds=1, samples=5, proposer="llm",
                                       llm=LLMOptions(url, SAMPLES, "REFINERY_TEST_NO_SUCH_KEY", 0.0, concurrency=5)))
        assert execute_run(run_id, pipeline_factory=pipeline) == "finished"
    finally:
        server.shutdown()
    return runs_repo.tree_rows(run_id), dict(builds), dict(pool.jobs), dict(server.replied)


def test_a_fast_reply_is_built_and_verified_before_the_slowest_reply_has_arrived(streamed_run):
    _, builds, jobs, replied = streamed_run
    slowest = replied[1]
    assert max(replied, key=replied.get) == 1
    assert builds[0] < slowest and builds[4] < slowest  # the fast samples' builds started first
    assert jobs[0] < slowest and jobs[4] < slowest  # and their verification, the one worker being free
    assert builds[1] > slowest  # the slow one is built once it is in


def test_samples_are_stored_in_request_order_whatever_order_their_replies_came_in(streamed_run):
    rows, *_ = streamed_run
    assert [(r.candidate.step, r.candidate.sample) for r in rows] == [(0, k) for k in range(5)]
    assert all(rows[k].candidate.reply.startswith(f"Sample {k}.") and f"# sample {k}" in rows[k].candidate.source
               for k in (0, 1, 4))


def test_a_failed_reply_is_stored_with_its_message_and_blocks_no_other_sample(streamed_run):
    rows, builds, _, _ = streamed_run
    assert [r.evaluation.verdict for r in rows] == ["correct", "correct", "proposal_error", "proposal_error",
                                                     "correct"]
    assert rows[2].evaluation.message == "the reply contains no code block"
    assert "HTTP 500" in rows[3].evaluation.message
    assert sorted(builds) == [0, 1, 4]  # the failed replies built nothing; every good one was built


def test_ctrl_c_while_replies_arrive_stops_the_run_and_sends_no_request_not_yet_sent(problem_slug):  # noqa: F811
    from tests.test_runs import ScriptedPipeline

    class InterruptedAfterTheFirstReply(ScriptedPipeline):
        def evaluate_stream(self, arrivals):
            next(iter(arrivals))
            raise KeyboardInterrupt

    server, url = start_server()
    try:
        run_id = create_run(RunRequest(problem_slug, strategy="best-of-n", rounds=2, samples=4, proposer="llm",
                                       llm=LLMOptions(url, "samples-0.01", "REFINERY_TEST_NO_SUCH_KEY", 0.0,
                                                      concurrency=1)))
        with pytest.raises(KeyboardInterrupt):
            execute_run(run_id, pipeline_factory=InterruptedAfterTheFirstReply)
    finally:
        server.shutdown()
    assert runs_repo.get_run(run_id).status == "stopped" and runs_repo.tree_rows(run_id) == []
    assert len(server.requests) == 1  # one request at a time: the three after the interrupted one never went out


def test_replies_are_handed_on_in_the_order_they_arrive_not_the_order_asked():
    second_taken = threading.Event()

    def ask(context):
        if context == 0:
            assert second_taken.wait(10), "reply 0 was awaited before reply 1 was handed on"
        return proposal(f"s{context}")

    replies = replies_as_they_arrive(ask, [0, 1], width=2)
    assert next(replies)[0] == 1
    second_taken.set()
    assert next(replies)[0] == 0


def test_one_request_at_a_time_asks_each_only_once_the_reply_before_it_was_taken():
    asked = []
    replies = replies_as_they_arrive(lambda context: asked.append(context) or proposal(f"s{context}"), [0, 1, 2], 1)
    assert next(replies)[0] == 0 and asked == [0]
    assert [index for index, _ in replies] == [1, 2] and asked == [0, 1, 2]


def test_a_repeat_of_a_siblings_code_is_evaluated_once_and_stored_with_the_first_asked():
    samples = StepSamples(parents=[None, 7, 8, 9])
    arrivals = [(2, proposal("same")), (3, proposal(EXHAUSTED, "")), (0, proposal("same")), (1, proposal("other"))]
    evaluated = [index for index, _ in samples.to_evaluate(arrivals)]
    assert evaluated == [2, 1]  # the copy that came first is built; nothing for the exhausted sample
    assert [(s.index, s.parent, s.evaluated) for s in samples.planned()] == [(0, None, 2), (1, 7, 1)]
