"""CPU used by the dashboard server while one browser tab shows a running run (target: 5 % of a core or less
between events), and what that does to the timing of a CPU candidate on the same machine.

On a two-core machine every bit of CPU the dashboard takes lands in the timings a run stores, so both are
measured in one go against the same server:

1. `streamlit run app/main.py` on loopback with a fresh REFINERY_HOME (SQLite file), a run marked running
   with `--preload` rounds stored the way the run process stores them (rows, then the event file);
2. the server process's CPU time (user + system) over `--window` seconds in each state: no tab open; one
   headless Chromium tab on the run's live page with nothing arriving; the same tab while a round is stored
   every `--interval` seconds (each one's store → visible latency is timed too); the tab on a blank page;
3. one CPU candidate (`--candidate`, a C problem's CPU implementation; small configurations) verified
   `--times` times with the tab on the live page and `--times` times with it on a blank page, alternating
   (a round stored after each, as a run would); median, min, max and max/min of the measured times for each.

    .venv/bin/python benchmarks/dashboard_cpu.py [--window 30] [--times 10] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_PCT = 5.0
TIMED_CONFIGS = ("small", "medium", "tiny-odd")  # the candidate is checked on these and timed on "medium"


@dataclasses.dataclass(frozen=True)
class Window:
    """CPU used over one measured stretch, in % of one core."""

    state: str
    seconds: float
    server_pct: float
    browser_pct: float  # Playwright's driver and Chromium together (0 with no browser)
    machine_pct: float  # all cores busy, in % of one core: anything else running shows up here

    def as_json(self) -> dict:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in dataclasses.asdict(self).items()}


def cpu_seconds(processes: list[psutil.Process]) -> float:
    """User plus system seconds of the processes still alive (one that ended counts as zero)."""
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent on anything but idling since boot."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def browser_processes(server_pid: int) -> list[psutil.Process]:
    """This script's descendants other than the server: Playwright's driver and the Chromium it started."""
    return [p for p in psutil.Process().children(recursive=True) if p.pid != server_pid]


def measure(state: str, server: psutil.Process, seconds: float, during: Callable[[float], None] | None = None,
            ) -> Window:
    """CPU of the server (and of the browser) over `seconds`; `during(deadline)` runs meanwhile if given."""
    browser = browser_processes(server.pid)
    started, server_0, browser_0, machine_0 = (time.monotonic(), cpu_seconds([server]), cpu_seconds(browser),
                                               machine_busy_seconds())
    deadline = started + seconds
    if during is not None:
        during(deadline)
    time.sleep(max(0.0, deadline - time.monotonic()))
    wall = time.monotonic() - started
    window = Window(state, wall, 100 * (cpu_seconds([server]) - server_0) / wall,
                    100 * (cpu_seconds(browser) - browser_0) / wall, 100 * (machine_busy_seconds() - machine_0) / wall)
    print(f"{state:<32} server {window.server_pct:6.2f} % of a core   browser {window.browser_pct:6.2f} %   "
          f"machine {window.machine_pct:6.1f} %", flush=True)
    return window


class LiveRun:
    """A run marked running whose rounds the script stores one at a time, as the run process would; it also
    beats like one (`heartbeat()`), or the dashboard would soon end it as a run whose process is gone."""

    def __init__(self, preload: int) -> None:
        from app.testing import make_run

        self.run_id = make_run(rounds=10_000)
        self.step, self.parent = 0, None
        for _ in range(preload):
            self.store()

    def heartbeat(self):
        """The run process's heartbeat, stamping the run row while the benchmark runs."""
        try:
            from engine.runs.run import Heartbeat
        except ImportError:  # an engine from before heartbeats: nothing ends a silent run there
            return nullcontext()
        return Heartbeat(self.run_id)

    def store(self) -> int:
        from app.testing import add_round

        verdict = "incorrect" if self.step % 5 == 3 else "correct"
        candidate = add_round(self.run_id, self.step, parent_id=self.parent, verdict=verdict,
                              speedup=1.0 + (self.step % 17) / 10)
        self.step += 1
        if verdict == "correct":
            self.parent = candidate
        return candidate


