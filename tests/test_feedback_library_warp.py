"""Library-wide: the warp tools (divergence, imbalanced work, unrolling) name the root causes the
shipped naive kernels are known for and stay silent on every optimised implementation."""

from __future__ import annotations

import pytest

from engine.feedback import build_diagnostics, run_tools
from engine.problems import scan_all
from tests.test_analysis_library import library_reports

WARP_TOOLS = ["divergence", "imbalanced-work", "unrolling"]
# naive kernels whose slowness is one of these root causes, by the problem's own summary
KNOWN = {("reduction", "naive"): "divergence", ("mse-loss", "naive"): "divergence",
         ("spmv-csr", "naive"): "imbalanced-work"}
# optimised implementations with a further, real step left: a shared-memory tree reduction whose loop over
# s = blockDim.x / 2 ... the launch fixes (256 threads) but the compiler cannot unroll; the block size as a
# template parameter unrolls it (Harris, "Optimizing Parallel Reduction in CUDA", kernels 4 to 6)
FURTHER_STEP = {("row-sum", "coalesced"): {"unrolling"}, ("softmax", "coalesced"): {"unrolling"}}


def _warp_findings() -> dict[tuple[str, str], set[str]]:
    problems = {p.slug: p for p in scan_all().problems}
    found = {}
    for (slug, name), report in library_reports().items():
        diagnostics = build_diagnostics(report, problem=problems[slug])
        found[(slug, name)] = {f.tool for f in run_tools(diagnostics, names=WARP_TOOLS, bottleneck=None)}
    return found


@pytest.mark.slow
@pytest.mark.build
def test_warp_tools_find_the_known_root_causes_of_the_naive_kernels():
    found = _warp_findings()
    missed = {key: tool for key, tool in KNOWN.items() if key in found and tool not in found[key]}
    assert not missed


@pytest.mark.slow
@pytest.mark.build
def test_warp_tools_are_silent_on_every_optimised_implementation():
    strategies = {(p.slug, i.name): i.strategy for p in scan_all().problems for i in p.implementations}
    spurious = {key: tools for key, tools in _warp_findings().items()
                if tools - FURTHER_STEP.get(key, set()) and strategies.get(key) != "naive"}
    assert not spurious
