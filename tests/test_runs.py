"""A run steps, stores every step before announcing it, obeys controls between steps and resumes."""

from __future__ import annotations

import json
import textwrap

import pytest

from db import runs_repo
from engine.reward.score import unified_reward
from engine.runs.run import LLMOptions, RunRequest, create_run, events_dir, execute_run, send_control
from engine.schema.verdict import EvaluationResult, Verdict
from engine.store.outcome import RoundOutcome
from tests.test_problem_loader import GOOD_TOML, write_problem
from tests.test_propose_library import IMPL

SPEED = {"naive": 1.0, "coalesced": 2.0, "vec4": 3.0, "tiled": 2.5}


class ScriptedPipeline:
    """Evaluates by implementation name, so the test knows each step's outcome in advance."""

    device_name = "scripted"

    def __init__(self, problem, gpu):
        self.problem, self.calls, self.closed = problem, [], False

    def evaluate(self, proposals):
        outcomes = []
        for proposal in proposals:
            self.calls.append(proposal)
            if proposal.error:
                result = EvaluationResult(Verdict.PROPOSAL_ERROR, proposal.error)
            elif "BROKEN" in proposal.source:
                result = EvaluationResult(Verdict.COMPILE_ERROR, "does not compile", log="error: expected ;")
            else:
                speed = SPEED.get(proposal.meta.get("implementation"), 1.5)
                result = EvaluationResult(Verdict.CORRECT, "correct", speedup=speed, candidate_us=10 / speed,
                                          baseline_us=10.0, device="scripted")
            outcomes.append(RoundOutcome(result, unified_reward(str(result.verdict), result.speedup),
                                         feedback_text="1. vectorise the loads", findings=["vectorization"]))
        return outcomes

    def close(self):
        self.closed = True


@pytest.fixture
def problem_slug(refinery_home):
    toml = GOOD_TOML
    for name, strategy in (("naive", "naive"), ("coalesced", "coalesced"), ("vec4", "vectorized"),
                           ("tiled", "shared-tiling")):
        toml += f'\n[[implementations]]\nname = "{name}"\nfile = "impls/{name}.py"\nstrategy = "{strategy}"\n'
    folder = write_problem(refinery_home / "problems", "toy-relu", toml=toml)
    (folder / "impls").mkdir()
    for name in SPEED:
        (folder / "impls" / f"{name}.py").write_text(IMPL.format(name=name))
    return "toy-relu"


def run(run_id, **kw):
    pipelines = []

    def factory(problem, gpu):
        pipelines.append(ScriptedPipeline(problem, gpu))
        return pipelines[-1]

    status = execute_run(run_id, pipeline_factory=factory, **kw)
    return status, pipelines[0]


def test_a_run_stores_every_step_and_finishes(problem_slug):
    run_id = create_run(RunRequest(problem_slug, strategy="iterative", rounds=3))
    status, pipeline = run(run_id)
    rows = runs_repo.tree_rows(run_id)
    assert status == "finished" and pipeline.closed
    assert [r.candidate.step for r in rows] == [0, 1, 2]
    assert rows[0].candidate.proposal["implementation"] == "naive"
    assert rows[1].candidate.parent_id == rows[0].candidate.id
    assert all(r.evaluation.verdict == "correct" and r.feedback.text for r in rows)
    assert runs_repo.get_run(run_id).status == "finished"


def test_each_stored_step_gets_an_event_file(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=2))
    run(run_id)
    files = sorted(events_dir(run_id).glob("*.json"))
    kinds = [json.loads(f.read_text())["kind"] for f in files]
    assert kinds == ["started", "round", "round", "finished"]


def test_best_of_n_stores_all_samples_of_a_step(problem_slug):
    run_id = create_run(RunRequest(problem_slug, strategy="best-of-n", rounds=1, samples=3))
    run(run_id)
    rows = runs_repo.tree_rows(run_id)
    assert [(r.candidate.step, r.candidate.sample) for r in rows] == [(0, 0), (0, 1), (0, 2)]


