"""Nsight Compute around any command: a fixed metric set, a time budget, and a parsed record.

Always `--clock-control none` (ncu's default locks the clocks to base, which changes the card's
settings and makes durations incomparable with event timing). When ncu is missing, the counters
are refused, or the budget runs out, the profile says why and the caller falls back to static
diagnostics. Metrics a chip does not know are dropped and the run retried once.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.toolchain import find_tool

STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
                 "not_selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")
_FLOP_OPS = {"fp32": ("fadd", "fmul", "ffma"), "fp64": ("dadd", "dmul", "dfma"), "fp16": ("hadd", "hmul", "hfma")}
TENSOR_PATHS = {"fp16": "sm__ops_path_tensor_src_fp16.sum", "bf16": "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                "tf32": "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "fp64": "sm__ops_path_tensor_src_fp64.sum",
                "int8": "sm__ops_path_tensor_src_int8.sum", "fp8": "sm__ops_path_tensor_src_fp8_sparsity_off.sum"}

DEFAULT_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    *(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for ops in _FLOP_OPS.values() for op in ops),
    *TENSOR_PATHS.values(),
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS),
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread", "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks", "sm__cycles_elapsed.avg.per_second",
)
# names read back from an H200 report (profiling notes §3.3): the fallback set when ncu rejects the full
# list without saying which metric it does not know
CORE_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    *(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd", "fmul", "ffma", "dadd", "dmul",
                                                                          "dfma")),
    "sm__ops_path_tensor_src_fp16.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in ("barrier", "long_scoreboard",
                                                                                 "mio_throttle", "short_scoreboard",
                                                                                 "not_selected", "wait")),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__grid_size", "launch__block_size", "launch__registers_per_thread", "launch__waves_per_multiprocessor",
)
_TIME_UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0,
               "second": 1.0}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_INFO_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                 "Grid Size", "Device", "CC")


def unit_scale(unit: str) -> float:
    """Factor to base units for an ncu unit string (`Gbyte` → 1e9, `us` → 1e-6, `%` → 1)."""
    unit = unit.strip()
    if unit in _TIME_UNITS:
        return _TIME_UNITS[unit]
    if len(unit) > 1 and unit[0] in _PREFIX and unit[1].islower():
        return _PREFIX[unit[0]]
    return 1.0


@dataclass
class NcuKernel:
    """One profiled kernel launch: its metrics in base units (bytes, seconds, counts, percent)."""

    name: str
    metrics: dict[str, float]
    info: dict[str, str] = field(default_factory=dict)

    def get(self, metric: str, default: float = 0.0) -> float:
        return self.metrics.get(metric, default)


@dataclass
class NcuSummary:
    """The fixed metric set over all profiled launches of one candidate call."""

    kernels: int
    duration_s: float
    dram_bytes_read: float
    dram_bytes_written: float
    flops: dict[str, float]  # precision -> FLOPs (tensor paths as tensor_<p>)
    achieved_occupancy: float | None  # 0..1, time-weighted
    theoretical_occupancy: float | None
    ld_sectors_per_request: float | None
    st_sectors_per_request: float | None
    shared_ld_wavefronts_per_request: float | None
    shared_st_wavefronts_per_request: float | None
    shared_bank_conflicts: float
    top_stalls: list[tuple[str, float]]  # (reason, warps stalled per issue), largest first
    tensor_pipe_pct: float | None
    sm_throughput_pct: float | None
    dram_throughput_pct: float | None
    grid_blocks: int | None
    block_threads: int | None
    per_kernel: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def dram_bytes(self) -> float:
        return self.dram_bytes_read + self.dram_bytes_written

    @property
    def total_flops(self) -> float:
        return sum(self.flops.values())


@dataclass
class NcuProfile:
    ok: bool
    reason: str  # empty when ok; else why there are no dynamic diagnostics
    kernels: list[NcuKernel]
    seconds: float
    command: list[str]
    missing_metrics: list[str] = field(default_factory=list)
    log: str = ""

    def summary(self, kernel_filter: str | None = None) -> NcuSummary | None:
        chosen = [k for k in self.kernels if kernel_filter is None or re.search(kernel_filter, k.name)]
        return summarise(chosen) if chosen else None


def _float(value: str) -> float | None:
    try:
        return float(value.replace(",", ""))
    except ValueError:
        return None


def parse_raw_csv(text: str) -> list[NcuKernel]:
    """`ncu --csv --page raw` output (program output interleaved) → one record per kernel launch."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if len(lines) < 2:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    names, units, data = rows[0], rows[1], rows[2:]
    if "Kernel Name" not in names:
        return []
    kernels = []
    for row in data:
        if len(row) != len(names) or row == names:
            continue
        metrics, info = {}, {}
        for name, unit, value in zip(names, units, row, strict=True):
            if name in _INFO_COLUMNS:
                info[name] = value
                continue
            number = _float(value)
            if number is not None:
                metrics[name] = number * unit_scale(unit)
        kernels.append(NcuKernel(info.get("Kernel Name", ""), metrics, info))
    return kernels


