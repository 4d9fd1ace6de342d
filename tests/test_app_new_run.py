"""The New run page: the form becomes the engine's RunRequest; problems are said in words."""

from __future__ import annotations

import sys
import types

import pytest

from app.testing import app_at, make_run

PAGE = "views/new_run.py"


@pytest.fixture
def engine_calls(refinery_home, monkeypatch) -> list:
    """A stand-in `engine.runs.run` with the contract's records, recording what the page asks of it."""
    from engine.runs.run import LLMOptions, RunRequest

    calls: list = []
    fake = types.ModuleType("engine.runs.run")
    fake.LLMOptions, fake.RunRequest = LLMOptions, RunRequest
    fake.gpu_available = lambda: False
    fake.run_folder = lambda run_id: refinery_home / "runs" / str(run_id)

    def start_run(request):
        calls.append(request)
        return make_run(problem_slug=request.problem_slug)

    fake.start_run = start_run
    monkeypatch.setitem(sys.modules, "engine.runs.run", fake)
    return calls


def test_starting_a_library_run_sends_the_request_and_shows_the_log(engine_calls) -> None:
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.number_input(key="nr_rounds").set_value(4)
    at.button(key="nr_start").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (request,) = engine_calls
    assert (request.problem_slug, request.proposer, request.strategy, request.rounds, request.llm) == \
        ("transpose", "library", "iterative", 4, None)
    assert any("Run #1 started" in s.value for s in at.success)
    assert any("run.log" in m.value for m in at.markdown)
    assert at.button(key="nr_open")


def test_an_llm_run_carries_endpoint_model_key_variable_and_temperature(engine_calls, monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "secret")
    at = app_at(PAGE)
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_base_url").set_value("http://127.0.0.1:9/v1")
    at.text_input(key="nr_model").set_value("some-model")
    at.text_input(key="nr_key_env").set_value("MY_KEY")
    at.selectbox(key="nr_strategy").set_value("beam").run()
    at.number_input(key="nr_samples").set_value(3)
    at.button(key="nr_start").click().run()
    (request,) = engine_calls
    assert request.proposer == "llm" and request.strategy == "beam" and request.samples == 3
    assert (request.llm.base_url, request.llm.model, request.llm.api_key_env) == \
        ("http://127.0.0.1:9/v1", "some-model", "MY_KEY")
    assert "secret" not in repr(request)


def test_an_llm_run_without_a_model_is_refused_in_words(engine_calls) -> None:
    at = app_at(PAGE)
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_model").set_value("")
    at.button(key="nr_start").click().run()
    assert engine_calls == []
    assert any("needs a model name" in e.value for e in at.error)


