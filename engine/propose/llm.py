"""The LLM proposer: any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama) by base URL.

Replies stream (`engine.propose.stream`): whoever asked hears the answer and the reasoning forming,
the reasoning is kept apart from the answer, and the latency splits into first token and total.

Retries with exponential backoff on rate limits, timeouts and 5xx are the openai client's own
(`max_retries`); what still fails after them becomes a proposal error the run records and shows,
marked `meta["endpoint_failure"]` so that the run can end itself when the endpoint keeps failing.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, replace

import openai

from engine.propose.base import Proposal, ProposalContext
from engine.propose.conversation import conversation
from engine.propose.prompts import build_followup, build_prompt
from engine.propose.replies import parse_reply
from engine.propose.stream import OnDelta, StreamedReply, read_stream, split_think


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    timeout_s: float = 120.0
    max_retries: int = 3
    max_tokens: int = 8192
    stream: bool = True  # replies stream (the live view and the CLI show them forming); off for servers without it
    concurrency: int = 4  # requests in flight at once to this endpoint (best-of-N, beam and MCTS samples)
    extra_body: dict | None = None  # passed through as is (vLLM/SGLang sampling options, reasoning switches)
    context_chars: int = 60_000  # conversation mode: the budget the sent conversation is kept within


class LLMProposer:
    name = "llm"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        # A local server (vLLM, Ollama) needs no key, but the client insists on a string.
        key = os.environ.get(config.api_key_env) or "not-needed"
        self.client = openai.OpenAI(base_url=config.base_url, api_key=key, timeout=config.timeout_s,
                                    max_retries=config.max_retries)

    @property
    def parallel(self) -> int:
        """How many proposals of one step may be asked for at once."""
        return max(1, self.config.concurrency)

    def propose(self, context: ProposalContext, on_delta: OnDelta | None = None) -> Proposal:
        followup = bool(context.history) and context.parent is not None
        prompt = build_followup(context) if followup else build_prompt(context)
        sent = conversation(prompt.system, context.history if followup else (), prompt.user,
                            self.config.context_chars)
        base = {"origin": "llm", "prompt": prompt.user, "prompt_template": prompt.template,
                "meta": {"model": self.config.model, "base_url": self.config.base_url,
                         "temperature": self.config.temperature, "hint": context.hint,
                         **({"conversation_turns": len(context.history), "turns_left_out": sent.left_out}
                            if followup else {})}}
        language = "python" if context.problem.kind == "pytorch" else "c" if context.target == "c-cpu" else "cuda"
        started = time.perf_counter()
        try:
            reply = self._ask(sent.messages, context, started, on_delta)
        except openai.APITimeoutError:
            base["meta"]["endpoint_failure"] = "timeout"
            return Proposal(source="", language=language, signature="endpoint-timeout", latency_s=self._since(started),
                            error=f"the endpoint did not answer within {self.config.timeout_s:.0f} s "
                                  f"({self.config.max_retries} retries)", **base)
        except openai.APIStatusError as exc:
            base["meta"]["endpoint_failure"] = f"http-{exc.status_code}"
            what = {429: "rate limit", 401: "key refused", 403: "access refused", 404: "no such model or path"}.get(
                exc.status_code, "server error" if exc.status_code >= 500 else "request refused")
            return Proposal(source="", language=language, signature="endpoint-error", latency_s=self._since(started),
                            error=f"the endpoint answered HTTP {exc.status_code} ({what}) after "
                                  f"{self.config.max_retries} retries: {str(exc.message)[:300]}", **base)
        except openai.APIConnectionError as exc:
            base["meta"]["endpoint_failure"] = "unreachable"
            return Proposal(source="", language=language, signature="endpoint-unreachable",
                            latency_s=self._since(started),
                            error=f"cannot reach {self.config.base_url}: {exc.__cause__ or exc}", **base)
        base["meta"].update(first_token_s=reply.first_token_s, finish_reason=reply.finish_reason)
        parsed = parse_reply(reply.answer, context.problem.kind, context.problem.entry,
                             truncated=reply.finish_reason == "length")
        digest = hashlib.sha256((parsed.source or reply.answer).encode()).hexdigest()[:12]
        if context.target == "c-cpu" and "__global__" not in (parsed.source or ""):
            parsed = replace(parsed, language="c")  # a ```cpp fence on a CPU run is still C for the CPU
        return Proposal(source=parsed.source or "", language=parsed.language or language, signature=f"llm:{digest}",
                        reply=reply.answer, reasoning=reply.reasoning or None, latency_s=reply.total_s,
                        error=parsed.error, tokens_in=reply.tokens_in, tokens_out=reply.tokens_out, **base)

    def _ask(self, messages: list[dict], context: ProposalContext, started: float,
             on_delta: OnDelta | None) -> StreamedReply:
        """One completion, streamed where the endpoint allows; the same record either way."""
        request = {"model": self.config.model, "temperature": self.config.temperature,
                   "max_tokens": self.config.max_tokens, "seed": context.seed + context.step * 1000 + context.sample,
                   "messages": messages}
        if self.config.extra_body:
            request["extra_body"] = dict(self.config.extra_body)
        if self.config.stream:
            chunks = self.client.chat.completions.create(**request, stream=True,
                                                         stream_options={"include_usage": True})
            return read_stream(chunks, started, on_delta)
        response = self.client.chat.completions.create(**request)
        choice, usage = response.choices[0], response.usage
        answer, thought = split_think(choice.message.content or "")
        extra = getattr(choice.message, "model_extra", None) or {}
        separate = getattr(choice.message, "reasoning_content", None) or extra.get("reasoning_content") or ""
        total = self._since(started)
        return StreamedReply(answer, "\n".join(t for t in (separate, thought) if t), choice.finish_reason, total, total,
                             usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None)

    @staticmethod
    def _since(started: float) -> float:
        return time.perf_counter() - started
