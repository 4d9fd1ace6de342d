"""Asking an OpenAI-compatible endpoint whether it answers, and what it serves, before a run spends its
budget on it: `GET /v1/models` with the run's key variable, a short timeout and no retries."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import openai


@dataclass(frozen=True)
class EndpointCheck:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)
    seconds: float = 0.0


def check_endpoint(base_url: str, api_key_env: str = "OPENAI_API_KEY", model: str | None = None,
                   timeout_s: float = 10.0) -> EndpointCheck:
    """Whether `base_url` answers and lists models, in words; `model` is checked against the list."""
    client = openai.OpenAI(base_url=base_url, api_key=os.environ.get(api_key_env) or "not-needed",
                           timeout=timeout_s, max_retries=0)
    started = time.perf_counter()
    try:
        models = sorted(m.id for m in client.models.list())
    except openai.APIConnectionError as exc:
        return EndpointCheck(False, f"cannot reach {base_url}: {exc.__cause__ or exc}",
                             seconds=time.perf_counter() - started)
    except openai.APIStatusError as exc:
        hint = " (is the key variable set?)" if exc.status_code in (401, 403) else ""
        return EndpointCheck(False, f"{base_url} answered HTTP {exc.status_code}{hint}: {str(exc.message)[:200]}",
                             seconds=time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if model and models and model not in models:
        return EndpointCheck(False, f"{base_url} answers ({seconds * 1000:.0f} ms) but does not serve {model!r}; "
                                    f"it serves {', '.join(models[:20])}", models, seconds)
    return EndpointCheck(True, f"{base_url} answers ({seconds * 1000:.0f} ms) and serves {len(models)} model(s)",
                         models, seconds)
