"""Our own Python programs inside a sandbox: which part of the source tree each may see, and the
environment it gets (an allow-list: nothing is inherited unless named here).

One list per kind of sandbox, read off the layout: every program that runs untrusted code (the
candidate runner, the problem probes, the load_inline prebuild and its header job) lives in
`engine/untrusted` and sees only that folder and `engine/wire` (plus `engine/__init__.py`), mounted
under `/refinery/code`: not the judge, not the settings, not the problem library's solutions. The
judge runs problem code too but is the trusted decider, and sees the engine (`JUDGE_PACKAGES`). Where
the machine has no namespaces the programs import from the repository itself, and the boundary's notes
say so.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from engine.sandbox.capabilities import Boundary, boundary
from engine.sandbox.launch import Mount

REPO_ROOT = Path(__file__).resolve().parents[2]
CODE_ROOT = "/refinery/code"
PASSTHROUGH = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "NVIDIA_DRIVER_CAPABILITIES", "CUDA_MODULE_LOADING",
               "LANG", "LC_ALL", "TZ")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|DATABASE_URL|^REFINERY_|^AWS_|^PG",
                         re.IGNORECASE)
UNTRUSTED = "engine/untrusted"  # everything that runs untrusted code, and nothing else
WIRE = "engine/wire"  # what both sides of the boundary share
UNTRUSTED_PACKAGES = (UNTRUSTED, WIRE)  # what every sandbox of an untrusted program shows
JUDGE_PACKAGES = ("engine",)  # the judge: the trusted decider, sandboxed because it runs problem code


def is_secret(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def code_mounts(packages: tuple[str, ...]) -> list[Mount]:
    """The named packages of this source tree, with the `__init__` files above them, under CODE_ROOT."""
    files: dict[str, Path] = {}
    for package in packages:
        parts = Path(package).parts
        for i in range(1, len(parts)):
            init = Path(*parts[:i]) / "__init__.py"
            files[str(init)] = REPO_ROOT / init
    mounts = [Mount(source, f"{CODE_ROOT}/{relative}") for relative, source in sorted(files.items())]
    mounts += [Mount(REPO_ROOT / package, f"{CODE_ROOT}/{package}") for package in packages]
    return mounts


def tool_path() -> str:
    """PATH inside: this interpreter's folder (ninja, the CUDA wheels' tools beside it) and the system's."""
    folders = [str(Path(sys.executable).parent)]
    try:
        from engine.toolchain import find_tool

        folders += [str(p.parent) for p in (find_tool("nvcc"), find_tool("nvdisasm")) if p is not None]
    except ImportError:
        pass
    folders += ["/usr/local/cuda/bin", "/usr/local/bin", "/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(folders))


def python_env(packages: tuple[str, ...] | None, where: Boundary | None = None, **extra: str) -> dict[str, str]:
    """The environment of a Python program of ours inside: PYTHONPATH to its code, the allow-listed
    variables of this process that tools need (never a secret), and `extra`."""
    where = where or boundary()
    env = {name: os.environ[name] for name in PASSTHROUGH if name in os.environ and not is_secret(name)}
    code = CODE_ROOT if (where.namespaced and packages is not None) else str(REPO_ROOT)
    env.update(PYTHONPATH=os.pathsep.join([code, *package_paths()]), PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1",
               PATH=tool_path())
    env.update({k: v for k, v in extra.items() if not is_secret(k)})
    return env


def package_paths() -> list[str]:
    """The folders of packages this process found through its own PYTHONPATH (a machine whose libraries were
    unpacked beside the interpreter rather than installed into it), outside the hidden roots: the view mounts
    every import path at its own place (`view.python_dirs`), but only a path the child is told of is searched."""
    hidden = [p.resolve() for p in hidden_roots()]
    found = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        path = Path(entry).resolve() if entry else None
        if path is None or not path.is_dir() or any(path == h or h in path.parents for h in hidden):
            continue
        found.append(str(path))
    return list(dict.fromkeys(found))


def mounts_for(packages: tuple[str, ...] | None, where: Boundary | None = None) -> list[Mount]:
    where = where or boundary()
    return code_mounts(packages) if (where.namespaced and packages is not None) else []


def hidden_roots(*extra: Path) -> list[Path]:
    """Folders never visible inside: the repository (its sources, tests, the library's solutions) and
    whatever the caller adds (the data folder)."""
    return [REPO_ROOT, *[Path(p) for p in extra if p]]
