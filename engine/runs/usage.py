"""What a run's LLM calls used: tokens in and out, and their cost where the settings price the model
(`llm_prices`); no price, no cost shown (never a guessed one)."""

from __future__ import annotations

from dataclasses import dataclass

from db import runs_repo


@dataclass(frozen=True)
class RunUsage:
    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None  # None: the model has no price in the settings
    model: str | None

    def describe(self) -> str:
        if not self.calls:
            return "no LLM calls"
        cost = f", ${self.cost_usd:.4f}" if self.cost_usd is not None else " (no price set for this model)"
        return f"{self.calls} LLM call(s), {self.tokens_in:,} tokens in, {self.tokens_out:,} out{cost}"


def run_usage(run_id: int, prices: dict[str, tuple[float, float]] | None = None) -> RunUsage:
    if prices is None:
        from engine.settings import get_settings

        prices = get_settings().llm_prices
    rows = [r.candidate for r in runs_repo.tree_rows(run_id) if r.candidate.origin == "llm"]
    tokens_in = sum(c.tokens_in or 0 for c in rows)
    tokens_out = sum(c.tokens_out or 0 for c in rows)
    models = {c.proposal.get("model") for c in rows if c.proposal.get("model")}
    model = next(iter(models)) if len(models) == 1 else None
    price = prices.get(model) if model else None
    cost = (tokens_in * price[0] + tokens_out * price[1]) / 1e6 if price else None
    return RunUsage(len(rows), tokens_in, tokens_out, cost, model)