def test_an_unset_key_variable_is_warned_about(engine_calls, monkeypatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    at = app_at(PAGE)
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_key_env").set_value("NOT_SET_ANYWHERE").run()
    assert any("NOT_SET_ANYWHERE" in w.value for w in at.warning)


def test_an_engine_failure_is_said_where_the_button_is(engine_calls, monkeypatch) -> None:
    def refuse(request):
        raise ValueError("unknown strategy 'x'")

    monkeypatch.setattr(sys.modules["engine.runs.run"], "start_run", refuse)
    at = app_at(PAGE)
    at.button(key="nr_start").click().run()
    assert not at.exception
    assert any("Could not start the run: unknown strategy 'x'" in e.value for e in at.error)
    assert any(e.label == "Technical details" and not e.proto.expanded for e in at.expander)


def test_the_problem_from_the_link_is_preselected(engine_calls) -> None:
    at = app_at(PAGE, query={"problem": "gemm"})
    assert at.selectbox(key="nr_problem").value == "gemm"


def test_profiling_is_on_by_default_and_can_be_turned_off(engine_calls, monkeypatch) -> None:
    from app.components import engine_api

    monkeypatch.setattr(engine_api, "gpu_available", lambda: True)
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.button(key="nr_start").click().run()
    at.checkbox(key="nr_profile").uncheck()
    at.button(key="nr_start").click().run()
    assert [request.profile for request in engine_calls] == [True, False]


def test_on_a_machine_without_a_gpu_profiling_is_unticked_and_disabled(engine_calls) -> None:
    at = app_at(PAGE)  # engine_calls' machine has no GPU; the device is left at auto
    assert at.selectbox(key="nr_device").value == "auto"
    profile = at.checkbox(key="nr_profile")
    assert profile.disabled and profile.value is False
    at.selectbox(key="nr_problem").set_value("transpose")
    at.button(key="nr_start").click().run()
    assert engine_calls[-1].profile is False


def test_an_unset_key_for_a_local_endpoint_is_no_warning(engine_calls, monkeypatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    at = app_at(PAGE)
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_key_env").set_value("NOT_SET_ANYWHERE").run()
    assert any("NOT_SET_ANYWHERE" in w.value for w in at.warning)  # the default endpoint is a remote one
    for local in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1"):
        at.text_input(key="nr_base_url").set_value(local).run()
        assert not any("NOT_SET_ANYWHERE" in w.value for w in at.warning), local
        assert any("fine for a local endpoint" in c.value for c in at.caption)


def test_a_cpu_run_asks_for_no_profile(engine_calls) -> None:
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.selectbox(key="nr_device").set_value("cpu").run()
    assert at.checkbox(key="nr_profile").disabled
    at.button(key="nr_start").click().run()
    assert engine_calls[-1].profile is False


def test_a_cpu_library_run_of_a_problem_with_no_cpu_code_is_warned_about_before_it_starts(engine_calls) -> None:
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("relu")
    at.selectbox(key="nr_device").set_value("cpu").run()
    (warning,) = [w.value for w in at.warning if "ships no CPU implementation" in w.value]
    assert "needs_gpu" in warning and "gemm" in warning
    at.selectbox(key="nr_problem").set_value("gemm").run()
    assert not any("ships no CPU implementation" in w.value for w in at.warning)
    assert "runs on the CPU" in at.selectbox(key="nr_problem").format_func("gemm")


def test_an_llm_run_can_be_a_conversation(engine_calls) -> None:
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_model").set_value("m").run()
    at.toggle(key="nr_conversation").set_value(True).run()
    at.button(key="nr_start").click().run()
    assert engine_calls[-1].conversation is True and engine_calls[-1].proposer == "llm"


def test_the_endpoint_can_be_tested_before_a_run_starts(engine_calls) -> None:
    from tests.llm_server import start_server

    server, url = start_server()
    try:
        at = app_at(PAGE)
        at.segmented_control(key="nr_proposer").set_value("llm").run()
        at.text_input(key="nr_base_url").set_value(url).run()
        at.text_input(key="nr_model").set_value("good").run()
        at.button(key="nr_test_endpoint").click().run()
    finally:
        server.shutdown()
    assert any("serves 3 model(s)" in s.value for s in at.success)
    assert any("`think`" in c.value for c in at.caption)


def test_endpoint_options_are_carried_and_bad_json_is_refused_in_words(engine_calls) -> None:
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_model").set_value("m").run()
    at.text_area(key="nr_extra_body").set_value("{nope").run()
    at.button(key="nr_start").click().run()
    assert not engine_calls and any("not JSON" in e.value for e in at.error)
    at.text_area(key="nr_extra_body").set_value('{"top_p": 0.9}').run()
    at.number_input(key="nr_concurrency").set_value(8).run()
    at.button(key="nr_start").click().run()
    llm = engine_calls[-1].llm
    assert (llm.concurrency, llm.extra_body, llm.stream) == (8, {"top_p": 0.9}, True)


def test_the_library_proposer_on_an_imported_problem_is_refused_before_start_and_the_llm_offered(
        engine_calls) -> None:
    from pathlib import Path

    from engine.problem_import import import_path

    (problem,) = import_path(Path(__file__).parent / "fixtures" / "c_import" / "plain" / "scale_add.c").imported
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value(problem.slug).run()
    said = [w.value for w in at.warning if "has nothing to propose for c-scale-add" in w.value]
    assert said and "Use the LLM proposer" in said[0]
    at.button(key="nr_start").click().run()
    assert engine_calls == [] and any("has nothing to propose" in e.value for e in at.error)
    at.button(key="nr_use_llm").click().run()
    assert at.segmented_control(key="nr_proposer").value == "llm"
    assert at.text_input(key="nr_base_url")  # the LLM's fields are open


def _llm_form_against(url: str):
    at = app_at(PAGE)
    at.selectbox(key="nr_problem").set_value("transpose")
    at.segmented_control(key="nr_proposer").set_value("llm").run()
    at.text_input(key="nr_base_url").set_value(url).run()
    at.text_input(key="nr_model").set_value("some-model").run()
    return at


def test_after_a_failed_connection_test_start_asks_before_starting(engine_calls) -> None:
    at = _llm_form_against("http://127.0.0.1:9/v1")  # nothing listens on port 9: refused
    at.button(key="nr_test_endpoint").click().run()
    assert any("cannot reach" in e.value for e in at.error)
    at.button(key="nr_start").click().run()
    assert not engine_calls
    assert any("connection test of this endpoint failed" in e.value and "Start anyway" in e.value for e in at.error)
    at.checkbox(key="nr_start_anyway").check().run()
    at.button(key="nr_start").click().run()
    assert len(engine_calls) == 1 and engine_calls[0].llm.base_url == "http://127.0.0.1:9/v1"


def test_a_failed_connection_test_asks_nothing_once_the_endpoint_is_changed(engine_calls) -> None:
    at = _llm_form_against("http://127.0.0.1:9/v1")
    at.button(key="nr_test_endpoint").click().run()
    at.text_input(key="nr_base_url").set_value("http://127.0.0.1:7/v1").run()
    assert "nr_start_anyway" not in [c.key for c in at.checkbox]
    at.button(key="nr_start").click().run()
    assert len(engine_calls) == 1 and not at.error
