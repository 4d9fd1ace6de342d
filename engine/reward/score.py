"""The unified reward and its components, kept apart so an export can re-weight them.

Integrity violations score below every honest failure (a cheat must never beat an honest wrong
answer), the structural score only counts for correct kernels ("uses shared memory" alone earns
nothing), and speed is log-scaled so a 2× and a 0.5× are symmetric. A result flagged for review (an
implausible speedup) earns no speed reward until a person clears it: its speed term is held aside
(`speed_held`) and added back by `clear_held_speed`; a person's rejection makes it a cheat's reward.
`counted_reward` is the reward that counts in each of those states, for every page that shows one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from engine.settings import RewardWeights

# The tiered form an open RL environment uses; also our failure floor for the log form.
FAILURE_REWARD = {
    "integrity_violation": -1.0,
    "proposal_error": -0.6,
    "compile_error": -0.5,
    "load_error": -0.5,
    "runtime_error": -0.4,
    "timeout": -0.4,
    "incorrect": -0.3,
}
TIERS = ((3.0, 1.0), (2.0, 0.8), (1.5, 0.6), (1.2, 0.4), (1.0, 0.2))
STRUCTURAL_CAP = 1.0
MULTI_TURN_GAMMA = 0.4


@dataclass(frozen=True)
class RewardBreakdown:
    total: float
    correct: bool
    speed: float | None  # log speedup (or the tier)
    structural: float
    coverage: float | None
    ranker: float | None
    tiered: float  # the open-environment tiered reward, always stored for comparison
    speed_held: float | None = None  # a flagged result's speed term, paid only once a person clears it
    held_weight: float = 0.0  # the speed weight it was computed with

    def to_json(self) -> dict:
        return asdict(self)


def tiered_reward(verdict: str, speedup: float | None) -> float:
    if verdict in FAILURE_REWARD:
        return FAILURE_REWARD[verdict]
    if verdict != "correct" or speedup is None:
        return 0.0
    for threshold, value in TIERS:
        if speedup >= threshold:
            return value
    return -0.1


def structural_score(features: dict[str, float]) -> float:
    """A capped score from static features: coalesced, vectorised, spill-free, well-occupied code.

    Each term is a fraction in [0, 1]; the mean is the score. Missing features count as neutral
    (0.5) so a kernel is not punished for what the analyser could not see.
    """
    terms = []
    sectors = features.get("coalescing_sectors_per_request")
    ideal = features.get("coalescing_ideal_sectors_per_request", 4.0)
    terms.append(min(1.0, ideal / sectors) if sectors else 0.5)
    occupancy = features.get("occupancy")
    terms.append(min(1.0, occupancy / 0.5) if occupancy is not None else 0.5)
    spills = features.get("spill_bytes", features.get("spills"))
    terms.append(0.0 if spills else 1.0 if spills is not None else 0.5)
    width = features.get("vector_width")
    terms.append(min(1.0, width / 16.0) if width else 0.5)
    return min(STRUCTURAL_CAP, sum(terms) / len(terms))


def unified_reward(verdict: str, speedup: float | None, features: dict[str, float] | None = None,
                   coverage: float | None = None, ranker_score: float | None = None,
                   weights: RewardWeights | None = None, flagged: bool = False) -> RewardBreakdown:
    weights = weights or RewardWeights()
    if flagged and verdict == "correct":
        held = unified_reward(verdict, None, features, coverage, ranker_score, weights)
        speed = math.log(speedup) if speedup and speedup > 0 else 0.0
        return RewardBreakdown(held.total, True, None, held.structural, coverage, ranker_score,
                               tiered_reward(verdict, None), speed_held=speed, held_weight=weights.speed)
    tier = tiered_reward(verdict, speedup)
    correct = verdict == "correct"
    structural = structural_score(features or {}) if correct else 0.0
    if verdict in FAILURE_REWARD:
        return RewardBreakdown(tier, False, None, 0.0, coverage, ranker_score, tier)
    if not correct:  # needs_gpu: compiled and analysed, nothing measured, so only the ranker speaks
        total = weights.ranker * ranker_score if ranker_score is not None else 0.0
        return RewardBreakdown(total, False, None, 0.0, coverage, ranker_score, tier)
    speed = math.log(speedup) if speedup and speedup > 0 else 0.0
    total = weights.speed * speed + weights.structural * structural
    if coverage is not None:
        total += weights.coverage * coverage
    if ranker_score is not None:
        total += weights.ranker * ranker_score
    return RewardBreakdown(total, True, speed, structural, coverage, ranker_score, tier)


def no_reward() -> RewardBreakdown:
    """What a failure of ours or of the LLM endpoint earns: nothing, neither a reward nor a penalty (the
    model did not answer, so there is nothing of it to score)."""
    return RewardBreakdown(0.0, False, None, 0.0, None, None, 0.0)


def clear_held_speed(components: dict, total: float, speedup: float | None) -> tuple[float, dict]:
    """(total, components) once a person clears a flagged result: its held speed term is paid."""
    held, weight = components.get("speed_held"), components.get("held_weight", 0.0)
    if held is None:
        return total, dict(components)
    paid = total + weight * held
    cleared = {**components, "total": paid, "speed": held, "speed_held": None, "held_weight": 0.0,
               "tiered": tiered_reward("correct", speedup)}
    return paid, cleared


def held_for_review(components: dict, total: float) -> tuple[float, dict]:
    """(total, components) of a flagged result no person has reviewed, as `unified_reward(flagged=True)`
    stores it. A named migration for rows scored before a flag held the speed term (the shipped recordings'
    flagged results carry it in their total): the term is taken out and held, with the default speed
    weight they were scored with. A row that holds it already, or has none, comes back unchanged."""
    speed = components.get("speed")
    if components.get("speed_held") is not None or speed is None or components.get("correct") is False:
        return total, dict(components)
    weight = RewardWeights().speed
    held_total = total - weight * speed
    return held_total, {**components, "total": held_total, "speed": None, "speed_held": speed,
                        "held_weight": weight, "tiered": tiered_reward("correct", None)}


def counted_reward(total: float | None, components: dict | None, flagged: bool,
                   review: str | None) -> tuple[float | None, dict]:
    """(total, components) as they count now: a flagged result awaiting review without its speed term
    (however old its row), a cleared one with it, a rejected one at a cheat's reward (stored by the review)."""
    components = dict(components or {})
    if total is None or not flagged or review is not None:
        return total, components
    return held_for_review(components, total)


def rejected_reward(components: dict) -> tuple[float, dict]:
    """(total, components) once a person rejects a flagged result: a cheat's reward, nothing held."""
    floor = FAILURE_REWARD["integrity_violation"]
    return floor, {**components, "total": floor, "correct": False, "speed": None, "speed_held": None,
                   "held_weight": 0.0, "structural": 0.0, "tiered": floor}


def anchored_rewards(turn_rewards: list[float]) -> list[float]:
    """Multi-turn rewards anchored to the first turn: later turns earn only their improvement on it."""
    if not turn_rewards:
        return []
    first = turn_rewards[0]
    return [first] + [r - first for r in turn_rewards[1:]]


def discounted_returns(turn_rewards: list[float], gamma: float = MULTI_TURN_GAMMA) -> list[float]:
    """Credit from later turns flows back with factor gamma (0.4 worked best in a multi-turn study)."""
    returns, running = [], 0.0
    for reward in reversed(turn_rewards):
        running = reward + gamma * running
        returns.append(running)
    return returns[::-1]