def test_a_step_stores_no_sample_that_repeats_code_the_run_already_measured(problem_slug):
    # Four implementations, no tunables: three samples in step 0 leave one new candidate for step 1.
    run_id = create_run(RunRequest(problem_slug, strategy="best-of-n", rounds=2, samples=3))
    run(run_id)
    rows = runs_repo.tree_rows(run_id)
    assert [(r.candidate.step, r.candidate.sample) for r in rows] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert len({r.candidate.source for r in rows}) == 4


def test_a_run_ends_early_once_the_library_has_nothing_new(problem_slug):
    run_id = create_run(RunRequest(problem_slug, strategy="iterative", rounds=10))
    assert run(run_id)[0] == "finished"
    rows = runs_repo.tree_rows(run_id)
    assert len(rows) == 4 and all(r.evaluation.verdict != "proposal_error" for r in rows)
    assert "nothing left" in runs_repo.events(run_id)[-1].message


@pytest.mark.parametrize("strategy", ["iterative", "best-of-n", "beam", "mcts"])
def test_every_strategy_climbs_above_the_naive_port(problem_slug, strategy):
    run_id = create_run(RunRequest(problem_slug, strategy=strategy, rounds=4, samples=2))
    run(run_id)
    best = max(r.evaluation.speedup or 0.0 for r in runs_repo.tree_rows(run_id))
    assert best > 1.0


def test_stop_control_ends_the_run_between_steps(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=10))
    send_control(run_id, "stop")
    status, _ = run(run_id)
    assert status == "stopped" and runs_repo.tree_rows(run_id) == []


def test_hint_reaches_the_next_llm_prompt_only(problem_slug, monkeypatch):
    from tests.llm_server import start_server

    server, url = start_server()
    monkeypatch.setenv("REFINERY_TEST_KEY", "sk-test")
    try:
        run_id = create_run(RunRequest(problem_slug, rounds=2, proposer="llm",
                                       llm=LLMOptions(url, "good", "REFINERY_TEST_KEY", 0.0)))
        send_control(run_id, "hint", {"text": "use float4"})
        _, pipeline = run(run_id)
    finally:
        server.shutdown()
    assert pipeline.calls[0].meta["hint"] == "use float4" and pipeline.calls[1].meta["hint"] is None
    prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert "use float4" in prompts[0] and "use float4" not in prompts[1]


def test_a_hint_to_a_proposer_that_cannot_read_it_is_refused_before_it_is_queued(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=2))  # the library proposer
    with pytest.raises(ValueError, match="cannot read a hint"):
        send_control(run_id, "hint", {"text": "use float4"})
    assert runs_repo.take_controls(run_id) == []


def test_fork_expands_the_named_candidate(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=2))
    run(run_id)
    first = runs_repo.tree_rows(run_id)[0].candidate
    runs_repo.update_run(run_id, rounds_budget=3)
    update = runs_repo.get_run(run_id).config | {"rounds": 3}
    runs_repo.update_run(run_id, config=update)
    send_control(run_id, "fork", {"candidate_id": first.id})
    run(run_id)
    rows = runs_repo.tree_rows(run_id)
    assert rows[-1].candidate.step == 2 and rows[-1].candidate.parent_id == first.id


def test_inserted_human_candidate_becomes_a_step(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=1))
    source = textwrap.dedent("""
        import torch
        class ModelNew(torch.nn.Module):
            def forward(self, x):
                return x  # BROKEN
    """)
    send_control(run_id, "insert", {"source": source, "author": "ada"})
    run(run_id)
    rows = runs_repo.tree_rows(run_id)
    human = next(r for r in rows if r.candidate.origin == "human")
    assert human.evaluation.verdict == "compile_error" and human.candidate.proposal["author"] == "ada"


def test_pause_then_resume_from_another_thread(problem_slug):
    import threading
    import time

    run_id = create_run(RunRequest(problem_slug, rounds=2))
    send_control(run_id, "pause")
    threading.Timer(1.0, lambda: send_control(run_id, "resume")).start()
    started = time.perf_counter()
    status, _ = run(run_id)
    kinds = [e.kind for e in runs_repo.events(run_id)]
    assert status == "finished" and time.perf_counter() - started >= 1.0
    assert "paused" in kinds and "resumed" in kinds


