"""One refinement run: problem + proposer + strategy + budget, stepped until done, stopped or killed.

The dashboard and the CLI both start the same code: `start_run` spawns `python -m engine.runs.run ID`
as its own process (never inside a Streamlit script run), `execute_run` is what that process does.
Every step is committed before its event file is written; controls are read between steps; a run
killed at any moment resumes from the database with no lost or duplicated step.
"""

from __future__ import annotations

import logging
import os
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from db import runs_repo
from db.models import Candidate, Diagnostic, Evaluation, Run, utcnow
from engine.problems import get_problem
from engine.propose import ParentView, Proposal, ProposalContext, human_proposal, library_refusal, make_proposer
from engine.propose.reply_files import ReplyStreams
from engine.runs import events as event_files
from engine.runs.step_samples import StepSamples, replies_as_they_arrive
from engine.search import Node, SearchOptions, SearchTree, make_strategy
from engine.settings import get_settings

log = logging.getLogger("refinery.run")
HEARTBEAT_S = 5.0  # how often a run process says it is alive
SILENT_AFTER_S = 45.0  # no heartbeat for this long: the process is gone (a step never blocks the heartbeat)
ENDPOINT_FAILURE_STEPS = 3  # steps in a row with every proposal failing at the endpoint: the run fails
PERMANENT_ENDPOINT_FAILURES = frozenset({"http-401", "http-403", "http-404"})  # a key or model that will not work
DEVICES = ("auto", "gpu", "cpu")

CONTROL_POLL_S = 0.5
ACTIONS = ("pause", "resume", "stop", "hint", "fork", "insert")


@dataclass
class LLMOptions:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    concurrency: int = 4  # requests in flight at once to the endpoint
    stream: bool = True
    max_tokens: int = 8192
    extra_body: dict | None = None  # passed through to the endpoint as is


@dataclass
class RunRequest:
    problem_slug: str
    proposer: str = "library"
    strategy: str = "iterative"  # iterative | best-of-n | beam | mcts
    rounds: int = 10
    samples: int = 1
    seed: int = 0
    llm: LLMOptions | None = None
    device: str = "auto"  # auto | gpu | cpu
    profile: bool = True  # on a GPU: ncu and energy for every correct candidate (about 9 s each)
    conversation: bool = False  # LLM: each round continues its path's conversation instead of a fresh prompt
    prompts: dict[str, str] = field(default_factory=dict)  # the run's own prompt templates, by name (stored)


def gpu_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no usable torch means no GPU here
        return False


def run_folder(run_id: int) -> Path:
    return get_settings().runs_dir / str(run_id)


def events_dir(run_id: int) -> Path:
    return run_folder(run_id) / "events"


def create_run(request: RunRequest) -> int:
    """Validate the request and store the run row (status queued)."""
    problem = get_problem(request.problem_slug)  # raises KeyError for an unknown slug before anything is stored
    make_strategy(request.strategy)
    if request.proposer == "library" and (refusal := library_refusal(problem)):
        raise ValueError(refusal)
    if request.proposer == "llm" and request.llm is None:
        settings = get_settings()
        request.llm = LLMOptions(settings.llm_base_url, settings.llm_model, settings.llm_api_key_env,
                                 settings.llm_temperature)
    if request.proposer not in ("library", "llm"):
        raise ValueError(f"unknown proposer {request.proposer!r}: use library or llm")
    if request.device not in DEVICES:
        raise ValueError(f"unknown device {request.device!r}: use {', '.join(DEVICES)}")
    check_prompts(request.prompts)
    run = runs_repo.create_run(Run(problem_slug=request.problem_slug, proposer=request.proposer,
                                   strategy=request.strategy, rounds_budget=request.rounds, config=asdict(request)))
    folder = run_folder(run.id)
    (folder / "events").mkdir(parents=True, exist_ok=True)
    runs_repo.update_run(run.id, folder=str(folder))
    return run.id


def spawn_run_process(run_id: int) -> subprocess.Popen:
    """A detached run process; its output goes to the run's log file."""
    folder = run_folder(run_id)
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "run.log", "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        return subprocess.Popen([sys.executable, "-m", "engine.runs.run", str(run_id)], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=Path(__file__).resolve().parents[1])
    finally:
        log.close()


