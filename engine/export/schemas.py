"""Column schemas of every export kind (Parquet needs them up front; JSONL rows have the same keys)."""

from __future__ import annotations

import pyarrow as pa

REWARD = pa.struct([("total", pa.float64()), ("correct", pa.bool_()), ("speed", pa.float64()),
                    ("structural", pa.float64()), ("coverage", pa.float64()), ("ranker", pa.float64()),
                    ("tiered", pa.float64())])

CANDIDATES = pa.schema([
    ("candidate_id", pa.int64()), ("problem", pa.string()), ("run_id", pa.int64()), ("parent_id", pa.int64()),
    ("step", pa.int64()), ("depth", pa.int64()), ("origin", pa.string()), ("strategy", pa.string()),
    ("language", pa.string()), ("target", pa.string()), ("equivalence", pa.string()), ("source", pa.string()),
    ("prompt", pa.string()), ("verdict", pa.string()), ("message", pa.string()), ("speedup", pa.float64()),
    ("candidate_us", pa.float64()),
    ("baseline_us", pa.float64()), ("baseline", pa.string()), ("config", pa.string()), ("device", pa.string()),
    ("reward", pa.float64()), ("reward_components", REWARD), ("flagged", pa.bool_()),
    ("recorded", pa.bool_()), ("features_json", pa.string()), ("created_at", pa.string()),
])

MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
_PAIR_META = [("chosen_prompt", pa.string()), ("rejected_prompt", pa.string()), ("problem", pa.string()),
              ("target", pa.string()), ("source", pa.string()), ("margin", pa.float64()),
              ("weight", pa.float64()), ("chosen_id", pa.int64()), ("rejected_id", pa.int64()),
              ("device", pa.string()), ("baseline", pa.string()), ("config", pa.string()), ("test", pa.string()),
              ("p_value", pa.float64()), ("alpha", pa.float64()), ("ratio_low", pa.float64()),
              ("ratio_high", pa.float64()), ("evaluations_chosen", pa.int64()),
              ("evaluations_rejected", pa.int64()), ("spread", pa.float64())]
PREFERENCES = pa.schema([("prompt", pa.string()), ("chosen", pa.string()), ("rejected", pa.string()), *_PAIR_META])
PREFERENCES_CONVERSATIONAL = pa.schema([("prompt", pa.list_(MESSAGE)), ("chosen", pa.list_(MESSAGE)),
                                        ("rejected", pa.list_(MESSAGE)), *_PAIR_META])

RANKED = pa.schema([
    ("problem", pa.string()), ("target", pa.string()), ("rank", pa.int64()), ("candidate_id", pa.int64()),
    ("strength", pa.float64()), ("verdict", pa.string()), ("speedup", pa.float64()), ("candidate_us", pa.float64()),
    ("device", pa.string()), ("origin", pa.string()), ("strategy", pa.string()), ("language", pa.string()),
    ("equivalence", pa.string()), ("source", pa.string()), ("reward", pa.float64()),
    ("reward_components", REWARD), ("features_json", pa.string()), ("pooled_speedup", pa.float64()),
    ("speedup_low", pa.float64()), ("speedup_high", pa.float64()), ("evaluations", pa.int64()),
])

TURN = pa.struct([("step", pa.int64()), ("candidate_id", pa.int64()), ("prompt", pa.string()),
                  ("reply", pa.string()), ("reasoning", pa.string()), ("source", pa.string()), ("verdict", pa.string()),
                  ("speedup", pa.float64()), ("reward", pa.float64()), ("feedback", pa.string())])
TRAJECTORIES = pa.schema([
    ("run_id", pa.int64()), ("problem", pa.string()), ("target", pa.string()), ("proposer", pa.string()),
    ("strategy", pa.string()), ("leaf_id", pa.int64()), ("turns", pa.list_(TURN)), ("messages", pa.list_(MESSAGE)),
    ("rewards", pa.list_(pa.float64())), ("anchored_rewards", pa.list_(pa.float64())),
    ("discounted_returns", pa.list_(pa.float64())), ("device", pa.string()),
])

SCHEMAS = {"candidates": {"default": CANDIDATES},
           "preferences": {"standard": PREFERENCES, "conversational": PREFERENCES_CONVERSATIONAL},
           "ranked": {"default": RANKED}, "trajectories": {"default": TRAJECTORIES}}
KINDS = tuple(SCHEMAS)

# What the columns a reader cannot guess mean; the card lists every column with its type and these words.
COLUMN_DOCS = {
    "target": "what the task asked for and the code answers: `cuda` (a CUDA kernel on the GPU) or `c-cpu` "
              "(the CPU form of a C problem: a C function over host pointers)",
    "equivalence": "equal for sources that are equal once comments and whitespace are gone (one candidate)",
    "prompt": "preferences: the prompt both answers were sent where it was one prompt, else the task for "
              "`target` as a model is given it from scratch (no hidden configuration); candidates: the prompt "
              "the model was sent for this candidate (none for library and human candidates)",
    "chosen_prompt": "the prompt the model was sent for the chosen answer, as stored (none: not an LLM's)",
    "rejected_prompt": "the prompt the model was sent for the rejected answer, as stored",
    "chosen": "the better candidate's code", "rejected": "the worse candidate's code",
    "source": "preferences: `measured`, `human` or `integrity`; other kinds: the candidate's code",
    "margin": "measured: |log(time ratio)|; human: 1 for a clear vote",
    "weight": "training weight: |log ratio| (measured), the labeler's agreement weight (human), 1 (integrity)",
    "device": "the device model the times were measured on", "baseline": "what the speedup is measured against",
    "config": "the input configuration that was timed",
    "test": "what decided that a measured difference holds: `between-evaluations-z`, a z-test of the two "
            "pooled medians against the spread between evaluations (not the trials of one run)",
    "ratio_low": "measured: lower end of the 1 - alpha interval of the time ratio rejected/chosen",
    "ratio_high": "measured: upper end of that interval",
    "evaluations_chosen": "measured: evaluations pooled for the chosen code (identical sources pool)",
    "evaluations_rejected": "measured: evaluations pooled for the rejected code",
    "spread": "measured: the between-evaluation standard deviation of a log time it was judged against",
    "pooled_speedup": "the median speedup over every evaluation of this code on `device` (identical sources "
                      "pooled): what a rank rests on; `speedup` is the latest single evaluation",
    "speedup_low": "lower end of the 1 - alpha interval of `pooled_speedup`",
    "speedup_high": "upper end of that interval", "evaluations": "how many evaluations `pooled_speedup` pools",
    "p_value": "the test's two-sided p-value (0.0 where it is below the smallest float64)",
    "alpha": "the level the test was run at",
    "speedup": "baseline time / candidate time on `device` (the latest evaluation)",
    "candidate_us": "median time of one call, µs",
    "strength": "Bradley–Terry log-strength within (problem, target)", "rank": "1 = strongest within (problem, target)",
    "anchored_rewards": "per-turn rewards anchored on the first turn",
    "turns": "each turn's prompt, reply, the model's reasoning (apart from the reply, never parsed as code), code, "
             "verdict, speedup, reward and the feedback sent onwards", "messages": "the conversation, turn by turn",
}


def reward_struct(components: dict | None) -> dict | None:
    if not components:
        return None
    return {name: components.get(name) for name in REWARD.names}