def _ratio(kernels: list[NcuKernel], numerator: str, denominator: str) -> float | None:
    top = sum(k.get(numerator) for k in kernels)
    bottom = sum(k.get(denominator) for k in kernels)
    return top / bottom if bottom else None


def summarise(kernels: list[NcuKernel]) -> NcuSummary:
    """Sums for counts and bytes, request-weighted ratios, time-weighted percentages."""
    duration = sum(k.get("gpu__time_duration.sum") for k in kernels)

    def weighted(metric: str) -> float | None:
        present = [k for k in kernels if metric in k.metrics]
        if not present:
            return None
        weights = [k.get("gpu__time_duration.sum") or 1.0 for k in present]
        return sum(w * k.get(metric) for w, k in zip(weights, present, strict=True)) / sum(weights)

    flops: dict[str, float] = {}
    for precision, (add, mul, fma) in _FLOP_OPS.items():
        base = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
        count = sum(k.get(base.format(add)) + k.get(base.format(mul)) + 2 * k.get(base.format(fma)) for k in kernels)
        if precision == "fp16":
            count *= 2  # packed half2: two lanes per instruction
        if count:
            flops[precision] = count
    for precision, metric in TENSOR_PATHS.items():
        total = sum(k.get(metric) for k in kernels)
        if total:
            flops[f"tensor_{precision}"] = total
    stalls = []
    for reason in STALL_REASONS:
        value = weighted(f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
        if value:
            stalls.append((reason, value))
    stalls.sort(key=lambda item: -item[1])
    achieved = weighted("sm__warps_active.avg.pct_of_peak_sustained_active")
    theoretical = weighted("sm__maximum_warps_per_active_cycle_pct")
    grids = [int(k.get("launch__grid_size")) for k in kernels if "launch__grid_size" in k.metrics]
    blocks = [int(k.get("launch__block_size")) for k in kernels if "launch__block_size" in k.metrics]
    per_kernel: dict[str, dict[str, float]] = {}
    for k in kernels:
        entry = per_kernel.setdefault(k.name, {"launches": 0, "duration_s": 0.0, "ld_sectors": 0.0,
                                               "ld_requests": 0.0, "st_sectors": 0.0, "st_requests": 0.0})
        entry["launches"] += 1
        entry["duration_s"] += k.get("gpu__time_duration.sum")
        entry["ld_sectors"] += k.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        entry["ld_requests"] += k.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
        entry["st_sectors"] += k.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
        entry["st_requests"] += k.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
        for key, metric in (("achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"),
                            ("theoretical_occupancy", "sm__maximum_warps_per_active_cycle_pct")):
            if metric in k.metrics:  # a refused metric is unknown, not zero
                entry[key] = k.metrics[metric] / 100
    return NcuSummary(
        kernels=len({k.name for k in kernels}), duration_s=duration,
        dram_bytes_read=sum(k.get("dram__bytes_read.sum") for k in kernels),
        dram_bytes_written=sum(k.get("dram__bytes_write.sum") for k in kernels), flops=flops,
        achieved_occupancy=achieved / 100 if achieved is not None else None,
        theoretical_occupancy=theoretical / 100 if theoretical is not None else None,
        ld_sectors_per_request=_ratio(kernels, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                      "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        st_sectors_per_request=_ratio(kernels, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                      "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
        shared_ld_wavefronts_per_request=_ratio(kernels, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                                                "smsp__sass_inst_executed_op_shared_ld.sum"),
        shared_st_wavefronts_per_request=_ratio(kernels, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                                                "smsp__sass_inst_executed_op_shared_st.sum"),
        shared_bank_conflicts=sum(k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
                                  + k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum") for k in kernels),
        top_stalls=stalls[:5],
        tensor_pipe_pct=weighted("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
        sm_throughput_pct=weighted("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_throughput_pct=weighted("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        grid_blocks=min(grids) if grids else None, block_threads=min(blocks) if blocks else None,
        per_kernel=per_kernel)


def _failure_reason(output: str) -> str | None:
    if "ERR_NVGPUCTRPERM" in output:
        return "performance counters refused (ERR_NVGPUCTRPERM): profiling needs counter access on this machine"
    if "LibraryNotLoaded" in output or "Failed to load" in output and "library" in output.lower():
        return "ncu could not load its profiling library on this machine"
    if "No kernels were profiled" in output:
        return "no kernels were profiled (wrong kernel filter, or the command launched none)"
    return None


def _program_output(output: str) -> str:
    """ncu's output without its CSV rows: the program's own lines and ncu's messages."""
    return "\n".join(line for line in output.splitlines() if not line.startswith('"'))[-4000:]


def _program_failure(code: int | None, kernels: list[NcuKernel], output: str) -> str | None:
    """Why a profile with rows is still no measurement: the program failed, or a kernel never finished.

    A kernel that faults under the profiler (an illegal address) still gets a row, its metrics NaN;
    the program then exits non-zero. Such rows describe no complete run, so they are not diagnostics.
    """
    durations = {k.name.split("(")[0]: k.metrics.get("gpu__time_duration.sum") for k in kernels}
    unfinished = [name for name, seconds in durations.items() if seconds is not None and math.isnan(seconds)]
    if code == 0 and not unfinished:
        return None
    lines = [line.strip() for line in _program_output(output).splitlines() if line.strip()]
    # The program's own last words (e.g. the CUDA error) say more than ncu's "returned an error code".
    last = next((line for line in reversed(lines) if not line.startswith("==")), lines[-1] if lines else "")
    where = f"kernel {unfinished[0]} did not complete" if unfinished else f"exit {code}"
    return f"the profiled program failed under ncu ({where}): {last[:300]}"


def _unknown_metrics(output: str, metrics: list[str]) -> list[str]:
    bad = []
    for line in output.splitlines():
        if "==ERROR==" not in line and "==WARNING==" not in line:
            continue
        for metric in metrics:
            if metric in line or metric.split(".")[0] in line:
                bad.append(metric)
    return list(dict.fromkeys(bad))


def _run(command: list[str], timeout: float, env: dict | None, cwd: str | None) -> tuple[int | None, str]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                               cwd=cwd, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return None, output or ""


def profile_command(command: list[str], metrics: tuple[str, ...] | list[str] = DEFAULT_METRICS,
                    budget_s: float | None = None, kernel_regex: str | None = None, launch_skip: int = 0,
                    launch_count: int | None = None, env: dict | None = None, cwd: str | None = None,
                    ncu: str | None = None, follow_children: bool = False,
                    launcher: Callable[[list[str], float], tuple[int | None, str]] | None = None) -> NcuProfile:
    """Profile every (matching) kernel launch of `command`; never raises for profiler failures.

    Only `command`'s own process is watched unless `follow_children`: a candidate's kernels run in
    that process, and a compiler it starts (a cache miss) would otherwise carry the profiler's
    injection into each of its tools, which made builds several times slower. `launcher(argv,
    timeout)` runs the profiler's whole command line elsewhere (a candidate's sandbox) and returns
    (exit status or None at the timeout, output).
    """
    started = time.perf_counter()
    if budget_s is None:
        from engine.settings import get_settings

        budget_s = get_settings().ncu_budget_s
    executable = ncu or _default_ncu()
    if executable is None:
        return NcuProfile(False, "ncu not found (install Nsight Compute or set REFINERY_NCU_PATH)", [], 0.0,
                          list(command))
    wanted = list(metrics)
    dropped: list[str] = []
    output = ""
    code: int | None = None
    for _attempt in range(3):
        remaining = budget_s - (time.perf_counter() - started)
        args = [executable, "--clock-control", "none", "--csv", "--page", "raw", "--target-processes",
                "all" if follow_children else "application-only",
                "--metrics", ",".join(wanted)]
        if kernel_regex:
            args += ["--kernel-name", f"regex:{kernel_regex}"]
        if launch_skip:
            args += ["--launch-skip", str(launch_skip)]
        if launch_count:
            args += ["--launch-count", str(launch_count)]
        if launcher is not None:
            code, output = launcher([*args, *command], max(remaining, 1.0))
        else:
            code, output = _run([*args, *command], max(remaining, 1.0), env, cwd)
        seconds = time.perf_counter() - started
        if code is None:
            return NcuProfile(False, f"ncu exceeded its budget of {budget_s:.0f} s", parse_raw_csv(output), seconds,
                              list(command), dropped, output[-4000:])
        if reason := _failure_reason(output):
            return NcuProfile(False, reason, [], seconds, list(command), dropped, output[-4000:])
        kernels = parse_raw_csv(output)
        if kernels and (failed := _program_failure(code, kernels, output)):
            return NcuProfile(False, failed, kernels, seconds, list(command), dropped, _program_output(output))
        if kernels:
            return NcuProfile(True, "", kernels, seconds, list(command), dropped, _profiler_log(output))
        bad = _unknown_metrics(output, wanted)
        if not bad and "==ERROR==" in output and set(wanted) - set(CORE_METRICS):
            bad = [m for m in wanted if m not in CORE_METRICS]  # unnamed rejection: retry with the verified set
        if not bad:
            break
        dropped += bad
        wanted = [m for m in wanted if m not in bad]
        if not wanted:
            break
    tail = " | ".join(line for line in output.strip().splitlines()[-3:])
    return NcuProfile(False, f"ncu produced no metrics (exit {code}): {tail[:300]}", [],
                      time.perf_counter() - started, list(command), dropped, output[-4000:])


def _profiler_log(output: str) -> str:
    """ncu's own lines (connections, passes, warnings: before the table, so a tail would lose them) and the tail."""
    own = [line for line in output.splitlines() if line.startswith("==")][:40]
    return "\n".join([*own, "…", output[-2000:]])


def _default_ncu() -> str | None:
    try:
        from engine.settings import get_settings

        configured = get_settings().ncu_path
    except Exception:  # noqa: BLE001 - settings unavailable: fall back to PATH
        configured = "ncu"
    if os.path.sep in configured:
        return configured if os.access(configured, os.X_OK) else None
    found = find_tool(configured) or find_tool("ncu")
    if found is None:
        for folder in ("/usr/local/cuda/bin", "/opt/nvidia/nsight-compute"):
            candidate = os.path.join(folder, "ncu")
            if os.access(candidate, os.X_OK):
                return candidate
    return str(found) if found else None