def start_run(request: RunRequest) -> int:
    run_id = create_run(request)
    process = spawn_run_process(run_id)
    runs_repo.update_run(run_id, pid=process.pid)
    return run_id


class Heartbeat:
    """A thread of the run process that stamps the run row every HEARTBEAT_S while the run executes, so
    that a process killed, crashed or cut off is told apart from a slow step by anyone reading the row,
    on any machine sharing the database."""

    def __init__(self, run_id: int, every_s: float = HEARTBEAT_S) -> None:
        self.run_id, self.every_s = run_id, every_s
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"run-{run_id}-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        runs_repo.update_run(self.run_id, heartbeat_at=utcnow(), host=socket.gethostname())
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join(timeout=self.every_s + 5)

    def _beat(self) -> None:
        while not self.stopped.wait(self.every_s):
            try:
                runs_repo.update_run(self.run_id, heartbeat_at=utcnow())
            except Exception as exc:  # noqa: BLE001 - a busy database must not end the run; the next beat retries
                log.warning("run %s: heartbeat not stored: %s", self.run_id, exc)


def reap_silent_runs(now: datetime | None = None, silent_after_s: float = SILENT_AFTER_S) -> list[int]:
    """End every run that says it is live but whose process stopped giving signs of life, as failed with
    the reason and how to continue; the ids ended. Called wherever runs are shown, so no page or command
    shows a dead run as running."""
    ended = []
    for run in _silent_runs(now, silent_after_s):
        message = (f"the run process is gone ({_last_sign(run)}): continue it with `refinery runs resume {run.id}`; "
                   "nothing stored is lost")
        if _end(run.id, "failed", message):
            ended.append(run.id)
    return ended


def _silent_runs(now: datetime | None, silent_after_s: float) -> list[Run]:
    now = now or utcnow()
    return runs_repo.silent_runs(now - timedelta(seconds=silent_after_s), now - timedelta(seconds=4 * silent_after_s))


def _last_sign(run: Run) -> str:
    last = run.heartbeat_at or run.started_at
    return f"its last sign of life was at {last:%Y-%m-%d %H:%M:%S} UTC" if last else "it never started"


def _end(run_id: int, status: str, message: str) -> bool:
    event = runs_repo.end_run(run_id, status, message)
    if event is not None:
        event_files.publish(events_dir(run_id), event)
    return event is not None


def check_prompts(prompts: dict[str, str]) -> None:
    """A run's own templates must be ones we have and must still fill: a placeholder misspelt would
    otherwise fail at the first round, after the run started."""
    from engine.propose.prompts import TEMPLATE_NAMES, template_text

    for name, text in prompts.items():
        if name not in TEMPLATE_NAMES:
            raise ValueError(f"no prompt template {name!r}; one of {', '.join(TEMPLATE_NAMES)}")
        known = {field for _, field, _, _ in string.Formatter().parse(template_text(name)) if field}
        try:
            names = {field for _, field, _, _ in string.Formatter().parse(text) if field}
        except ValueError as exc:
            raise ValueError(f"prompt template {name!r} does not parse ({exc}); write a literal brace as {{{{ or }}}}"
                             ) from exc
        if unknown := names - known:
            raise ValueError(f"prompt template {name!r} uses {', '.join(sorted(unknown))}, which it is never given "
                             f"(it can use {', '.join(sorted(known)) or 'nothing'})")


def hint_refusal(run_id: int) -> str | None:
    """Why a hint would not reach this run's proposer, or None when it would (an LLM reads it in its prompt).
    Refused before it is queued: a hint accepted and then ignored misleads the person steering."""
    run = runs_repo.get_run(run_id)
    if run is None:
        return f"there is no run {run_id}"
    if run.proposer != "llm":
        return (f"run {run_id} uses the {run.proposer} proposer, which picks shipped implementations and cannot "
                "read a hint: steer it by forking from a candidate or pasting one, or start an LLM run")
    return None


def paste_refusal(run_id: int, source: str) -> str | None:
    """Why a pasted candidate cannot be one of this run's problem (said before it is queued), or None."""
    from engine.verify.entry_point import missing_entry

    run = runs_repo.get_run(run_id)
    if run is None:
        return f"there is no run {run_id}"
    problem = get_problem(run.problem_slug)
    missing = missing_entry(problem.kind, source, problem.entry)
    return f"this paste cannot be a candidate of {problem.slug}: {missing}" if missing else None


