"""The dashboard's read queries: pagination, filters, latest verdicts, best per problem."""

from __future__ import annotations

from app.testing import add_round, make_run, other_code, seed_run, set_status
from db import queries
from db.models import Evaluation
from db.session import session_scope


def test_runs_are_listed_newest_first_a_page_at_a_time(refinery_home) -> None:
    ids = [make_run() for _ in range(7)]
    first = queries.list_runs(page=0, page_size=3)
    assert [r.id for r in first.items] == ids[::-1][:3]
    assert first.total == 7 and first.pages == 3
    assert [r.id for r in queries.list_runs(page=2, page_size=3).items] == [ids[0]]


def test_run_filters_use_status_and_recorded(refinery_home) -> None:
    live, done = make_run(), make_run(recorded=True)
    set_status(done, "finished")
    assert [r.id for r in queries.list_runs(queries.RunFilter(statuses=("finished",))).items] == [done]
    assert [r.id for r in queries.list_runs(queries.RunFilter(recorded=False)).items] == [live]
    assert queries.run_options().statuses == ["finished", "running"]


def test_run_summary_counts_candidates_and_correct_ones(refinery_home) -> None:
    run_id, _ = seed_run(5)  # speedups 1.0, 1.4, (2: incorrect), 2.2, 2.6
    run = queries.get_run(run_id)
    assert (run.candidates, run.correct) == (5, 4)
    assert not hasattr(run, "best_speedup")  # a run's best is pooled (engine.rank.best.run_bests), no max


def test_a_re_measure_supersedes_the_first_verdict(refinery_home) -> None:
    run_id = make_run()
    cid = add_round(run_id, 0, verdict="correct", speedup=3.0)
    with session_scope() as session:
        session.add(Evaluation(candidate_id=cid, verdict="integrity_violation", message="result caching"))
    (row,) = queries.run_points(run_id)
    assert row.verdict == "integrity_violation"
    assert queries.get_run(run_id).correct == 0


def test_rounds_page_newest_first_with_total(refinery_home) -> None:
    run_id, ids = seed_run(6)
    page = queries.run_rounds(run_id, page=1, page_size=4)
    assert page.total == 6 and [r.candidate_id for r in page.items] == ids[:2][::-1]


def test_progress_changes_when_a_round_is_stored(refinery_home) -> None:
    run_id, ids = seed_run(2)
    before = queries.run_progress(run_id).version
    add_round(run_id, 2, parent_id=ids[-1])
    after = queries.run_progress(run_id)
    assert after.version != before and after.candidates == 3 and after.last_step == 2


def test_candidate_detail_has_parent_source_and_diagnostics_by_kind(refinery_home) -> None:
    run_id, ids = seed_run(2)
    detail = queries.candidate_detail(ids[1])
    assert detail.parent_source is not None and detail.parent_source != detail.source
    assert detail.evaluation.verdict == "correct"
    assert {"static", "roofline", "feedback"} <= set(detail.diagnostics)
    assert queries.candidate_detail(99999) is None


def test_best_per_problem_takes_the_fastest_correct_code(refinery_home) -> None:
    from engine.rank.best import best_per_problem

    slow, fast = make_run(), make_run()
    add_round(slow, 0, speedup=1.2, source=other_code(1))
    best_id = add_round(fast, 1, speedup=4.0, source=other_code(2))
    add_round(fast, 2, verdict="incorrect", speedup=9.0)
    (best,) = best_per_problem()
    assert (best.problem_slug, best.device, best.candidate_id, best.run_id, best.speedup, best.runs) == \
        ("transpose", "NVIDIA H200", best_id, fast, 4.0, 2)


def test_roofline_and_timings_are_per_candidate(refinery_home) -> None:
    run_id, ids = seed_run(3)
    assert [r.candidate_id for r in queries.run_roofline(run_id)] == [ids[0], ids[1]]
    assert [t.candidate_id for t in queries.run_timings(run_id)] == [ids[0], ids[1]]


def test_stored_diagnostics_read_back_as_the_engines_records(refinery_home) -> None:
    from engine.store import diagnostics as stored

    run_id, ids = seed_run(2)
    read = stored.candidate_diagnostics(queries.candidate_detail(ids[1]))
    assert read.static.kernels[0].resources.registers == 16 and read.static.arch == "sm_90"
    assert read.ncu.ok and read.ncu.summary.st_sectors_per_request == 31.0
    assert read.energy.baseline_name == "eager" and read.energy.comparison.matched_speed_ratio == 0.9
    assert str(read.roofline.bottleneck) == "memory-bound" and read.roofline.point.precision == "fp32"
    assert read.feedback.details[0].tool == "coalescing" and read.feedback_text.startswith("1. Writes are strided")
    (entry, _) = stored.run_roofline(run_id)
    assert (entry.candidate_id, entry.record.device) == (ids[0], "NVIDIA H200")
    (timing, _) = stored.run_timings(run_id)
    assert [c.name for c in timing.configs] == ["small", "large", "odd-shape"]
    assert timing.configs[1].candidate.median_us == 100.0 and timing.configs[2].candidate is None
