"""A database as a mixed lab produces it (CUDA candidates on two GPUs and against two baselines, CPU C
candidates of the same problem, the same code measured twice, a reformatted copy, a noisy near-tie, a
cheat, and votes across targets) and every place pairs are made obeying the same rules: the ranker's
pairs, the label queue, and every export kind; the card's counts equal the rows; the files load with
`datasets` and pass TRL's own checks."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from db.identity import equivalence_key
from db.labels import add_label, get_or_create_labeler, list_labels, load_evidence
from db.models import Candidate, Diagnostic, Evaluation, Run
from db.session import session_scope
from engine.export import ExportFilters, export_dataset
from engine.export.kinds import task_prompt
from engine.rank.comparable import comparable, target_for_language
from engine.rank.labeling import VoteError, start_session, vote
from engine.rank.pairs import build_pairs
from engine.rank.queue import QueueSnapshot, choose_pair, key
from tests.rank_support import stored_timing

datasets = pytest.importorskip("datasets")
SLUG = "gemm"
H200, A100, CPU = "NVIDIA H200", "NVIDIA A100", "x86_64 CPU"
TILED = "__global__ void k(float* c) {\n  int i = threadIdx.x;\n  c[i] = 2.0f;\n}\n"
TILED_REFORMATTED = ("// the same kernel, reformatted\n"
                     "__global__ void k(float* c) { int i = threadIdx.x;   c[i] = 2.0f; }\n")
BLOCKED = "void kernel_gemm(int n, float *c) {\n  for (int i = 0; i < n; i++) c[i] *= 2.0f;\n}\n"


def _add(session, run, step, language, source, verdict, device, median_us=None, *, baseline="reference",
         spread=0.01, trials=50, parent=None):
    candidate = Candidate(run_id=run.id, problem_slug=SLUG, step=step, origin="library", language=language,
                          source=source, source_hash=f"{run.id}-{step}", parent_id=parent.id if parent else None,
                          strategy="tiled")
    session.add(candidate)
    session.flush()
    base_us = 1000.0
    session.add(Evaluation(
        candidate_id=candidate.id, verdict=verdict, device=device,
        candidate_us=median_us, baseline_us=base_us if median_us else None,
        speedup=base_us / median_us if median_us else None,
        timing=stored_timing(median_us, spread=spread, trials=trials, baseline=baseline) if median_us else {}))
    session.add(Diagnostic(candidate_id=candidate.id, kind="feedback", text=f"feedback on step {step}"))
    return candidate


@pytest.fixture
def lab(refinery_home):
    """Candidate ids by name, in a database holding every case the rules must handle."""
    with session_scope() as session:
        gpu_run = Run(problem_slug=SLUG, proposer="library", strategy="iterative", rounds_budget=8, device=H200)
        cpu_run = Run(problem_slug=SLUG, proposer="library", strategy="iterative", rounds_budget=8, device=CPU)
        other_gpu = Run(problem_slug=SLUG, proposer="library", strategy="iterative", rounds_budget=2, device=A100)
        session.add_all([gpu_run, cpu_run, other_gpu])
        session.flush()
        ids = {}
        naive = _add(session, gpu_run, 0, "cuda", "__global__ void k(float* c) { c[0] = 1.0f; }\n", "correct", H200,
                     900.0)
        tiled = _add(session, gpu_run, 1, "cuda", TILED, "correct", H200, 300.0, parent=naive)
        copy = _add(session, gpu_run, 2, "cuda", TILED_REFORMATTED, "correct", H200, 120.0, parent=tiled)
        against_other = _add(session, gpu_run, 3, "cuda", "__global__ void k(float* c) { c[1] = 1.0f; }\n",
                             "correct", H200, 100.0, baseline="cublas", parent=tiled)
        cheat = _add(session, gpu_run, 4, "cuda", "__global__ void k(float* c) { /* reads the answer */ }\n",
                     "integrity_violation", H200, parent=tiled)
        on_a100 = _add(session, other_gpu, 0, "cuda", "__global__ void k(float* c) { c[2] = 1.0f; }\n", "correct",
                       A100, 50.0)
        cpu_naive = _add(session, cpu_run, 0, "c", "void kernel_gemm(int n, float *c) { c[0] = 1.0f; }\n",
                         "correct", CPU, 2000.0)
        blocked = _add(session, cpu_run, 1, "c", BLOCKED, "correct", CPU, 1000.0, spread=0.4, trials=20,
                       parent=cpu_naive)
        blocked_again = _add(session, cpu_run, 2, "c", BLOCKED, "correct", CPU, 1000.0 / 2.34 * 1.61, spread=0.4,
                             trials=20, parent=blocked)
        near_tie = _add(session, cpu_run, 3, "c", BLOCKED.replace("i++", "++i"), "correct", CPU, 880.0, spread=0.4,
                        trials=20, parent=blocked)
        for name, row in dict(naive=naive, tiled=tiled, copy=copy, against_other=against_other, cheat=cheat,
                              on_a100=on_a100, cpu_naive=cpu_naive, blocked=blocked, blocked_again=blocked_again,
                              near_tie=near_tie).items():
            ids[name] = row.id
    ada = get_or_create_labeler("ada")
    add_label(labeler_id=ada.id, session_id=None, candidate_a_id=ids["naive"], candidate_b_id=ids["tiled"], choice="b")
    # an H200 kernel against CPU code: stored by an older version, it must never become a pair
    add_label(labeler_id=ada.id, session_id=None, candidate_a_id=ids["cpu_naive"], candidate_b_id=ids["tiled"],
              choice="a")
    return ids


def _is_pair_allowed(a, b) -> bool:
    return comparable(a, b) and a.equivalence != b.equivalence


def test_the_rankers_pairs_are_comparable_real_and_never_within_one_code(lab):
    evidence = load_evidence(problem_slugs=[SLUG])
    by_id = {e.id: e for e in evidence}
    pairs = build_pairs(evidence, list_labels(), {1: 1.0})
    assert pairs
    made = {key(p.a, p.b) for p in pairs}
    for pair in pairs:
        assert _is_pair_allowed(by_id[pair.a], by_id[pair.b]), pair
        if pair.source == "measured":
            assert pair.test == "between-evaluations-z" and pair.p_value < pair.alpha == 0.01
    assert key(lab["cpu_naive"], lab["blocked"]) in made  # 2x apart over tight enough trials: real
    assert key(lab["naive"], lab["tiled"]) in made
    for a, b in [("tiled", "copy"), ("blocked", "blocked_again"),  # one code
                 ("blocked", "near_tie"),  # 1.14x apart but within the noise of 20 trials
                 ("tiled", "on_a100"), ("tiled", "against_other"),  # another device, another baseline
                 ("cpu_naive", "tiled"), ("cheat", "cpu_naive")]:  # another target
        assert key(lab[a], lab[b]) not in made, (a, b)
    # the later copy never stands in for its class (a person's vote on it is theirs to keep)
    assert all(lab["copy"] not in (p.a, p.b) for p in pairs if p.source != "human")
    cheat_pairs = [p for p in pairs if lab["cheat"] in (p.a, p.b)]
    assert cheat_pairs and all(p.source == "integrity" and p.b == lab["cheat"] for p in cheat_pairs)


def test_the_label_queue_offers_only_comparable_pairs_until_it_runs_dry(lab):
    labeler = get_or_create_labeler("grace")
    evidence = load_evidence(problem_slugs=[SLUG])
    by_id = {e.id: e for e in evidence}
    offered, labels, rng = set(), [], random.Random(3)
    while (pair := choose_pair(QueueSnapshot(evidence, labels), labeler.id, "random", rng=rng)) is not None:
        assert _is_pair_allowed(by_id[pair.first], by_id[pair.second]), pair
        offered.add(key(pair.first, pair.second))
        from db.labels import LabelRow

        labels.append(LabelRow(id=len(labels) + 1, candidate_a_id=pair.first, candidate_b_id=pair.second,
                               labeler_id=labeler.id, session_id=None, choice="skip", tags=(), note="", blind=False,
                               undone=False, created_at=evidence[0].created_at))
    assert key(lab["naive"], lab["tiled"]) in offered and key(lab["cpu_naive"], lab["blocked"]) in offered
    assert key(lab["cpu_naive"], lab["tiled"]) not in offered and key(lab["tiled"], lab["on_a100"]) not in offered


def test_a_vote_on_candidates_that_cannot_be_compared_is_refused(lab):
    session = start_session(get_or_create_labeler("lin").id, queue="random")
    with pytest.raises(VoteError, match="target"):
        vote(session.id, lab["cpu_naive"], lab["tiled"], "a")
    with pytest.raises(VoteError, match="the same code"):
        vote(session.id, lab["tiled"], lab["copy"], "a")


def _rows(result, name):
    path = result.out_dir / result.files[name]
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def _code_of(message):
    return message[0]["content"] if isinstance(message, list) else message


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_preference_rows_pair_one_target_under_its_own_prompt(lab, fmt):
    result = export_dataset("preferences", fmt, filters=ExportFilters())
    evidence = {e.id: e for e in load_evidence(problem_slugs=[SLUG])}
    for name in ("standard", "conversational"):
        rows = _rows(result, name)
        assert rows and {r["target"] for r in rows} == {"cuda", "c-cpu"}
        for row in rows:
            chosen, rejected = evidence[row["chosen_id"]], evidence[row["rejected_id"]]
            assert target_for_language(chosen.language) == target_for_language(rejected.language) == row["target"]
            assert _is_pair_allowed(chosen, rejected)
            assert _code_of(row["chosen"]) == chosen.source and _code_of(row["rejected"]) == rejected.source
            assert equivalence_key(chosen.source, chosen.language) != equivalence_key(rejected.source,
                                                                                      rejected.language)
            prompt = _code_of(row["prompt"])
            assert prompt == task_prompt(SLUG, row["target"])
            if row["target"] == "cuda":
                assert "**device**" in prompt and chosen.language != "c"
            else:
                assert "**host**" in prompt and "CUDA" not in prompt
            if row["source"] == "measured":
                assert row["test"] == "between-evaluations-z" and row["p_value"] < row["alpha"] == 0.01
                assert row["device"] in (H200, CPU) and row["baseline"] == "reference" and row["config"] == "large"
        assert not any({r["chosen_id"], r["rejected_id"]} == {lab["cpu_naive"], lab["tiled"]} for r in rows)


def test_ranked_rows_rank_each_target_on_its_own(lab):
    result = export_dataset("ranked", "jsonl")
    rows = _rows(result, "default")
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["target"], []).append(row)
        assert target_for_language(row["language"]) == row["target"]
    assert set(groups) == {"cuda", "c-cpu"}
    for items in groups.values():
        assert [r["rank"] for r in items] == list(range(1, len(items) + 1))
        assert len({r["equivalence"] for r in items}) == len(items)  # the same code is ranked once
    assert groups["cuda"][-1]["candidate_id"] == lab["cheat"]


def test_candidate_rows_name_their_target_class_and_baseline(lab):
    rows = {r["candidate_id"]: r for r in _rows(export_dataset("candidates", "jsonl"), "default")}
    assert rows[lab["tiled"]]["equivalence"] == rows[lab["copy"]]["equivalence"]
    assert rows[lab["blocked"]]["equivalence"] == rows[lab["blocked_again"]]["equivalence"]
    assert rows[lab["blocked"]]["equivalence"] != rows[lab["near_tie"]]["equivalence"]
    assert rows[lab["cpu_naive"]]["target"] == "c-cpu" and rows[lab["tiled"]]["target"] == "cuda"
    assert rows[lab["against_other"]]["baseline"] == "cublas" and rows[lab["tiled"]]["config"] == "large"


def test_trajectories_start_from_the_prompt_of_their_target(lab):
    rows = _rows(export_dataset("trajectories", "jsonl"), "default")
    by_target = {r["target"]: r for r in rows}
    assert "**host**" in by_target["c-cpu"]["messages"][0]["content"]
    assert "**device**" in by_target["cuda"]["messages"][0]["content"]


def _card_tables(card: str) -> dict[str, dict[str, int]]:
    tables, current = {}, None
    for line in card.splitlines():
        if heading := re.match(r"### By (\w+) ", line):
            current = tables.setdefault(heading.group(1), {})
        elif current is not None and (cell := re.match(r"\| (.+) \| (\d+) \|$", line)):
            current[cell.group(1)] = int(cell.group(2))
        elif line.startswith("## "):
            current = None
    return tables


@pytest.mark.parametrize("kind", ["preferences", "ranked", "candidates", "trajectories"])
def test_the_card_counts_are_the_rows_counts(lab, kind):
    result = export_dataset(kind, "parquet")
    first = next(iter(result.files))
    rows = _rows(result, first)
    card = (result.out_dir / "README.md").read_text()
    manifest = json.loads((result.out_dir / "export.json").read_text())
    assert manifest["counts"] == result.counts and result.counts[first] == len(rows)
    tables = _card_tables(card)
    assert tables == manifest["tallies"] and tables
    for key_name, counted in tables.items():
        assert counted == dict(Counter(str(r[key_name]) if r[key_name] is not None else "(none)" for r in rows))
    assert "## Schema" in card and "from datasets import load_dataset" in card
    if kind == "preferences":
        assert "spread between evaluations" in card and "alpha = 0.01" in card and "1.1× apart" in card
        assert "CUDA kernels for the GPU" in card and "C functions for the CPU" in card


@pytest.mark.parametrize("kind", ["preferences", "ranked", "candidates", "trajectories"])
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_every_kind_loads_with_datasets(lab, tmp_path, kind, fmt):
    result = export_dataset(kind, fmt)
    for name, count in result.counts.items():
        table = datasets.load_dataset(str(result.out_dir), name, split="train",
                                      cache_dir=str(tmp_path / f"hf-{name}"))
        assert len(table) == count > 0


def test_preference_rows_pass_trls_own_checks(lab, tmp_path):
    data_utils = pytest.importorskip("trl.data_utils")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    result = export_dataset("preferences", "parquet")
    load = lambda name: datasets.load_dataset(str(result.out_dir), name, split="train",  # noqa: E731
                                              cache_dir=str(tmp_path / f"hf-{name}"))
    standard, conversational = load("standard"), load("conversational")
    assert not data_utils.is_conversational(standard[0]) and data_utils.is_conversational(conversational[0])
    backend = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")
    tokenizer.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    row = conversational[0]
    applied = data_utils.maybe_apply_chat_template(row, tokenizer)
    assert applied["prompt"].startswith("<|user|>") and applied["prompt"].endswith("<|assistant|>")
    assert row["chosen"][0]["content"] in applied["chosen"]
    assert data_utils.maybe_apply_chat_template(standard[0], tokenizer)["prompt"] == standard[0]["prompt"]


def test_exports_never_share_a_folder(lab, tmp_path, refinery_home):
    first, second = export_dataset("preferences", "jsonl"), export_dataset("preferences", "jsonl")
    assert first.out_dir != second.out_dir and first.out_dir.parent == refinery_home / "exports"
    assert first.out_dir.name.startswith("preferences-") and second.out_dir.name.startswith("preferences-")
    named = tmp_path / "mine"
    export_dataset("candidates", "jsonl", named)
    with pytest.raises(ValueError, match="already holds files"):
        export_dataset("candidates", "jsonl", named)
