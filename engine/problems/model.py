"""The problem record: what a program computes, on which inputs, and how fast it could possibly run."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from engine.problems.expressions import evaluate

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    # (rtol, atol): float32 kernels with another summation order land far below 1e-4.
    "float64": (1e-7, 1e-9),
    "float32": (1e-4, 1e-5),
    "tf32": (5e-3, 5e-4),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "int32": (0.0, 0.0),
    "int64": (0.0, 0.0),
}

STRATEGIES = (
    "naive", "coalesced", "shared-tiling", "register-tiling", "vectorized", "warp-shuffle",
    "grid-stride", "fusion", "tensor-core", "loop-unrolling", "cpu-naive", "cpu-blocked",
    "cpu-vectorized", "other",
)


@dataclass(frozen=True)
class ValueSpec:
    """One argument or result of the reference: a tensor's shape and dtype, or another value's repr."""

    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    value: str | None = None
    name: str | None = None  # where the reference names it (a C argument)

    def __str__(self) -> str:
        if self.shape is None:
            return str(self.value)
        text = f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"
        return f"{self.name}: {text}" if self.name else text

    @classmethod
    def from_json(cls, data: dict) -> ValueSpec:
        shape = data.get("shape")
        return cls(tuple(int(d) for d in shape) if shape is not None else None, data.get("dtype"),
                   None if data.get("value") is None else str(data["value"]), data.get("name"))

    def to_json(self) -> dict:
        data = {"value": self.value} if self.shape is None else {"shape": list(self.shape), "dtype": self.dtype}
        return {**data, "name": self.name} if self.name else data


@dataclass(frozen=True)
class Signature:
    """What the reference takes and gives at one configuration, found when the problem was imported by
    running it (on meta tensors where they suffice), with the FLOPs and minimum bytes of one call.

    Kept with the configuration because KernelBench files carry no analytical model: these figures are
    the roofline's where `[model]` is absent.
    """

    inputs: tuple[ValueSpec, ...] = ()
    outputs: tuple[ValueSpec, ...] = ()
    init: tuple[ValueSpec, ...] = ()
    flops: float | None = None
    bytes: float | None = None
    ran_on: str = "meta"  # meta | cpu

    @classmethod
    def from_json(cls, data: dict) -> Signature:
        def specs(key: str) -> tuple[ValueSpec, ...]:
            return tuple(ValueSpec.from_json(v) for v in data.get(key, ()))

        flops, nbytes = data.get("flops"), data.get("bytes")
        return cls(specs("inputs"), specs("outputs"), specs("init"),
                   None if flops is None else float(flops), None if nbytes is None else float(nbytes),
                   str(data.get("ran_on", "meta")))

    def to_json(self) -> dict:
        data = {"inputs": [v.to_json() for v in self.inputs], "outputs": [v.to_json() for v in self.outputs],
                "init": [v.to_json() for v in self.init], "ran_on": self.ran_on}
        if self.flops is not None:
            data["flops"] = int(self.flops)
        if self.bytes is not None:
            data["bytes"] = int(self.bytes)
        return data


@dataclass(frozen=True)
class Config:
    """One input configuration; hidden ones are checked but never shown in a prompt."""

    name: str
    params: dict[str, int | float]
    hidden: bool = False
    signature: Signature | None = None
    rounding_sensitive: tuple[str, ...] = ()  # outputs whose reference values change with rounding (found on import)


@dataclass(frozen=True)
class Implementation:
    """A shipped candidate with a known strategy, and the constants a proposer may retune."""

    name: str
    path: Path
    strategy: str
    device: str = "cuda"
    summary: str = ""
    tunables: dict[str, list[int | float]] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.path.read_text()

    @property
    def language(self) -> str:
        return {".py": "python", ".cu": "cuda", ".c": "c"}[self.path.suffix]


@dataclass(frozen=True)
class CArg:
    """One parameter of a C problem's entry point, in order."""

    name: str
    type: str
    value: str | None = None  # scalars: expression over the params
    size: str | None = None  # arrays: element count expression
    intent: str = "in"  # in | out | inout
    init: str | None = None

    @property
    def is_array(self) -> bool:
        return self.type.rstrip().endswith("*")

    @property
    def base_type(self) -> str:
        return self.type.replace("const", "").replace("*", "").strip()


@dataclass(frozen=True)
class Expectation:
    """A speed order the strategies promise: `faster` beats `slower` on the largest configuration."""

    faster: str
    slower: str


@dataclass(frozen=True)
class Problem:
    slug: str
    kind: str  # pytorch | c
    title: str
    folder: Path
    reference_path: Path
    description: str = ""
    tags: tuple[str, ...] = ()
    dtype: str = "float32"
    rtol: float | None = None
    atol: float | None = None
    configs: tuple[Config, ...] = ()
    implementations: tuple[Implementation, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    flops_expr: str | None = None
    bytes_expr: str | None = None
    allowed_torch_ops: tuple[str, ...] = ()
    source: str = "builtin"  # builtin | kernelbench | upload
    entry: str | None = None  # c problems
    args: tuple[CArg, ...] = ()
    inputs_path: Path | None = None
    notes: tuple[str, ...] = ()  # what an import noticed and did about it, in words
    warnings: tuple[str, ...] = ()  # what an import found that limits how candidates can be judged

    @property
    def reference_source(self) -> str:
        return self.reference_path.read_text()

    @property
    def tolerance(self) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCES.get(self.dtype, DEFAULT_TOLERANCES["float32"])
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    @property
    def runs_on_cpu(self) -> bool:
        """Whether the problem ships CPU implementations, so a machine without a GPU gets rounds that run
        (a CUDA candidate there is compiled and analysed, never run)."""
        return any(i.device == "cpu" for i in self.implementations)

    @property
    def visible_configs(self) -> tuple[Config, ...]:
        return tuple(c for c in self.configs if not c.hidden)

    @property
    def hidden_configs(self) -> tuple[Config, ...]:
        return tuple(c for c in self.configs if c.hidden)

    def config(self, name: str) -> Config:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(f"{self.slug} has no configuration {name!r}")

    def implementation(self, name: str) -> Implementation:
        for impl in self.implementations:
            if impl.name == name:
                return impl
        raise KeyError(f"{self.slug} has no implementation {name!r}")

    def flops(self, config: Config) -> float | None:
        """The analytical model's FLOPs, else the count taken when the problem was imported."""
        if self.flops_expr is not None:
            return float(evaluate(self.flops_expr, config.params))
        return config.signature.flops if config.signature is not None else None

    def min_bytes(self, config: Config) -> float | None:
        if self.bytes_expr is not None:
            return float(evaluate(self.bytes_expr, config.params))
        return config.signature.bytes if config.signature is not None else None

    def arithmetic_intensity(self, config: Config) -> float | None:
        flops, nbytes = self.flops(config), self.min_bytes(config)
        return None if not flops or not nbytes else flops / nbytes

    @property
    def largest_config(self) -> Config:
        """The configuration with the most minimum bytes (or the last one listed without a model)."""
        if self.bytes_expr is None and not all(c.signature and c.signature.bytes for c in self.configs):
            return self.configs[-1]
        return max(self.configs, key=lambda c: self.min_bytes(c) or 0.0)

    @property
    def content_hash(self) -> str:
        digest = hashlib.sha256()
        # regular files only: a link is never read (the loader refuses one a problem names; others are left out)
        for path in sorted(p for p in self.folder.rglob("*")
                           if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts):
            digest.update(path.relative_to(self.folder).as_posix().encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()[:16]
