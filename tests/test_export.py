"""Every export kind round-trips through `datasets.load_dataset` with the expected columns."""

from __future__ import annotations

import json

import pytest

from db.labels import add_label, get_or_create_labeler
from db.models import Candidate, Diagnostic, Evaluation, Run
from db.session import session_scope
from engine.export import ExportFilters, export_dataset
from engine.problems import get_problem
from tests.rank_support import stored_timing

datasets = pytest.importorskip("datasets")
SLUG = "relu"


def _candidate(session, run, parent, step, speedup, verdict="correct", device="NVIDIA H200", origin="library"):
    candidate = Candidate(run_id=run.id, problem_slug=run.problem_slug, parent_id=parent.id if parent else None,
                          step=step, origin=origin, strategy="naive", language="python",
                          source=f"# candidate {step}\nclass ModelNew:\n    STEP = {step}\n",
                          source_hash=f"h{step}-{run.id}", proposal={"implementation": f"impl{step}"})
    session.add(candidate)
    session.flush()
    session.add(Evaluation(candidate_id=candidate.id, verdict=verdict, speedup=speedup,
                           candidate_us=100 / speedup if speedup else None, baseline_us=100.0, device=device,
                           timing=stored_timing(100 / speedup) if speedup else {},
                           reward=0.1 * step, reward_components={"total": 0.1 * step, "correct": verdict == "correct",
                                                                 "speed": 0.0, "structural": 0.5, "tiered": 0.2}))
    session.add(Diagnostic(candidate_id=candidate.id, kind="static", data={"features": {"registers": 16 + step}}))
    session.add(Diagnostic(candidate_id=candidate.id, kind="feedback", text=f"diagnosis after step {step}"))
    return candidate


@pytest.fixture
def populated(refinery_home):
    with session_scope() as session:
        run = Run(problem_slug=SLUG, proposer="library", strategy="iterative", rounds_budget=4, device="NVIDIA H200")
        session.add(run)
        session.flush()
        root = _candidate(session, run, None, 0, 1.0)
        mid = _candidate(session, run, root, 1, 1.5)
        _candidate(session, run, mid, 2, 3.0)
        _candidate(session, run, mid, 3, None, verdict="incorrect")
        _candidate(session, run, root, 4, 1.52, device="NVIDIA A100")
        ids = [root.id, mid.id]
    labeler = get_or_create_labeler("ada")
    add_label(labeler_id=labeler.id, session_id=None, candidate_a_id=ids[0], candidate_b_id=ids[1], choice="b",
              tags=("coalescing",), note="", blind=False)
    return ids


def _load(out_dir, config="default"):
    # A cache of its own per export: the shared cache can answer for another folder of the same name.
    return datasets.load_dataset(str(out_dir), config, split="train", cache_dir=str(out_dir.parent / f"hf-{config}"))


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_candidates_export_has_every_measured_field(populated, tmp_path, fmt):
    result = export_dataset("candidates", fmt, tmp_path / "out")
    table = _load(tmp_path / "out")
    assert result.counts["default"] == 5 == len(table)
    assert {"candidate_id", "problem", "source", "verdict", "speedup", "device", "reward", "reward_components",
            "features_json", "parent_id"} <= set(table.column_names)
    assert json.loads(table[0]["features_json"]) == {"registers": 16}


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_preferences_have_trl_columns_standard_and_conversational(populated, tmp_path, fmt):
    export_dataset("preferences", fmt, tmp_path / "out")
    standard = _load(tmp_path / "out", "standard")
    assert {"prompt", "chosen", "rejected"} <= set(standard.column_names)
    assert len(standard) > 0 and isinstance(standard[0]["prompt"], str)
    conversational = _load(tmp_path / "out", "conversational")
    assert conversational[0]["chosen"][0]["role"] == "assistant"
    assert conversational[0]["prompt"][0]["role"] == "user"
    sources = set(standard["source"])
    assert sources == {"human", "measured"}


def test_measured_preference_prefers_the_faster_candidate(populated, tmp_path):
    export_dataset("preferences", "jsonl", tmp_path / "out", ExportFilters(label_sources=("measured",)))
    rows = [json.loads(line) for line in (tmp_path / "out/data/standard.jsonl").read_text().splitlines()]
    assert rows and all(r["source"] == "measured" for r in rows)
    step3 = next(r for r in rows if "candidate 2" in r["chosen"] and "candidate 0" in r["rejected"])
    assert step3["margin"] > 0


def test_prompts_never_leak_hidden_configurations(populated, tmp_path):
    problem = get_problem(SLUG)
    export_dataset("preferences", "jsonl", tmp_path / "p")
    export_dataset("trajectories", "jsonl", tmp_path / "t")
    text = (tmp_path / "p/data/standard.jsonl").read_text() + (tmp_path / "t/data/default.jsonl").read_text()
    for config in problem.hidden_configs:
        assert f"- {config.name}:" not in text


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_ranked_export_orders_each_problem(populated, tmp_path, fmt):
    export_dataset("ranked", fmt, tmp_path / "out")
    table = _load(tmp_path / "out")
    assert list(table["rank"]) == list(range(1, len(table) + 1))
    strengths = list(table["strength"])
    assert strengths == sorted(strengths, reverse=True)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_trajectories_are_root_to_leaf_conversations_with_rewards(populated, tmp_path, fmt):
    export_dataset("trajectories", fmt, tmp_path / "out")
    table = _load(tmp_path / "out")
    assert len(table) == 3  # leaves: step 2, step 3, step 4
    longest = max(table, key=lambda r: len(r["turns"]))
    assert [t["step"] for t in longest["turns"]] == [0, 1, 2]
    assert longest["turns"][1]["prompt"] == "diagnosis after step 0"
    assert len(longest["anchored_rewards"]) == 3 and len(longest["messages"]) == 6


