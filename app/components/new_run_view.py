"""The New run page's form, turned into the engine's `RunRequest`.

Building the request is pure (`build_request`), so its rules are tested without a browser: the
LLM's key is named by the environment variable that holds it and is never stored or shown.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import streamlit as st

from app.components import data, engine_api
from app.components.errors import show_error
from db import queries
from engine.problems import Problem

STRATEGIES = {"iterative": "Iterative (one child of the best so far)", "best-of-n": "Best of N (N samples a round)",
              "beam": "Beam (keep the best N, widen each)", "mcts": "MCTS (progressive widening, pruning)"}
START_ANYWAY = "Start anyway, though the connection test failed"
FAILED_TEST = "nr_failed_test"  # session key: (endpoint, why) of the last connection test that failed
DEVICES = {"auto": "Auto (a GPU if there is one)", "gpu": "GPU (CUDA)", "cpu": "CPU only"}


@dataclass(frozen=True)
class RunForm:
    problem_slug: str
    proposer: str
    strategy: str
    rounds: int
    samples: int
    seed: int
    device: str
    profile: bool = True
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    temperature: float = 0.7
    conversation: bool = False
    prompts: dict[str, str] = field(default_factory=dict)  # templates whose wording this run changes
    concurrency: int = 4
    max_tokens: int = 8192
    stream: bool = True
    extra_body: str = ""  # JSON text, checked before the run starts
    library_refusal: str = ""  # why the library proposer has nothing for this problem (engine.propose)
    failed_test: str = ""  # why this endpoint's connection test failed, unless the user chose to start anyway


def form_problems(form: RunForm) -> list[str]:
    """What keeps the form from starting a run, in words (empty when it can start)."""
    problems = []
    if not form.problem_slug:
        problems.append("Choose a problem.")
    if form.proposer == "library" and form.library_refusal:
        problems.append(form.library_refusal)
    if form.proposer == "llm":
        if not form.base_url.strip():
            problems.append("The LLM proposer needs a base URL (any OpenAI-compatible endpoint).")
        if not form.model.strip():
            problems.append("The LLM proposer needs a model name.")
        if not form.api_key_env.strip():
            problems.append("Name the environment variable that holds the API key.")
        if form.extra_body.strip():
            try:
                if not isinstance(json.loads(form.extra_body), dict):
                    problems.append("Extra request fields must be a JSON object.")
            except json.JSONDecodeError as exc:
                problems.append(f"Extra request fields are not JSON: {exc}.")
        if form.failed_test:
            problems.append(f"The connection test of this endpoint failed ({form.failed_test}). Test it again, "
                            f"or tick “{START_ANYWAY}” to start regardless.")
    if form.rounds < 1:
        problems.append("A run needs at least one round.")
    return problems


def build_request(form: RunForm, runs_module):
    """The engine's RunRequest for a valid form."""
    llm = None
    if form.proposer == "llm":
        llm = runs_module.LLMOptions(base_url=form.base_url.strip(), model=form.model.strip(),
                                     api_key_env=form.api_key_env.strip(), temperature=float(form.temperature),
                                     concurrency=form.concurrency, max_tokens=form.max_tokens, stream=form.stream,
                                     extra_body=json.loads(form.extra_body) if form.extra_body.strip() else None)
    return runs_module.RunRequest(problem_slug=form.problem_slug, proposer=form.proposer, strategy=form.strategy,
                                  rounds=int(form.rounds), samples=int(form.samples), seed=int(form.seed),
                                  llm=llm, device=form.device, profile=form.profile and form.device != "cpu",
                                  conversation=form.proposer == "llm" and form.conversation,
                                  prompts=dict(form.prompts) if form.proposer == "llm" else {})


def _problem_label(problems: dict[str, Problem], slug: str) -> str:
    p = problems.get(slug)
    return f"{slug} — {p.title} ({p.kind}{', runs on the CPU' if p.runs_on_cpu else ''})" if p else slug


def _library_refusal(problems: dict[str, Problem], slug: str | None) -> str | None:
    from engine.propose import library_refusal

    problem = problems.get(slug or "")
    return library_refusal(problem) if problem is not None else None


def cpu_warning(problems: dict[str, Problem], slug: str | None, proposer: str, device: str, gpu: bool) -> str | None:
    """What a CPU run of this problem would give, said before it starts, where its rounds would never run."""
    problem = problems.get(slug or "")
    on_cpu = device == "cpu" or (device == "auto" and not gpu)
    if problem is None or not on_cpu or proposer != "library" or problem.runs_on_cpu:
        return None
    usable = sorted(s for s, p in problems.items() if p.runs_on_cpu)
    return (f"{slug} ships no CPU implementation: on the CPU the library's candidates are compiled and analysed "
            "but never run (every round `needs_gpu`). Problems whose rounds run on the CPU: "
            + (", ".join(usable) if usable else "none in this library") + ".")


