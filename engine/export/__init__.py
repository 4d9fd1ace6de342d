"""Ranked datasets for reward-model, DPO, SFT and RL training: preferences (TRL columns, standard and
conversational), ranked (Bradley–Terry order), trajectories (multi-turn) and candidates (flat),
as JSONL or Parquet, streamed, with a dataset card."""

from engine.export.filters import ExportFilters
from engine.export.run import FORMATS, ExportResult, counted, export_dataset
from engine.export.schemas import KINDS

__all__ = ["FORMATS", "KINDS", "ExportFilters", "ExportResult", "counted", "export_dataset"]
