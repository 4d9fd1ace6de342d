"""What a sandboxed child can cost the trusted side is bounded, and nothing of it outlives its job.

A child's output is read into bounded memory (a compile that prints warnings without end, a reference whose
constructor prints in a loop); a job's scratch folder has a quota while it runs and is gone afterwards, with
the runner's and the judge's logs; what a killed parent left behind (job cgroups, scratch folders) is removed
by the next one to start, and nothing of a live process is touched. The flooding cases run in a child Python
so that its peak memory can be read alone.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.sandbox import JobLimits, SandboxSpec, boundary, cgroups, owners, run, scratch, sweep_leftovers
from engine.sandbox.launch import FLOOD_BYTES
from engine.sandbox.output import Bounded

REPO = Path(__file__).resolve().parents[1]
CHEATS = Path(__file__).parent / "cheats"
SCALE = CHEATS / "problems" / "c" / "scale-small"
where = boundary()
needs_namespaces = pytest.mark.skipif(not where.namespaced, reason="; ".join(where.missing) or "no namespaces")
needs_quota = pytest.mark.skipif(not where.scratch_quota, reason="no scratch quota on this machine: "
                                 + "; ".join(where.missing))
needs_cgroup = pytest.mark.skipif(where.cgroup is None, reason="no job cgroup on this machine")
# Peak memory a flood may add to the process that reads it: far below the flood itself (FLOOD_BYTES are read
# before the job is stopped), so a parent that kept it all fails.
MEMORY_BOUND = FLOOD_BYTES // 2

# gcc prints a warning for every _Pragma a macro expands to: 10^8 of them, about 30 MB a second here
FLOODING_C = "\n".join([
    '#define W0 _Pragma("GCC warning \\"a candidate whose compile prints warnings without end\\"")',
    *[f"#define W{i} " + " ".join([f"W{i - 1}"] * 10) for i in range(1, 9)],
    "W8",
    (SCALE / "impls" / "cpu-naive.c").read_text(),
])
FLOODING_CONSTRUCTOR = """
#include <stdio.h>
__attribute__((constructor)) static void chatter(void)
{
    for (;;)
        fputs("a reference whose constructor prints without end\\n", stdout);
}
"""


def _peak_kib() -> str:
    return "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"


def in_child_python(code: str, env: dict[str, str] | None = None) -> dict:
    """Run `code` (which sets `result`, a dict) in a fresh Python; `peak_before` and `peak_after` (KiB) are its
    peak memory before the code's last step (`# measured from here` in it) and at the end."""
    before, after = code.split("# measured from here")
    program = (f"{textwrap.dedent(before)}\npeak_before = {_peak_kib()}\n{textwrap.dedent(after)}\n"
               f"import json\nresult.update(peak_before=peak_before, peak_after={_peak_kib()})\n"
               "print(json.dumps(result))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=600, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_output_past_its_bound_keeps_its_head_and_tail_and_says_how_much_was_left_out():
    buffer = Bounded(head=4, tail=4)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrst"):
        buffer.add(chunk)
    assert buffer.value() == "abcd\n… 12 bytes left out …\nqrst".encode()
    assert buffer.total == 20 and buffer.left_out == 12


def test_output_within_its_bound_is_kept_whole():
    buffer = Bounded(head=4, tail=4)
    buffer.add(b"abcdefgh")
    assert buffer.value() == b"abcdefgh" and buffer.left_out == 0


@needs_namespaces
def test_a_job_that_prints_past_the_flood_bound_is_stopped_and_its_output_kept_head_and_tail(tmp_path):
    spec = SandboxSpec(argv=["/bin/sh", "-c", "echo first; yes flood"], scratch=tmp_path / "scratch",
                       hidden=[REPO], python=False)
    done = run(spec, timeout_s=60, flood_bytes=8 << 20)
    assert done.flooded and not done.timed_out and "stopped after printing more than 8 MiB" in done.detail
    assert done.stdout.startswith(b"first\nflood\n") and b"bytes left out" in done.stdout
    assert len(done.stdout) < 3 << 20


@needs_namespaces
@pytest.mark.slow
def test_a_compile_that_prints_warnings_without_end_is_a_compile_error_with_a_bounded_log(tmp_path):
    result = in_child_python(f"""
        from pathlib import Path
        from engine.compilation.candidate import build_candidate
        from engine.problems import load_problem

        problem = load_problem(Path({str(SCALE)!r}))
        honest = build_candidate(problem, problem.implementation("cpu-naive").source, "c",
                                 cache_dir=Path({str(tmp_path)!r}))
        assert honest.ok, honest.log
        # measured from here
        build = build_candidate(problem, {FLOODING_C!r}, "c", cache_dir=Path({str(tmp_path)!r}))
        result = {{"ok": build.ok, "log": build.log[:2000] + build.log[-2000:], "log_chars": len(build.log),
                   "marked": "bytes left out" in build.log}}
    """)
    assert not result["ok"]
    assert "a candidate whose compile prints warnings without end" in result["log"]
    assert f"compiler stopped after printing more than {FLOOD_BYTES >> 20} MiB" in result["log"]
    assert result["marked"] and result["log_chars"] < 5 << 20
    assert (result["peak_after"] - result["peak_before"]) << 10 < MEMORY_BOUND, result


@needs_namespaces
@pytest.mark.slow
def test_a_problem_whose_reference_prints_without_end_fails_its_import_with_a_clear_error(tmp_path):
    flooding = tmp_path / "chatty-reference"
    subprocess.run(["cp", "-r", str(SCALE), str(flooding)], check=True)
    with open(flooding / "reference.c", "a") as reference:
        reference.write(FLOODING_CONSTRUCTOR)
    result = in_child_python(f"""
        from pathlib import Path
        from engine.problem_import import import_path

        honest = import_path(Path({str(SCALE)!r}), Path({str(tmp_path / "imported")!r}))
        assert not honest.errors, honest.errors
        # measured from here
        report = import_path(Path({str(flooding)!r}), Path({str(tmp_path / "imported")!r}))
        result = {{"errors": [str(e) for e in report.errors], "imported": len(report.imported)}}
    """)
    assert result["imported"] == 0 and len(result["errors"]) == 1
    error = result["errors"][0]
    assert "reference.c" in error and f"stopped after printing more than {FLOOD_BYTES >> 20} MiB" in error
    assert (result["peak_after"] - result["peak_before"]) << 10 < MEMORY_BOUND, result


@needs_namespaces
@needs_quota
def test_a_job_cannot_write_more_than_its_scratch_quota(tmp_path):
    limits = JobLimits(scratch_mb=8)
    with scratch.folder("quota-test", tmp_path, limits.scratch_mb) as folder:
        code = textwrap.dedent("""
            import errno, json, os
            def fill(path):
                written = 0
                try:
                    with open(path, "wb") as handle:
                        for _ in range(64):
                            handle.write(b"x" * (1 << 20))
                            handle.flush()
                            written += 1 << 20
                except OSError as exc:
                    return written, exc.errno
                return written, None
            print(json.dumps({"scratch": fill("/scratch/big"), "tmp": fill("/tmp/big")}))
        """)
        done = run(SandboxSpec(argv=[sys.executable, "-S", "-c", code], scratch=folder, hidden=[REPO],
                               limits=limits), timeout_s=60)
        out = json.loads(done.stdout.decode().strip().splitlines()[-1])
        assert out["scratch"][1] == errno.ENOSPC and out["scratch"][0] <= 8 << 20
        assert out["tmp"][1] == errno.ENOSPC and out["tmp"][0] <= 8 << 20
        assert (folder / "big").stat().st_size <= 8 << 20
        assert "its scratch folder is full (its quota is 8 MB)" in done.detail
    assert not folder.exists() and str(folder) not in Path("/proc/self/mountinfo").read_text()


@needs_namespaces
def test_a_finished_compile_or_probe_leaves_no_scratch_folder_behind(tmp_path):
    from engine.compilation.c import compile_c_library
    from engine.problem_import.probe import probe_c
    from engine.problems import load_problem

    mine = f"-{owners.tag()}-"
    before = {p for p in scratch.default_root().iterdir() if mine in p.name}
    assert compile_c_library((SCALE / "reference.c").read_text(), tmp_path).ok
    probe_c(load_problem(SCALE))
    assert {p for p in scratch.default_root().iterdir() if mine in p.name} == before


def _dead_and_live_tags() -> tuple[str, str, subprocess.Popen]:
    """`<pid>-<start>` of a process that has ended, and of one that runs (returned, to be ended by the caller)."""
    ended = subprocess.Popen(["sleep", "60"])
    dead = f"{ended.pid}-{owners.start_ticks(ended.pid)}"
    ended.kill()
    ended.wait()
    running = subprocess.Popen(["sleep", "600"])
    return dead, f"{running.pid}-{owners.start_ticks(running.pid)}", running


def test_a_reused_pid_is_not_taken_for_the_process_that_made_a_folder():
    pid, start = os.getpid(), owners.start_ticks(os.getpid())
    assert not owners.gone(f"runner-{pid}-{start}-abc123")
    assert owners.gone(f"runner-{pid}-{start + 1}-abc123")
    assert not owners.gone("runner-abc123") and not owners.gone("unrelated")


@needs_cgroup
def test_leftovers_of_a_dead_process_are_removed_at_start_up_and_those_of_a_live_one_kept(tmp_path, monkeypatch):
    from engine.verify.pool import PoolConfig, WorkerPool

    dead, live, running = _dead_and_live_tags()
    made = {}
    try:
        for name, tag in (("dead", dead), ("live", live)):
            monkeypatch.setattr(owners, "tag", lambda tag=tag: tag)
            made[name] = (scratch.make("runner", tmp_path, 4), cgroups.JobCgroup.create(64, 8))
        monkeypatch.undo()
        assert made["dead"][1] is not None and made["live"][1] is not None
        pool = WorkerPool(config=PoolConfig(cache_dir=tmp_path / "cache", scratch_root=tmp_path))
        pool.close()
        dead_folder, dead_group = made["dead"]
        live_folder, live_group = made["live"]
        assert not dead_folder.exists() and not any(f.exists() for f in dead_group.folders)
        assert str(dead_folder) not in Path("/proc/self/mountinfo").read_text()
        assert live_folder.is_dir() and all(f.is_dir() for f in live_group.folders)
    finally:
        running.kill()
        running.wait()
        for folder, group in made.values():
            scratch.remove(folder)
            if group is not None:
                group.close()


def test_sweeping_twice_finds_nothing_more(tmp_path):
    sweep_leftovers(tmp_path)
    assert sweep_leftovers(tmp_path)[1] == []


CHATTY = """
import sys

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        sys.stdout.write("chatter " * (1 << 20))
        sys.stdout.flush()
        return x * (x > 0)
"""


@needs_namespaces
@pytest.mark.slow
def test_a_pool_keeps_a_bounded_log_tail_and_leaves_no_logs_or_scratch_folders_behind(tmp_path, monkeypatch):
    from engine.problems import load_problem
    from engine.schema.verdict import Verdict
    from engine.settings import get_settings
    from engine.verify.evaluate import Verifier, VerifyOptions
    from engine.verify.pool import LOG_TAIL_CHARS, PoolConfig, WorkerPool
    from engine.verify.prepare import TimingOptions
    from engine.wire.policy import TrialPolicy

    monkeypatch.setenv("REFINERY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REFINERY_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    root = tmp_path / "scratch"
    settings = get_settings()
    pool = WorkerPool(config=PoolConfig.from_settings(settings, scratch_root=root))
    try:
        verifier = Verifier(pool=pool, settings=settings,
                            options=VerifyOptions(timing=False, timeout_s=120,
                                                  timing_policy=TimingOptions(TrialPolicy(3, 0.0, 5, 1.0,
                                                                                          flush_bytes=1 << 20))))
        result = verifier.evaluate(load_problem(CHEATS / "problems" / "pytorch" / "relu-small"), CHATTY)
        assert result.verdict == Verdict.CORRECT, result.message
        assert "chatter" in result.log and len(result.log) <= LOG_TAIL_CHARS + 2000
        assert not [p for p in root.iterdir() if p.suffix == ".log"]
    finally:
        pool.close()
        get_settings.cache_clear()
    assert list(root.iterdir()) == []
    assert str(root) not in Path("/proc/self/mountinfo").read_text()
