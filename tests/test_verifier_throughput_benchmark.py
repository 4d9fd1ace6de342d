"""benchmarks/verifier_throughput.py's baseline in the same call: another tree's run of the same benchmark, read
back and set beside this one's throughput (the GPU run itself needs the device)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tests.benchmark_scripts import load_benchmark

FAKE = """
import json, sys
from pathlib import Path
args = sys.argv
out = Path(args[args.index("--out") + 1])
out.write_text(json.dumps({"native": {"per_minute": 40.0, "stage_seconds_median": {"timing": 0.6},
                                      "candidates": int(args[args.index("--native") + 1])}}))
"""


def test_the_other_trees_run_is_the_baseline_and_the_ratio_is_printed(tmp_path):
    bench = load_benchmark("verifier_throughput")
    tree = tmp_path / "old-tree"
    (tree / "benchmarks").mkdir(parents=True)
    (tree / "benchmarks" / "verifier_throughput.py").write_text(FAKE)
    found = bench.against(tree, SimpleNamespace(native=7, energy=0.0), per_minute=60.0)
    assert found["per_minute"] == 40.0 and found["ratio"] == 1.5 and found["stage_seconds_median"] == {"timing": 0.6}
    json.dumps(found)


def test_a_baseline_that_fails_says_why_instead_of_a_ratio(tmp_path):
    bench = load_benchmark("verifier_throughput")
    tree = tmp_path / "broken"
    (tree / "benchmarks").mkdir(parents=True)
    (tree / "benchmarks" / "verifier_throughput.py").write_text("raise SystemExit('no GPU here')\n")
    found = bench.against(tree, SimpleNamespace(native=7, energy=0.0), per_minute=60.0)
    assert "ratio" not in found and "no GPU here" in found["error"]
