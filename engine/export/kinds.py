"""Rows of each export kind, generated lazily (one problem or run at a time)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache

import orjson

from db import export_queries, runs_repo
from db.evaluations import admitted
from db.identity import equivalence_of
from db.labels import CandidateEvidence, load_evidence
from engine.export.filters import ExportFilters
from engine.export.schemas import reward_struct
from engine.rank.comparable import measurement_context, target_for_language, target_of
from engine.rank.pairs import PairConfig, PairExample
from engine.rank.pooled import pool
from engine.reward.score import anchored_rewards, discounted_returns
from engine.schema.evaluation import EvaluationTiming


@cache
def task_prompt(slug: str, target: str = "cuda") -> str | None:
    """The task as an LLM would be given it for `target`, from scratch: never the hidden configurations.
    None where the problem has no such task (C on the CPU for a PyTorch problem)."""
    from engine.problems import get_problem
    from engine.propose import ProposalContext
    from engine.propose.prompts import build_prompt

    try:
        problem = get_problem(slug)
    except KeyError:
        what = "C implementation (CPU, host pointers)" if target == "c-cpu" else "CUDA implementation"
        return f"Write a faster {what} of problem {slug}."
    context = ProposalContext(problem=problem, parent=None, step=0, sample=0, seed=0, gpu=target == "cuda")
    try:
        return build_prompt(context, target).user
    except ValueError:
        return None


def endpoint_failed(proposal: dict | None) -> bool:
    """Whether a candidate is the LLM endpoint's failure (refused, unreachable, timed out), not the model's
    reply: such a row is no behaviour of the model, so it earns nothing and enters no dataset."""
    return bool((proposal or {}).get("endpoint_failure"))


def candidate_rows(filters: ExportFilters) -> Iterator[dict]:
    for row in export_queries.iter_candidates(filters.problems):
        if not (filters.wants_verdict(row["eval_verdict"]) and filters.wants_device(row["eval_device"])
                and filters.wants_time(row["created_at"])):
            continue
        if endpoint_failed(row.get("proposal")):
            continue
        if not admitted(bool(row["eval_flagged"]), row["eval_flag_review"]):
            continue  # flagged for review: enters no dataset until a person clears it
        features = (row["static_data"] or {}).get("features", {})
        baseline, config = EvaluationTiming.from_stored(row["eval_timing"]).context
        yield {
            "candidate_id": row["id"], "problem": row["problem_slug"], "run_id": row["run_id"],
            "parent_id": row["parent_id"], "step": row["step"], "depth": row["depth"], "origin": row["origin"],
            "strategy": row["strategy"], "language": row["language"], "target": target_for_language(row["language"]),
            "equivalence": equivalence_of(row["source_hash"] or "", row["source"] or "", row["language"]),
            "source": row["source"], "prompt": row["prompt"],
            "verdict": row["eval_verdict"], "message": row["eval_message"], "speedup": row["eval_speedup"],
            "candidate_us": row["eval_candidate_us"], "baseline_us": row["eval_baseline_us"],
            "baseline": baseline, "config": config,
            "device": row["eval_device"], "reward": row["eval_reward"],
            "reward_components": reward_struct(row["eval_reward_components"]),
            "flagged": bool(row["eval_flagged"]), "recorded": bool(row["eval_recorded"]),
            "features_json": orjson.dumps(features, option=orjson.OPT_SORT_KEYS).decode(),
            "created_at": row["created_at"].isoformat(),
        }


def _problems(filters: ExportFilters) -> list[str]:
    return [s for s in export_queries.problem_slugs_with_candidates() if filters.wants_problem(s)]


def _evidence_in(filters: ExportFilters, slug: str):
    return [e for e in load_evidence(problem_slugs=[slug])
            if filters.wants_time(e.created_at) and filters.wants_device(e.device)]


def _shared_context(a: CandidateEvidence, b: CandidateEvidence) -> tuple[str | None, str | None, str | None]:
    """The (device, baseline, configuration) both were measured in, for a human pair; Nones where none."""
    shared = sorted({measurement_context(m) for m in a.measurements} & {measurement_context(m) for m in b.measurements},
                    key=str)
    return shared[0] if shared else (None, None, None)


def _preference_row(slug: str, pair: PairExample, chosen: CandidateEvidence, rejected: CandidateEvidence,
                    task: str, conversational: bool) -> dict:
    """One TRL row. `prompt` is what both answers were asked where they were asked the same (two samples
    of one step), else the task from scratch; each side's own prompt as sent is kept beside it."""
    prompt = chosen.prompt if chosen.prompt and chosen.prompt == rejected.prompt else task
    device, baseline, config = ((pair.device, pair.baseline, pair.config) if pair.source == "measured"
                                else _shared_context(chosen, rejected))
    row = {"problem": slug, "target": target_of(chosen), "source": pair.source,
           "chosen_prompt": chosen.prompt, "rejected_prompt": rejected.prompt,
           "margin": pair.log_ratio if pair.log_ratio is not None else abs(pair.target - 0.5) * 2,
           "weight": pair.weight, "chosen_id": chosen.id, "rejected_id": rejected.id, "device": device,
           "baseline": baseline, "config": config, "test": pair.test, "p_value": pair.p_value, "alpha": pair.alpha,
           "ratio_low": pair.ratio_interval[0] if pair.ratio_interval else None,
           "ratio_high": pair.ratio_interval[1] if pair.ratio_interval else None,
           "evaluations_chosen": _evaluations(pair, chosen.id), "evaluations_rejected": _evaluations(pair, rejected.id),
           "spread": pair.spread}
    if conversational:
        return row | {"prompt": [{"role": "user", "content": prompt}],
                      "chosen": [{"role": "assistant", "content": chosen.source}],
                      "rejected": [{"role": "assistant", "content": rejected.source}]}
    return row | {"prompt": prompt, "chosen": chosen.source, "rejected": rejected.source}