def test_resume_continues_numbering_without_duplicates(problem_slug):
    run_id = create_run(RunRequest(problem_slug, strategy="mcts", rounds=2))
    run(run_id)
    runs_repo.update_run(run_id, config=runs_repo.get_run(run_id).config | {"rounds": 4})
    status, pipeline = run(run_id)
    steps = [r.candidate.step for r in runs_repo.tree_rows(run_id)]
    assert status == "finished" and steps == [0, 1, 2, 3] and len(pipeline.calls) == 2


def test_unknown_problem_is_refused_before_anything_is_stored(refinery_home):
    with pytest.raises(KeyError):
        create_run(RunRequest("no-such-problem"))
    assert runs_repo.list_runs() == []


def test_bad_controls_are_refused_with_a_reason(problem_slug):
    run_id = create_run(RunRequest(problem_slug))
    with pytest.raises(ValueError, match="hint needs"):
        send_control(run_id, "hint", {"text": " "})
    with pytest.raises(ValueError, match="unknown control"):
        send_control(run_id, "explode")


@pytest.mark.parametrize("profile", [True, False])
def test_a_runs_profiling_choice_reaches_its_pipeline(problem_slug, profile):
    run_id = create_run(RunRequest(problem_slug, rounds=1, profile=profile))
    seen = []

    class Profiled(ScriptedPipeline):
        def set_profiling(self, enabled):
            seen.append(enabled)

    execute_run(run_id, pipeline_factory=Profiled)
    assert seen == [profile]


def test_a_run_without_profiling_asks_the_worker_for_no_energy_and_profiles_nothing(refinery_home, monkeypatch):
    from engine.problems import get_problem
    from engine.runs.pipeline import RoundPipeline
    from engine.verify.prepare import policy_from_settings

    monkeypatch.setattr("engine.runs.pipeline.make_pool", lambda settings: None)
    pipeline = RoundPipeline(get_problem("relu"), gpu=True)
    assert pipeline.profiling and pipeline.verifier.options.timing_policy is None  # the settings' policy: energy on
    pipeline.set_profiling(False)
    assert not pipeline.profiling and pipeline.verifier.options.timing_policy.energy_seconds == 0.0
    assert pipeline.verifier.options.timing_policy.policy == policy_from_settings(pipeline.settings)  # trials as set


def test_a_paste_that_cannot_be_a_candidate_is_refused_with_the_verifiers_words(problem_slug):
    run_id = create_run(RunRequest(problem_slug, rounds=2))
    with pytest.raises(ValueError, match="defines no class ModelNew"):
        send_control(run_id, "insert", {"source": "import torch\n\nclass Model(torch.nn.Module):\n    pass\n"})
    with pytest.raises(ValueError, match="does not parse"):
        send_control(run_id, "insert", {"source": "class ModelNew(:\n"})
    assert runs_repo.take_controls(run_id) == []


@pytest.fixture
def no_client_retries(monkeypatch):
    """The openai client's own retries (seconds of backoff each) are not what these tests are about."""
    import openai

    real = openai.OpenAI
    monkeypatch.setattr(openai, "OpenAI", lambda **kw: real(**{**kw, "max_retries": 0}))


@pytest.mark.parametrize(("model", "steps", "cause"), [
    ("error500", 3, "HTTP 500"),  # may recover: the run gives it a few steps
    ("unauthorized", 1, "HTTP 401"),  # a bad key will not get better: the first step ends the run
])
def test_a_failing_endpoint_ends_the_run_as_failed_with_its_cause(problem_slug, no_client_retries, model, steps,
                                                                   cause):
    from tests.llm_server import start_server

    server, url = start_server()
    try:
        run_id = create_run(RunRequest(problem_slug, rounds=10, proposer="llm",
                                       llm=LLMOptions(url, model, "REFINERY_TEST_KEY", 0.0)))
        status, _ = run(run_id)
    finally:
        server.shutdown()
    stored = runs_repo.get_run(run_id)
    assert status == "failed" and stored.status == "failed" and cause in stored.error
    assert len(runs_repo.tree_rows(run_id)) == steps  # every failed proposal is stored, none after the end
    assert runs_repo.events(run_id)[-1].kind == "failed"


