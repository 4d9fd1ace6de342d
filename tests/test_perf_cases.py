"""The corpus of real CUDA performance bugs as the specification of the diagnostics: for each case,
`refinery analyze` names the root cause's kind on the slow program and stays silent on its fix.

Cases the analysis still misses carry `xfail = "why"` in their case.toml; the mark is strict, so a
case that starts passing must lose its xfail."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.perf_cases_support import CATEGORIES, analysed, load_cases, verdict

CASES = load_cases()


@pytest.fixture(scope="module", autouse=True)
def built_in_parallel():
    """Both cores compile the corpus (nvcc, ptxas and nvdisasm run as their own processes): on a fresh CI
    machine the 80 builds are most of this file's time."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda job: analysed(*job), [(c.folder / f"{side}.cu", c.arch, c.sizes)
                                                    for c in CASES for side in ("slow", "fixed")]))


def _param(case):
    marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


def test_the_corpus_has_forty_cases_and_five_per_category():
    assert len(CASES) >= 40
    for category in CATEGORIES:
        assert sum(c.category == category for c in CASES) >= 5, category


def test_every_case_names_its_source_and_root_cause():
    for case in CASES:
        assert case.source.startswith("https://") and len(case.root_cause) > 30, case.id
        assert (case.folder / "slow.cu").is_file() and (case.folder / "fixed.cu").is_file(), case.id


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_root_cause_named_on_the_slow_program_and_not_on_its_fix(case):
    on_slow, on_fixed = verdict(case)
    assert on_slow, f"{case.id}: the analysis does not name {case.category} on slow.cu"
    assert not on_fixed, f"{case.id}: the analysis names {case.category} on fixed.cu too"
