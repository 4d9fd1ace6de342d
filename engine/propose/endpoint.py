"""Asking an OpenAI-compatible endpoint whether it answers, and what it serves, before a run spends its
budget on it: `GET /v1/models` with the run's key variable, a short timeout and no retries."""

from __future__ import annotations

import ipaddress
import os
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import openai


@dataclass(frozen=True)
class EndpointCheck:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)
    seconds: float = 0.0


def is_local_endpoint(base_url: str) -> bool:
    """Whether `base_url` is served on this machine (localhost or a loopback address): such servers (vLLM,
    llama.cpp, Ollama) commonly need no key, and the client sends a placeholder when none is set."""
    host = urlsplit(base_url.strip()).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_warning(base_url: str, api_key_env: str, environ: dict[str, str] | os._Environ) -> str | None:
    """What to say when the key variable is not set: a warning for a remote endpoint, nothing for a local one."""
    name = api_key_env.strip()
    if not name or environ.get(name) or is_local_endpoint(base_url):
        return None
    return (f"`{name}` is not set in the dashboard's environment; the run process inherits this environment, so "
            "its LLM calls would fail.")


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