def test_an_unreachable_endpoint_fails_the_cli_run_with_its_cause_and_exit_code(problem_slug, no_client_retries):
    from typer.testing import CliRunner

    from engine.cli import app

    done = CliRunner().invoke(app, ["run", "--problem", problem_slug, "--proposer", "llm", "--base-url",
                                    "http://127.0.0.1:9/v1", "--model", "m", "--rounds", "5", "--device", "cpu"])
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())  # rich wraps long lines
    assert "failed: the LLM endpoint failed (3 steps in a row): cannot reach http://127.0.0.1:9/v1" in said


def test_an_unknown_device_is_refused(problem_slug):
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        create_run(RunRequest(problem_slug, device="tpu"))


def test_a_running_run_beats_and_a_silent_one_is_ended_with_the_way_to_resume(problem_slug):
    from datetime import timedelta

    from db.models import utcnow
    from engine.runs.run import Heartbeat, reap_silent_runs

    run_id = create_run(RunRequest(problem_slug, rounds=2))
    runs_repo.update_run(run_id, status="running", started_at=utcnow())
    with Heartbeat(run_id, every_s=0.05):
        first = runs_repo.get_run(run_id).heartbeat_at
        import time

        time.sleep(0.3)
        assert runs_repo.get_run(run_id).heartbeat_at > first
        assert reap_silent_runs(silent_after_s=5) == []  # alive: left alone
    later = utcnow() + timedelta(seconds=60)  # a minute without a beat: the process is gone
    assert reap_silent_runs(now=later, silent_after_s=45) == [run_id]
    stored = runs_repo.get_run(run_id)
    assert stored.status == "failed" and f"refinery runs resume {run_id}" in stored.error
    assert "Runs page" not in stored.error  # it offers only a way to continue that exists
    assert runs_repo.events(run_id)[-1].kind == "failed"
    assert reap_silent_runs(now=later, silent_after_s=45) == []  # once


def test_stop_on_a_run_whose_process_is_gone_ends_it_at_once(problem_slug):
    from datetime import timedelta

    from db.models import utcnow

    run_id = create_run(RunRequest(problem_slug, rounds=2))
    runs_repo.update_run(run_id, status="running", started_at=utcnow() - timedelta(minutes=5),
                         heartbeat_at=utcnow() - timedelta(minutes=5))
    send_control(run_id, "stop")
    stored = runs_repo.get_run(run_id)
    assert stored.status == "stopped" and "already gone" in runs_repo.events(run_id)[-1].message


def test_ctrl_c_in_the_terminal_stops_the_run_instead_of_leaving_it_running(problem_slug):
    class Interrupted(ScriptedPipeline):
        def evaluate(self, proposals):
            raise KeyboardInterrupt

    run_id = create_run(RunRequest(problem_slug, rounds=3))
    with pytest.raises(KeyboardInterrupt):
        execute_run(run_id, pipeline_factory=Interrupted)
    assert runs_repo.get_run(run_id).status == "stopped"


def test_the_run_says_what_it_is_doing_inside_a_step(problem_slug):
    phases: list[str] = []
    run_id = create_run(RunRequest(problem_slug, rounds=2))
    execute_run(run_id, pipeline_factory=ScriptedPipeline, on_phase=phases.append)
    assert phases[:2] == ["step 0: asking the library proposer",
                          "step 0: building and verifying 1 candidate(s) from scratch on scripted"]
    assert any(p.startswith("step 1: building and verifying 1 candidate(s) from #") for p in phases)


@pytest.mark.parametrize("rounds", [1, 2])
def test_a_short_run_against_a_dead_endpoint_fails_with_the_cause_and_exit_code(problem_slug, no_client_retries,
                                                                                rounds):
    """Shorter than the 3-step rule: every step it made failed at the endpoint, so it is a failed run, not a
    finished one with candidates."""
    from typer.testing import CliRunner

    from engine.cli import app

    done = CliRunner().invoke(app, ["run", "--problem", problem_slug, "--proposer", "llm", "--base-url",
                                    "http://127.0.0.1:9/v1", "--model", "m", "--rounds", str(rounds), "--device",
                                    "cpu"])
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())
    assert "failed: the LLM endpoint failed" in said and "cannot reach http://127.0.0.1:9/v1" in said
