"""Training on a small generated set: held-out quality, versioned storage, scoring, prescreen, CLI."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import numpy as np
import pytest
from typer.testing import CliRunner

from db.labels import LabelRow, list_ranker_models, load_evidence, reserve_ranker_version
from engine.rank import prescreen, score_candidates
from engine.rank.model import FitConfig
from engine.rank.synthetic import SyntheticConfig, synthetic_evidence, write_synthetic
from engine.rank.training import NoTrainingData, TrainConfig, evaluate_version, train, train_on

FAST = TrainConfig(fit=FitConfig(min_steps=200))


def test_a_ranker_trained_on_generated_problems_beats_the_baselines_on_held_out_problems():
    evidence = synthetic_evidence(SyntheticConfig(problems=16, candidates_per_problem=14, seed=2))
    trained = train_on(evidence, [], FAST)
    held = trained.metrics["heldout"]
    measured = held["by_source"]["measured"]["accuracy"]
    assert measured >= 0.85
    for baseline in ("fewer_registers", "higher_occupancy"):
        assert measured > held["baselines"][baseline]["measured"] + 0.1
    assert held["baselines"]["random"]["measured"] == 0.5
    assert held["all"]["auc"] > 0.9 and held["ece"] < 0.2
    assert held["within_problem"]["kendall_tau"] > 0.5


def test_the_learning_curve_and_the_driving_features_are_recorded():
    trained = train_on(synthetic_evidence(SyntheticConfig(problems=6, candidates_per_problem=10)), [], FAST)
    curve = trained.metrics["curve"]
    assert curve[-1]["train_loss"] < curve[0]["train_loss"] and "heldout_accuracy" in curve[-1]
    top = [row["feature"] for row in trained.metrics["importance"][:8]]
    assert any(name.startswith("static:") for name in top)


def test_human_votes_enter_training_weighted_and_are_evaluated_against_the_stopwatch():
    evidence = synthetic_evidence(SyntheticConfig(problems=6, candidates_per_problem=8, incorrect_share=0.0))
    by_problem: dict[str, list] = {}
    for e in evidence:
        by_problem.setdefault(e.problem_slug, []).append(e)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    labels = []
    for items in by_problem.values():
        for x, y in zip(items[::2], items[1::2], strict=False):
            faster = x if x.candidate_us < y.candidate_us else y
            labels.append(LabelRow(id=len(labels) + 1, candidate_a_id=x.id, candidate_b_id=y.id, labeler_id=1,
                                   session_id=None, choice="a" if faster is x else "b", tags=(), note="",
                                   blind=False, undone=False, created_at=now))
    trained = train_on(evidence, labels, FAST, labeler_weights={1: 0.8})
    assert trained.data["pairs"]["train"]["human"] > 0
    oracle = trained.metrics["heldout"]["baselines"]["measured_oracle"]
    assert oracle["human"] == 1.0 and oracle["human_covered_pairs"] > 0


def test_training_with_nothing_to_learn_from_says_so(refinery_home):
    with pytest.raises(NoTrainingData):
        train(FAST)


def test_versions_are_stored_with_their_features_data_and_metrics(refinery_home):
    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    first, second = train(FAST), train(FAST)
    assert (first.version, second.version) == (1, 2)
    assert (refinery_home / "rankers" / "v0001" / "model.pt").is_file()
    assert first.feature_names and any(n == "static:registers" for n in first.feature_names)
    assert first.data["heldout_problems"] and first.data["pairs"]["train"]["measured"] > 0
    assert first.metrics["heldout"]["by_source"]["measured"]["pairs"] > 0
    assert [r.version for r in list_ranker_models()] == [1, 2]


def test_two_trainers_finishing_at_once_get_two_versions(refinery_home):
    list_ranker_models()  # open the database before the race
    barrier = threading.Barrier(2)
    versions = []

    def claim() -> None:
        barrier.wait()
        versions.append(reserve_ranker_version(lambda v: f"rankers/v{v:04d}", ["x"], {}).version)

    threads = [threading.Thread(target=claim) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(versions) == [1, 2]


def test_scores_are_empty_without_a_model_and_follow_measured_speed_with_one(refinery_home):
    ids = write_synthetic(SyntheticConfig(problems=8, candidates_per_problem=10, seed=5))
    assert score_candidates(ids) == {}
    train(FAST)
    scores = score_candidates(ids)
    assert set(scores) == set(ids)
    evidence = [e for e in load_evidence(ids) if e.measurements]
    slug = evidence[0].problem_slug
    same = [e for e in evidence if e.problem_slug == slug]
    speed = np.array([-np.log(e.candidate_us) for e in same])
    assert np.corrcoef(speed, [scores[e.id] for e in same])[0, 1] > 0.5
    with pytest.raises(LookupError):
        score_candidates(ids, model_version=99)


def test_prescreen_keeps_everything_without_a_model_and_the_best_k_with_one(refinery_home):
    sources = ["__global__ void k(float* y) { y[threadIdx.x * 8] = 0; }",
               "__global__ void k(float4* y) { float4 v; y[threadIdx.x] = v; }"]
    untrained = prescreen(sources, keep=1)
    assert untrained.keep == [0, 1] and untrained.scores == [None, None] and untrained.model_version is None
    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    train(FAST)
    fast = {"registers": 32, "occupancy": 1.0, "vector_width": 4, "coalescing_sectors_per_request": 4, "spills": 0}
    slow = {"registers": 128, "occupancy": 0.5, "vector_width": 1, "coalescing_sectors_per_request": 32, "spills": 48}
    result = prescreen([(sources[0], slow), (sources[1], fast)], keep=1)
    assert result.keep == [1] and result.order == [1, 0] and result.model_version == 1


def test_evaluating_a_stored_version_on_unchanged_data_reproduces_its_held_out_metrics(refinery_home):
    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    row = train(FAST)
    report = evaluate_version(row.version)
    stored = row.metrics["heldout"]["by_source"]["measured"]
    assert report["by_source"]["measured"]["pairs"] == stored["pairs"]
    assert report["by_source"]["measured"]["accuracy"] == pytest.approx(stored["accuracy"])


def test_the_cli_trains_lists_evaluates_and_reports_agreement(refinery_home):
    from engine.cli import app

    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    runner = CliRunner()
    trained = runner.invoke(app, ["rank", "train", "--epochs", "5"])
    assert trained.exit_code == 0, trained.output
    assert "ranker v1" in trained.output and "held-out" in trained.output
    listed = runner.invoke(app, ["rank", "list"])
    assert listed.exit_code == 0 and "v1" in listed.output
    evaluated = runner.invoke(app, ["rank", "eval", "--json"])
    assert evaluated.exit_code == 0 and '"version": 1' in evaluated.output
    agreement = runner.invoke(app, ["labels", "agreement"])
    assert agreement.exit_code == 0 and "kappa" in agreement.output


def test_the_cli_says_when_there_is_nothing_to_train_on(refinery_home):
    from engine.cli import app

    result = CliRunner().invoke(app, ["rank", "train"])
    assert result.exit_code == 1 and "no training pairs" in result.output
