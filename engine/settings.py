"""One settings object for the whole tool, read once from env vars (prefix REFINERY_), a file, defaults.

Environment variables win over `$REFINERY_HOME/settings.toml`, which wins over the defaults here, so
a team can share a file while a user overrides one value for one shell.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)


@dataclass(frozen=True)
class RewardWeights:
    """Weights of the reward's components: defined here, beside the setting that holds them, so the
    settings import nothing of the engine (`engine.reward.score` reads them from here)."""

    speed: float = 1.0
    structural: float = 0.2
    coverage: float = 0.1
    ranker: float = 0.2


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("kernel-refinery", appauthor=False))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REFINERY_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=_default_home,
                       description="The data folder: database, runs, caches, imported problems, exports, rankers.")
    database_url: str | None = Field(
        default=None, description="Another database (e.g. postgresql://user@host/db); default a SQLite file in home.")

    # Proposers
    default_proposer: Literal["library", "llm"] = Field(
        default="library", description="The proposer New run starts with: the offline library, or an LLM.")
    llm_base_url: str = Field(default="https://api.openai.com/v1",
                              description="Any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama, a gateway).")
    llm_model: str = Field(default="gpt-4o-mini", description="The model name the endpoint serves.")
    llm_api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="The environment variable holding the key; the key itself is never stored or shown to workers.")
    llm_temperature: float = Field(default=0.7, ge=0.0, le=2.0, description="Sampling temperature of LLM proposals.")
    llm_timeout_s: float = Field(default=120.0, gt=0, description="Seconds one LLM request may take.")
    llm_max_retries: int = Field(default=3, ge=0,
                                 description="The client's own retries with backoff on rate limits, timeouts and 5xx.")
    llm_prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="US dollars per million tokens (prompt, completion) by model name, for a run's cost; "
                    "e.g. llm_prices = { \"gpt-4o-mini\" = [0.15, 0.6] } in settings.toml")

    # Verification
    gpu_arch: str = Field(default="sm_90", pattern=r"^sm_\d+a?$",
                          description="The GPU architecture candidates are compiled and analysed for.")
    worker_timeout_s: float = Field(default=120.0, gt=0, description="Seconds one candidate's whole job may take.")
    worker_memory_mb: int = Field(default=16384, gt=0, description="Host memory of one candidate's whole job.")
    worker_cpu_seconds: int = Field(default=600, gt=0, description="CPU seconds of one candidate's whole job.")
    worker_file_size_mb: int = Field(default=512, gt=0, description="The largest file a candidate may write.")
    worker_scratch_mb: int = Field(
        default=4096, gt=0, description="What one candidate's job may write to its scratch folder, /tmp and /dev/shm "
                                        "(each a tmpfs of this size, in its memory while it runs).")
    worker_processes: int = Field(
        default=256, gt=0, description="Processes (and threads) one candidate's whole sandboxed job may have at once.")
    runner_spares: int = Field(default=0, ge=0,
                               description="Warm candidate processes kept per GPU; 0: from the machine's cores.")
    build_jobs: int = Field(default=0, ge=0, description="Compiles at once; 0: one per CPU core.")
    timing_cores: str = Field(
        default="auto", pattern=r"^\s*(auto|off|\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*)\s*$",
        description="Cores the judge and the candidate's runner time on, kept free of everything else of ours "
                    "(this process, compiles, warming runners): 'auto' sets one aside per slot where at least 3 "
                    "cores are usable (else shared, and each result says so); 'off' pins nothing; or a list "
                    "such as '3' or '6-7'.")
    timing_min_trials: int = Field(default=30, ge=3, description="Timed calls at least, per side.")
    timing_min_seconds: float = Field(default=1.0, ge=0, description="Seconds of timed calls (all sides together) "
                                      "unless every median is known to timing_target_ci sooner.")
    timing_target_ci: float = Field(default=0.005, ge=0, lt=1, description="Timing stops early once the candidate's "
                                    "and every baseline's median is known to this (half-width of its 95 % confidence "
                                    "interval, relative), after timing_min_trials and three blocks a side; 0 times "
                                    "for timing_min_seconds always.")
    timing_max_trials: int = Field(default=1000, ge=3, description="Timed calls at most, per side.")
    verify_gpu_region: bool = Field(
        default=True, description="A PyTorch candidate's outputs reach the judge through GPU memory the judge "
                                  "exports to the runner (device to device), instead of through host memory; the "
                                  "host region serves wherever the driver or the sandbox refuses it (said in the "
                                  "result's notes). Off: host memory always.")
    suspicious_speedup: float = Field(
        default=10.0, gt=1.0, description="A speedup above this is re-measured in a fresh process and flagged for a "
                                          "person's review (no speed reward, no dataset until cleared).")

    # Diagnostics
    ncu_path: str = Field(default="ncu", description="Nsight Compute's command (on PATH, or a full path).")
    ncu_budget_s: float = Field(default=30.0, gt=0, description="Seconds one candidate's ncu profile may take.")
    ncu_in_runs: bool = Field(default=True, description="Profile every correct candidate of a run on a GPU with ncu.")
    energy_seconds: float = Field(
        default=1.0, ge=0, description="NVML loop per side (candidate, baseline) after timing; 0 turns energy off.")

    reward: RewardWeights = Field(default_factory=RewardWeights,
                                  description="Weights of the reward's components (speed, structural, coverage, "
                                              "ranker); the components are stored apart on every evaluation.")

    # Labeling
    team_password: str | None = Field(default=None,
                                      description="A shared password labelers sign in with; none: no sign-in check.")
    overlap_share: float = Field(
        default=0.2, ge=0.0, le=1.0,
        description="How often a labeler is offered a pair one other labeler voted on, to measure agreement.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        home = Path(env_settings().get("home") or _default_home())
        toml_source = TomlConfigSettingsSource(settings_cls, toml_file=home / "settings.toml")
        return (init_settings, env_settings, toml_source)

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'refinery.db'}"

    @property
    def runs_dir(self) -> Path:
        return self.home / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def imported_problems_dir(self) -> Path:
        return self.home / "problems"

    def ensure_dirs(self) -> None:
        for path in (self.home, self.runs_dir, self.cache_dir, self.imported_problems_dir):
            path.mkdir(parents=True, exist_ok=True)


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings; tests call `get_settings.cache_clear()` after changing the environment."""
    settings = Settings()
    settings.ensure_dirs()
    return settings