def form(problems: dict[str, Problem], gpu: bool) -> tuple[RunForm, bool]:
    """The widgets; returns the form's values and whether Start was pressed."""
    from engine.settings import get_settings

    settings = get_settings()
    slugs = sorted(problems)
    wanted = st.query_params.get("problem")
    if wanted in slugs and st.session_state.get("nr_problem_from") != wanted:
        st.session_state["nr_problem"] = wanted  # arriving from a problem's "New run" button
        st.session_state["nr_problem_from"] = wanted
    elif st.session_state.get("nr_problem") not in slugs:
        st.session_state["nr_problem"] = slugs[0] if slugs else None
    left, right = st.columns([3, 2], gap="large")
    with left:
        slug = st.selectbox("Problem", slugs, key="nr_problem", format_func=lambda s: _problem_label(problems, s),
                            placeholder="Choose a problem")
        proposer = st.segmented_control("Proposer", ["library", "llm"], key="nr_proposer", required=True,
                                        default=settings.default_proposer if settings.default_proposer in
                                        ("library", "llm") else "library",
                                        format_func={"library": "Library (offline)", "llm": "LLM"}.get)
        base_url = model = key_env = ""
        temperature = settings.llm_temperature
        conversation = False
        prompts: dict[str, str] = {}
        concurrency, max_tokens, stream, extra_body = 4, 8192, True, ""
        failed_test = ""
        if proposer == "llm":
            from engine.propose.endpoint import key_warning

            with st.container(border=True):
                base_url = st.text_input("Base URL", value=settings.llm_base_url, key="nr_base_url",
                                         help="Any OpenAI-compatible endpoint.")
                model = st.text_input("Model", value=settings.llm_model, key="nr_model")
                key_env = st.text_input("API key from environment variable", value=settings.llm_api_key_env,
                                        key="nr_key_env", help="The key stays in the environment: the run "
                                        "process reads it, the database never stores it.")
                if warning := key_warning(base_url, key_env, os.environ):
                    st.warning(warning, icon=":material/key_off:")
                elif key_env.strip() and not os.environ.get(key_env.strip()):
                    st.caption(f"`{key_env.strip()}` is not set: fine for a local endpoint that needs no key "
                               "(Test connection tells).")
                temperature = st.slider("Temperature", 0.0, 2.0, float(settings.llm_temperature), 0.05,
                                        key="nr_temperature")
                if st.button("Test connection", icon=":material/network_check:", key="nr_test_endpoint"):
                    endpoint_check(base_url, key_env, model)
                failed_test = failed_test_confirmation(base_url, key_env, model)
                with st.expander("Endpoint options", icon=":material/tune:"):
                    o1, o2 = st.columns(2)
                    concurrency = o1.number_input("Requests at once", min_value=1, max_value=64, value=4,
                                                  key="nr_concurrency")
                    max_tokens = o2.number_input("Max tokens", min_value=1, value=8192, step=512, key="nr_max_tokens")
                    stream = st.toggle("Stream replies", value=True, key="nr_stream")
                    extra_body = st.text_area("Extra request fields (JSON, passed as is)", key="nr_extra_body",
                                              placeholder='{"top_p": 0.95, "chat_template_kwargs": {"thinking": true}}')
                prompts = prompt_editor(problems.get(slug or ""))
                conversation = st.toggle("Conversation: each round continues its path's conversation (its "
                                         "earlier replies, verdicts and diagnoses), not a fresh prompt",
                                         key="nr_conversation")
        elif refusal := _library_refusal(problems, slug):
            st.warning(refusal, icon=":material/inventory_2:")
            st.button("Use the LLM proposer", icon=":material/smart_toy:", key="nr_use_llm",
                      on_click=lambda: st.session_state.update(nr_proposer="llm"))
        else:
            st.caption("The library proposer searches the problem's shipped implementations and their tunable "
                       "constants, steered by each round's feedback. It needs no network.")
    with right:
        strategy = st.selectbox("Search strategy", list(STRATEGIES), format_func=STRATEGIES.get, key="nr_strategy")
        c1, c2 = st.columns(2)
        rounds = c1.number_input("Rounds", min_value=1, max_value=500, value=8, step=1, key="nr_rounds")
        samples = c2.number_input("Samples per round", min_value=1, max_value=64,
                                  value=1 if strategy == "iterative" else 4, step=1, key="nr_samples",
                                  disabled=strategy == "iterative")
        seed = c1.number_input("Seed", min_value=0, value=0, step=1, key="nr_seed")
        device = c2.selectbox("Device", list(DEVICES), format_func=DEVICES.get, key="nr_device")
        if not gpu and device != "cpu":
            st.caption("No GPU here: CUDA candidates are compiled and analysed, not run; CPU candidates of C "
                       "problems run.")
        if warning := cpu_warning(problems, slug, proposer or "library", device, gpu):
            st.warning(warning, icon=":material/memory:")
        cpu_only = device == "cpu" or not gpu  # nothing to profile: ncu and NVML need a GPU
        if cpu_only:
            st.session_state["nr_profile"] = False
        profile = st.checkbox("Profile correct candidates (ncu and energy)",
                              value=settings.ncu_in_runs and not cpu_only, key="nr_profile", disabled=cpu_only,
                              help="On a GPU, each correct candidate gets Nsight Compute metrics (about 7 s) and "
                                   "its energy per call beside the baseline's (about 2 s). Off: static "
                                   "diagnostics only, faster rounds.")
    start = st.button("Start run", type="primary", icon=":material/play_arrow:", key="nr_start")
    values = RunForm(problem_slug=slug or "", proposer=proposer or "library", strategy=strategy,
                     rounds=int(rounds), samples=1 if strategy == "iterative" else int(samples), seed=int(seed),
                     device=device, profile=bool(profile), base_url=base_url, model=model, api_key_env=key_env,
                     temperature=float(temperature), conversation=bool(conversation), prompts=prompts,
                     concurrency=int(concurrency), max_tokens=int(max_tokens), stream=bool(stream),
                     extra_body=extra_body, library_refusal=_library_refusal(problems, slug) or "",
                     failed_test=failed_test)
    return values, start


