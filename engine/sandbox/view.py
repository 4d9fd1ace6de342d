"""What a sandboxed process can see of the filesystem: the system's programs and libraries read-only,
the Python it runs, the GPU's device files when it needs them, its own scratch folder, and nothing
else — no home folders, no data folder, no repository, no other user's files.

Every path is mounted at the same place it has outside, so compilers, Python and the CUDA driver
find what they were configured with; folders the view creates on the way are world-traversable
(0755), because a bind under /root is otherwise unreachable for the sandbox's own user.
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

SYSTEM_TREES = ("/usr", "/opt/nvidia")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
             "/etc/nvidia", "/etc/OpenCL", "/etc/vulkan")
GPU_DEVICE_PATTERNS = ("/dev/nvidia*", "/dev/nvidia-caps")
HIDDEN_ROOTS_ALWAYS = ("/root", "/home", "/work", "/var", "/run", "/tmp", "/srv", "/mnt", "/media")


def _resolved(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def system_mounts() -> list[tuple[str, str, str]]:
    """(kind, source, target) for programs, libraries and the loader's configuration, all read-only;
    kind is "symlink" (merged-/usr systems' /bin, /lib…) or "ro-bind"."""
    mounts: list[tuple[str, str, str]] = []
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            mounts.append(("symlink", os.readlink(link), link))
        elif os.path.isdir(link):
            mounts.append(("ro-bind", link, link))
    for tree in SYSTEM_TREES:
        if os.path.isdir(tree) and not os.path.islink(tree):
            mounts.append(("ro-bind", tree, tree))
    for item in ETC_FILES:
        if os.path.exists(item):
            mounts.append(("ro-bind", item, item))
    return mounts


def mount_args(mounts: list[tuple[str, str, str]]) -> list[str]:
    args: list[str] = []
    for kind, source, target in mounts:
        args += [f"--{kind}", source, target]
    return args


def system_args() -> list[str]:
    return mount_args(system_mounts())


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def python_dirs(hidden: list[Path]) -> list[Path]:
    """Where this interpreter and its packages live: its prefixes (a virtual environment's too, even
    inside a hidden folder) and every import path outside the `hidden` folders (the repository's
    source, the data folder). Folders under the system trees are mounted already and skipped."""
    prefixes = sorted({_resolved(sys.base_prefix), _resolved(sys.prefix)})
    hidden_resolved = [_resolved(h) for h in hidden]
    extra = {_resolved(p) for p in sys.path if p and os.path.isdir(p)}
    extra = {p for p in extra if _inside(p, prefixes) or not _inside(p, hidden_resolved)}
    chosen: list[Path] = []
    for path in sorted(set(prefixes) | extra, key=lambda p: len(p.parts)):
        if str(path) == "/" or _inside(path, chosen) or _inside(path, [Path(t) for t in SYSTEM_TREES]):
            continue
        chosen.append(path)
    return chosen


def gpu_device_paths() -> list[str]:
    found: list[str] = []
    for pattern in GPU_DEVICE_PATTERNS:
        found += sorted(glob.glob(pattern))
    return found


def ancestors(paths: list[str]) -> list[str]:
    """Every folder above `paths`, outermost first, once each (for `--perms 0755 --dir`)."""
    seen: list[str] = []
    for path in paths:
        parts = Path(path).parts
        for i in range(2, len(parts)):
            folder = str(Path(*parts[:i]))
            if folder not in seen:
                seen.append(folder)
    return seen


def passwd_text(uid: int, gid: int) -> str:
    """A passwd file naming the sandbox user (getpass and torch's cache paths look the user up)."""
    lines = ["root:x:0:0:root:/root:/usr/sbin/nologin", "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"]
    if uid not in (0, 65534):
        lines.append(f"sandbox:x:{uid}:{gid}:sandbox:/scratch:/bin/sh")
    return "\n".join(lines) + "\n"


def group_text(gid: int) -> str:
    lines = ["root:x:0:", "nogroup:x:65534:"]
    if gid not in (0, 65534):
        lines.append(f"sandbox:x:{gid}:")
    return "\n".join(lines) + "\n"


HOSTS_TEXT = "127.0.0.1 localhost sandbox\n::1 localhost\n"