def stream_rounds(run: LiveRun, page, interval_s: float, latencies: list[float]) -> Callable[[float], None]:
    """Store a round every `interval_s` until the deadline, timing each until its row is in the page."""
    def during(deadline: float) -> None:
        while time.monotonic() + interval_s < deadline:
            time.sleep(interval_s)
            started = time.perf_counter()
            candidate = run.store()
            page.wait_for_selector(f".st-key-round-{candidate}", state="attached", timeout=30_000)
            latencies.append(time.perf_counter() - started)
    return during


def open_live(page, live_url: str, attempts: int = 2) -> None:
    """Load the live page and wait for its live caption; a load that never gets there is tried again."""
    for attempt in range(1, attempts + 1):
        page.goto(live_url)
        try:
            page.wait_for_selector("text=Live:", timeout=60_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; say what the page showed
            shot = Path(tempfile.gettempdir()) / f"dashboard-cpu-stuck-{attempt}.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"  the live page did not show up (attempt {attempt}); screenshot: {shot}", flush=True)
    raise RuntimeError(f"{live_url} did not show the live caption in {attempts} attempts")


@contextmanager
def browser_tab(url: str, chromium: str) -> Iterator:
    """One headless Chromium tab (Debian's Chromium, an empty profile) on `url`, the app connected."""
    from playwright.sync_api import sync_playwright

    from app.testing import CHROMIUM_FLAGS

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1500, "height": 1200})
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(url)
        page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=120_000)
        page.wait_for_selector("text=Live:", timeout=120_000)
        try:
            yield page
        finally:
            context.close()


@dataclasses.dataclass
class Spread:
    """One candidate verified several times in one state: its measured times, speedups, and the CPU around."""

    state: str
    candidate_us: list[float] = dataclasses.field(default_factory=list)
    speedups: list[float] = dataclasses.field(default_factory=list)
    seconds: float = 0.0  # wall time of the verifications
    server_s: float = 0.0  # the dashboard server's CPU seconds meanwhile
    machine_s: float = 0.0  # all cores' busy seconds meanwhile, the verifications included

    def summary(self) -> dict:
        times = self.candidate_us
        return {"state": self.state, "runs": len(times), "median_us": round(statistics.median(times), 1),
                "min_us": round(min(times), 1), "max_us": round(max(times), 1),
                "max_over_min": round(max(times) / min(times), 4),
                "speedup_min": round(min(self.speedups), 3), "speedup_max": round(max(self.speedups), 3),
                "server_pct_meanwhile": round(100 * self.server_s / self.seconds, 2),
                "machine_pct_meanwhile": round(100 * self.machine_s / self.seconds, 1)}


