"""Scale-out through Ray: a local Ray cluster on the CPU runs a multi-round run through Ray workers and
reaches the local pool's verdicts; the pool choice follows --ray, REFINERY_RAY and RAY_ADDRESS; files a
job names reach the actor's node as bytes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from db import runs_repo
from engine.runs.run import RunRequest, create_run, execute_run
from engine.sandbox import boundary
from engine.settings import get_settings
from engine.verify.judge.job import Job
from engine.verify.pool import PoolConfig, WorkerPool
from engine.verify.ray_pool import PoolActor, RayWorkerPool, ShippingDesk, gpu_share, job_files, localize
from engine.verify.scale import make_pool, ray_requested, ray_workers
from tests.c_problem_support import FAST_TIMING, write_c_problem


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="ray is not installed (.venv/bin/pip install ray)")
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def fast_home(refinery_home, monkeypatch):
    for name, value in FAST_TIMING.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    get_settings.cache_clear()
    return refinery_home


def prebuild(slug: str) -> None:
    """Fill the build cache first: concurrent builds of one source into one cache folder can race (a
    reader may see a half-written source or library), which would make verdicts differ by luck."""
    from engine.compilation.c import compile_c_library
    from engine.problems import get_problem

    problem, cache = get_problem(slug), get_settings().cache_dir / "build"
    for source in [problem.reference_source, *(i.source for i in problem.implementations)]:
        compile_c_library(source, cache)


def _verdicts(run_id: int) -> list[tuple[int, int, str, str]]:
    return [(r.candidate.step, r.candidate.sample, r.candidate.proposal["implementation"], r.evaluation.verdict)
            for r in runs_repo.tree_rows(run_id)]


def _run(slug: str, monkeypatch, ray: bool) -> tuple[list, list[str]]:
    from engine.runs.pipeline import RoundPipeline

    monkeypatch.setenv("REFINERY_RAY", "1" if ray else "0")
    pools = []

    def pipeline(problem, gpu):
        made = RoundPipeline(problem, gpu)
        pools.append(type(made.verifier.pool).__name__)
        return made

    run_id = create_run(RunRequest(slug, strategy="iterative", rounds=3, samples=2, device="cpu"))
    assert execute_run(run_id, pipeline_factory=pipeline) == "finished"
    return _verdicts(run_id), pools


def test_a_multi_round_run_through_ray_workers_gets_the_local_pools_verdicts(ray_cluster, fast_home, monkeypatch):
    slug = write_c_problem(fast_home)
    prebuild(slug)
    monkeypatch.setenv("REFINERY_RAY_WORKERS", "2")
    through_ray, ray_pools = _run(slug, monkeypatch, ray=True)
    local, local_pools = _run(slug, monkeypatch, ray=False)
    assert ray_pools == ["RayWorkerPool"] and local_pools == ["WorkerPool"]
    assert len(through_ray) == 4  # every implementation once: the library never measures the same code twice
    assert through_ray == local
    assert {"correct", "incorrect", "compile_error", "runtime_error"} <= {v for *_, v in through_ray}


def test_files_a_job_names_reach_the_actors_cache_as_bytes(ray_cluster, fast_home, tmp_path):
    library = tmp_path / "built" / "candidate.so"
    library.parent.mkdir()
    library.write_bytes(b"\x7fELF not really")
    job = Job(kind="c", device="cpu", candidate_source="", candidate_language="c", configs=[], init_seed=0,
              candidate_library=str(library), reference_library=str(tmp_path / "gone.so"),
              extensions_dir=str(tmp_path / "ext" / "abc123"))
    assert job_files(job) == {"candidate_library": library}
    shipped = ShippingDesk().ship(job)
    library.unlink()  # what the actor gets must not depend on the driver's files any more
    actor = PoolActor(PoolConfig.from_settings(get_settings()))
    try:
        placed = {item.field: actor.place(item) for item in shipped}
        moved = localize(job, actor.cache_dir, placed)
    finally:
        actor.close()
    assert Path(moved.candidate_library).read_bytes() == b"\x7fELF not really"
    assert Path(moved.candidate_library).is_relative_to(actor.cache_dir)
    assert moved.extensions_dir == str(actor.cache_dir / "torch_extensions" / "abc123")
    assert Path(moved.scratch_dir).is_relative_to(actor.cache_dir) and moved.cache_dir == str(actor.cache_dir)


def test_an_actor_lost_between_jobs_costs_no_verdict(ray_cluster, fast_home):
    info = Job(kind="c", device="cpu", candidate_source="", candidate_language="c", configs=[], init_seed=0,
               mode="info")
    with RayWorkerPool(workers=1, config=PoolConfig.from_settings(get_settings())) as pool:
        assert pool.run(info).status == "ok" and not pool.gpu
        ray_cluster.kill(pool.actors[0], no_restart=False)
        outcome = pool.run(info)
        assert outcome.status == "ok" and pool.replacements == 1
        assert outcome.raw["cwd"] == "/scratch" or not boundary().namespaced  # the candidate's own sandbox


def test_more_cpu_workers_than_the_cluster_has_cpus_are_refused(ray_cluster, fast_home):
    with pytest.raises(ValueError, match="2 CPUs"):
        RayWorkerPool(workers=3, config=PoolConfig.from_settings(get_settings()))


def test_the_flag_wins_then_refinery_ray_then_ray_address(monkeypatch):
    monkeypatch.delenv("REFINERY_RAY", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert not ray_requested(None) and ray_requested(True)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert ray_requested(None) and not ray_requested(False)
    monkeypatch.setenv("REFINERY_RAY", "0")
    assert not ray_requested(None)


def test_without_ray_the_local_pool_is_made(fast_home, monkeypatch):
    monkeypatch.delenv("REFINERY_RAY", raising=False)
    pool = make_pool(get_settings())
    assert isinstance(pool, WorkerPool)
    pool.close()


def test_the_worker_count_comes_from_refinery_ray_workers(monkeypatch):
    monkeypatch.setenv("REFINERY_RAY_WORKERS", "3")
    assert ray_workers(object()) == 3
    monkeypatch.setenv("REFINERY_RAY_WORKERS", "0")
    assert ray_workers(object()) is None


@pytest.mark.parametrize(("workers", "gpus", "share"), [(1, 1, 1.0), (2, 2, 1.0), (1, 2, 1.0), (3, 1, 0.3333),
                                                        (3, 2, 0.5), (4, 2, 0.5), (2, 0, 0.0)])
def test_gpu_shares_pack_workers_onto_whole_gpus(workers, gpus, share):
    assert gpu_share(workers, gpus) == share


@pytest.mark.parametrize("flag", ["--ray", "--no-ray"])
def test_refinery_verify_gives_the_same_verdict_on_a_ray_worker_and_locally(ray_cluster, fast_home, monkeypatch,
                                                                           tmp_path, flag):
    import json

    from typer.testing import CliRunner

    from engine.cli import app
    from engine.verify import scale

    slug = write_c_problem(fast_home, names=("plain",))
    prebuild(slug)
    monkeypatch.setenv("REFINERY_RAY", "0")  # restored after the test: the flag rewrites it
    made = []
    monkeypatch.setattr(scale, "make_pool", lambda **kw: made.append(make_pool(**kw)) or made[-1])
    candidate = tmp_path / "candidate.c"
    candidate.write_text("void scale(int n, const float *x, float *y)\n"
                         "{ for (int i = 0; i < n; i++) y[i] = x[i] * 2; }\n")
    done = CliRunner().invoke(app, ["verify", str(candidate), "--problem", slug, flag, "--no-store", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["verdict"] == "correct"
    assert [type(p) for p in made] == [RayWorkerPool if flag == "--ray" else WorkerPool]


@pytest.mark.gpu
def test_a_ray_worker_holding_the_gpu_reaches_the_local_pools_verdicts(ray_cluster, fast_home):
    from engine.problems import get_problem
    from engine.verify.evaluate import Verifier, VerifyOptions
    from engine.verify.prepare import TimingOptions
    from engine.wire.policy import TrialPolicy

    problem = get_problem("relu")
    sources = [(i.source, i.language) for i in problem.implementations if i.device == "cuda"]
    options = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=10, min_seconds=0.1, max_seconds=1.0)))
    settings = get_settings()
    with RayWorkerPool(workers=1, config=PoolConfig.from_settings(settings)) as pool:
        assert pool.gpu, "the Ray worker was given no GPU"
        through_ray = Verifier(pool=pool, options=options, settings=settings).evaluate_many(problem, sources)
    local_pool = WorkerPool(config=PoolConfig.from_settings(settings))
    try:
        local = Verifier(pool=local_pool, options=options, settings=settings).evaluate_many(problem, sources)
    finally:
        local_pool.close()
    assert [r.verdict for r in through_ray] == [r.verdict for r in local] == ["correct"] * len(sources)
    assert {r.device for r in through_ray} == {r.device for r in local}
    assert all(r.candidate_us and r.candidate_us > 0 for r in through_ray)
