"""Which files a problem may name, and how an import copies them: regular files inside its folder, never a link.

A problem folder comes from a user (an upload, a checkout, a path typed in the dashboard), so a name in it is
untrusted: an implementation `file = "/etc/shadow"`, `file = "../../data/settings.toml"` or `impls/fast.cu`
as a symbolic link to a secret would otherwise be read as a candidate's source and stored. `inside` takes a
relative name and checks, component by component with `lstat`, that no link lies on the way and that it ends at
a regular file; `walk` lists a tree without following a link and names every link it meets; `copy_tree` copies
regular files and folders through descriptors opened with O_NOFOLLOW, so a file swapped for a link between the
check and the copy is refused too.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

LINK = "is a symbolic link (a problem's files must be regular files inside its folder; import follows no link)"
NOT_REGULAR = "is not a regular file"
COPY_CHUNK = 1 << 20


class UnsafePath(ValueError):
    """A name that leaves the folder, a link on the way, or something that is not a regular file."""

    def __init__(self, path: Path | str, cause: str) -> None:
        super().__init__(f"{path} {cause}")
        self.path = Path(path)
        self.cause = cause


def relative_name(name: str) -> PurePosixPath:
    """`name` as a path below a folder; raises UnsafePath for an absolute path or one that climbs out with `..`."""
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or name.startswith("~"):
        raise UnsafePath(name, "is an absolute path (refused: a file is named relative to its folder)")
    if ".." in rel.parts:
        raise UnsafePath(name, "leaves its folder with '..' (refused)")
    return rel


def check_not_link(path: Path) -> os.stat_result:
    """`lstat` of `path`; raises UnsafePath if it is a link, FileNotFoundError if it is missing."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(path, LINK)
    return info


def inside(folder: Path, name: str) -> Path:
    """`folder/name`, checked to be a regular file reached with no link on the way and to resolve inside `folder`.

    Raises UnsafePath naming `name` (FileNotFoundError where nothing is there), never reading the file.
    """
    rel = relative_name(name)
    here = Path(folder)
    for depth, part in enumerate(rel.parts, start=1):
        here = here / part
        try:
            info = check_not_link(here)
        except UnsafePath:
            if depth == len(rel.parts):
                raise UnsafePath(name, LINK) from None
            raise UnsafePath(name, f"is reached through {PurePosixPath(*rel.parts[:depth])}, which {LINK}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(name, NOT_REGULAR)
    if os.path.realpath(here) != os.path.join(os.path.realpath(folder), *rel.parts):
        raise UnsafePath(name, "resolves outside the problem's folder")
    return here


def optional_inside(folder: Path, name: str) -> Path | None:
    """`inside`, or None where nothing is there (a link or a non-regular file is still refused)."""
    try:
        return inside(folder, name)
    except FileNotFoundError:
        return None


@dataclass(frozen=True)
class Tree:
    """The regular files under a folder and the links met on the way (none of them followed)."""

    files: tuple[Path, ...]
    links: tuple[Path, ...]


def walk(root: Path) -> Tree:
    """Every regular file under `root`, sorted, and every link (to a file or a folder) found there, unfollowed."""
    files, links = [], []
    for here, dirs, names in os.walk(root, followlinks=False):
        base = Path(here)
        for name in dirs:
            if (base / name).is_symlink():
                links.append(base / name)
        for name in names:
            path = base / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                links.append(path)
            elif stat.S_ISREG(info.st_mode):
                files.append(path)
    return Tree(tuple(sorted(files)), tuple(sorted(links)))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


def _copy_file(dir_fd: int, name: str, shown: Path, target: Path) -> None:
    fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePath(shown, NOT_REGULAR)
        with open(target, "xb") as out:
            while chunk := os.read(fd, COPY_CHUNK):
                out.write(chunk)
    finally:
        os.close(fd)


def _copy_dir(dir_fd: int, shown: Path, target: Path) -> None:
    target.mkdir()
    for name in sorted(os.listdir(dir_fd)):
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePath(shown / name, LINK)
        if stat.S_ISDIR(info.st_mode):
            sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            try:
                _copy_dir(sub, shown / name, target / name)
            finally:
                os.close(sub)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(dir_fd, name, shown / name, target / name)
        else:
            raise UnsafePath(shown / name, NOT_REGULAR)


def copy_tree(source: Path, target: Path) -> None:
    """Copy the folder `source` to the new folder `target`: regular files and folders only.

    Raises UnsafePath naming the first link or special file (what was copied before it stays; the caller
    removes `target`). O_NOFOLLOW on every open: a link swapped in after a check is refused, not followed.
    """
    try:
        fd = os.open(source, _DIR_FLAGS)
    except OSError as exc:
        if Path(source).is_symlink():
            raise UnsafePath(source, LINK) from exc
        raise
    try:
        Path(target).parent.mkdir(parents=True, exist_ok=True)  # the destination's own folders are ours
        _copy_dir(fd, Path(source), Path(target))
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", 40):  # O_NOFOLLOW met a link swapped in after the listing
            raise UnsafePath(Path(source) / (exc.filename or ""), LINK) from exc
        raise
    finally:
        os.close(fd)
