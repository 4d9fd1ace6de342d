"""What a runner is told about the candidate it will load: the code and how to call it, nothing more.

No seed (each arrives with the call that uses it), no expected output, no tolerance, no verdict.
The problem's own file travels too, because `get_init_inputs()` and `get_inputs()` live in it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class ConfigCall:
    """One configuration as the runner sees it: its sizes, and for C problems the evaluated arguments."""

    name: str
    params: dict
    c_args: list[dict] = field(default_factory=list)  # wire.c_inputs.ArgSpec fields


@dataclass
class CandidateSpec:
    kind: str  # pytorch | c
    device: str  # cuda | cpu
    language: str  # python | cuda | c
    flavor: str  # cupy | load_inline | triton | torch | cuda-library | c-library
    source: str
    configs: list[ConfigCall]
    reference_source: str = ""
    reference_path: str = "reference.py"
    inputs_source: str | None = None  # C problems: the problem's inputs.py
    entry: str | None = None  # C problems: the entry point's name
    dtype: str = "float32"
    arch_list: str = "9.0"
    extensions_name: str | None = None  # load_inline: the prebuilt extension's folder (its tar is the payload)
    reseed_calls: bool = False  # seed torch with the call's seed before every call (the reference draws numbers)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CandidateSpec:
        data = dict(data)
        data["configs"] = [ConfigCall(**c) for c in data["configs"]]
        return cls(**data)

    def reveal_config(self, data: dict) -> None:
        """Add a configuration the judge kept back until it runs it (its sizes are hidden until then)."""
        call = ConfigCall(**data)
        if not any(c.name == call.name for c in self.configs):
            self.configs.append(call)

    def config(self, name: str) -> ConfigCall:
        for config in self.configs:
            if config.name == name:
                return config
        raise KeyError(name)