def send_control(run_id: int, action: str, payload: dict | None = None) -> None:
    if action not in ACTIONS:
        raise ValueError(f"unknown control {action!r}; one of {', '.join(ACTIONS)}")
    if action == "stop":
        silent = next((r for r in _silent_runs(None, SILENT_AFTER_S) if r.id == run_id), None)
        if silent is not None:  # no process to obey it: the run is ended now, with the reason
            _end(run_id, "stopped", f"stopped by a user; its process was already gone ({_last_sign(silent)})")
            return
    if action == "hint" and not (payload or {}).get("text", "").strip():
        raise ValueError("a hint needs some text")
    if action == "hint" and (reason := hint_refusal(run_id)):
        raise ValueError(reason)
    if action == "fork" and not (payload or {}).get("candidate_id"):
        raise ValueError("fork needs the candidate_id to expand")
    if action == "insert" and not (payload or {}).get("source", "").strip():
        raise ValueError("insert needs the candidate's source")
    if action == "insert" and (reason := paste_refusal(run_id, payload["source"])):
        raise ValueError(reason)
    runs_repo.add_control(run_id, action, payload)


@dataclass
class _Steering:
    """What the controls asked for, applied at the next step."""

    hint: str | None = None
    fork: int | None = None
    inserts: list[dict] = field(default_factory=list)
    stop: bool = False
    paused: bool = False


def _language_of(source: str, kind: str) -> str:
    if kind == "pytorch":
        return "python"
    return "cuda" if "__global__" in source or "<<<" in source else "c"


