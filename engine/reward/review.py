"""A person's review of a flagged result (an implausible speedup, re-measured and still suspicious).

Until a person decides, the result earns no speed reward (its speed term is held aside) and enters no
dataset or ranker. Clearing pays the held speed term and admits the result; rejecting gives it a
cheat's reward. The decision, who made it, when and why are stored with the evaluation.
"""

from __future__ import annotations

from db.evaluations import FlagRow, apply_flag_review, get_flag
from engine.reward.score import clear_held_speed, rejected_reward


def review_flag(evaluation_id: int, decision: str, reviewer: str, note: str = "") -> FlagRow:
    """Record `decision` ("cleared" or "rejected") on a flagged evaluation; raises ValueError if it is not
    flagged, was reviewed already, or the decision or reviewer is missing."""
    flag = get_flag(evaluation_id)
    if flag is None:
        raise ValueError(f"evaluation {evaluation_id} is not flagged")
    components = dict(flag.components)
    total = flag.reward if flag.reward is not None else float(components.get("total") or 0.0)
    if decision == "cleared":
        reward, components = clear_held_speed(components, total, flag.speedup)
    else:
        reward, components = rejected_reward(components)
    return apply_flag_review(evaluation_id, decision, reviewer, note, reward, components)
