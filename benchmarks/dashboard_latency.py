"""Latency from a round being stored to it being visible in the browser (target: 1 s or less).

Starts `streamlit run app/main.py` on loopback with a fresh REFINERY_HOME, opens one run's live
view in Debian's Chromium, then stores rounds the way the run process does (rows committed, then
the event file) and times each until its row is in the page. With `--preload N` the run already
holds N candidates, to see the cost of a big run.

    .venv/bin/python benchmarks/dashboard_latency.py --rounds 20 [--preload 10000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="rounds to store and time")
    parser.add_argument("--preload", type=int, default=0, help="candidates already in the run")
    parser.add_argument("--interval", type=float, default=1.5, help="seconds between rounds")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="refinery-bench-"))
    os.environ["REFINERY_HOME"] = str(home)
    os.environ.pop("REFINERY_DATABASE_URL", None)

    from playwright.sync_api import sync_playwright

    from app.testing import CHROMIUM_FLAGS, add_round, bulk_run, make_run, start_streamlit, stop_streamlit
    from engine.runs.run import Heartbeat
    from engine.store.database import use_settings_database

    use_settings_database()
    run_id = bulk_run(args.preload) if args.preload else make_run(rounds=args.rounds)
    server, url = start_streamlit(home)
    latencies: list[float] = []
    try:
        # the stand-in run beats like a run process, or the dashboard ends it as one whose process is gone
        with Heartbeat(run_id), sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS,
                viewport={"width": 1500, "height": 1200})
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(f"{url}/run_live?run={run_id}")
            page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=120_000)
            page.wait_for_selector("text=Live:", timeout=120_000)
            parent = None
            first_step = args.preload // 10 + 1 if args.preload else 0
            for i in range(args.rounds):
                time.sleep(args.interval)
                started = time.perf_counter()
                candidate = add_round(run_id, first_step + i, parent_id=parent, speedup=1.0 + i / 10)
                page.wait_for_selector(f".st-key-round-{candidate}", timeout=30_000)
                latencies.append(time.perf_counter() - started)
                parent = candidate
                print(f"round {i + 1}: {latencies[-1] * 1000:.0f} ms", flush=True)
            context.close()
    finally:
        stop_streamlit(server)

    ordered = sorted(latencies)
    result = {
        "rounds": len(latencies), "preloaded_candidates": args.preload,
        "median_s": statistics.median(latencies), "p90_s": ordered[int(0.9 * (len(ordered) - 1))],
        "max_s": ordered[-1], "target_s": TARGET_S,
    }
    result["meets_target"] = result["median_s"] <= TARGET_S
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**result, "latencies_s": latencies}, indent=2))
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
