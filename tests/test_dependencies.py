"""The dependency set: ranges in pyproject.toml, exact pins in constraints.txt that the README's commands
install and that meet those ranges."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = list(project["dependencies"]) + list(project["optional-dependencies"]["test"])
    return [Requirement(text) for text in listed]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_every_dependency_is_pinned_exactly_and_the_pin_meets_its_range():
    pins = _pins()
    for requirement in _requirements():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        if name == "setuptools":  # pip keeps the build tool out of a freeze; the range alone decides it
            continue
        assert name in pins, f"{requirement.name} has no exact pin in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), (requirement, pins[name])


def test_the_readme_commands_install_with_the_constraints():
    assert "-c constraints.txt" in (ROOT / "run.sh").read_text()


def test_torch_is_a_range_that_the_gpu_image_meets_too():
    torch = next(r for r in _requirements() if r.name == "torch")
    assert torch.specifier.contains("2.11.0") and torch.specifier.contains(_pins()["torch"])


def test_tools_used_at_run_time_are_declared_and_a_benchmark_only_tool_is_not():
    runtime = {r.name for r in _requirements()[:len(tomllib.loads((ROOT / "pyproject.toml").read_text())
                                                   ["project"]["dependencies"])]}
    assert {"ninja", "setuptools"} <= runtime and "psutil" not in runtime