def test_filters_select_devices_and_verdicts(populated, tmp_path):
    export_dataset("candidates", "jsonl", tmp_path / "a", ExportFilters(devices=("NVIDIA A100",)))
    export_dataset("candidates", "jsonl", tmp_path / "b", ExportFilters(verdicts=("incorrect",)))
    a = (tmp_path / "a/data/default.jsonl").read_text().splitlines()
    b = [json.loads(x) for x in (tmp_path / "b/data/default.jsonl").read_text().splitlines()]
    assert len(a) == 1 and json.loads(a[0])["device"] == "NVIDIA A100"
    assert [r["verdict"] for r in b] == ["incorrect"]


def test_card_states_counts_sources_and_filters(populated, tmp_path):
    export_dataset("preferences", "parquet", tmp_path / "out", ExportFilters(min_agreement=0.0))
    card = (tmp_path / "out/README.md").read_text()
    assert card.startswith("---\nconfigs:") and "## Counts" in card and '"min_agreement": 0.0' in card
    assert "### By source" in card and "| measured |" in card


def test_unknown_kind_is_refused(refinery_home, tmp_path):
    with pytest.raises(ValueError, match="unknown export kind"):
        export_dataset("everything", "jsonl", tmp_path)


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_problem_filter_keeps_only_the_problems_named(populated, tmp_path):
    export_dataset("candidates", "jsonl", tmp_path / "mine", ExportFilters(problems=(SLUG,)))
    export_dataset("candidates", "jsonl", tmp_path / "other", ExportFilters(problems=("softmax",)))
    assert {r["problem"] for r in _rows(tmp_path / "mine/data/default.jsonl")} == {SLUG}
    assert _rows(tmp_path / "other/data/default.jsonl") == []


def test_date_filters_bound_what_is_exported(populated, tmp_path):
    from datetime import datetime, timedelta

    now = datetime.now()
    export_dataset("candidates", "jsonl", tmp_path / "in", ExportFilters(since=now - timedelta(days=1),
                                                                         until=now + timedelta(days=1)))
    export_dataset("candidates", "jsonl", tmp_path / "later", ExportFilters(since=now + timedelta(days=1)))
    export_dataset("candidates", "jsonl", tmp_path / "earlier", ExportFilters(until=now - timedelta(days=1)))
    assert len(_rows(tmp_path / "in/data/default.jsonl")) == 5
    assert _rows(tmp_path / "later/data/default.jsonl") == _rows(tmp_path / "earlier/data/default.jsonl") == []


def test_human_only_preferences_hold_just_the_labelled_pair(populated, tmp_path):
    root, mid = populated
    export_dataset("preferences", "jsonl", tmp_path / "out", ExportFilters(label_sources=("human",)))
    (row,) = _rows(tmp_path / "out/data/standard.jsonl")
    assert row["source"] == "human" and (row["chosen_id"], row["rejected_id"]) == (mid, root)


def test_minimum_agreement_drops_human_pairs_weighted_below_it(populated, tmp_path):
    from engine.rank import agreement_report

    (weight,) = agreement_report().weights().values()
    export_dataset("preferences", "jsonl", tmp_path / "kept", ExportFilters(label_sources=("human",),
                                                                            min_agreement=weight))
    export_dataset("preferences", "jsonl", tmp_path / "dropped", ExportFilters(min_agreement=weight + 0.01))
    assert len(_rows(tmp_path / "kept/data/standard.jsonl")) == 1
    dropped = _rows(tmp_path / "dropped/data/standard.jsonl")
    assert dropped and all(r["source"] == "measured" for r in dropped)


def test_a_turn_the_endpoint_failed_enters_no_dataset(populated, tmp_path):
    """An unreachable endpoint is no behaviour of the model: its rows are in no candidates table and no
    trajectory, while the model's own turns stay."""
    with session_scope() as session:
        run = session.get(Run, session.get(Candidate, populated[1]).run_id)
        failed = Candidate(run_id=run.id, problem_slug=SLUG, parent_id=populated[1], step=5, origin="llm",
                           strategy="llm", language="python", source="", source_hash="endpoint-5",
                           proposal={"endpoint_failure": "unreachable"})
        session.add(failed)
        session.flush()
        session.add(Evaluation(candidate_id=failed.id, verdict="proposal_error", device="NVIDIA H200",
                               message="cannot reach http://127.0.0.1:9/v1", reward=-0.6,
                               reward_components={"total": -0.6}))
        failed_id = failed.id
    export_dataset("candidates", "jsonl", tmp_path / "candidates")
    export_dataset("trajectories", "jsonl", tmp_path / "trajectories")
    candidates = _rows(tmp_path / "candidates/data/default.jsonl")
    trajectories = _rows(tmp_path / "trajectories/data/default.jsonl")
    assert failed_id not in {r["candidate_id"] for r in candidates} and len(candidates) == 5
    assert not any(t["candidate_id"] == failed_id for r in trajectories for t in r["turns"])
    assert len(trajectories) == 3  # the model's own leaves
