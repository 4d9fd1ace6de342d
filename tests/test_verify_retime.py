"""A correct candidate whose speed the judge's clock could not corroborate is timed once more in a fresh
process, and the second result stands whole: its speed where it earns one, its verdict where it is worse."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from engine.compilation.candidate import CandidateBuild
from engine.problems import load_problem
from engine.schema.verdict import EvaluationResult, Verdict
from engine.settings import get_settings
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.pool import JobOutcome

CHEATS = Path(__file__).parent / "cheats"
RELU = CHEATS / "problems" / "pytorch" / "relu-small"
WITHHELD = "no speed credited: the judge's own loop took 980 µs a trial, 522 more than its quietest on this work"


def withheld() -> EvaluationResult:
    return EvaluationResult(Verdict.CORRECT, "correct; no speed credited", candidate_us=10.0, baseline_us=15.0,
                            speedup=None, device="cpu", notes=[WITHHELD])


def credited() -> EvaluationResult:
    return EvaluationResult(Verdict.CORRECT, "correct", candidate_us=10.0, baseline_us=15.0, speedup=1.5, device="cpu")


class ScriptedPool:
    """One slot whose jobs end as the script says, in order; it keeps the jobs it was given."""

    size, gpu, info = 1, False, SimpleNamespace(device=None)

    def __init__(self, *results: EvaluationResult) -> None:
        self.results, self.jobs = list(results), []

    def run(self, job, timeout_s=None, fresh=False):
        self.jobs.append((job, fresh))
        return JobOutcome("ok", self.results.pop(0))

    def close(self) -> None:
        pass


def verify(pool: ScriptedPool, **options) -> EvaluationResult:
    problem = load_problem(RELU)
    verifier = Verifier(pool=pool, options=VerifyOptions(**options), settings=get_settings())
    source = (CHEATS / "honest.py").read_text()
    return verifier.run_built(problem, source, [], CandidateBuild(True, "python", "torch"))


def test_a_withheld_speed_is_timed_again_in_a_fresh_process_and_the_second_timing_stands(refinery_home):
    pool = ScriptedPool(withheld(), credited())
    result = verify(pool)
    assert result.speedup == pytest.approx(1.5) and len(pool.jobs) == 2 and pool.jobs[1][1] is True
    first, second = (job for job, _ in pool.jobs)  # new inputs, not a replay of the first timing
    assert first.timing.seed != second.timing.seed and first.configs[0].seeds != second.configs[0].seeds
    assert any("timed a second time" in n and "quietest on this work" in n for n in result.notes), result.notes


def test_a_second_timing_that_is_wrong_makes_the_candidate_wrong(refinery_home):
    wrong = EvaluationResult(Verdict.INCORRECT, "wrong on configuration 'large'", device="cpu")
    result = verify(ScriptedPool(withheld(), wrong))
    assert result.verdict == Verdict.INCORRECT and result.speedup is None


def test_a_second_withheld_timing_is_the_last_one(refinery_home):
    pool = ScriptedPool(withheld(), withheld())
    result = verify(pool)
    assert result.verdict == Verdict.CORRECT and result.speedup is None and len(pool.jobs) == 2


@pytest.mark.parametrize("first", [credited(), EvaluationResult(Verdict.INCORRECT, "wrong", device="cpu"),
                                   EvaluationResult(Verdict.CORRECT, "correct, not timed", device="cpu")],
                         ids=["credited", "incorrect", "untimed"])
def test_only_a_correct_timing_without_speed_is_timed_again(refinery_home, first):
    pool = ScriptedPool(first)
    assert verify(pool).verdict == first.verdict and len(pool.jobs) == 1


def test_re_timing_can_be_turned_off(refinery_home):
    pool = ScriptedPool(withheld())
    assert verify(pool, retime_withheld=False).speedup is None and len(pool.jobs) == 1
