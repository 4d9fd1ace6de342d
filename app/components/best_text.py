"""Words for a run's best (`engine.rank.best.RunBest`): its pooled speedup, the interval it is known to,
and whether it holds over the runner-up, so no page shows a best without saying how far it can be trusted."""

from __future__ import annotations

from app.components.style import fmt_speedup
from engine.rank.best import RunBest
from engine.rank.comparable import ALPHA


def standing(best: RunBest | None) -> str:
    """A few words for a table cell."""
    if best is None:
        return ""
    if best.contenders == 1:
        return "only code measured"
    return "holds" if best.holds else "not separable from the runner-up"


def interval(best: RunBest) -> str:
    return f"{best.speedup_low:.2f}–{best.speedup_high:.2f}×"


def note(best: RunBest | None) -> str:
    """What the run page says under its "Best speedup"."""
    if best is None:
        return "No correct, admitted, timed candidate yet (flagged results count once a person clears them)."
    level = f"{100 * (1 - ALPHA):.0f} %"
    times = "evaluation" if best.evaluations == 1 else f"{best.evaluations} evaluations"
    head = (f"Best: the code of candidate #{best.candidate_id}, median of {times} "
            f"({interval(best)}, {level} interval"
            f"{', ' + best.device if best.device else ''}).")
    if best.runner_up_id is None:
        return f"{head} The only code this run measured there."
    runner = (f"the runner-up #{best.runner_up_id} ({fmt_speedup(best.runner_up_speedup)}, "
              f"{best.runner_up_evaluations} evaluation{'s' if best.runner_up_evaluations != 1 else ''})")
    ratio = f"{best.ratio_low:.2f}–{best.ratio_high:.2f}×"
    if best.holds:
        return f"{head} It holds over {runner}: faster by {ratio}, more than times move between evaluations."
    return (f"{head} It does not hold over {runner}: the difference ({ratio}) is within how far times move "
            f"between evaluations, so either may be the faster.")
