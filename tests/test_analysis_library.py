"""Library-wide: every shipped CUDA implementation analyses, and the coalescing diagnosis separates
each problem's naive implementation from its coalesced one."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.analysis import analyse_candidate
from engine.feedback import build_diagnostics, run_tools
from engine.problems import scan_all
from tests.analysis_support import cache_dir

_REPORTS: dict[tuple[str, str], object] = {}


def reports_of(jobs: list) -> dict[tuple[str, str], object]:
    """(slug, implementation) → StaticReport for each (problem, implementation) of `jobs`, built two at a time
    and kept for the module's other tests."""
    def analyse(job):
        problem, impl = job
        return (problem.slug, impl.name), analyse_candidate(problem, impl.source, impl.language, arch="sm_90",
                                                            cache_dir=cache_dir())

    missing = [job for job in jobs if (job[0].slug, job[1].name) not in _REPORTS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        _REPORTS.update(pool.map(analyse, missing))
    return {(p.slug, i.name): _REPORTS[(p.slug, i.name)] for p, i in jobs}


@functools.cache
def library_reports() -> dict[tuple[str, str], object]:
    """Every shipped CUDA implementation's report (the `build` tests: the whole library compiled)."""
    return reports_of([(p, impl) for p in scan_all().problems for impl in p.implementations if impl.device == "cuda"])


def _pairs():
    for problem in scan_all().problems:
        names = {i.name: i for i in problem.implementations if i.device == "cuda"}
        coalesced = [i for i in names.values() if i.strategy == "coalesced"]
        if "naive" in names and coalesced:
            yield problem, names["naive"], coalesced[0]


@pytest.mark.slow
@pytest.mark.build
@pytest.mark.timeout(1200)  # the first run compiles the whole library
def test_every_shipped_cuda_implementation_compiles_and_analyses():
    reports = library_reports()
    if not reports:
        pytest.skip("no CUDA implementations in the library yet")
    failures = {key: report.notes for key, report in reports.items() if not report.ok or not report.kernels}
    assert not failures


@pytest.mark.slow
@pytest.mark.build
def test_every_shipped_kernel_gets_a_block_size_from_its_own_launch():
    assumed = {key: [k.name for k in r.kernels if k.launch.origin == "assumed"] for key, r in library_reports().items()}
    assert not {key: names for key, names in assumed.items() if names}


@pytest.mark.slow
@pytest.mark.build
def test_every_shipped_kernel_has_an_occupancy_for_the_target_arch():
    missing = [key for key, r in library_reports().items() for k in r.kernels if "sm_90" not in k.occupancy]
    assert not missing


@pytest.fixture(scope="module")
def pair_reports() -> dict[tuple[str, str], object]:
    """The naive and coalesced implementations' reports only: the pairs test compiles no more than it reads."""
    return reports_of([(p, impl) for p, naive, coalesced in _pairs() for impl in (naive, coalesced)])


def _finds(problem, impl, reports) -> bool:
    diagnostics = build_diagnostics(reports[(problem.slug, impl.name)], problem=problem)
    return bool(run_tools(diagnostics, names=["coalescing"], bottleneck=None))


@pytest.mark.slow
@pytest.mark.parametrize("pair", list(_pairs()), ids=lambda p: p[0].slug)
def test_naive_gets_the_coalescing_finding_and_coalesced_does_not(pair, pair_reports):
    """Where the naive kernel indexes through loaded data (CSR, gathers) no address is known before it
    runs: the report must say so (ncu decides those on the device) rather than guess."""
    problem, naive, coalesced = pair
    naive_report = pair_reports[(problem.slug, naive.name)]
    if not _finds(problem, naive, pair_reports):
        data_dependent = [a for k in naive_report.kernels for a in k.accesses if a.space == "global" and not a.known]
        assert data_dependent, f"{problem.slug}/naive: no coalescing finding and no unknown access to explain it"
    assert not _finds(problem, coalesced, pair_reports), f"{problem.slug}/{coalesced.name}: unexpected coalescing"
