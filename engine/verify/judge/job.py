"""What the parent sends the judge: self-contained plain data (sources, paths, configs, seeds, tolerances).

The parent computes everything that needs the problem library or the settings (evaluated C
argument sizes, seeds, tolerances, which kernels are the candidate's own), so the judge needs
nothing but this record and the built libraries' bytes. `candidate_spec()` is the part a runner may
see: the code and how to call it, without a seed, a tolerance or an expected output.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from engine.wire.candidate import CandidateSpec, ConfigCall
from engine.wire.policy import TrialPolicy

MODES = ("evaluate", "run_once", "info")


@dataclass
class CArgSpec:
    """A C entry-point argument with its size or value evaluated for one configuration."""

    name: str
    base_type: str  # int | long | float | double
    is_array: bool
    intent: str = "in"  # in | out | inout
    size: int = 0
    value: float | int | None = None
    init: str | None = None


@dataclass
class ConfigSpec:
    name: str
    hidden: bool
    params: dict
    seeds: list[int]  # one fresh seed per correctness trial
    c_args: list[CArgSpec] = field(default_factory=list)


@dataclass
class TimingSpec:
    """What to time and against what: the configuration, its seed, the baselines, and `policy`, how the
    trials are run (the same record the parent's options and the runner's loop hold)."""

    config: str
    seed: int
    policy: TrialPolicy = field(default_factory=TrialPolicy)
    baselines: list[str] = field(default_factory=lambda: ["eager"])  # eager, compile | naive-cuda, c-reference
    energy_seconds: float = 0.0  # NVML loop per side after timing (GPU only; 0: no energy reading)
    also: list[str] = field(default_factory=list)  # other configurations timed too (shown, not the headline)

    @classmethod
    def from_json(cls, data: dict) -> TimingSpec:
        return cls(**{**data, "policy": TrialPolicy(**data.get("policy", {}))})


@dataclass
class Job:
    kind: str  # pytorch | c
    device: str  # cuda | cpu
    candidate_source: str
    candidate_language: str  # python | cuda | c
    configs: list[ConfigSpec]
    init_seed: int
    dtype: str = "float32"
    rtol: float = 1e-4
    atol: float = 1e-5
    mode: str = "evaluate"
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    reference_source: str = ""  # pytorch: the KernelBench reference module
    reference_path: str = "reference.py"
    candidate_library: str | None = None  # c: candidate .so
    reference_library: str | None = None  # c: C reference .so
    baseline_library: str | None = None  # c: naive CUDA port .so
    entry: str | None = None
    inputs_source: str | None = None  # c: the problem's inputs.py, if any
    allowed_torch_ops: list[str] = field(default_factory=list)
    own_kernels: list[str] = field(default_factory=list)
    flavor: str = "torch"  # cupy | load_inline | triton | torch | cuda-library | c-library
    extensions_dir: str | None = None
    timing: TimingSpec | None = None
    checks: bool = True  # runtime integrity checks (run_once turns them off)
    profile: bool = True  # profile one call: reference ops called, kernels launched
    cache_dir: str = ""
    scratch_dir: str = ""
    cpu_seconds: float = 600.0
    repeats: int = 1  # run_once
    arch_list: str = "9.0"  # TORCH_CUDA_ARCH_LIST for load_inline
    reseed_calls: bool = False  # the reference draws random numbers: both sides seed torch before every call
    gpu_region: bool = False  # outputs through GPU memory the judge exports (`wire.device_region`), on a GPU

    def to_json(self) -> dict:
        return asdict(self)

    def dumps(self) -> str:
        return json.dumps(self.to_json())

    @classmethod
    def from_json(cls, data: dict) -> Job:
        data = dict(data)
        data["configs"] = [ConfigSpec(**{**c, "c_args": [CArgSpec(**a) for a in c.get("c_args", [])]})
                           for c in data["configs"]]
        if data.get("timing") is not None:
            data["timing"] = TimingSpec.from_json(data["timing"])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def load(cls, path: Path | str) -> Job:
        return cls.from_json(json.loads(Path(path).read_text()))

    def config(self, name: str) -> ConfigSpec:
        return next(c for c in self.configs if c.name == name)

    def config_call(self, name: str) -> ConfigCall:
        """A configuration as the runner may see it; a hidden one goes only with the request that runs it."""
        c = self.config(name)
        return ConfigCall(c.name, dict(c.params), [asdict(a) for a in c.c_args])

    def hidden_call(self, name: str) -> dict:
        """The fields a request on configuration `name` carries: its sizes if they were kept back."""
        return {"config_call": asdict(self.config_call(name))} if self.config(name).hidden else {}

    def candidate_spec(self) -> CandidateSpec:
        return CandidateSpec(
            kind=self.kind, device=self.device, language=self.candidate_language, flavor=self.flavor,
            source=self.candidate_source,
            configs=[self.config_call(c.name) for c in self.configs if not c.hidden],
            reference_source=self.reference_source, reference_path=Path(self.reference_path).name,
            inputs_source=self.inputs_source, entry=self.entry, dtype=self.dtype, arch_list=self.arch_list,
            extensions_name="prebuilt" if self.extensions_dir else None, reseed_calls=self.reseed_calls)