class RunExecutor:
    """Steps one run. `pipeline_factory(problem, gpu)` gives the object that evaluates proposals."""

    def __init__(self, run_id: int, pipeline_factory: Callable | None = None,
                 on_step: Callable[[int, list], None] | None = None,
                 on_phase: Callable[[str], None] | None = None) -> None:
        self.run_id = run_id
        self.on_phase = on_phase  # told what the run is doing inside a step (the CLI shows it live)
        self.run = runs_repo.get_run(run_id)
        if self.run is None:
            raise KeyError(f"no run {run_id}")
        config = self.run.config
        self.request = RunRequest(**{**config, "llm": LLMOptions(**config["llm"]) if config.get("llm") else None})
        self.problem = get_problem(self.run.problem_slug)
        self.gpu = gpu_available() if self.request.device == "auto" else self.request.device == "gpu"
        self.proposer = make_proposer(self.request.proposer, asdict(self.request.llm) if self.request.llm else None)
        self.strategy = make_strategy(self.request.strategy, SearchOptions(samples=self.request.samples))
        if pipeline_factory is None:
            from engine.runs.pipeline import RoundPipeline

            pipeline_factory = RoundPipeline
        self.pipeline = pipeline_factory(self.problem, self.gpu)
        if (set_profiling := getattr(self.pipeline, "set_profiling", None)) is not None:
            set_profiling(self.request.profile)
        self.on_step = on_step
        self.steering = _Steering()
        self.endpoint_failures, self.endpoint_cause, self.endpoint_permanent = 0, "", False
        self.tree = SearchTree()
        self.parents: dict[int, ParentView] = {}
        self.turns: dict[int, tuple] = {}  # candidate id → (parent id, asked, replied, source, language)
        self._load_tree()

    # -- state from the database -------------------------------------------------------------
    def _load_tree(self) -> None:
        for row in runs_repo.tree_rows(self.run_id):
            self._remember(row.candidate, row.evaluation, row.feedback)

    def _remember(self, candidate: Candidate, evaluation: Evaluation | None, feedback: Diagnostic | None) -> None:
        verdict = evaluation.verdict if evaluation else "runtime_error"
        findings = tuple((feedback.data or {}).get("findings", [])) if feedback else ()
        self.tree.add(Node(candidate_id=candidate.id, parent_id=candidate.parent_id, step=candidate.step or 0,
                           reward=evaluation.reward if evaluation else None, verdict=verdict,
                           signature=candidate.proposal.get("signature", candidate.source_hash), findings=findings))
        self.turns[candidate.id] = (candidate.parent_id, candidate.prompt, candidate.reply, candidate.source,
                                    candidate.language)
        self.parents[candidate.id] = ParentView(
            candidate_id=candidate.id, source=candidate.source, language=candidate.language, verdict=verdict,
            message=evaluation.message if evaluation else "", log=(evaluation.log or "") if evaluation else "",
            speedup=evaluation.speedup if evaluation else None, feedback=(feedback.text or "") if feedback else "",
            findings=findings, bottleneck=feedback.bottleneck if feedback else None, proposal=candidate.proposal)

    @property
    def steps_done(self) -> int:
        return len({n.step for n in self.tree.nodes.values()})

    # -- controls ------------------------------------------------------------------------------
    def _read_controls(self) -> None:
        for control in runs_repo.take_controls(self.run_id):
            payload = control.payload or {}
            if control.action == "stop":
                self.steering.stop = True
            elif control.action == "pause":
                self.steering.paused = True
            elif control.action == "resume":
                self.steering.paused = False
            elif control.action == "hint":
                self.steering.hint = payload["text"]
            elif control.action == "fork":
                self.steering.fork = int(payload["candidate_id"])
            elif control.action == "insert":
                self.steering.inserts.append(payload)

    def _wait_while_paused(self) -> None:
        if not self.steering.paused:
            return
        self._set_status("paused", "paused by a user")
        while self.steering.paused and not self.steering.stop:
            time.sleep(CONTROL_POLL_S)
            self._read_controls()
        if not self.steering.stop:
            self._set_status("running", "resumed")

    def _set_status(self, status: str, message: str) -> None:
        runs_repo.update_run(self.run_id, status=status)
        self._publish([runs_repo.add_event(self.run_id, status if status != "running" else "resumed", message)])

    def _publish(self, stored_events) -> None:
        for event in stored_events:
            log.info("run %s: %s: %s", self.run_id, event.kind, event.message)
            event_files.publish(events_dir(self.run_id), event)

    # -- one step ------------------------------------------------------------------------------
    def _context(self, parent_id: int | None, step: int, sample: int) -> ProposalContext:
        return ProposalContext(problem=self.problem, parent=self.parents.get(parent_id) if parent_id else None,
                               step=step, sample=sample, seed=self.request.seed, gpu=self.gpu,
                               hint=self.steering.hint, tried=frozenset(self.tree.tried()),
                               history=self._history(parent_id) if self.request.conversation else (),
                               templates=self.request.prompts or None)

    def _history(self, parent_id: int | None) -> tuple[tuple[str, str], ...]:
        """Conversation mode: (asked, replied) of every round from the root to `parent_id`. A round that no
        model wrote (a pasted or library candidate) enters as its code, in a fence, as if replied."""
        turns, current = [], parent_id
        while current is not None and current in self.turns:
            parent, asked, replied, source, language = self.turns[current]
            fence = {"python": "python", "c": "c"}.get(language, "cuda")
            turns.append((asked or "", replied or f"```{fence}\n{source}```"))
            current = parent
        return tuple(reversed(turns))

    def _ask(self, step: int) -> tuple[StepSamples, Iterator[tuple[int, Proposal]]]:
        """The step's samples and their replies as they arrive (a pasted candidate is the step's one sample)."""
        if self.steering.inserts:
            insert = self.steering.inserts.pop(0)
            source = insert["source"]
            parent = insert.get("parent_id")
            pasted = human_proposal(source, _language_of(source, self.problem.kind), insert.get("author"),
                                    insert.get("note", ""))
            return StepSamples([int(parent) if parent else None]), iter([(0, pasted)])
        if self.steering.fork is not None:
            parents = [self.steering.fork] * self.request.samples
            self.steering.fork = None
        else:
            parents = self.strategy.plan(self.tree)
        return StepSamples(parents), self._replies(parents, step)

    def _replies(self, parents: list[int | None], step: int) -> Iterator[tuple[int, Proposal]]:
        """(sample, proposal) for each parent as each reply arrives; concurrently where the proposer allows
        (an LLM endpoint's `concurrency`), so best-of-N, beam and MCTS samples wait for the slowest reply,
        not for the sum, and each one's build can start as soon as it is in."""
        contexts = [self._context(parent, step, sample) for sample, parent in enumerate(parents)]
        streams = ReplyStreams(run_folder(self.run_id) / "stream", step) if self.request.proposer == "llm" else None

        def ask(context: ProposalContext) -> Proposal:
            if streams is None:
                return self.proposer.propose(context)
            proposal = self.proposer.propose(context, on_delta=streams.listener(context.sample, self._phase))
            streams.complete(context.sample, proposal.reply, proposal.reasoning)
            return proposal

        width = min(len(contexts), getattr(self.proposer, "parallel", 1))
        return replies_as_they_arrive(ask, contexts, width, f"run-{self.run_id}-ask")

    def _evaluate(self, step: int, samples: StepSamples, replies: Iterator[tuple[int, Proposal]]) -> dict:
        """Outcomes by sample index. A pipeline that can (`evaluate_stream`) takes each reply as it arrives;
        one that cannot gets the step's proposals at once, in request order."""
        stream = getattr(self.pipeline, "evaluate_stream", None)
        try:
            if stream is not None:
                return stream(self._fed(step, samples, replies))
            taken = list(self._fed(step, samples, iter(sorted(replies, key=lambda reply: reply[0]))))
            evaluated = self.pipeline.evaluate([proposal for _, proposal in taken]) if taken else []
            return {index: outcome for (index, _), outcome in zip(taken, evaluated, strict=True)}
        finally:
            if isinstance(replies, Generator):
                replies.close()  # ended early (Ctrl-C, an error): no request not yet sent goes out

    def _fed(self, step: int, samples: StepSamples, replies: Iterator[tuple[int, Proposal]]
             ) -> Iterator[tuple[int, Proposal]]:
        """The replies to evaluate, as they arrive; once the last is in, says what the step builds."""
        for index, proposal in samples.to_evaluate(replies):
            if len(samples.parents) > 1:
                self._phase(f"step {step}: sample {index} is in ({len(samples.arrived)} of {len(samples.parents)})")
            yield index, proposal
        if planned := samples.planned():
            parents = ", ".join(f"#{s.parent}" if s.parent else "scratch" for s in planned)
            log.info("run %s: step %s: evaluating %s proposal(s) from %s", self.run_id, step, len(planned), parents)
            self._phase(f"step {step}: building and verifying {len(planned)} candidate(s) from {parents} "
                        f"on {self.pipeline.device_name}")

    def _stored(self, parent_id: int | None, proposal: Proposal, outcome) -> runs_repo.StoredStep:
        from engine.compilation.cuda import content_key

        parent = self.tree.nodes.get(parent_id) if parent_id else None
        depth = 0
        while parent is not None:
            depth += 1
            parent = self.tree.nodes.get(parent.parent_id) if parent.parent_id else None
        proposal.meta.setdefault("signature", proposal.signature)
        candidate = Candidate(
            problem_slug=self.problem.slug, parent_id=parent_id, depth=depth, origin=proposal.origin,
            strategy=proposal.strategy, language=proposal.language, source=proposal.source,
            source_hash=content_key(proposal.source), prompt=proposal.prompt, reply=proposal.reply,
            reasoning=proposal.reasoning,
            prompt_template=proposal.prompt_template, proposal=proposal.meta, tokens_in=proposal.tokens_in,
            tokens_out=proposal.tokens_out, latency_s=proposal.latency_s)
        return runs_repo.StoredStep(candidate, outcome.evaluation_row(), outcome.diagnostic_rows())

    def step(self) -> list:
        """Propose, evaluate and store one step; an empty list when the proposer had nothing new."""
        step = self.tree.last_step() + 1
        self._phase(f"step {step}: asking the {self.request.proposer} proposer")
        samples, replies = self._ask(step)
        outcomes = self._evaluate(step, samples, replies)
        planned = samples.planned()  # request order, whatever the order the replies came in
        if not planned:
            log.info("run %s: step %s: the proposer has nothing new", self.run_id, step)
            return []
        items = [self._stored(s.parent, s.proposal, outcomes[s.evaluated]) for s in planned]
        self._count_endpoint_failures([s.proposal for s in planned])
        stored_events = runs_repo.store_step(self.run_id, step, items)
        for item in items:
            feedback = next((d for d in item.diagnostics if d.kind == "feedback"), None)
            self._remember(item.candidate, item.evaluation, feedback)
        self._publish(stored_events)
        self.steering.hint = None  # a hint steers the step after it was given
        if self.on_step:
            self.on_step(step, items)
        return items

    def _phase(self, text: str) -> None:
        if self.on_phase is not None:
            self.on_phase(text)

    def _count_endpoint_failures(self, proposals: list[Proposal]) -> None:
        """Steps in a row whose every proposal failed at the LLM endpoint; the cause of the last one."""
        failures = [p.meta.get("endpoint_failure") for p in proposals]
        if failures and all(failures):
            self.endpoint_failures += 1
            self.endpoint_cause = proposals[-1].error or str(failures[-1])
            self.endpoint_permanent = any(f in PERMANENT_ENDPOINT_FAILURES for f in failures)
        else:
            self.endpoint_failures, self.endpoint_permanent = 0, False

    def _endpoint_gave_up(self) -> str | None:
        """Why the run ends as failed: the endpoint refused for good (a bad key, an unknown model) or kept
        failing for ENDPOINT_FAILURE_STEPS steps after the client's own retries; None while it may recover."""
        if self.endpoint_permanent or self.endpoint_failures >= ENDPOINT_FAILURE_STEPS:
            steps = "1 step" if self.endpoint_failures == 1 else f"{self.endpoint_failures} steps in a row"
            return f"the LLM endpoint failed ({steps}): {self.endpoint_cause}"
        return None

    # -- the whole run -------------------------------------------------------------------------
    def execute(self) -> str:
        self._publish_missing()
        runs_repo.update_run(self.run_id, status="running", pid=os.getpid(), device=self.pipeline.device_name,
                             started_at=self.run.started_at or utcnow())
        resumed = self.steps_done > 0
        self._publish([runs_repo.add_event(self.run_id, "resumed" if resumed else "started",
                                           f"{'resumed at' if resumed else 'starting'} step {self.steps_done} of "
                                           f"{self.request.rounds} on {self.pipeline.device_name}")])
        try:
            with Heartbeat(self.run_id):
                return self._loop()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                self._finish("stopped", "interrupted in its terminal (Ctrl-C); resume it to continue")
            else:
                self._finish("failed", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self.pipeline.close()

    def _loop(self) -> str:
        while True:
            self._read_controls()
            self._wait_while_paused()
            if self.steering.stop:
                return self._finish("stopped", "stopped by a user")
            if self.steps_done >= self.request.rounds and not self.steering.inserts:
                return self._finish(*self._ending(f"finished {self.steps_done} steps"))
            if not self.step():
                return self._finish(*self._ending(f"finished after {self.steps_done} steps: the "
                                                  f"{self.request.proposer} proposer has nothing left that this "
                                                  "run has not tried"))
            if (cause := self._endpoint_gave_up()) is not None:
                return self._finish("failed", cause)

    def _ending(self, finished: str) -> tuple[str, str]:
        """How a run that ran out of steps ends: failed where every step it made failed at the endpoint (a
        2-round run against a dead endpoint never reaches the 3-step rule, and is no finished run), else
        finished."""
        if self.steps_done and self.endpoint_failures >= self.steps_done:
            steps = "its only step" if self.steps_done == 1 else f"all {self.steps_done} steps"
            return "failed", f"the LLM endpoint failed ({steps}): {self.endpoint_cause}"
        return "finished", finished

    def _publish_missing(self) -> None:
        event_files.republish_missing(events_dir(self.run_id), runs_repo.events(self.run_id))

    def _finish(self, status: str, message: str) -> str:
        runs_repo.update_run(self.run_id, status=status, finished_at=utcnow(),
                             error=message if status == "failed" else None)
        self._publish([runs_repo.add_event(self.run_id, status, message)])
        return status


def execute_run(run_id: int, pipeline_factory: Callable | None = None, on_step: Callable | None = None,
                on_phase: Callable[[str], None] | None = None) -> str:
    return RunExecutor(run_id, pipeline_factory, on_step, on_phase).execute()



def load_recorded() -> int:
    """The shipped recordings of real GPU runs, loaded into this database (see engine.store.recorded)."""
    from engine.store.recorded import load_recorded as load

    return load()


def configure_run_log() -> None:
    """The run process's own lines (steps, events, warnings, tracebacks) go to stderr, which
    `spawn_run_process` sends to the run folder's run.log, with times to read them against the rounds."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # the database upgrade on opening says what it does at INFO ("Context impl SQLiteImpl", one line per
    # revision): not the run's story; its warnings and errors still come through
    logging.getLogger("alembic").setLevel(logging.WARNING)


if __name__ == "__main__":
    from engine.store.database import use_settings_database

    configure_run_log()
    use_settings_database()
    execute_run(int(sys.argv[1]))
