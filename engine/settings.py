"""One settings object for the whole tool, read once from env vars (prefix REFINERY_), a file, defaults.

Environment variables win over `$REFINERY_HOME/settings.toml`, which wins over the defaults here, so
a team can share a file while a user overrides one value for one shell.
"""

from __future__ import annotations

import functools
from pathlib import Path

import platformdirs
from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from engine.reward import RewardWeights


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("kernel-refinery", appauthor=False))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REFINERY_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=_default_home)
    database_url: str | None = None

    # Proposers
    default_proposer: str = "library"
    llm_base_url: str = "https://api.openai.com/v1"
    llm_model: str = "gpt-4o-mini"
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_temperature: float = 0.7
    llm_timeout_s: float = 120.0
    llm_max_retries: int = 3
    llm_prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="US dollars per million tokens (prompt, completion) by model name, for a run's cost; "
                    "e.g. llm_prices = { \"gpt-4o-mini\" = [0.15, 0.6] } in settings.toml")

    # Verification
    gpu_arch: str = "sm_90"
    worker_timeout_s: float = 120.0
    worker_memory_mb: int = 16384
    worker_cpu_seconds: int = 600
    worker_file_size_mb: int = 512
    worker_processes: int = 256  # processes (and threads) one candidate's whole sandboxed job may have at once
    runner_spares: int = 0  # warm candidate processes kept per GPU; 0: from the machine's cores
    build_jobs: int = 0  # 0 = one per CPU core
    timing_cores: str = Field(
        default="auto", pattern=r"^\s*(auto|off|\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*)\s*$",
        description="Cores the judge and the candidate's runner time on, kept free of everything else of ours "
                    "(this process, compiles, warming runners): 'auto' sets one aside per slot where at least 3 "
                    "cores are usable (else shared, and each result says so); 'off' pins nothing; or a list "
                    "such as '3' or '6-7'.")
    timing_min_trials: int = 30
    timing_min_seconds: float = 1.0
    timing_max_trials: int = 1000
    suspicious_speedup: float = 10.0

    # Diagnostics
    ncu_path: str = "ncu"
    ncu_budget_s: float = 30.0
    ncu_in_runs: bool = True  # profile every correct candidate of a run on a GPU
    energy_seconds: float = 1.0  # NVML loop per side (candidate, baseline) after timing; 0 turns energy off

    reward: RewardWeights = Field(default_factory=RewardWeights)

    # Labeling
    team_password: str | None = None
    overlap_share: float = 0.2

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
