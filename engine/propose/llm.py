"""The LLM proposer: any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama) by base URL.

Retries with exponential backoff on rate limits, timeouts and 5xx are the openai client's own
(`max_retries`); what still fails after them becomes a proposal error the run records and shows,
marked `meta["endpoint_failure"]` so that the run can end itself when the endpoint keeps failing.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass

import openai

from engine.propose.base import Proposal, ProposalContext
from engine.propose.prompts import build_prompt
from engine.propose.replies import parse_reply


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    timeout_s: float = 120.0
    max_retries: int = 3
    max_tokens: int = 8192


class LLMProposer:
    name = "llm"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        # A local server (vLLM, Ollama) needs no key, but the client insists on a string.
        key = os.environ.get(config.api_key_env) or "not-needed"
        self.client = openai.OpenAI(base_url=config.base_url, api_key=key, timeout=config.timeout_s,
                                    max_retries=config.max_retries)

    def propose(self, context: ProposalContext) -> Proposal:
        prompt = build_prompt(context)
        base = {"origin": "llm", "prompt": prompt.user, "prompt_template": prompt.template,
                "meta": {"model": self.config.model, "base_url": self.config.base_url,
                         "temperature": self.config.temperature, "hint": context.hint}}
        language = "python" if context.problem.kind == "pytorch" else "cuda"
        started = time.perf_counter()
        try:
            response = self.client.chat.completions.create(
                model=self.config.model, temperature=self.config.temperature, max_tokens=self.config.max_tokens,
                seed=context.seed + context.step * 1000 + context.sample,
                messages=[{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}],
            )
        except openai.APITimeoutError:
            base["meta"]["endpoint_failure"] = "timeout"
            return Proposal(source="", language=language, signature="endpoint-timeout", latency_s=self._since(started),
                            error=f"the endpoint did not answer within {self.config.timeout_s:.0f} s "
                                  f"({self.config.max_retries} retries)", **base)
        except openai.APIStatusError as exc:
            base["meta"]["endpoint_failure"] = f"http-{exc.status_code}"
            return Proposal(source="", language=language, signature="endpoint-error", latency_s=self._since(started),
                            error=f"the endpoint answered HTTP {exc.status_code} after {self.config.max_retries} "
                                  f"retries: {str(exc.message)[:300]}", **base)
        except openai.APIConnectionError as exc:
            base["meta"]["endpoint_failure"] = "unreachable"
            return Proposal(source="", language=language, signature="endpoint-unreachable",
                            latency_s=self._since(started),
                            error=f"cannot reach {self.config.base_url}: {exc.__cause__ or exc}", **base)
        latency = self._since(started)
        choice = response.choices[0]
        reply = choice.message.content or ""
        usage = response.usage
        tokens = {"tokens_in": usage.prompt_tokens if usage else None,
                  "tokens_out": usage.completion_tokens if usage else None}
        parsed = parse_reply(reply, context.problem.kind, context.problem.entry,
                             truncated=choice.finish_reason == "length")
        digest = hashlib.sha256((parsed.source or reply).encode()).hexdigest()[:12]
        return Proposal(source=parsed.source or "", language=parsed.language or language, signature=f"llm:{digest}",
                        reply=reply, latency_s=latency, error=parsed.error, **tokens, **base)

    @staticmethod
    def _since(started: float) -> float:
        return time.perf_counter() - started