def _evaluations(pair: PairExample, candidate_id: int) -> int | None:
    if pair.evaluations is None:
        return None
    return pair.evaluations[0] if candidate_id == pair.a else pair.evaluations[1]


def preference_rows(filters: ExportFilters, conversational: bool = False) -> Iterator[dict]:
    """TRL-style (prompt, chosen, rejected) from human labels, measured pairs and integrity verdicts; ties
    are dropped. Pairs are only ever of comparable candidates (`engine.rank.comparable`), and each is filed
    under the prompt of the target both answer."""
    from db.labels import list_labels
    from engine.rank import agreement_report
    from engine.rank.pairs import build_pairs

    weights = agreement_report().weights() if "human" in filters.label_sources else {}
    labels = list_labels() if "human" in filters.label_sources else []
    for slug in _problems(filters):
        evidence = _evidence_in(filters, slug)
        by_id = {e.id: e for e in evidence}
        problem_labels = [label for label in labels if label.candidate_a_id in by_id and label.candidate_b_id in by_id]
        for pair in build_pairs(evidence, problem_labels, weights, pair_config(filters)):
            if pair.target == 0.5 or pair.a not in by_id or pair.b not in by_id:
                continue
            if pair.source == "human" and pair.weight < filters.min_agreement:
                continue
            chosen, rejected = (by_id[pair.a], by_id[pair.b]) if pair.target > 0.5 else (by_id[pair.b], by_id[pair.a])
            prompt = task_prompt(slug, target_of(chosen))
            if prompt is None:
                continue  # candidates of a target this problem does not ask for
            yield _preference_row(slug, pair, chosen, rejected, prompt, conversational)


def pair_config(filters: ExportFilters) -> PairConfig:
    """The pair rules an export applies (the card states them with these parameters)."""
    return PairConfig(use_measured="measured" in filters.label_sources, use_human="human" in filters.label_sources,
                      use_integrity="measured" in filters.label_sources)


def _pooled_by_candidate(evidence: list[CandidateEvidence]) -> dict[tuple[int, str | None], tuple]:
    """(candidate id, device) -> (its pooled source, the context's spread), for every member of a source."""
    found: dict[tuple[int, str | None], tuple] = {}
    for context in pool(evidence):
        for source in context.sources:
            for candidate_id in source.ids:
                found.setdefault((candidate_id, context.device), (source, context.spread))
    return found


def _pooled_fields(pooled: dict, item: CandidateEvidence) -> dict:
    """The pooled speedup of a candidate's code on its latest device, with its interval (Nones where none)."""
    source, spread = pooled.get((item.id, item.device), (None, None))
    if source is None:
        return {"pooled_speedup": None, "speedup_low": None, "speedup_high": None, "evaluations": None}
    low, high = source.speedup_interval(spread.tau)
    return {"pooled_speedup": source.speedup, "speedup_low": low, "speedup_high": high, "evaluations": source.n}