def time_candidate(spec: str, times: int, server: psutil.Process, page, live_url: str,
                   after_each: Callable[[], object]) -> list[Spread]:
    """Verify `spec` (SLUG/IMPL) `times` times with the tab on the run's live page and `times` times with it
    on a blank page (its session gone), alternating, so that whatever else the machine runs meanwhile weighs
    on both alike. One warm worker pool; checked on TIMED_CONFIGS, timed on 'medium'."""
    from engine.problems import get_problem
    from engine.verify.evaluate import Verifier, VerifyOptions

    slug, name = spec.split("/", 1)
    full = get_problem(slug)
    problem = dataclasses.replace(full, configs=tuple(c for c in full.configs if c.name in TIMED_CONFIGS))
    impl = problem.implementation(name)
    spreads = {"tab open": Spread("tab open"), "tab closed": Spread("tab closed")}
    with Verifier(options=VerifyOptions(timing_config="medium")) as verifier:
        verifier.evaluate(problem, impl.source, impl.language)  # builds it once; not counted
        for index in range(times):
            for state in (("tab open", "tab closed") if index % 2 == 0 else ("tab closed", "tab open")):
                if state == "tab open":
                    open_live(page, live_url)
                    time.sleep(5)  # the first draw and the charts are done
                else:
                    page.goto("about:blank")
                    time.sleep(3)
                spread = spreads[state]
                started, server_0, machine_0 = time.monotonic(), cpu_seconds([server]), machine_busy_seconds()
                result = verifier.evaluate(problem, impl.source, impl.language)
                spread.seconds += time.monotonic() - started
                spread.server_s += cpu_seconds([server]) - server_0
                spread.machine_s += machine_busy_seconds() - machine_0
                if result.candidate_us is None:
                    raise RuntimeError(f"{spec} was not timed: {result.verdict.value}: {result.message}")
                spread.candidate_us.append(result.candidate_us)
                spread.speedups.append(result.speedup or 0.0)
                print(f"  {state:<10} #{index + 1}: {result.candidate_us:,.1f} µs, {result.speedup or 0:.3f}×",
                      flush=True)
                after_each()  # the round is stored, as a run would store it
    for spread in spreads.values():
        print(json.dumps(spread.summary()), flush=True)
    return list(spreads.values())


def machine() -> dict:
    import streamlit

    from engine.settings import get_settings

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "streamlit": streamlit.__version__, "gpu": False,
            "timing_cores": getattr(get_settings(), "timing_cores", None), "load_average": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured in each state")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between rounds while they arrive")
    parser.add_argument("--preload", type=int, default=12, help="rounds the run holds before the tab opens")
    parser.add_argument("--candidate", default="gemm/cpu-blocked", help="SLUG/IMPL of a C problem's CPU code")
    parser.add_argument("--times", type=int, default=10, help="verifications of the candidate per state (0: skip)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--chromium", default=os.environ.get("REFINERY_CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="refinery-cpu-bench-"))
    os.environ["REFINERY_HOME"] = str(home)
    os.environ.pop("REFINERY_DATABASE_URL", None)
    from app.testing import start_streamlit, stop_streamlit
    from engine.store.database import use_settings_database

    use_settings_database()

    run = LiveRun(args.preload)
    process, url = start_streamlit(home, log=home / "streamlit.log")
    server = psutil.Process(process.pid)
    windows: list[Window] = []
    spreads: list[Spread] = []
    latencies: list[float] = []
    try:
        with run.heartbeat():
            time.sleep(3)  # the server's start-up work is over
            windows.append(measure("no tab open", server, args.window))
            live_url = f"{url}/run_live?run={run.run_id}"
            with browser_tab(live_url, args.chromium) as page:
                time.sleep(5)  # the first draw and the charts are done
                windows.append(measure("tab open, between events", server, args.window))
                windows.append(measure(f"tab open, a round every {args.interval:g} s", server, args.window,
                                       stream_rounds(run, page, args.interval, latencies)))
                page.goto("about:blank")
                time.sleep(3)
                windows.append(measure("tab closed again", server, args.window))
                if args.times:
                    spreads = time_candidate(args.candidate, args.times, server, page, live_url, run.store)
    finally:
        stop_streamlit(process)

    baseline = max(windows[0].server_pct, 0.01)
    result = {
        "machine": machine(), "window_s": args.window, "interval_s": args.interval, "preloaded_rounds": args.preload,
        "target_pct": TARGET_PCT,
        "windows": [{**w.as_json(), "vs_no_tab": round(w.server_pct / baseline, 1)} for w in windows],
        "latency_s": {"rounds": len(latencies), "median": round(statistics.median(latencies), 3),
                      "max": round(max(latencies), 3)} if latencies else None,
        "spread": [s.summary() for s in spreads],
        "spread_raw": [{"state": s.state, "candidate_us": s.candidate_us, "speedups": s.speedups} for s in spreads],
    }
    result["meets_target"] = windows[1].server_pct <= TARGET_PCT
    print(json.dumps({k: v for k, v in result.items() if k != "spread_raw"}, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