def prompt_editor(problem: Problem | None) -> dict[str, str]:
    """The prompts this run will send, editable; only the templates changed here are stored with the run
    (each candidate records which wording it was asked with)."""
    from engine.propose.prompts import template_text

    task = "refine_pytorch" if problem is None or problem.kind == "pytorch" else "refine_c"
    changed = {}
    with st.expander("Prompts (this run's wording)", icon=":material/edit_note:"):
        st.caption("Placeholders in braces are filled per round; a literal brace is written twice.")
        for name in ("system", task, "parent", "followup"):
            shipped = template_text(name)
            text = st.text_area(name, value=shipped, height=160, key=f"nr_prompt_{name}")
            if text != shipped:
                changed[name] = text
    return changed


def _endpoint(base_url: str, key_env: str, model: str) -> tuple[str, str, str]:
    return base_url.strip(), key_env.strip(), model.strip()


def endpoint_check(base_url: str, key_env: str, model: str) -> None:
    """Ask the endpoint for its models before a run spends its budget on it; the answer in words. A failure
    is remembered for this endpoint, so Start asks before starting a run against it."""
    from engine.propose.endpoint import check_endpoint

    with st.spinner("Asking the endpoint…"):
        found = check_endpoint(base_url.strip(), key_env.strip() or "OPENAI_API_KEY", model.strip() or None)
    if found.ok:
        st.session_state.pop(FAILED_TEST, None)
        st.success(found.message, icon=":material/check:")
    else:
        st.session_state[FAILED_TEST] = (_endpoint(base_url, key_env, model), found.message)
        st.session_state["nr_start_anyway"] = False
        st.error(found.message, icon=":material/cloud_off:")
    if found.models:
        st.caption("Served: " + ", ".join(f"`{m}`" for m in found.models[:30]))


def failed_test_confirmation(base_url: str, key_env: str, model: str) -> str:
    """Where the last connection test of this very endpoint failed: a box to start anyway. Returns why the
    test failed while the box is unticked (the form then refuses to start), else ""."""
    endpoint, why = st.session_state.get(FAILED_TEST) or (None, "")
    if endpoint != _endpoint(base_url, key_env, model):
        return ""  # never tested, passed, or the endpoint was changed since
    anyway = st.checkbox(START_ANYWAY, key="nr_start_anyway",
                         help="Every step of a run against an endpoint that does not answer fails; a run whose "
                              "every step failed ends failed.")
    return "" if anyway else why


def sandbox_notice() -> None:
    """What candidate code will run behind, and loudly what this machine lacks of it."""
    from engine.sandbox import boundary

    where = boundary()
    if where.missing:
        st.warning(f"{where.summary()}. Missing here: " + "; ".join(where.missing) + ". Every verdict says so in "
                   "its notes.", icon=":material/shield:")
    else:
        st.caption(f":material/shield: {where.summary()}.")


def start(values: RunForm) -> int | None:
    """Validate, then ask the engine to spawn the run process; errors are said where the button is."""
    issues = form_problems(values)
    if issues:
        for issue in issues:
            st.error(issue, icon=":material/error:")
        return None
    try:
        runs = engine_api.runs_module()
        with st.spinner("Starting the run process…", show_time=True):
            run_id = runs.start_run(build_request(values, runs))
    except Exception as exc:  # noqa: BLE001 - shown in words under the button
        show_error("start the run", exc)
        return None
    st.session_state["nr_last_run"] = run_id
    data._recent_runs.clear()
    return run_id


def started(run_id: int) -> None:
    """Where the new run lives, and the way to watch it."""
    summary = queries.get_run(run_id)
    log = engine_api.log_path(summary) if summary else None
    with st.container(border=True, key="run_started"):
        st.success(f"Run #{run_id} started.", icon=":material/rocket_launch:")
        if log:
            st.markdown(f"Its log is at `{log}`; its events at `{log.parent / 'events'}`.")
        if st.button("Open the live view", type="primary", icon=":material/monitoring:", key="nr_open"):
            st.switch_page("views/run_live.py", query_params={"run": str(run_id)})