def ranked_rows(filters: ExportFilters) -> Iterator[dict]:
    """Each problem's candidates in Bradley–Terry order (human labels + measured pairs), one order per
    target: a CUDA kernel and a CPU C function are never ranked against each other."""
    from engine.rank.bt import bradley_terry_orders

    for slug in _problems(filters):
        evidence = _evidence_in(filters, slug)
        by_id = {e.id: e for e in evidence if filters.wants_verdict(e.verdict)}
        rewards = export_queries.latest_rewards(slug)
        pooled = _pooled_by_candidate(evidence)
        for target, order in bradley_terry_orders(slug, pair_config(filters), evidence).items():
            rank = 0
            for candidate_id, strength in order:
                item = by_id.get(candidate_id)
                if item is None:
                    continue
                rank += 1
                reward, components = rewards.get(candidate_id, (None, None))
                yield _pooled_fields(pooled, item) | {
                       "problem": slug, "target": target, "rank": rank, "candidate_id": candidate_id,
                       "strength": float(strength), "verdict": item.verdict, "speedup": item.speedup,
                       "candidate_us": item.candidate_us, "device": item.device, "origin": item.origin,
                       "strategy": item.strategy, "language": item.language, "equivalence": item.equivalence,
                       "source": item.source, "reward": reward, "reward_components": reward_struct(components),
                       "features_json": json.dumps(item.features, sort_keys=True)}


def _turn_prompt(task: str, previous) -> str:
    """What a non-LLM turn answered: the task first, then the feedback on the previous candidate."""
    if previous is None:
        return task
    return previous.feedback.text if previous.feedback and previous.feedback.text else task


def trajectory_rows(filters: ExportFilters) -> Iterator[dict]:
    """Every root-to-leaf path of every run as a multi-turn conversation with per-turn rewards."""
    for run_id in export_queries.run_ids(filters.problems):
        run = runs_repo.get_run(run_id)
        if run is None or not filters.wants_time(run.created_at) or not filters.wants_device(run.device):
            continue
        rows = {r.candidate.id: r for r in runs_repo.tree_rows(run_id)}
        parents = {r.candidate.parent_id for r in rows.values()}
        for leaf_id in sorted(set(rows) - parents):
            path, current = [], rows.get(leaf_id)
            while current is not None:
                path.append(current)
                current = rows.get(current.candidate.parent_id) if current.candidate.parent_id else None
            path.reverse()
            target = target_for_language(path[0].candidate.language)
            task = task_prompt(run.problem_slug, target) or task_prompt(run.problem_slug)
            if any(r.evaluation is not None and not admitted(r.evaluation.flagged, r.evaluation.flag_review)
                   for r in path):
                continue  # a turn is flagged for review: the trajectory waits for a person to clear it
            if any(endpoint_failed(r.candidate.proposal) for r in path):
                continue  # a turn the endpoint failed is not the model's: the path is no trajectory of it
            turns, messages = [], []
            for index, row in enumerate(path):
                evaluation, feedback = row.evaluation, row.feedback
                prompt = row.candidate.prompt or _turn_prompt(task, path[index - 1] if index else None)
                reply = row.candidate.reply or row.candidate.source
                turns.append({"step": row.candidate.step, "candidate_id": row.candidate.id, "prompt": prompt,
                              "reply": reply, "reasoning": row.candidate.reasoning, "source": row.candidate.source,
                              "verdict": evaluation.verdict if evaluation else None,
                              "speedup": evaluation.speedup if evaluation else None,
                              "reward": evaluation.reward if evaluation else None,
                              "feedback": feedback.text if feedback else ""})
                messages += [{"role": "user", "content": prompt}, {"role": "assistant", "content": reply}]
            rewards = [t["reward"] if t["reward"] is not None else 0.0 for t in turns]
            yield {"run_id": run_id, "problem": run.problem_slug, "target": target, "proposer": run.proposer,
                   "strategy": run.strategy,
                   "leaf_id": leaf_id, "turns": turns, "messages": messages, "rewards": rewards,
                   "anchored_rewards": anchored_rewards(rewards), "discounted_returns": discounted_returns(rewards),
                   "device": run.device}
