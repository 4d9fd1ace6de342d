"""Device ceilings for the roofline: a built-in table per GPU model, and values measured on the GPU.

The table holds dense (no sparsity) datasheet peaks at boost clock; tensor rates accumulate in
FP32. On Hopper the legacy mma.sync/WMMA path (HMMA) peaks at 2/3 of the wgmma path, so a kernel
whose SASS has HMMA but no HGMMA is held to `fp16_mma_sync`. Measured ceilings (a large copy and a
large matmul through torch) live in `$REFINERY_HOME/device_ceilings.json`; both are shown.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

TERA = 1e12


@dataclass(frozen=True)
class DeviceCeilings:
    """Peaks of one GPU model: FLOP/s per precision and path, DRAM bytes/s, L2 and SM count."""

    name: str
    match: tuple[str, ...]  # substrings of torch.cuda.get_device_name(), all must appear
    cc: tuple[int, int]
    sms: int
    l2_bytes: int
    dram_bandwidth: float  # bytes/s
    peaks: dict[str, float] = field(default_factory=dict)  # FLOP/s: fp64 fp64_tc fp32 tf32 fp16 bf16 fp8 ...
    boost_mhz: int = 0
    source: str = "table"  # table (the datasheet) | measured (on the device, `measure_ceilings`)

    def peak(self, precision: str) -> float | None:
        return self.peaks.get(precision)

    def ridge(self, precision: str) -> float | None:
        peak = self.peak(precision)
        return peak / self.dram_bandwidth if peak and self.dram_bandwidth else None

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"


def _peaks(fp64, fp64_tc, fp32, tf32, fp16, fp8=None, hmma=None) -> dict[str, float]:
    values = {"fp64": fp64, "fp64_tc": fp64_tc, "fp32": fp32, "tf32": tf32, "fp16": fp16, "bf16": fp16,
              "fp8": fp8, "fp16_simt": 2 * fp32, "fp16_mma_sync": hmma or fp16, "bf16_mma_sync": hmma or fp16,
              "tf32_mma_sync": (hmma / 2 if hmma else tf32)}
    return {k: v * TERA for k, v in values.items() if v}


BUILTIN: tuple[DeviceCeilings, ...] = (
    DeviceCeilings("NVIDIA H200", ("H200",), (9, 0), 132, 60 * 2**20, 4.8 * TERA,
                   _peaks(33.5, 66.9, 66.9, 494.7, 989.4, 1978.9, hmma=660.0), 1980),
    DeviceCeilings("NVIDIA H100 PCIe", ("H100", "PCIe"), (9, 0), 114, 50 * 2**20, 2.0 * TERA,
                   _peaks(25.6, 51.2, 51.2, 378.0, 756.0, 1513.0, hmma=504.0), 1755),
    DeviceCeilings("NVIDIA H100 SXM", ("H100",), (9, 0), 132, 50 * 2**20, 3.35 * TERA,
                   _peaks(33.5, 66.9, 66.9, 494.7, 989.4, 1978.9, hmma=660.0), 1980),
    DeviceCeilings("NVIDIA A100 40GB", ("A100", "40GB"), (8, 0), 108, 40 * 2**20, 1.555 * TERA,
                   _peaks(9.7, 19.5, 19.5, 156.0, 312.0), 1410),
    DeviceCeilings("NVIDIA A100 80GB PCIe", ("A100", "80GB", "PCIe"), (8, 0), 108, 40 * 2**20, 1.935 * TERA,
                   _peaks(9.7, 19.5, 19.5, 156.0, 312.0), 1410),
    DeviceCeilings("NVIDIA A100 80GB SXM", ("A100",), (8, 0), 108, 40 * 2**20, 2.039 * TERA,
                   _peaks(9.7, 19.5, 19.5, 156.0, 312.0), 1410),
    DeviceCeilings("NVIDIA L40S", ("L40S",), (8, 9), 142, 96 * 2**20, 0.864 * TERA,
                   _peaks(1.4, None, 91.6, 183.0, 362.0, 733.0), 2520),
    DeviceCeilings("NVIDIA L4", ("L4",), (8, 9), 58, 48 * 2**20, 0.300 * TERA,
                   _peaks(0.5, None, 30.3, 60.0, 121.0, 242.0), 2040),
    DeviceCeilings("NVIDIA GeForce RTX 4090", ("4090",), (8, 9), 128, 72 * 2**20, 1.008 * TERA,
                   _peaks(1.3, None, 82.6, 82.6, 165.2, 330.3), 2520),
    DeviceCeilings("NVIDIA GeForce RTX 3090", ("3090",), (8, 6), 82, 6 * 2**20, 0.936 * TERA,
                   _peaks(0.56, None, 35.6, 35.6, 71.0), 1695),
)


def match_device(name: str) -> DeviceCeilings | None:
    """The table entry for a device name as torch prints it (`NVIDIA H100 80GB HBM3` → H100 SXM)."""
    lowered = name.lower()
    for entry in BUILTIN:  # more specific entries come first
        if all(part.lower() in lowered for part in entry.match):
            return entry
    return None


@dataclass
class MeasuredCeilings:
    """Ceilings measured on one device through torch, and when."""

    device: str
    dram_bandwidth: float  # bytes/s, device-to-device copy
    matmul: dict[str, float]  # precision -> FLOP/s of a large torch.matmul
    measured_at: float
    torch_version: str = ""
    sms: int | None = None
    l2_bytes: int | None = None

    def as_ceilings(self, entry: DeviceCeilings | None = None, peaks: dict[str, float] | None = None,
                    ) -> DeviceCeilings:
        """These measurements as roofs, the table `entry` filling what was not measured."""
        return DeviceCeilings(self.device, (self.device,), entry.cc if entry else (0, 0),
                              self.sms or (entry.sms if entry else 0),
                              self.l2_bytes or (entry.l2_bytes if entry else 0), self.dram_bandwidth,
                              dict(self.matmul) if peaks is None else peaks, entry.boost_mhz if entry else 0,
                              "measured")


def measured_path() -> Path:
    from engine.settings import get_settings

    return get_settings().home / "device_ceilings.json"


def load_measured(path: Path | None = None) -> dict[str, MeasuredCeilings]:
    path = path or measured_path()
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return {name: MeasuredCeilings(**entry) for name, entry in data.items()}


def store_measured(measured: MeasuredCeilings, path: Path | None = None) -> Path:
    path = path or measured_path()
    entries = load_measured(path)
    entries[measured.device] = measured
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({k: asdict(v) for k, v in entries.items()}, indent=2))
    return path


def current_device_name(index: int = 0) -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(index) if torch.cuda.is_available() else None


def ceilings_for(name: str | None = None, measured: dict[str, MeasuredCeilings] | None = None,
                 prefer_measured: bool = False) -> DeviceCeilings | None:
    """Table ceilings for `name` (default: the present GPU); with `prefer_measured`, measured values replace them."""
    name = name or current_device_name()
    if name is None:
        return None
    entry = match_device(name)
    if not prefer_measured:
        return entry
    found = (measured if measured is not None else load_measured()).get(name)
    if found is None:
        return entry
    return found.as_ceilings(entry, {**(entry.peaks if entry else {}), **found.matmul})


def shown_ceilings(name: str | None) -> list[DeviceCeilings]:
    """Both sets of roofs for a device, as the dashboard shows them: the table's entry, and the
    measured values alone (not merged) when this machine measured that device."""
    if not name:
        return []
    entry = match_device(name)
    try:
        found = load_measured().get(name)
    except (OSError, ValueError, TypeError):
        found = None
    return [c for c in (entry, found.as_ceilings(entry) if found else None) if c is not None]


def _time(fn, repeats: int, torch) -> float:
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1000.0 / repeats


def measure_ceilings(copy_bytes: int = 2**30, matmul_size: int = 8192, repeats: int = 20) -> MeasuredCeilings:
    """Copy bandwidth and matmul FLOP/s of the present GPU, through torch (needs a GPU)."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no GPU: ceilings can only be measured on a device")
    device = torch.device("cuda")
    src = torch.empty(copy_bytes // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    seconds = _time(lambda src=src, dst=dst: dst.copy_(src), repeats, torch)
    bandwidth = 2 * copy_bytes / seconds
    del src, dst
    matmul: dict[str, float] = {}
    n = matmul_size
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        for precision, dtype, tf32 in (("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
                                       ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, dtype=dtype, device=device)
            b = torch.randn(n, n, dtype=dtype, device=device)
            reps = max(2, repeats // (4 if precision == "fp32" else 1))
            matmul[precision] = 2 * n**3 / _time(lambda a=a, b=b: a @ b, reps, torch)
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    props = torch.cuda.get_device_properties(0)
    return MeasuredCeilings(device=torch.cuda.get_device_name(0), dram_bandwidth=bandwidth, matmul=matmul,
                            measured_at=time.time(), torch_version=torch.__version__,
                            sms=props.multi_processor_count, l2_bytes=getattr(props, "L2_cache_size", None))
